// Package curation turns raw agent memory into knowledge that can be trusted: it
// judges facts and conversations, gates merges on the verdicts, lets a language model
// decide merge conflicts, cherry-picks the conversations that were right, consolidates
// observations into facts, and keeps templates of good branches.
//
// The package depends on the store, llm and merge packages only. An [Engine] works on
// any store.Store; every method that can use an llm.Model also works without one,
// falling back to a documented heuristic, and says which path it took.
//
// # Verification
//
// [Engine.VerifyFact] scores a fact on accuracy, relevance and specificity (0 to 1
// each), with the fact's source and related facts of the same branch (possible
// conflicts) in the judge's prompt; [Engine.VerifyConversation] scores a conversation
// on its tools, reasoning, outcome and errors. A [Policy] turns the mean score into a
// status: verified at 0.6 or more, invalidated under 0.3 and pending between, by
// default; [StrictPolicy] verifies facts at 0.7, conversations at 0.6, and
// invalidates both under 0.4. Facts and conversations have thresholds of their own
// (Policy.ConversationVerifyAt); a batch may name its fact threshold. The verdict is written as a new version of
// the record: store.Verification with per-dimension store.Scores, and for a fact its
// Status. [Engine.VerifyBranch] judges every unverified record of a branch with
// bounded concurrency and reports progress through a callback.
//
// Without a model, [HeuristicFactScores] and [HeuristicConversationScores] score.
//
// # Merge gate and judge
//
// [Gate] is a merge.Gate: a merge that would write an invalidated record, or a fact
// that is not verified, fails with a *store.MergeBlockedError listing them, and
// nothing changes. [Engine.Summarize] counts a branch's verified, pending, unverified
// and invalidated records. [Resolver] is a merge.Resolver for auto merges: a model
// keeps the source's fact, the target's, both, or writes a merged fact.
//
//	e := &curation.Engine{Store: st, Model: model}
//	if _, err := e.VerifyBranch(ctx, curation.BatchRequest{Branch: "task/fix-auth"}); err != nil {
//		return err
//	}
//	eng := &merge.Engine{Store: st, Gate: curation.Gate{}, Resolver: &curation.Resolver{Model: model}}
//	_, err := eng.Merge(ctx, merge.Request{Source: "task/fix-auth", Target: "main", Strategy: store.Auto})
//	var blocked *store.MergeBlockedError
//	if errors.As(err, &blocked) {
//		for _, o := range blocked.Offenses {
//			fmt.Println(o.Ref, o.Reason)
//		}
//	}
//
// # Conversation cherry-pick
//
// [Engine.CherryPickConversation] copies a whole conversation (with or without its
// messages) to another branch under the same ids, so both branches hold the same
// records. [Engine.CherryPickMessages] copies a range of messages, by sequence
// number, into a new or an existing conversation; [Engine.CherryPickDecisions] copies
// only the decision points, found by the model or by [FindDecisions]'s heuristics.
// [Engine.CherryPickToolSequences] picks tool sequences (see [FindToolSequences]), each
// whole. Picked source messages record the target branch in PickedTo, and in Picks
// the branch, the receiving conversation and the time. [Engine.CherryPickFacts]
// turns a conversation into facts, which a model's extraction lands verified. Every
// pick writes the target in one atomic batch and can judge what it picks.
//
// # Consolidation
//
// [Engine.Consolidate] turns a session's observations into candidate facts, through a
// model that also names the existing facts they contradict (which are then
// superseded), or through heuristics; the store deduplicates repeats.
//
// # Templates
//
// A [Template] is a named, versioned snapshot of a branch for a kind of task:
// [Engine.CreateTemplate], [Engine.ListTemplates], [Engine.FindTemplate] (the best
// active template for a task type), [Engine.InstantiateTemplate] (a new branch forked
// from the snapshot), [Engine.UpdateTemplate] and
// [Engine.DeprecateTemplate]. Templates are store documents in the collection
// [TemplateCollection], written with preconditions so concurrent writers cannot lose
// each other's changes.
//
// # Model output
//
// Model replies are JSON objects read with llm.CompleteJSON. A reply that is not the
// JSON asked for, or whose values are missing or out of range, is an error wrapping
// *llm.MalformedOutputError and nothing is written; the merge [Resolver] alone falls
// back to its deterministic fallback instead, so that a merge does not fail on the
// model's formatting.
package curation
