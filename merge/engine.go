package merge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/day1ai/day1/store"
)

// DefaultMergedBy is recorded as MergeRecord.MergedBy when a Request leaves it empty.
const DefaultMergedBy = "day1"

// DefaultRetries is how many times a merge is planned again after the target changed
// under it, when Engine.Retries is zero. Retries wait a growing, jittered pause
// (from about 10 ms to at most half a second), so merges that race from several
// engines or processes spread out and all land.
const DefaultRetries = 8

// Request asks for one merge of Source into Target.
type Request struct {
	// Source is the branch whose changes are merged. Required.
	Source string
	// Target is the branch that receives them. Required; it must differ from Source.
	Target string
	// Strategy is store.Native, store.CherryPick, store.Squash or store.Auto. Empty
	// means store.Native.
	Strategy store.Strategy
	// Policy settles conflicts of Native and Squash merges: store.ConflictFail (the
	// default) refuses the merge, store.ConflictSkip keeps the target's version,
	// store.ConflictAccept takes the source's. It must be empty for CherryPick (the
	// source always wins) and Auto (the Resolver decides).
	Policy store.ConflictPolicy
	// Pick names the records a CherryPick merge copies. Required and non-empty for
	// CherryPick, and must be empty otherwise. Repeated refs count once.
	Pick []store.Ref
	// MarkMerged sets the source's status to merged (store.BranchMerged, with
	// MergedInto and MergedAt) when the merge is applied: for a branch whose work is
	// done. Default false: the source stays active, as a branch that keeps syncing with
	// the target should. The default branch is never marked merged: asking for it is a
	// *store.ValidationError. A merged branch stays readable and writable.
	MarkMerged bool
	// MergedBy is recorded in the merge history. Empty means DefaultMergedBy.
	MergedBy string
	// Message is recorded in the merge history.
	Message string
	// Gate, when set, checks this merge instead of Engine.Gate. A merge checked by a
	// gate (this one or Engine.Gate) promotes, as Promote does.
	Gate Gate
	// Promote writes the verified facts the merge brings to the target (live, with
	// Status verified or Verify.Status verified; see store.Fact.IsVerified) with Status
	// store.FactPromoted: knowledge promoted to a shared branch. The source keeps its
	// versions. Task completion and every gated merge promote. Default false.
	Promote bool
	// DryRun computes the plan and the record, runs the gate, and returns them without
	// changing anything.
	DryRun bool
}

// Result is what a merge did or, for a dry run, would do.
type Result struct {
	// Record is the merge history entry: as the store recorded it, or as it would be
	// recorded for a dry run.
	Record store.MergeRecord
	// Plan is the plan that was (or would be) applied: the records written to the
	// target and the refs deleted from it.
	Plan store.MergePlan
	// Diff is the diff the plan was computed from (the last one, after retries). For
	// native and cherry-pick merges on a store that lists lean diffs (the embedded store
	// does; see store.LeanDiffer), the facts and observations in Diff and Plan carry no
	// embeddings; the merged records keep theirs.
	Diff *store.Diff
	// Applied reports whether the plan was applied; false for a dry run.
	Applied bool
}

// Store is what the merge engine needs of a store: to read a record, to diff two
// branches and to apply a plan. Every store.Store is one; a store that also lists lean
// diffs (store.LeanDiffer) is used that way.
type Store interface {
	// Get returns one record as the view sees it, or store.ErrNotFound.
	Get(ctx context.Context, v store.View, ref store.Ref) (store.Record, error)
	// Diff lists the changes of source and target since their merge base.
	Diff(ctx context.Context, source, target string) (*store.Diff, error)
	// ApplyMerge applies a plan atomically and records it.
	ApplyMerge(ctx context.Context, plan store.MergePlan) (store.MergeRecord, error)
}

// Engine merges branches of one store. Its zero value is not usable: Store is required.
// An Engine keeps no state between merges beyond which targets it is merging into,
// so that merges into one target through it queue instead of racing; it must not be
// copied after first use. It is safe for concurrent use when its Store, Resolver,
// Gate, NewID and Now are.
type Engine struct {
	// Store is the store that holds both branches. Required.
	Store Store
	// Resolver decides the conflicts of Auto merges. Nil means DefaultResolver().
	Resolver Resolver
	// Gate checks every plan before it is applied. Nil means no gate. Request.Gate
	// overrides it.
	Gate Gate
	// NewID returns ids for merge records and for records a merge creates (merged
	// facts). Nil means a time-ordered random id.
	NewID func() string
	// Now is the clock of merge records and of the facts a merge marks superseded.
	// Nil means time.Now.
	Now func() time.Time
	// Contradicts reports whether two fact texts, the source's first, state different
	// things about the same subject. When set, a live fact the source added that
	// contradicts one the target added since the merge base is a conflict
	// (store.Contradictory, see AddContradictions), settled by the policy or the
	// resolver like the others. Nil: facts under different ids never conflict.
	Contradicts func(source, target string) bool
	// Duplicates reports, for each pair of fact texts (the source's first), whether
	// the two say the same thing (near-duplicates); a merge asks once, for every
	// candidate pair. When set, a live fact the source added that duplicates one the
	// target added since the merge base, under another id and with another text, is a
	// conflict (store.Duplicate, see AddDuplicates), settled like the others:
	// accepting the source's fact supersedes the target's. Nil: only facts of the same
	// text are found alike (and deduplicated).
	Duplicates func(ctx context.Context, pairs [][2]string) ([]bool, error)
	// Logger receives the merges planned again because the target changed meanwhile
	// (Info, with the branches and the attempt). Nil logs nothing.
	Logger *slog.Logger
	// Retries is how many times a merge is diffed and planned again when
	// Store.ApplyMerge reports store.ErrStale (the target changed after the diff).
	// 0 means DefaultRetries; a negative value means no retry.
	Retries int

	// Merges into one target through this Engine run one at a time, so they never
	// make each other stale; merges through other engines or processes are retried.
	mu      sync.Mutex
	targets map[string]chan struct{}
}

// Merge merges req.Source into req.Target following req.Strategy, atomically: either the
// whole plan is applied and recorded in the merge history, or nothing changes.
//
// Errors: a *store.ValidationError (store.ErrInvalidArgument) for a bad request; a
// *store.MergeConflictError (store.ErrConflict) when a Native or Squash merge with the
// fail policy meets conflicts; a *store.MergeBlockedError (store.ErrMergeBlocked) when
// the gate refuses; store.ErrStale when the target kept changing through every retry;
// the store's errors (store.ErrBranchNotFound, ...), the resolver's, the gate's and
// ctx's otherwise. A request for a record to cherry-pick that the source does not have
// is a *store.ValidationError on Request.Pick that also matches store.ErrNotFound.
func (e *Engine) Merge(ctx context.Context, req Request) (Result, error) {
	if e == nil || e.Store == nil {
		return Result{}, store.Invalid("Engine.Store", "must be set to the store that holds the branches", nil)
	}
	req, err := normalize(req)
	if err != nil {
		return Result{}, err
	}
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	gate := req.Gate
	if gate == nil {
		gate = e.Gate
	}
	retries := e.Retries
	switch {
	case retries == 0:
		retries = DefaultRetries
	case retries < 0:
		retries = 0
	}
	if !req.DryRun {
		unlock, err := e.lockTarget(ctx, req.Target)
		if err != nil {
			return Result{}, err
		}
		defer unlock()
	}
	now := e.now()
	id := e.newID()
	pause := newPause()
	for attempt := 0; ; attempt++ {
		diff, err := e.diff(ctx, req)
		if err != nil {
			return Result{}, wrap(req, "diff", err)
		}
		if diff == nil {
			return Result{}, fmt.Errorf("day1: merge %s into %s: the store returned no diff", req.Source, req.Target)
		}
		p := &planner{e: e, req: req, diff: diff, now: now, b: newBuilder(len(diff.SourceChanges)), promote: req.Promote || gate != nil}
		plan, err := p.plan(ctx, id)
		if err != nil {
			return Result{}, err
		}
		if gate != nil {
			if err := check(ctx, gate, req, plan); err != nil {
				return Result{}, err
			}
		}
		res := Result{Record: plan.Record, Plan: plan, Diff: diff}
		if req.DryRun {
			return res, nil
		}
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		rec, err := e.Store.ApplyMerge(ctx, plan)
		if errors.Is(err, store.ErrStale) {
			store.Logger(e.Logger).Info("day1: merge: the target changed since the diff; planning again",
				"source", req.Source, "target", req.Target, "attempt", attempt+1, "retries", retries)
			if attempt < retries {
				if err := pause.wait(ctx); err != nil {
					return Result{}, err
				}
				continue
			}
			return Result{}, fmt.Errorf("day1: merge %s into %s: the target changed during each of %d attempt(s); retry later: %w",
				req.Source, req.Target, attempt+1, err)
		}
		if err != nil {
			return Result{}, wrap(req, "apply", err)
		}
		if rec.ID != "" {
			res.Record = rec
		}
		res.Applied = true
		return res, nil
	}
}

// lockTarget waits until no other merge into target runs through e, or ctx ends, and
// returns the function that lets the next one go.
func (e *Engine) lockTarget(ctx context.Context, target string) (func(), error) {
	e.mu.Lock()
	if e.targets == nil {
		e.targets = map[string]chan struct{}{}
	}
	slot, ok := e.targets[target]
	if !ok {
		slot = make(chan struct{}, 1)
		e.targets[target] = slot
	}
	e.mu.Unlock()
	select {
	case slot <- struct{}{}:
		return func() { <-slot }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// pause is the wait between attempts of a merge whose target changed under it.
type pause struct{ b *backoff.ExponentialBackOff }

func newPause() *pause {
	b := backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(10*time.Millisecond),
		backoff.WithMaxInterval(500*time.Millisecond),
		backoff.WithRandomizationFactor(0.5),
		backoff.WithMaxElapsedTime(0))
	return &pause{b: b}
}

// wait sleeps the next pause, or until ctx ends.
func (p *pause) wait(ctx context.Context) error {
	t := time.NewTimer(p.b.NextBackOff())
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// diff lists the changes a merge plans from. Native and cherry-pick plans write
// records as one side holds them, so they take a lean diff when the store offers one
// (see store.LeanDiffer); squash and auto merges can write records of their own making
// and take a whole one.
func (e *Engine) diff(ctx context.Context, req Request) (*store.Diff, error) {
	var d *store.Diff
	var err error
	if ld, ok := e.Store.(store.LeanDiffer); ok && (req.Strategy == store.Native || req.Strategy == store.CherryPick) {
		d, err = ld.DiffLean(ctx, req.Source, req.Target)
	} else {
		d, err = e.Store.Diff(ctx, req.Source, req.Target)
	}
	if err == nil {
		AddContradictions(d, e.Contradicts)
		err = AddDuplicates(ctx, d, e.Duplicates)
	}
	return d, err
}

// check runs the gate on a copy of the plan.
func check(ctx context.Context, gate Gate, req Request, plan store.MergePlan) error {
	cp := plan
	cp.Puts = slices.Clone(plan.Puts)
	cp.Deletes = slices.Clone(plan.Deletes)
	cp.Record.Merged = slices.Clone(plan.Record.Merged)
	cp.Record.Rejected = slices.Clone(plan.Record.Rejected)
	cp.Record.Resolutions = slices.Clone(plan.Record.Resolutions)
	offenses, err := gate.Check(ctx, &cp)
	if err != nil {
		return fmt.Errorf("%w (merge %s into %s: gate %s)", err, req.Source, req.Target, gate.Name())
	}
	if len(offenses) > 0 {
		return &store.MergeBlockedError{Source: req.Source, Target: req.Target, Gate: gate.Name(), Offenses: offenses}
	}
	return nil
}

// wrap adds the merge and the step that failed to a store error, keeping its message
// first so it still starts with "day1:".
func wrap(req Request, step string, err error) error {
	return fmt.Errorf("%w (merge %s into %s: %s)", err, req.Source, req.Target, step)
}

func (e *Engine) now() time.Time {
	if e.Now != nil {
		return e.Now().UTC()
	}
	return time.Now().UTC()
}

func (e *Engine) newID() string {
	if e.NewID != nil {
		return e.NewID()
	}
	return newTimeID(e.now())
}

func (e *Engine) resolver() Resolver {
	if e.Resolver != nil {
		return e.Resolver
	}
	return DefaultResolver()
}

// normalize fills the request's defaults and checks it.
func normalize(req Request) (Request, error) {
	if err := store.ValidateBranchName("Request.Source", req.Source); err != nil {
		return req, err
	}
	if err := store.ValidateBranchName("Request.Target", req.Target); err != nil {
		return req, err
	}
	if req.Source == req.Target {
		return req, store.Invalid("Request.Target", "must differ from Request.Source; a branch cannot be merged into itself", req.Target)
	}
	if req.Strategy == "" {
		req.Strategy = store.Native
	}
	if !req.Strategy.Valid() {
		return req, store.Invalid("Request.Strategy", "must be native, cherry_pick, squash or auto", req.Strategy)
	}
	if !req.Policy.Valid() {
		return req, store.Invalid("Request.Policy", "must be fail, skip or accept", req.Policy)
	}
	switch req.Strategy {
	case store.Native, store.Squash:
		if req.Policy == "" {
			req.Policy = store.ConflictFail
		}
	case store.CherryPick:
		if req.Policy != "" {
			return req, store.Invalid("Request.Policy", "must be empty for cherry_pick: the picked source version always wins", req.Policy)
		}
	case store.Auto:
		if req.Policy != "" {
			return req, store.Invalid("Request.Policy", "must be empty for auto: the resolver decides every conflict", req.Policy)
		}
	}
	if req.Strategy == store.CherryPick {
		if len(req.Pick) == 0 {
			return req, store.Invalid("Request.Pick", "must name at least one record to cherry-pick", nil)
		}
		if len(req.Pick) > store.MaxBatch {
			return req, store.Invalid("Request.Pick", fmt.Sprintf("names %d records; at most %d are allowed", len(req.Pick), store.MaxBatch), nil)
		}
		seen := make(map[store.Ref]bool, len(req.Pick))
		picks := make([]store.Ref, 0, len(req.Pick))
		for i, ref := range req.Pick {
			if err := store.ValidateRef(fmt.Sprintf("Request.Pick[%d]", i), ref); err != nil {
				return req, err
			}
			if !seen[ref] {
				seen[ref] = true
				picks = append(picks, ref)
			}
		}
		req.Pick = picks
	} else if len(req.Pick) > 0 {
		return req, store.Invalid("Request.Pick", "must be empty unless the strategy is cherry_pick", nil)
	}
	if req.MarkMerged && req.Source == store.DefaultBranch {
		return req, store.Invalid("Request.MarkMerged", "must be false when the source is the default branch, which is never marked merged", req.Source)
	}
	if req.MergedBy == "" {
		req.MergedBy = DefaultMergedBy
	}
	return req, nil
}
