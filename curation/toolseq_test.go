package curation_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1/curation"
	"github.com/day1ai/day1/store"
)

func TestFindToolSequences(t *testing.T) {
	t.Parallel()
	roles := []store.Role{
		store.RoleUser,       // 1
		store.RoleToolCall,   // 2: a run with no introduction
		store.RoleToolResult, // 3
		store.RoleAssistant,  // 4: introduces the next run
		store.RoleToolCall,   // 5
		store.RoleToolCall,   // 6
		store.RoleToolResult, // 7
		store.RoleToolResult, // 8
		store.RoleAssistant,  // 9: followed by no tool: no run
		store.RoleUser,       // 10
	}
	tools := map[int]string{2: "grep", 3: "grep", 5: "bash", 6: "edit", 7: "bash", 8: "edit"}
	var msgs []store.Message
	for i, r := range roles {
		msgs = append(msgs, store.Message{ID: "m" + string(rune('a'+i)), Seq: i + 1, Role: r, Tool: tools[i+1]})
	}
	got := curation.FindToolSequences(msgs)
	want := []curation.ToolSequence{
		{FromSeq: 2, ToSeq: 3, IntroSeq: -1, MessageIDs: []string{"mb", "mc"}, Tools: []string{"grep"}, Calls: 1, Results: 1},
		{FromSeq: 4, ToSeq: 8, IntroSeq: 4, MessageIDs: []string{"md", "me", "mf", "mg", "mh"}, Tools: []string{"bash", "edit"}, Calls: 2, Results: 2},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("FindToolSequences (-want +got):\n%s", d)
	}
}

func TestCherryPickToolSequences(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, st := newEngine(t, nil)
	branch(t, st, "task", "main")
	put(t, st, "main", store.Conversation{ID: "c", Title: "debug"},
		store.Message{ID: "m1", ConversationID: "c", Seq: 1, Role: store.RoleUser, Content: "why does login fail"},
		store.Message{ID: "m2", ConversationID: "c", Seq: 2, Role: store.RoleAssistant, Content: "let me grep"},
		store.Message{ID: "m3", ConversationID: "c", Seq: 3, Role: store.RoleToolCall, Tool: "grep", Content: "grep token"},
		store.Message{ID: "m4", ConversationID: "c", Seq: 4, Role: store.RoleToolResult, Tool: "grep", Content: "parser.go:12"},
		store.Message{ID: "m5", ConversationID: "c", Seq: 5, Role: store.RoleAssistant, Content: "now the tests"},
		store.Message{ID: "m6", ConversationID: "c", Seq: 6, Role: store.RoleToolCall, Tool: "bash", Content: "go test"},
		store.Message{ID: "m7", ConversationID: "c", Seq: 7, Role: store.RoleToolResult, Tool: "bash", Content: "ok"})
	res, err := e.CherryPickToolSequences(ctx, curation.ToolSequencePick{Target: "task", ConversationID: "c"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Sequences) != 2 || len(res.Messages) != 6 || res.Conversation.Metadata[curation.MetaPickedRange] != "tools" {
		t.Fatalf("pick = %d sequences, %d messages, meta %v; want 2 and 6", len(res.Sequences), len(res.Messages), res.Conversation.Metadata)
	}
	for _, id := range []string{"m2", "m3", "m4", "m5", "m6", "m7"} {
		r, err := st.Get(ctx, store.View{Branch: "main"}, store.MessageRef(id))
		if err != nil {
			t.Fatal(err)
		}
		m := r.(store.Message)
		if len(m.Picks) != 1 || m.Picks[0].Branch != "task" || m.Picks[0].ConversationID != res.Conversation.ID || m.Picks[0].At.IsZero() {
			t.Errorf("%s picks = %+v; want one to task, conversation %s, with a time", id, m.Picks, res.Conversation.ID)
		}
	}
	// A range that holds only the second sequence, and a tool no sequence calls.
	res, err = e.CherryPickToolSequences(ctx, curation.ToolSequencePick{Target: "task", ConversationID: "c", FromSeq: 5, ToSeq: 7})
	if err != nil || len(res.Sequences) != 1 || res.Sequences[0].FromSeq != 5 {
		t.Errorf("range 5-7 = %+v, %v; want the second sequence", res.Sequences, err)
	}
	res, err = e.CherryPickToolSequences(ctx, curation.ToolSequencePick{Target: "task", ConversationID: "c", Tool: "curl"})
	if err != nil || len(res.Sequences) != 0 || res.Conversation.ID != "" {
		t.Errorf("tool curl = %+v, %v; want nothing picked", res, err)
	}
	if _, err := e.CherryPickToolSequences(ctx, curation.ToolSequencePick{Target: "task", ConversationID: "c", FromSeq: 5, ToSeq: 3}); err == nil {
		t.Error("an inverted range was accepted")
	}
}
