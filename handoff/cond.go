package handoff

import "github.com/day1ai/day1/handoff/cond"

// The condition language of triggers and conditional transfers lives in package cond;
// these names are its own, kept here for the users of triggers.
type (
	// Expr is a compiled condition; see cond.Expr for the grammar.
	Expr = cond.Expr
	// EvalOptions tune an evaluation, such as reading missing keys as null.
	EvalOptions = cond.EvalOptions
	// SyntaxError reports malformed condition source.
	SyntaxError = cond.SyntaxError
	// MissingKeyError reports a condition key the context does not have.
	MissingKeyError = cond.MissingKeyError
	// TypeError reports an operator applied to values it does not accept.
	TypeError = cond.TypeError
)

// Limits on condition expressions; see cond.
const (
	MaxExprLen   = cond.MaxExprLen
	MaxExprDepth = cond.MaxExprDepth
)

// Errors of condition evaluation; see cond.
var (
	ErrMissingKey   = cond.ErrMissingKey
	ErrTypeMismatch = cond.ErrTypeMismatch
)

// Compile parses and checks a condition; see cond.Compile.
func Compile(src string) (*Expr, error) { return cond.Compile(src) }
