package curation_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1/curation"
	"github.com/day1ai/day1/llm/llmfake"
	"github.com/day1ai/day1/merge"
	"github.com/day1ai/day1/store"
)

const task = "task/auth"

// pickSetup writes the debug conversation on agent, forked from task, forked from main.
func pickSetup(t *testing.T, e *curation.Engine, st store.Store) {
	t.Helper()
	branch(t, st, task, "main")
	branch(t, st, agent, task)
	put(t, st, agent, debugConversation("c1")...)
}

func seqs(ms []store.Message) []int {
	var out []int
	for _, m := range ms {
		out = append(out, m.Seq)
	}
	return out
}

func TestCherryPickConversation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, st := newEngine(t, nil)
	pickSetup(t, e, st)
	res, err := e.CherryPickConversation(ctx, curation.ConversationPick{Source: agent, Target: task, ConversationID: "c1", Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Conversation.ID != "c1" || len(res.Messages) != 8 || len(res.Picked) != 8 || res.Verdict == nil || res.Verdict.Status != store.Verified {
		t.Fatalf("result = %+v", res)
	}
	for _, b := range []string{agent, task} {
		if got := getConv(t, st, b, "c1").Verify.Status; got != store.Verified {
			t.Errorf("conversation on %s: verification %q; want verified", b, got)
		}
		for _, m := range listMessages(t, st, b, "c1") {
			if diff := cmp.Diff([]string{task}, m.PickedTo); diff != "" {
				t.Errorf("%s on %s PickedTo (-want +got):\n%s", m.ID, b, diff)
			}
		}
	}
	// Both branches hold the same records: a later merge has nothing to reconcile.
	d, err := st.Diff(ctx, agent, task)
	if err != nil {
		t.Fatal(err)
	}
	if !d.Empty() {
		t.Errorf("diff after the pick = %+v; want empty", d)
	}
	// Picking again changes nothing.
	before, _ := st.GetBranch(ctx, task)
	if _, err := e.CherryPickConversation(ctx, curation.ConversationPick{Source: agent, Target: task, ConversationID: "c1"}); err != nil {
		t.Fatal(err)
	}
	if after, _ := st.GetBranch(ctx, task); after.Head != before.Head {
		t.Errorf("a repeated pick changed the target (head %d -> %d)", before.Head, after.Head)
	}
}

func TestCherryPickConversationWithoutMessages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, st := newEngine(t, nil)
	pickSetup(t, e, st)
	res, err := e.CherryPickConversation(ctx, curation.ConversationPick{Source: agent, Target: task, ConversationID: "c1", WithoutMessages: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Messages) != 0 || res.Verdict != nil {
		t.Errorf("result = %+v", res)
	}
	if got := listMessages(t, st, task, "c1"); len(got) != 0 {
		t.Errorf("messages on the target: %d", len(got))
	}
	if getConv(t, st, task, "c1").Title != "fix the auth bug" {
		t.Error("the conversation was not copied")
	}
	for _, m := range listMessages(t, st, agent, "c1") {
		if len(m.PickedTo) != 0 {
			t.Errorf("%s was marked picked though no message was copied", m.ID)
		}
	}
}

// Verify judges the whole conversation even when its messages are not copied.
func TestCherryPickConversationWithoutMessagesVerified(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, st := newEngine(t, nil)
	pickSetup(t, e, st)
	all := listMessages(t, st, agent, "c1")
	res, err := e.CherryPickConversation(ctx, curation.ConversationPick{Source: agent, Target: task, ConversationID: "c1", WithoutMessages: true, Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict == nil || len(res.Messages) != 0 || len(res.Picked) != 0 {
		t.Fatalf("result = %+v", res)
	}
	if diff := cmp.Diff(curation.HeuristicConversationScores(all), res.Verdict.Scores); diff != "" {
		t.Errorf("scores (-want over all messages +got):\n%s", diff)
	}
	if len(res.Verdict.KeyDecisions) == 0 {
		t.Error("no key decisions: the judge did not see the messages")
	}
	for _, b := range []string{agent, task} {
		if got := getConv(t, st, b, "c1").Verify.Status; got != res.Verdict.Status {
			t.Errorf("conversation on %s: verification %q; want %q", b, got, res.Verdict.Status)
		}
	}
	if got := listMessages(t, st, task, "c1"); len(got) != 0 {
		t.Errorf("messages on the target: %d", len(got))
	}
}

func TestCherryPickMessages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, st := newEngine(t, nil)
	pickSetup(t, e, st)
	res, err := e.CherryPickMessages(ctx, curation.MessagePick{Source: agent, Target: task, ConversationID: "c1", FromSeq: 3, ToSeq: 7})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{1, 2, 3, 4, 5}, seqs(res.Messages)); diff != "" {
		t.Errorf("target sequence numbers (-want +got):\n%s", diff)
	}
	conv := res.Conversation
	if conv.Title != "fix the auth bug (messages 3 to 7)" || conv.AgentID != "agent-a" || conv.Metadata[curation.MetaPickedRange] != "3-7" {
		t.Errorf("new conversation = %+v", conv)
	}
	m := res.Messages[1]
	if m.Content != "FAILED: TestRefresh: token expired" || m.Metadata[curation.MetaPickedFromMessage] != "c1-m4" ||
		m.Metadata[curation.MetaPickedFromSeq] != "4" || m.Metadata[curation.MetaPickedFromBranch] != agent || m.ConversationID != conv.ID {
		t.Errorf("copied message = %+v", m)
	}
	if diff := cmp.Diff([]string{"c1-m3", "c1-m4", "c1-m5", "c1-m6", "c1-m7"}, res.Picked); diff != "" {
		t.Errorf("picked (-want +got):\n%s", diff)
	}
	for _, sm := range listMessages(t, st, agent, "c1") {
		want := sm.Seq >= 3 && sm.Seq <= 7
		if got := len(sm.PickedTo) == 1 && sm.PickedTo[0] == task; got != want {
			t.Errorf("source message %d PickedTo = %v", sm.Seq, sm.PickedTo)
		}
	}
	// A second range appends to the same conversation.
	res2, err := e.CherryPickMessages(ctx, curation.MessagePick{Source: agent, Target: task, ConversationID: "c1", FromSeq: 8, ToSeq: 8,
		TargetConversationID: conv.ID, Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{6}, seqs(res2.Messages)); diff != "" {
		t.Errorf("appended sequence numbers (-want +got):\n%s", diff)
	}
	if res2.Conversation.Title != conv.Title || res2.Verdict == nil || res2.Conversation.Verify.Status == store.Unverified {
		t.Errorf("appended-to conversation = %+v, verdict %v", res2.Conversation, res2.Verdict)
	}
	if got := listMessages(t, st, task, conv.ID); len(got) != 6 {
		t.Errorf("target conversation holds %d messages; want 6", len(got))
	}
	// A named conversation the target lacks is created with that id.
	res3, err := e.CherryPickMessages(ctx, curation.MessagePick{Source: agent, Target: task, ConversationID: "c1", FromSeq: 1, ToSeq: 2, TargetConversationID: "kept", Title: "kept"})
	if err != nil || res3.Conversation.ID != "kept" || res3.Conversation.Title != "kept" {
		t.Errorf("pick into a new named conversation = %+v, %v", res3.Conversation, err)
	}
}

func TestCherryPickBadInput(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, st := newEngine(t, nil)
	pickSetup(t, e, st)
	for _, c := range []struct {
		name  string
		p     curation.MessagePick
		field string
	}{
		{"no target", curation.MessagePick{Source: agent, ConversationID: "c1", FromSeq: 1, ToSeq: 2}, "MessagePick.Target"},
		{"no conversation", curation.MessagePick{Source: agent, Target: task, FromSeq: 1, ToSeq: 2}, "MessagePick.ConversationID"},
		{"negative", curation.MessagePick{Source: agent, Target: task, ConversationID: "c1", FromSeq: -1, ToSeq: 2}, "MessagePick.FromSeq"},
		{"inverted", curation.MessagePick{Source: agent, Target: task, ConversationID: "c1", FromSeq: 5, ToSeq: 2}, "MessagePick.ToSeq"},
		{"empty", curation.MessagePick{Source: agent, Target: task, ConversationID: "c1", FromSeq: 20, ToSeq: 30}, "MessagePick.FromSeq"},
		{"into itself", curation.MessagePick{Source: agent, Target: agent, ConversationID: "c1", FromSeq: 1, ToSeq: 2, TargetConversationID: "c1"}, "MessagePick.TargetConversationID"},
	} {
		_, err := e.CherryPickMessages(ctx, c.p)
		var ve *store.ValidationError
		if !errors.As(err, &ve) || ve.Field != c.field {
			t.Errorf("%s: CherryPickMessages = %v; want a ValidationError on %s", c.name, err, c.field)
		}
	}
	if _, err := e.CherryPickMessages(ctx, curation.MessagePick{Source: agent, Target: task, ConversationID: "nope", FromSeq: 1, ToSeq: 2}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown conversation = %v; want ErrNotFound", err)
	}
	if _, err := e.CherryPickConversation(ctx, curation.ConversationPick{Source: agent, Target: agent, ConversationID: "c1"}); !errors.Is(err, store.ErrInvalidArgument) {
		t.Errorf("pick to its own branch = %v; want ErrInvalidArgument", err)
	}
	if _, err := e.CherryPickConversation(ctx, curation.ConversationPick{Source: agent, Target: "missing", ConversationID: "c1"}); !errors.Is(err, store.ErrBranchNotFound) {
		t.Errorf("pick to a missing branch = %v; want ErrBranchNotFound", err)
	}
	// Nothing was written by any of the failures.
	for _, m := range listMessages(t, st, agent, "c1") {
		if len(m.PickedTo) != 0 {
			t.Errorf("a failed pick marked %s", m.ID)
		}
	}
}

func TestCherryPickDecisions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("heuristic", func(t *testing.T) {
		t.Parallel()
		e, st := newEngine(t, nil)
		pickSetup(t, e, st)
		res, err := e.CherryPickDecisions(ctx, curation.DecisionPick{Source: agent, Target: task, ConversationID: "c1"})
		if err != nil {
			t.Fatal(err)
		}
		if res.By != "heuristic" || len(res.Decisions) != 2 || res.Conversation.Title != "fix the auth bug (decisions)" {
			t.Errorf("result = %+v", res)
		}
		var from []string
		for _, m := range res.Messages {
			from = append(from, m.Metadata[curation.MetaPickedFromSeq])
		}
		if diff := cmp.Diff([]string{"2", "5"}, from); diff != "" {
			t.Errorf("picked decisions (-want +got):\n%s", diff)
		}
	})
	t.Run("model", func(t *testing.T) {
		t.Parallel()
		m := llmfake.NewModel().On(`key decisions`, `{"decisions": [{"seq": 8, "reason": "states the fix"}, {"seq": 42}, {"seq": 5, "reason": "recovers"}]}`)
		e, st := newEngine(t, m)
		pickSetup(t, e, st)
		res, err := e.CherryPickDecisions(ctx, curation.DecisionPick{Source: agent, Target: task, ConversationID: "c1"})
		if err != nil {
			t.Fatal(err)
		}
		want := []curation.DecisionPoint{
			{Seq: 5, MessageID: "c1-m5", Reasons: []string{"recovers"}},
			{Seq: 8, MessageID: "c1-m8", Reasons: []string{"states the fix"}},
		}
		if diff := cmp.Diff(want, res.Decisions); diff != "" {
			t.Errorf("decisions (-want +got):\n%s", diff)
		}
		if res.By != "model:llmfake" || len(res.Messages) != 2 {
			t.Errorf("result = %+v", res)
		}
	})
	t.Run("none", func(t *testing.T) {
		t.Parallel()
		e, st := newEngine(t, llmfake.NewModel().Default(`{"decisions": []}`))
		pickSetup(t, e, st)
		res, err := e.CherryPickDecisions(ctx, curation.DecisionPick{Source: agent, Target: task, ConversationID: "c1"})
		if err != nil || res.Conversation.ID != "" || len(res.Messages) != 0 {
			t.Errorf("no decisions = %+v, %v; want nothing written", res, err)
		}
	})
	t.Run("malformed", func(t *testing.T) {
		t.Parallel()
		e, st := newEngine(t, llmfake.NewModel().Default(`{"decisions": [{"reason": "no seq"}]}`))
		pickSetup(t, e, st)
		if _, err := e.CherryPickDecisions(ctx, curation.DecisionPick{Source: agent, Target: task, ConversationID: "c1"}); !isMalformed(err) {
			t.Errorf("CherryPickDecisions = %v; want a MalformedOutputError", err)
		}
		convs, _ := st.List(ctx, store.View{Branch: task}, store.ListQuery{Kind: store.KindConversation})
		if len(convs) != 0 {
			t.Errorf("a failed pick wrote %d conversations", len(convs))
		}
	})
}

// Cherry-picked conversations pass a merge gate that checks conversations once they
// are verified.
func TestCherryPickThenGate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, st := newEngine(t, nil)
	pickSetup(t, e, st)
	if _, err := e.CherryPickMessages(ctx, curation.MessagePick{Source: agent, Target: task, ConversationID: "c1", FromSeq: 2, ToSeq: 8, Verify: true}); err != nil {
		t.Fatal(err)
	}
	eng := &merge.Engine{Store: st, Gate: curation.Gate{Conversations: true}}
	if _, err := eng.Merge(ctx, merge.Request{Source: task, Target: "main"}); err != nil {
		t.Fatalf("merge of a verified pick = %v", err)
	}
}
