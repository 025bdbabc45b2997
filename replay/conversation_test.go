package replay_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1/replay"
	"github.com/day1ai/day1/store"
)

// debugConversation writes a five-message debugging conversation "c" to main.
func debugConversation(t *testing.T, e *env) {
	t.Helper()
	e.conversation(t, "main", "c", "", "agent-a", "Debug the refresh",
		store.Message{Role: store.RoleUser, Content: "Token refresh fails"},
		store.Message{Role: store.RoleAssistant, Content: "I'll read the logs"},
		store.Message{Role: store.RoleToolCall, Tool: "read_file", Content: "logs/auth.log"},
		store.Message{Role: store.RoleToolResult, Tool: "read_file", Content: "refresh_token missing"},
		store.Message{Role: store.RoleAssistant, Content: "The refresh token is dropped"},
	)
}

func seqs(ms []store.Message) []int {
	var out []int
	for _, m := range ms {
		out = append(out, m.Seq)
	}
	return out
}

func TestForkAndDiffConversation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	debugConversation(t, e)
	f, err := e.replay.ForkConversation(ctx, replay.ForkRequest{Conversation: "c", AtSeq: 2, NewBranch: "rerun"})
	if err != nil {
		t.Fatal(err)
	}
	if f.Branch.Name != "rerun" || f.Branch.Parent != "main" {
		t.Errorf("branch = %+v", f.Branch)
	}
	if diff := cmp.Diff([]int{1, 2}, seqs(f.Kept)); diff != "" {
		t.Errorf("kept (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]store.Ref{store.MessageRef("c-m3"), store.MessageRef("c-m4"), store.MessageRef("c-m5")}, f.Removed); diff != "" {
		t.Errorf("removed (-want +got):\n%s", diff)
	}
	if f.Conversation.Metadata[replay.MetaForkedAtSeq] != "2" || f.Conversation.Metadata[replay.MetaForkedFrom] != "main" {
		t.Errorf("conversation metadata = %v", f.Conversation.Metadata)
	}
	list := func(branch string) []store.Message {
		recs, err := e.st.List(ctx, store.View{Branch: branch}, store.ListQuery{Kind: store.KindMessage, Filter: store.Filter{ConversationID: "c"}, Order: store.OrderSeq})
		if err != nil {
			t.Fatal(err)
		}
		var ms []store.Message
		for _, r := range recs {
			ms = append(ms, r.(store.Message))
		}
		return ms
	}
	if got := seqs(list("rerun")); !cmp.Equal(got, []int{1, 2}) {
		t.Errorf("the fork holds messages %v", got)
	}
	if got := seqs(list("main")); !cmp.Equal(got, []int{1, 2, 3, 4, 5}) {
		t.Errorf("main holds messages %v after the fork", got)
	}

	// The rerun takes another tool.
	e.put(t, "rerun",
		store.Message{ID: "r3", ConversationID: "c", Seq: 3, Role: store.RoleToolCall, Tool: "grep", Content: "grep refresh_token src/"},
		store.Message{ID: "r4", ConversationID: "c", Seq: 4, Role: store.RoleToolResult, Tool: "grep", Content: "src/token.py:142"},
	)
	d, err := e.replay.DiffConversations(ctx, replay.ConversationRef{ID: "c"}, replay.ConversationRef{Branch: "rerun", ID: "c"})
	if err != nil {
		t.Fatal(err)
	}
	if d.DivergeAt != 2 || d.Common != 2 || len(d.Aligned) != 5 || d.Identical() {
		t.Errorf("diverge at %d, common %d, aligned %d", d.DivergeAt, d.Common, len(d.Aligned))
	}
	type toolDiff struct {
		Index  int
		A, B   string
		AT, BT string
	}
	var got []toolDiff
	for _, p := range d.ToolDiffs {
		td := toolDiff{Index: p.Index}
		if p.A != nil {
			td.A, td.AT = string(p.A.Role), p.A.Tool
		}
		if p.B != nil {
			td.B, td.BT = string(p.B.Role), p.B.Tool
		}
		got = append(got, td)
	}
	want := []toolDiff{{2, "tool_call", "tool_call", "read_file", "grep"}, {3, "tool_result", "tool_result", "read_file", "grep"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tool diffs (-want +got):\n%s", diff)
	}
	if p := d.Aligned[4]; p.A == nil || p.B != nil || p.Same {
		t.Errorf("last pair = %+v, want A's message alone", p)
	}

	same, err := e.replay.DiffConversations(ctx, replay.ConversationRef{ID: "c"}, replay.ConversationRef{Branch: "main", ID: "c"})
	if err != nil {
		t.Fatal(err)
	}
	if !same.Identical() || same.Common != 5 || len(same.ToolDiffs) != 0 {
		t.Errorf("a conversation against itself: %+v", same)
	}
}

func TestForkConversationErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	debugConversation(t, e)
	tests := []struct {
		name  string
		req   replay.ForkRequest
		field string
		is    error
	}{
		{name: "no conversation", req: replay.ForkRequest{NewBranch: "x"}, field: "ForkRequest.Conversation"},
		{name: "no new branch", req: replay.ForkRequest{Conversation: "c"}, field: "ForkRequest.NewBranch"},
		{name: "bad new branch", req: replay.ForkRequest{Conversation: "c", NewBranch: "a b"}, field: "ForkRequest.NewBranch"},
		{name: "negative seq", req: replay.ForkRequest{Conversation: "c", NewBranch: "x", AtSeq: -1}, field: "ForkRequest.AtSeq"},
		{name: "seq past the end", req: replay.ForkRequest{Conversation: "c", NewBranch: "x", AtSeq: 6}, field: "ForkRequest.AtSeq"},
		{name: "unknown conversation", req: replay.ForkRequest{Conversation: "nope", NewBranch: "x"}, is: store.ErrNotFound},
		{name: "unknown branch", req: replay.ForkRequest{Branch: "nope", Conversation: "c", NewBranch: "x"}, is: store.ErrBranchNotFound},
		{name: "taken branch", req: replay.ForkRequest{Conversation: "c", NewBranch: "main"}, is: store.ErrBranchExists},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.replay.ForkConversation(ctx, tt.req)
			if tt.field != "" {
				var ve *store.ValidationError
				if !errors.As(err, &ve) || ve.Field != tt.field {
					t.Fatalf("err = %v, want a *store.ValidationError for %s", err, tt.field)
				}
				return
			}
			if !errors.Is(err, tt.is) {
				t.Fatalf("err = %v, want %v", err, tt.is)
			}
		})
	}
	if _, err := e.st.GetBranch(ctx, "x"); !errors.Is(err, store.ErrBranchNotFound) {
		t.Errorf("a failed fork left its branch: %v", err)
	}
	_, err := e.replay.DiffConversations(ctx, replay.ConversationRef{ID: "c"}, replay.ConversationRef{})
	var ve *store.ValidationError
	if !errors.As(err, &ve) || ve.Field != "b.ID" {
		t.Errorf("diff without an id: %v", err)
	}
	if _, err := e.replay.DiffConversations(ctx, replay.ConversationRef{ID: "c"}, replay.ConversationRef{ID: "nope"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("diff of an unknown conversation: %v", err)
	}
}

func TestForkConversationKeepsNone(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	debugConversation(t, e)
	f, err := e.replay.ForkConversation(context.Background(), replay.ForkRequest{Conversation: "c", NewBranch: "fresh"})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Kept) != 0 || len(f.Removed) != 5 {
		t.Errorf("kept %d, removed %d; want 0 and 5", len(f.Kept), len(f.Removed))
	}
}
