package day1

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"unicode/utf8"

	"github.com/day1ai/day1/store"
)

// CorrectionAction says what a correction does to a fact.
type CorrectionAction string

// Correction actions.
const (
	// CorrectUpdate writes a new version of the fact with the fields the correction
	// gives; the old version stays in history.
	CorrectUpdate CorrectionAction = "update"
	// CorrectInvalidate marks the fact invalidated: it leaves search and the default
	// lists, and stays readable by id and in history.
	CorrectInvalidate CorrectionAction = "invalidate"
	// CorrectDelete removes the fact from the branch: it is read only in the past.
	CorrectDelete CorrectionAction = "delete"
)

// FactCorrection corrects one live fact, saying who corrects it and why.
type FactCorrection struct {
	// Branch holds the fact. Empty means DefaultBranch.
	Branch string
	// ID names the fact (or an alias of it). Required.
	ID string
	// Action is CorrectUpdate, CorrectInvalidate or CorrectDelete. Required.
	Action CorrectionAction
	// Text, Category and Confidence, for CorrectUpdate, replace the fact's when set;
	// at least one of them, or Metadata, must be. A new text is embedded again.
	Text       *string
	Category   *string
	Confidence *float64
	// Metadata, for CorrectUpdate, sets these keys on the fact's metadata; an empty
	// value removes the key.
	Metadata map[string]string
	// By names who corrects: an agent, a person. Required, at most 256 bytes.
	By string
	// Why says why. Required, at most 4096 bytes.
	Why string
}

// CorrectFact corrects a live fact: a new version with other fields, an invalidation,
// or a deletion, each kept with who made it and why in the metadata of the version it
// writes (store.MetaCorrectedBy, MetaCorrectionReason, MetaCorrection), which do not
// count against the metadata limit. It returns the fact as the correction left it;
// for a deletion, the invalidated version that records who and why, which a deletion
// writes first and then removes from the branch (the past still reads it). A deletion
// interrupted between the two leaves the fact invalidated, with who and why, and can
// be run again.
//
// Errors: a *ValidationError naming the field for a bad correction (no ID, an unknown
// action, no By or Why, an update that changes nothing, an empty text, a confidence
// outside 0..1, a fact that is already superseded or invalidated); ErrNotFound for a
// fact the branch does not hold; the store's errors. Nothing is written when the correction is refused.
func (c *Client) CorrectFact(ctx context.Context, fc FactCorrection) (_ Fact, err error) {
	ctx, end := c.start(ctx, correctOp(fc))
	defer func() { end(OperationEnd{Err: err, Records: succeeded(err, 1)}) }()
	if err := c.use(ctx); err != nil {
		return Fact{}, err
	}
	if err := fc.validate(); err != nil {
		return Fact{}, err
	}
	branch := branchOrMain(fc.Branch)
	f, err := c.GetFact(ctx, branch, fc.ID)
	if err != nil {
		return Fact{}, err
	}
	if !f.Status.Live() {
		return Fact{}, store.Invalid("FactCorrection.ID", fmt.Sprintf("names a fact that is %s on %q, no longer live: correct the fact that replaced it, or write a new one", f.Status, branch), f.ID)
	}
	f.Metadata = maps.Clone(f.Metadata)
	if f.Metadata == nil {
		f.Metadata = map[string]string{}
	}
	switch fc.Action {
	case CorrectUpdate:
		if fc.Text != nil && *fc.Text != f.Text {
			f.Text, f.Embedding = *fc.Text, nil
		}
		if fc.Category != nil {
			f.Category = *fc.Category
		}
		if fc.Confidence != nil {
			f.Confidence = *fc.Confidence
		}
		for k, v := range fc.Metadata {
			if v == "" {
				delete(f.Metadata, k)
			} else {
				f.Metadata[k] = v
			}
		}
	default:
		f.Status = FactInvalidated
	}
	f.Metadata[store.MetaCorrectedBy] = fc.By
	f.Metadata[store.MetaCorrectionReason] = fc.Why
	f.Metadata[store.MetaCorrection] = string(fc.Action)
	f.Branch, f.UpdatedAt = branch, c.cfg.Test.Now().UTC()
	w, err := c.WriteFact(ctx, f)
	if err != nil {
		return Fact{}, err
	}
	if fc.Action == CorrectDelete {
		if err := c.Delete(ctx, branch, Ref{Kind: KindFact, ID: w.Record.ID}); err != nil && !errors.Is(err, ErrNotFound) {
			return Fact{}, fmt.Errorf("day1: fact %q is invalidated, with who and why, but not deleted; correct it again to delete it: %w", w.Record.ID, err)
		}
	}
	return w.Record, nil
}

func (fc FactCorrection) validate() error {
	if err := store.ValidateID("FactCorrection.ID", fc.ID); err != nil {
		return err
	}
	switch fc.Action {
	case CorrectUpdate:
		if fc.Text == nil && fc.Category == nil && fc.Confidence == nil && len(fc.Metadata) == 0 {
			return store.Invalid("FactCorrection", "an update must give Text, Category, Confidence or Metadata", nil)
		}
		if fc.Text != nil && strings.TrimSpace(*fc.Text) == "" {
			return store.Invalid("FactCorrection.Text", "must not be empty; invalidate or delete the fact instead", nil)
		}
		if fc.Confidence != nil && !(*fc.Confidence >= 0 && *fc.Confidence <= 1) {
			return store.Invalid("FactCorrection.Confidence", "must be between 0 and 1", *fc.Confidence)
		}
	case CorrectInvalidate, CorrectDelete:
		if fc.Text != nil || fc.Category != nil || fc.Confidence != nil || len(fc.Metadata) > 0 {
			return store.Invalid("FactCorrection", "only an update changes Text, Category, Confidence or Metadata", string(fc.Action))
		}
	default:
		return store.Invalid("FactCorrection.Action", "must be update, invalidate or delete", string(fc.Action))
	}
	if fc.By == "" || len(fc.By) > 256 || !utf8.ValidString(fc.By) {
		return store.Invalid("FactCorrection.By", "must name who corrects the fact: 1 to 256 bytes of UTF-8", fc.By)
	}
	if strings.TrimSpace(fc.Why) == "" || len(fc.Why) > 4096 || !utf8.ValidString(fc.Why) {
		return store.Invalid("FactCorrection.Why", "must say why the fact is corrected: 1 to 4096 bytes of UTF-8", nil)
	}
	return nil
}
