package cond

import (
	"errors"
	"fmt"

	"github.com/day1ai/day1/store"
)

// Sentinel errors of evaluation.
var (
	// ErrMissingKey: a condition names a key the evaluation context does not have.
	// *MissingKeyError matches it, and store.ErrInvalidArgument too.
	ErrMissingKey = errors.New("day1: condition names a missing context key")

	// ErrTypeMismatch: a condition applies an operator to values it does not accept,
	// such as comparing a string with a number. *TypeError matches it, and
	// store.ErrInvalidArgument too.
	ErrTypeMismatch = errors.New("day1: condition type mismatch")
)

// SyntaxError reports malformed condition source. It matches store.ErrInvalidArgument.
type SyntaxError struct {
	Pos int    // byte offset into the source where the problem was found, from 0
	Msg string // what was found and what was expected there
}

// Error describes the problem and where it is.
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("day1: condition syntax error at offset %d: %s", e.Pos, e.Msg)
}

// Is makes errors.Is(err, store.ErrInvalidArgument) true.
func (e *SyntaxError) Is(target error) bool { return target == store.ErrInvalidArgument }

// MissingKeyError reports that a condition names a context key that is absent (or
// that lies under a null value). Evaluate with EvalOptions.MissingAsNull to read such
// keys as null instead. It matches ErrMissingKey and store.ErrInvalidArgument.
type MissingKeyError struct {
	Path string // the whole identifier, e.g. "agent.error_count"
	Pos  int    // byte offset of the identifier in the source
}

// Error names the missing key and how to tolerate it.
func (e *MissingKeyError) Error() string {
	return fmt.Sprintf("day1: condition at offset %d: the context has no key %s; add it to the context, or evaluate with MissingAsNull and test it against null first", e.Pos, e.Path)
}

// Is makes errors.Is match ErrMissingKey and store.ErrInvalidArgument.
func (e *MissingKeyError) Is(target error) bool {
	return target == ErrMissingKey || target == store.ErrInvalidArgument
}

// TypeError reports an operator applied to values it does not accept during
// evaluation, or a context value of a type conditions cannot read. It matches
// ErrTypeMismatch and store.ErrInvalidArgument.
type TypeError struct {
	Pos  int    // byte offset of the operator or operand in the source
	Op   string // the operation: "==", "<", "in", "and", "or", "not", "condition", or "key a.b"
	Want string // what the operation accepts, e.g. "two numbers or two strings"
	Got  string // the types found, e.g. "string and number"
}

// Error says what the operation needs and what it got.
func (e *TypeError) Error() string {
	return fmt.Sprintf("day1: condition at offset %d: %s needs %s, got %s", e.Pos, e.Op, e.Want, e.Got)
}

// Is makes errors.Is match ErrTypeMismatch and store.ErrInvalidArgument.
func (e *TypeError) Is(target error) bool {
	return target == ErrTypeMismatch || target == store.ErrInvalidArgument
}
