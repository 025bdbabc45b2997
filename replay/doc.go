// Package replay rebuilds what happened in memory: a whole task's run, step by step,
// and single conversations, which it can fork and compare.
//
// The package depends on the store, llm, handoff and curation packages only. An
// [Engine] works on any store.Store; its Embedder is optional.
//
// # Task replay
//
// [Engine.TaskReplay] reads a task (see the handoff package), the records of its
// branch and of its members' branches, its merges and its audit trail, and returns a
// [TaskReplay]: an ordered timeline of [Event] (agents joining and leaving, objective
// changes, facts, observations, conversations and messages, verifications, handoffs
// and their status changes, checkpoints, merges, completion), each agent's
// [Contribution], the verified facts and conversations, and the [Outcome].
//
// Every event carries the commit instant of its step: a time-travel read at Event.At
// of Event.Branch shows memory exactly as that step left it, which makes the
// timeline a list of points to open. [Options] leave out conversations, add
// observations, keep only verified knowledge, or replay the task as it stood at a
// snapshot or an instant.
//
//	e := &replay.Engine{Store: st}
//	tr, err := e.TaskReplay(ctx, "fix-oauth-token-refresh", replay.Options{})
//	if err != nil {
//		return err
//	}
//	for _, ev := range tr.Timeline {
//		fmt.Println(ev.At.Format(time.TimeOnly), ev.Kind, ev.Agent, ev.Summary)
//	}
//
// # Comparing runs
//
// [Engine.CompareTaskRuns] sets two runs of a task side by side (an original and a
// rerun with another model, say): agents matched by id, then by role; decision points
// of their conversations (curation.FindDecisions); the facts only one run produced
// and those both did, matched as near-duplicates by the Engine's Embedder (cosine at
// or above Engine.Similarity, default [DefaultSimilarity]) or, without one, by equal
// normalised text (store.NormText); verification scores, durations, handoffs and
// errors.
//
// # Conversations
//
// [Engine.ForkConversation] branches memory at one message of a conversation, so
// that the conversation can be run again from there; [Engine.DiffConversations]
// aligns two conversations message by message, says where they diverge and which
// tool calls differ.
package replay
