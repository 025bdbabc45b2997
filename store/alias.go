package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// KindAlias is the kind of an Alias: a second id of a fact. It is not in Kinds, the
// kinds of memory content that reads list and search, but in AllKinds, the kinds a
// store keeps per branch: an alias is branched and versioned like a record, so a
// branch sees its parent's aliases as of the fork, Diff lists alias changes, merges
// carry them and a read of the past sees the aliases of then.
const KindAlias Kind = "alias"

// AllKinds lists every kind a store keeps per branch: Kinds, then KindAlias.
var AllKinds = []Kind{KindFact, KindObservation, KindRelation, KindConversation, KindMessage, KindAlias}

// MaxAliasHops is how many aliases a read follows from an id to its fact. A store
// writes an alias only to a fact, so one hop is the rule; longer chains come from a
// fact deleted and its id later written as an alias, or from merges, and a chain that
// loops or runs longer resolves to nothing (ErrNotFound).
const MaxAliasHops = 8

// Alias records that a fact id written by a caller names another fact: the fact a
// write with that id was deduplicated against (Put, exact text). It is another name
// of the fact, not a copy: reads by the alias id (Store.Get with a fact Ref) return
// the canonical fact as it is now, with the canonical ID.
//
// The rules every store follows:
//   - A Put of a new fact whose id names no fact on the branch and whose text equals
//     a live fact's is Deduplicated as before, and its id is written as an Alias of
//     that fact (PutResult.AliasOf), unless PutOptions.GeneratedIDs holds it.
//   - A Put of a fact under an id that is an alias on the branch is a write of a new
//     fact with that id: if its text equals a live fact's (the canonical one or
//     another), it is Deduplicated again and the alias points there (rewritten only
//     when it changes); otherwise the fact is written under the id (Created, or
//     Superseded for a near-duplicate) and the alias is deleted in the same commit.
//     An id is therefore a fact or an alias on a branch, not both.
//   - Aliases are written only to ids that are facts at the time, so a store never
//     makes a cycle. A fact record wins over an alias of the same id (a merge can
//     bring both); Get follows at most MaxAliasHops aliases and treats a loop as
//     missing.
//   - Deleting a fact Ref whose id is an alias deletes the alias, not the fact: the
//     fact belongs to whoever wrote it first.
type Alias struct {
	// ID is the caller's fact id.
	ID     string `json:"id"`
	Branch string `json:"branch,omitempty"`
	// Target is the id of the canonical fact.
	Target    string    `json:"target"`
	CreatedAt time.Time `json:"created_at"`
}

func (Alias) isRecord() {}

// RecordKind implements Record.
func (Alias) RecordKind() Kind { return KindAlias }

// RecordID implements Record.
func (a Alias) RecordID() string { return a.ID }

// RecordBranch implements Record.
func (a Alias) RecordBranch() string { return a.Branch }

// RecordTime implements Record.
func (a Alias) RecordTime() time.Time { return a.CreatedAt }

// AliasRef returns the Ref of the alias with the given id.
func AliasRef(id string) Ref { return Ref{Kind: KindAlias, ID: id} }

// ResolveAlias follows the aliases of a fact id that get does not find as a fact:
// get(ref) reads one record as a view sees it, returning ErrNotFound when there is
// none. A ref of another kind, a fact found directly, or an error other than
// ErrNotFound is returned as get returns it. Stores call it from Get.
func ResolveAlias(ctx context.Context, ref Ref, get func(Ref) (Record, error)) (Record, error) {
	rec, err := get(ref)
	if ref.Kind != KindFact || !errors.Is(err, ErrNotFound) || errors.Is(err, ErrBranchNotFound) {
		return rec, err
	}
	notFound := err
	seen := map[string]bool{ref.ID: true}
	id := ref.ID
	for range MaxAliasHops {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		a, err := get(AliasRef(id))
		if errors.Is(err, ErrNotFound) {
			return nil, notFound
		}
		if err != nil {
			return nil, err
		}
		id = a.(Alias).Target
		if seen[id] {
			return nil, fmt.Errorf("%w: the alias %q of %s loops", notFound, a.RecordID(), ref)
		}
		seen[id] = true
		rec, err := get(FactRef(id))
		if err == nil || !errors.Is(err, ErrNotFound) {
			return rec, err
		}
	}
	return nil, fmt.Errorf("%w: %s resolves through more than %d aliases", notFound, ref, MaxAliasHops)
}

// AliasAfterPut says what a Put of a new fact under id (one that names no fact on the
// branch) does to the alias of that id, alias (nil for none), given the fact's result
// res, by the rules of Alias: it sets res.AliasOf and returns the alias to write, or
// del when the alias must be deleted. A Deduplicated fact under a caller's id names the
// fact it matched; a fact written under the id replaces the alias. Stores call it for
// each new fact of a batch.
func AliasAfterPut(res *PutResult, id string, alias *Alias, generated map[string]bool, now time.Time, branch string) (write *Alias, del bool) {
	switch {
	case res.Outcome == Deduplicated && res.Replaced != "" && res.Replaced != id:
		if generated[id] {
			return nil, false
		}
		res.AliasOf = res.Replaced
		if alias != nil && alias.Target == res.Replaced {
			return nil, false
		}
		return &Alias{ID: id, Branch: branch, Target: res.Replaced, CreatedAt: now.UTC()}, false
	case res.Outcome == Created || res.Outcome == Superseded:
		return nil, alias != nil
	}
	return nil, false
}
