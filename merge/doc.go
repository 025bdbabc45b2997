// Package merge is day1's merge engine: it turns the diff of two branches into a merge
// plan following a strategy, asks an optional gate whether the plan may land, and has
// the store apply it atomically, with a history record.
//
// The engine depends on the store package only. It needs three methods of a store
// (Store: Get, Diff, ApplyMerge), so any store.Store works: the engine reads a
// store.Diff, decides, and hands one store.MergePlan to Store.ApplyMerge.
//
// # Strategies
//
//   - store.Native adopts every change the source made since the merge base. Conflicts
//     follow the request's store.ConflictPolicy: fail (the default) refuses the merge
//     with a *store.MergeConflictError, skip keeps the target's version, accept takes
//     the source's.
//   - store.CherryPick copies the records named in Request.Pick, as the source has them
//     now; the source's version wins over the target's. It does not move the merge base.
//   - store.Squash is Native for the net effect: facts created and superseded on the
//     source never reach the target; the last fact of each chain does, its ParentID
//     pointing at the first ancestor the target has.
//   - store.Auto adopts non-conflicting changes and asks a Resolver about each conflict:
//     keep the source's, keep the target's, keep both, or write a merged record.
//
// Three kinds of conflict exist: store.BothChanged (both sides changed the same record
// differently), store.BothSuperseded (each side added a different fact superseding
// the same parent) and, when Engine.Contradicts is set, store.Contradictory (each side
// added a fact, under different ids, and the two contradict each other: the cache TTL
// is 24 hours on one side, 12 on the other). When the source wins a conflict of
// competing facts, the target's fact is kept and marked superseded, so exactly one
// live truth remains; keeping both keeps both live.
//
// # The merge base
//
// A diff compares each side with the merge base: the newest state both branches
// descend from. For a fresh branch that is its fork point. Every merge except a
// cherry-pick then becomes the new base of its two branches, in both directions, as a
// merge commit does in git: the store records a merge point (the target at the
// merge, the source as it was diffed), and store.History finds bases over forks and
// merge points. So an agent branch that syncs with main and delivers to it again and
// again diffs only what is new each time:
//
//	main  ──m0──────────M1────b1'──────────M2──
//	          \         /                  /
//	b          ●──b1───◆──────n2──────────●
//	         fork      b as M1 took it: the base of Diff(b, main) until M2
//
// After M1 took b into main, Diff(b, main) starts from b as M1 merged it: main's
// newer b1' is a change of the target only, n2 a change of the source only, and
// nothing conflicts. A merge of main into b (a sync) moves the base the same way.
//
// The decisions of a merge stick: a conflict settled by skip or by the resolver is not
// offered again by the next merge of the pair. A cherry-pick copies records without
// moving the base, so the records it did not pick still show as changes. When each of
// two branches took the other from before either merge (a criss-cross), they have two
// bases; a record's version at the base is then the one both hold, or the one change
// some of them made from their own base, and otherwise conflicts.
//
// # Marking the source merged
//
// A merge leaves the source active unless Request.MarkMerged asks to mark it merged
// (for a branch whose work is done); the default branch is never marked. A merged
// branch stays readable and writable.
//
// # Deduplication
//
// A fact the source added whose text equals a live fact the target added under
// another id is not written beside it: the merge records it with
// store.ActionDeduplicate, as a direct write of that text would have been
// Deduplicated.
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
