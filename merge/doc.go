// Package merge is day1's merge engine: it turns the diff of two branches into a merge
// plan following a strategy, asks an optional gate whether the plan may land, and has
// the store apply it atomically, with a history record.
//
// The engine depends on the store package only. Any store.Store works: the engine
// reads a store.Diff, decides, and hands one store.MergePlan to Store.ApplyMerge.
//
// # Strategies
//
//   - store.Native adopts every change the source made since the merge base. Conflicts
//     follow the request's store.ConflictPolicy: fail (the default) refuses the merge
//     with a *store.MergeConflictError, skip keeps the target's version, accept takes
//     the source's.
//   - store.CherryPick copies the records named in Request.Pick, as the source has them
//     now; the source's version wins over the target's. The source is not marked merged.
//   - store.Squash is Native for the net effect: facts created and superseded on the
//     source never reach the target; the last fact of each chain does, its ParentID
//     pointing at the first ancestor the target has.
//   - store.Auto adopts non-conflicting changes and asks a Resolver about each conflict:
//     keep the source's, keep the target's, keep both, or write a merged record.
//
// Two kinds of conflict exist: store.BothChanged (both sides changed the same record
// differently) and store.BothSuperseded (each side added a different fact superseding
// the same parent). When the source wins a BothSuperseded conflict, the target's
// competing fact is kept and marked superseded, so exactly one live successor remains.
//
// # Gates
//
// A Gate sees the finished plan before anything is written and may refuse it with a
// list of offending records; the merge then fails with a *store.MergeBlockedError and
// nothing changes.
//
// # Atomicity and concurrency
//
// A merge is one Store.ApplyMerge call. The plan carries the target head the diff was
// taken at; if the target moved since, the store refuses with store.ErrStale and the
// engine diffs and plans again, up to Engine.Retries times.
//
// # Overview
//
//	eng := &merge.Engine{Store: st}
//	res, err := eng.Merge(ctx, merge.Request{
//		Source:   "task/fix-auth/agent-a",
//		Target:   "task/fix-auth",
//		Strategy: store.Auto,
//		MergedBy: "agent-a",
//	})
//	var conflict *store.MergeConflictError
//	switch {
//	case errors.As(err, &conflict):
//		// choose a policy or the auto strategy
//	case err != nil:
//		return err
//	}
//	fmt.Println(res.Record.ID, len(res.Record.Merged), "records merged")
package merge
