package handoff

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1/store"
)

// scenario sets up the seeds' task: an investigator on task t1 with a verified and an
// unverified fact, an error observation, and its investigation conversation.
func scenario(t *testing.T) *env {
	t.Helper()
	v := newEnv(t)
	v.task(t, "t1", []string{"find the cause", "fix it", "add tests"}, "inv")
	br := "task/t1/inv"
	ruled := fact("f-guess", "perhaps the clock is skewed")
	ruled.Metadata = map[string]string{MetaObjective: "2"}
	v.put(t, br, verifiedFact("f-cause", "token_service.py:142 drops the refresh token on a 401"), ruled,
		store.Observation{ID: "o-err", Type: store.ObsError, Summary: "refresh failed with invalid_grant", RawOutput: "stack"},
		store.Observation{ID: "o-tool", Type: store.ObsToolUse, Summary: "read token_service.py"},
		store.Relation{ID: "r1", Source: "TokenService", Target: "OAuth2", Type: "uses", Confidence: 0.9})
	v.put(t, br, conversation("c-inv", "investigation", "why does refresh fail?", "I'll read token_service.py", "ok", "the fix is to keep the token")...)
	v.e.Decisions = func(ms []store.Message) []string {
		var out []string
		for _, m := range ms {
			if strings.HasPrefix(m.Content, "I'll") || strings.HasPrefix(m.Content, "the fix") {
				out = append(out, m.ID)
			}
		}
		return out
	}
	return v
}

func TestCreateHandoffPacket(t *testing.T) {
	t.Parallel()
	v := scenario(t)
	h, err := v.e.CreateHandoff(bg, HandoffRequest{
		Task: "t1", Type: TypeEscalation, FromAgent: "inv", Instructions: "need OAuth2 expertise",
		Blockers: []string{"unclear state transition after a failed refresh"}, PriorityObjectives: []int{2, 1},
		Priority: PriorityHigh,
	})
	if err != nil {
		t.Fatal(err)
	}
	if h.Status != StatusPending || h.ToAgent != "" || len(h.History) != 1 {
		t.Errorf("record = %+v", h)
	}
	p := h.Packet
	if diff := cmp.Diff([]string{"f-cause"}, factIDs(p.Facts)); diff != "" {
		t.Errorf("facts (-want +got):\n%s", diff)
	}
	if len(p.Facts[0].Embedding) != 0 {
		t.Error("a packet fact carries its embedding")
	}
	if len(p.Conversations) != 1 || p.Conversations[0].MessageCount != 4 {
		t.Fatalf("conversations = %+v", p.Conversations)
	}
	var decisions []int
	for _, m := range p.Conversations[0].Messages {
		if m.Decision {
			decisions = append(decisions, m.Seq)
		}
	}
	if diff := cmp.Diff([]int{2, 4}, decisions); diff != "" {
		t.Errorf("decision messages (-want +got):\n%s", diff)
	}
	if len(p.RecentErrors) != 1 || p.RecentErrors[0].ID != "o-err" || p.RecentErrors[0].RawOutput != "" {
		t.Errorf("recent errors = %+v", p.RecentErrors)
	}
	if len(p.Relations) != 1 {
		t.Errorf("relations = %+v", p.Relations)
	}
	if p.Branch != "task/t1" || p.SourceBranch != "task/t1/inv" || p.ParentBranch != "main" {
		t.Errorf("branch pointers = %q %q %q", p.Branch, p.SourceBranch, p.ParentBranch)
	}
	if diff := cmp.Diff([]int{1, 2}, p.PriorityObjectives); diff != "" {
		t.Errorf("priority objectives (-want +got):\n%s", diff)
	}
	if len(p.PendingObjectives) != 3 || p.Done != 0 || p.Total != 3 {
		t.Errorf("objectives: %d pending, %d/%d", len(p.PendingObjectives), p.Done, p.Total)
	}
	if p.SummaryBy != "heuristic" || !strings.Contains(p.Summary, "Task t1 (bug_fix): 0 of 3 objectives done.") {
		t.Errorf("summary = %q by %s", p.Summary, p.SummaryBy)
	}

	// The packet is frozen: later work does not change the stored record.
	v.put(t, "task/t1/inv", verifiedFact("f-later", "written after the handoff"))
	got, err := v.e.GetHandoff(bg, h.ID)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(h.Packet)
	b, _ := json.Marshal(got.Packet)
	if string(a) != string(b) {
		t.Errorf("the stored packet differs from the one returned:\n%s\n%s", a, b)
	}
}

func TestPacketScopes(t *testing.T) {
	t.Parallel()
	v := scenario(t)
	if _, err := v.e.UpdateObjective(bg, ObjectiveUpdate{Task: "t1", Objective: 1, Status: ObjectiveDone, By: "inv"}); err != nil {
		t.Fatal(err)
	}
	v.put(t, "task/t1/inv", conversation("c-chat", "chatter", "hi", "hello")...)
	for _, tc := range []struct {
		r         HandoffRequest
		facts     []string
		convs     int
		errs      int
		unverfied bool
	}{
		// Full: every conversation, no errors, verified facts.
		{HandoffRequest{Type: TypeFull}, []string{"f-cause"}, 2, 0, false},
		// Partial: only key conversations; facts of unfinished objectives left out.
		{HandoffRequest{Type: TypePartial, IncludeUnverified: true}, []string{"f-cause"}, 1, 0, true},
		// Escalation: errors travel.
		{HandoffRequest{Type: TypeEscalation, IncludeUnverified: true}, []string{"f-cause", "f-guess"}, 2, 1, true},
	} {
		tc.r.Task, tc.r.FromAgent = "t1", "inv"
		h, err := v.e.CreateHandoff(bg, tc.r)
		if err != nil {
			t.Fatal(err)
		}
		p := h.Packet
		if diff := cmp.Diff(tc.facts, factIDs(p.Facts)); diff != "" {
			t.Errorf("%s facts (-want +got):\n%s", tc.r.Type, diff)
		}
		if len(p.Conversations) != tc.convs || len(p.RecentErrors) != tc.errs || p.IncludesUnverified != tc.unverfied {
			t.Errorf("%s: %d conversations, %d errors, unverified %v", tc.r.Type, len(p.Conversations), len(p.RecentErrors), p.IncludesUnverified)
		}
		if p.Done != 1 || len(p.PendingObjectives) != 2 {
			t.Errorf("%s: done %d, pending %d", tc.r.Type, p.Done, len(p.PendingObjectives))
		}
	}
}

func TestPacketLimitsAndStableJSON(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	v.task(t, "t1", nil, "a")
	var recs []store.Record
	for i := range 30 {
		f := verifiedFact(fmt.Sprintf("f%02d", i), fmt.Sprintf("fact number %d %s", i, strings.Repeat("é", 20)))
		f.Confidence = float64(i%5+1) / 10
		recs = append(recs, f)
	}
	v.put(t, "task/t1/a", recs...)
	var msgs []string
	for i := range 12 {
		msgs = append(msgs, fmt.Sprintf("message %d", i))
	}
	v.put(t, "task/t1/a", conversation("c1", "long", msgs...)...)

	lim := Limits{Facts: 5, Messages: 4, TextBytes: 17}
	h, err := v.e.CreateHandoff(bg, HandoffRequest{Task: "t1", FromAgent: "a", Limits: lim})
	if err != nil {
		t.Fatal(err)
	}
	p := h.Packet
	// Highest confidence first (0.5: f04, f09... f29), then newest (written at once,
	// so the later in the batch), then by ID.
	if diff := cmp.Diff([]string{"f29", "f24", "f19", "f14", "f09"}, factIDs(p.Facts)); diff != "" {
		t.Errorf("kept facts (-want +got):\n%s", diff)
	}
	want := []Truncation{{Field: "conversations/c1/messages", Kept: 4, Total: 12}, {Field: "facts", Kept: 5, Total: 30}}
	if diff := cmp.Diff(want, p.Truncated); diff != "" {
		t.Errorf("truncated (-want +got):\n%s", diff)
	}
	var seqs []int
	for _, m := range p.Conversations[0].Messages {
		seqs = append(seqs, m.Seq)
	}
	if diff := cmp.Diff([]int{9, 10, 11, 12}, seqs); diff != "" {
		t.Errorf("kept messages (-want +got):\n%s", diff)
	}
	for _, f := range p.Facts {
		if len(f.Text) > 17 || !utf8.ValidString(f.Text) || !strings.HasPrefix(f.Text, "fact number ") {
			t.Errorf("text %q not cut to 17 bytes at a rune boundary", f.Text)
		}
	}
	if p.TruncatedTexts == 0 {
		t.Error("TruncatedTexts = 0")
	}

	// Equal contents encode to equal bytes.
	h2, err := v.e.CreateHandoff(bg, HandoffRequest{Task: "t1", FromAgent: "a", Limits: lim})
	if err != nil {
		t.Fatal(err)
	}
	p2 := h2.Packet
	p2.Handoff, p2.CreatedAt = p.Handoff, p.CreatedAt
	p2.Task, p2.ActiveAgents = p.Task, p.ActiveAgents
	a, _ := json.Marshal(p)
	b, _ := json.Marshal(p2)
	if string(a) != string(b) {
		t.Errorf("two packets of the same contents differ:\n%s\n%s", a, b)
	}

	// A byte limit halves the lists until the packet fits.
	h3, err := v.e.CreateHandoff(bg, HandoffRequest{Task: "t1", FromAgent: "a", Limits: Limits{Bytes: 6000}})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(h3.Packet); len(b) > 6000 {
		t.Errorf("packet is %d bytes, over the 6000 limit", len(b))
	}
	if len(h3.Packet.Truncated) == 0 {
		t.Error("a packet cut to its byte limit records no truncation")
	}
	_, err = v.e.CreateHandoff(bg, HandoffRequest{Task: "t1", FromAgent: "a", Limits: Limits{Bytes: 100}})
	wantField(t, err, "Limits.Bytes")
	_, err = v.e.CreateHandoff(bg, HandoffRequest{Task: "t1", Limits: Limits{Facts: -1}})
	wantField(t, err, "HandoffRequest.Limits.Facts")
}

func TestCreateHandoffBadInput(t *testing.T) {
	t.Parallel()
	v := scenario(t)
	for _, tc := range []struct {
		r     HandoffRequest
		field string
	}{
		{HandoffRequest{Task: "t1", Type: "handover"}, "HandoffRequest.Type"},
		{HandoffRequest{Task: "t1", Type: TypeCheckpoint, FromAgent: "inv"}, "HandoffRequest.Type"},
		{HandoffRequest{Task: "t1", Type: TypeEscalation, FromAgent: "inv", ToAgent: "inv"}, "HandoffRequest.ToAgent"},
		{HandoffRequest{Task: "t1", Type: TypeSessionHandoff}, "HandoffRequest.FromAgent"},
		{HandoffRequest{Task: "t1", Type: TypeSessionHandoff, FromAgent: "inv", ToAgent: "other"}, "HandoffRequest.ToAgent"},
		{HandoffRequest{Task: "t1", PriorityObjectives: []int{9}}, "HandoffRequest.PriorityObjectives[0]"},
		{HandoffRequest{Task: "t1", Blockers: []string{""}}, "HandoffRequest.Blockers[0]"},
		{HandoffRequest{Task: "t1", Priority: 7}, "HandoffRequest.Priority"},
		{HandoffRequest{Task: "t1", TTL: -time.Second}, "HandoffRequest.TTL"},
		{HandoffRequest{Task: "t1", Required: []Requirement{{Name: "go"}, {Name: "Go"}}}, "HandoffRequest.Required[1].Requirement.Name"},
		{HandoffRequest{Task: "t/1"}, "HandoffRequest.Task"},
	} {
		_, err := v.e.CreateHandoff(bg, tc.r)
		wantField(t, err, tc.field)
	}
	if _, err := v.e.CreateHandoff(bg, HandoffRequest{Task: "nope"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown task: %v, want ErrNotFound", err)
	}
	if _, err := v.e.CreateHandoff(bg, HandoffRequest{Task: "t1", FromAgent: "stranger"}); !errors.Is(err, ErrNotMember) {
		t.Errorf("a source that never joined: %v, want ErrNotMember", err)
	}
	if hs, err := v.e.ListHandoffs(bg, HandoffFilter{}); err != nil || len(hs) != 0 {
		t.Errorf("bad input left %d handoffs (%v)", len(hs), err)
	}
}

func TestAcceptHandoff(t *testing.T) {
	t.Parallel()
	v := scenario(t)
	h, err := v.e.CreateHandoff(bg, HandoffRequest{Task: "t1", Type: TypeEscalation, FromAgent: "inv", PriorityObjectives: []int{1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	acc, err := v.e.AcceptHandoff(bg, AcceptRequest{Handoff: h.ID, Agent: "expert", Session: "s-9"})
	if err != nil {
		t.Fatal(err)
	}
	if acc.Branch != "task/t1/expert" || !acc.BranchCreated || acc.Handoff.Status != StatusAccepted || acc.Handoff.ReceiverBranch != acc.Branch {
		t.Errorf("acceptance = %+v", acc)
	}
	if acc.Member.Role != DefaultReceiverRole || !cmp.Equal(acc.Member.Objectives, []int{1, 2}) || acc.Member.Session != "s-9" {
		t.Errorf("member = %+v", acc.Member)
	}
	if diff := cmp.Diff(factIDs(h.Packet.Facts), factIDs(acc.Packet.Facts)); diff != "" {
		t.Errorf("the accepted packet is not the frozen one (-want +got):\n%s", diff)
	}
	b, err := v.mem.GetBranch(bg, "task/t1/expert")
	if err != nil || b.Parent != "task/t1" {
		t.Errorf("receiver branch = %+v, %v", b, err)
	}
	tk, _ := v.e.GetTask(bg, "t1")
	if tk.Owner != "expert" {
		t.Errorf("owner = %q, want the receiver", tk.Owner)
	}
	src, _, _ := v.e.readMember(bg, "t1", "inv")
	if src.Status != MemberLeft || !strings.Contains(src.Summary, "handed over to expert") {
		t.Errorf("source member = %+v", src)
	}
	var statuses []Status
	for _, c := range acc.Handoff.History {
		statuses = append(statuses, c.To)
	}
	if diff := cmp.Diff([]Status{StatusPending, StatusAccepting, StatusAccepted}, statuses); diff != "" {
		t.Errorf("history (-want +got):\n%s", diff)
	}
	evs, err := v.e.Events(bg, EventFilter{Handoff: h.ID})
	if err != nil {
		t.Fatal(err)
	}
	var trail []string
	for _, e := range evs {
		trail = append(trail, fmt.Sprintf("%s %s>%s", e.Kind, e.From, e.To))
	}
	want := []string{"handoff.created >pending", "handoff.status pending>accepting", "handoff.status accepting>accepted", "agent.left active>left"}
	if diff := cmp.Diff(want, trail); diff != "" {
		t.Errorf("audit trail (-want +got):\n%s", diff)
	}
	byAgent, _ := v.e.Events(bg, EventFilter{Agent: "expert", Kind: EventHandoffStatus})
	if len(byAgent) != 2 {
		t.Errorf("events of the receiver = %d, want 2", len(byAgent))
	}

	// Accepting twice, or rejecting an accepted handoff, is a conflict.
	_, err = v.e.AcceptHandoff(bg, AcceptRequest{Handoff: h.ID, Agent: "expert"})
	var te *TransitionError
	if !errors.As(err, &te) || te.From != StatusAccepted || !errors.Is(err, store.ErrConflict) {
		t.Errorf("accepting twice: %v, want a *TransitionError from accepted", err)
	}
	_, err = v.e.RejectHandoff(bg, RejectRequest{Handoff: h.ID, Agent: "expert"})
	if !errors.As(err, &te) || te.To != StatusRejected || !errors.Is(err, store.ErrConflict) {
		t.Errorf("rejecting an accepted handoff: %v, want a *TransitionError", err)
	}
	if _, err := v.e.AcceptHandoff(bg, AcceptRequest{Handoff: "nope", Agent: "expert"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown handoff: %v, want ErrNotFound", err)
	}
	_, err = v.e.AcceptHandoff(bg, AcceptRequest{Handoff: h.ID, Agent: "bad agent"})
	wantField(t, err, "AcceptRequest.Agent")
}

func TestAcceptHandoffReceiverRules(t *testing.T) {
	t.Parallel()
	v := scenario(t)
	named, err := v.e.CreateHandoff(bg, HandoffRequest{Task: "t1", FromAgent: "inv", ToAgent: "expert"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = v.e.AcceptHandoff(bg, AcceptRequest{Handoff: named.ID, Agent: "someone"})
	wantField(t, err, "AcceptRequest.Agent")
	_, err = v.e.RejectHandoff(bg, RejectRequest{Handoff: named.ID, Agent: "someone"})
	wantField(t, err, "RejectRequest.Agent")

	esc, err := v.e.CreateHandoff(bg, HandoffRequest{Task: "t1", Type: TypeEscalation, FromAgent: "inv"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = v.e.AcceptHandoff(bg, AcceptRequest{Handoff: esc.ID, Agent: "inv"})
	wantField(t, err, "AcceptRequest.ToAgent")

	// A session handoff stays with its agent, whose branch exists already.
	sess, err := v.e.CreateHandoff(bg, HandoffRequest{Task: "t1", Type: TypeSessionHandoff, FromAgent: "inv", FromSession: "s1"})
	if err != nil || sess.ToAgent != "inv" {
		t.Fatalf("session handoff: %+v, %v", sess, err)
	}
	acc, err := v.e.AcceptHandoff(bg, AcceptRequest{Handoff: sess.ID, Agent: "inv", Session: "s2"})
	if err != nil || acc.BranchCreated || acc.Member.Status != MemberActive || acc.Member.Session != "s2" || acc.Member.Role != "role-inv" {
		t.Errorf("session handoff accepted: %+v, %v", acc, err)
	}

	rej, err := v.e.RejectHandoff(bg, RejectRequest{Handoff: named.ID, Agent: "expert", Reason: "busy"})
	if err != nil || rej.Status != StatusRejected || rej.RejectReason != "busy" {
		t.Errorf("reject: %+v, %v", rej, err)
	}
	if _, err := v.e.AcceptHandoff(bg, AcceptRequest{Handoff: named.ID, Agent: "expert"}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("accepting a rejected handoff: %v, want ErrConflict", err)
	}
}

func TestConcurrentAcceptsOneWins(t *testing.T) {
	t.Parallel()
	v := scenario(t)
	h, err := v.e.CreateHandoff(bg, HandoffRequest{Task: "t1", Type: TypeFull, FromAgent: "inv"})
	if err != nil {
		t.Fatal(err)
	}
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = v.e.AcceptHandoff(bg, AcceptRequest{Handoff: h.ID, Agent: fmt.Sprintf("agent-%d", i)})
		}()
	}
	wg.Wait()
	winners := 0
	for i, err := range errs {
		if err == nil {
			winners++
			continue
		}
		var te *TransitionError
		if !errors.As(err, &te) || !errors.Is(err, store.ErrConflict) {
			t.Errorf("agent-%d: %v, want a *TransitionError", i, err)
		}
	}
	if winners != 1 {
		t.Fatalf("%d accepts won, want exactly 1", winners)
	}
	got, _ := v.e.GetHandoff(bg, h.ID)
	bs, _ := v.mem.ListBranches(bg, store.BranchFilter{Prefix: "task/t1/agent-"})
	if got.Status != StatusAccepted || len(bs) != 1 || bs[0].Name != got.ReceiverBranch {
		t.Errorf("after the race: status %s, receiver branch %q, agent branches %v", got.Status, got.ReceiverBranch, bs)
	}
}

func TestAcceptRollsBack(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		fail func(m string, n int) error
	}{
		// WriteDocs 1 claims the record, 2 commits.
		{"commit fails", func(m string, n int) error {
			if m == "WriteDocs" && n == 2 {
				return errInjected
			}
			return nil
		}},
		{"branch creation fails", func(m string, n int) error {
			if m == "CreateBranch" {
				return errInjected
			}
			return nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := scenario(t)
			h, err := v.e.CreateHandoff(bg, HandoffRequest{Task: "t1", Type: TypeEscalation, FromAgent: "inv"})
			if err != nil {
				t.Fatal(err)
			}
			v.st.arm(tc.fail)
			_, err = v.e.AcceptHandoff(bg, AcceptRequest{Handoff: h.ID, Agent: "expert"})
			var re *RollbackError
			if !errors.As(err, &re) || !errors.Is(err, ErrRolledBack) || !errors.Is(err, errInjected) || re.RollbackErr != nil {
				t.Fatalf("err = %v, want a *RollbackError caused by the injected failure", err)
			}
			v.st.arm(nil)
			if _, err := v.mem.GetBranch(bg, "task/t1/expert"); !errors.Is(err, store.ErrBranchNotFound) {
				t.Errorf("the receiver's branch survived the rollback: %v", err)
			}
			if _, found, _ := v.e.readMember(bg, "t1", "expert"); found {
				t.Error("the receiver became a member")
			}
			tk, _ := v.e.GetTask(bg, "t1")
			src, _, _ := v.e.readMember(bg, "t1", "inv")
			if tk.Owner != "inv" || src.Status != MemberActive {
				t.Errorf("owner %q, source %s; want nothing changed", tk.Owner, src.Status)
			}
			got, _ := v.e.GetHandoff(bg, h.ID)
			if got.Status != StatusRolledBack || !strings.Contains(got.Error, "injected failure") {
				t.Errorf("record = %s (%q), want rolled_back with the cause", got.Status, got.Error)
			}
			if _, err := v.e.AcceptHandoff(bg, AcceptRequest{Handoff: h.ID, Agent: "expert"}); !errors.Is(err, store.ErrConflict) {
				t.Errorf("accepting a rolled back handoff: %v, want ErrConflict", err)
			}
		})
	}
}

func TestAcceptRollbackFailureIsReported(t *testing.T) {
	t.Parallel()
	v := scenario(t)
	h, err := v.e.CreateHandoff(bg, HandoffRequest{Task: "t1", FromAgent: "inv"})
	if err != nil {
		t.Fatal(err)
	}
	v.st.arm(func(m string, n int) error {
		if m == "WriteDocs" && n >= 2 {
			return errInjected
		}
		return nil
	})
	_, err = v.e.AcceptHandoff(bg, AcceptRequest{Handoff: h.ID, Agent: "expert"})
	var re *RollbackError
	if !errors.As(err, &re) || re.RollbackErr == nil || errors.Is(err, ErrRolledBack) {
		t.Fatalf("err = %v, want a *RollbackError whose rollback failed", err)
	}
	v.st.arm(nil)
	got, _ := v.e.GetHandoff(bg, h.ID)
	if got.Status != StatusAccepting {
		t.Errorf("status = %s, want accepting (the claim stays visible)", got.Status)
	}
	if _, err := v.mem.GetBranch(bg, "task/t1/expert"); !errors.Is(err, store.ErrBranchNotFound) {
		t.Errorf("branch left: %v", err)
	}

	// The claim is abandoned: once it is older than the claim timeout, ExpireHandoffs
	// rolls the handoff back, and nobody can accept it any more.
	if n, err := v.e.ExpireHandoffs(bg); err != nil || n != 0 {
		t.Errorf("ExpireHandoffs before the claim timeout = %d, %v; want 0", n, err)
	}
	v.clk.Advance(DefaultClaimTimeout)
	if n, err := v.e.ExpireHandoffs(bg); err != nil || n != 1 {
		t.Errorf("ExpireHandoffs after the claim timeout = %d, %v; want 1", n, err)
	}
	got, _ = v.e.GetHandoff(bg, h.ID)
	if got.Status != StatusRolledBack || !strings.Contains(got.Error, "did not finish within 5m0s") {
		t.Errorf("after the sweep: status %s, error %q; want rolled_back and the reason", got.Status, got.Error)
	}
	var te *TransitionError
	if _, err := v.e.AcceptHandoff(bg, AcceptRequest{Handoff: h.ID, Agent: "other"}); !errors.As(err, &te) {
		t.Errorf("accepting a rolled-back handoff: %v; want a *TransitionError", err)
	}
	evs, err := v.e.Events(bg, EventFilter{Handoff: h.ID})
	if err != nil || len(evs) == 0 || evs[len(evs)-1].To != string(StatusRolledBack) {
		t.Errorf("events = %+v, %v; want the last one to roll the handoff back", evs, err)
	}
}

func TestHandoffExpiry(t *testing.T) {
	t.Parallel()
	v := scenario(t)
	short, err := v.e.CreateHandoff(bg, HandoffRequest{Task: "t1", FromAgent: "inv", TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	other, err := v.e.CreateHandoff(bg, HandoffRequest{Task: "t1", FromAgent: "inv", TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	long, err := v.e.CreateHandoff(bg, HandoffRequest{Task: "t1", FromAgent: "inv"})
	if err != nil {
		t.Fatal(err)
	}
	v.clk.Advance(2 * time.Minute)
	pending, err := v.e.PendingHandoffs(bg, PendingFilter{Task: "t1"})
	if err != nil || len(pending) != 1 || pending[0].ID != long.ID {
		t.Errorf("pending after expiry = %v, %v", pending, err)
	}
	if _, err := v.e.AcceptHandoff(bg, AcceptRequest{Handoff: short.ID, Agent: "expert"}); !errors.Is(err, ErrHandoffExpired) || !errors.Is(err, store.ErrConflict) {
		t.Errorf("accepting an expired handoff: %v, want ErrHandoffExpired", err)
	}
	if got, _ := v.e.GetHandoff(bg, short.ID); got.Status != StatusExpired {
		t.Errorf("status = %s, want expired", got.Status)
	}
	n, err := v.e.ExpireHandoffs(bg)
	if err != nil || n != 1 {
		t.Errorf("ExpireHandoffs = %d, %v; want 1", n, err)
	}
	if got, _ := v.e.GetHandoff(bg, other.ID); got.Status != StatusExpired {
		t.Errorf("status = %s, want expired", got.Status)
	}
}

func TestPendingHandoffsByReceiver(t *testing.T) {
	t.Parallel()
	v := scenario(t)
	mk := func(r HandoffRequest) Handoff {
		t.Helper()
		r.Task, r.FromAgent = "t1", "inv"
		h, err := v.e.CreateHandoff(bg, r)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	toB := mk(HandoffRequest{ToAgent: "b"})
	open := mk(HandoffRequest{Priority: PriorityUrgent})
	toC := mk(HandoffRequest{ToAgent: "c"})
	esc := mk(HandoffRequest{Type: TypeEscalation})
	ids := func(f PendingFilter) []string {
		hs, err := v.e.PendingHandoffs(bg, f)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, h := range hs {
			out = append(out, h.ID)
		}
		return out
	}
	if diff := cmp.Diff([]string{open.ID, toB.ID, esc.ID}, ids(PendingFilter{Receiver: "b"})); diff != "" {
		t.Errorf("pending for b (-want +got):\n%s", diff)
	}
	// The source may not take its own escalation.
	if diff := cmp.Diff([]string{open.ID}, ids(PendingFilter{Receiver: "inv"})); diff != "" {
		t.Errorf("pending for inv (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{open.ID, toB.ID, toC.ID, esc.ID}, ids(PendingFilter{Task: "t1"})); diff != "" {
		t.Errorf("pending of t1 (-want +got):\n%s", diff)
	}
	hs, err := v.e.ListHandoffs(bg, HandoffFilter{Agent: "c"})
	if err != nil || len(hs) != 1 || hs[0].ID != toC.ID {
		t.Errorf("handoffs of c = %v, %v", hs, err)
	}
	hs, _ = v.e.ListHandoffs(bg, HandoffFilter{Agent: "inv", Type: TypeEscalation})
	if len(hs) != 1 || hs[0].ID != esc.ID {
		t.Errorf("escalations of inv = %v", hs)
	}
	_, err = v.e.ListHandoffs(bg, HandoffFilter{Status: "open"})
	wantField(t, err, "HandoffFilter.Status")
}

func TestHandoffChoosesReceiverByCapability(t *testing.T) {
	t.Parallel()
	v := scenario(t)
	for _, a := range []AgentProfile{
		{ID: "generalist", Capabilities: []Capability{{Name: "oauth2", Proficiency: 0.5}, {Name: "go", Proficiency: 0.9}}},
		{ID: "oauth-expert", Capabilities: []Capability{{Name: "oauth2", Proficiency: 0.95}, {Name: "go", Proficiency: 0.8}}},
		{ID: "inv", Capabilities: []Capability{{Name: "oauth2"}, {Name: "go"}}},
	} {
		if _, err := v.e.RegisterAgent(bg, a); err != nil {
			t.Fatal(err)
		}
	}
	h, err := v.e.CreateHandoff(bg, HandoffRequest{Task: "t1", Type: TypeEscalation, FromAgent: "inv",
		Required: []Requirement{{Name: "OAuth2", Weight: 2}, {Name: "go"}}})
	if err != nil {
		t.Fatal(err)
	}
	if h.ToAgent != "oauth-expert" {
		t.Errorf("receiver = %q, want oauth-expert (the source is excluded)", h.ToAgent)
	}
	_, err = v.e.CreateHandoff(bg, HandoffRequest{Task: "t1", FromAgent: "inv", Required: []Requirement{{Name: "kubernetes"}}})
	if !errors.Is(err, ErrNoCandidate) || !errors.Is(err, store.ErrNotFound) {
		t.Errorf("no candidate: %v, want ErrNoCandidate", err)
	}
	cs, err := v.e.FindAgents(bg, []Requirement{{Name: "go"}}, MatchOptions{Exclude: []string{"inv"}})
	if err != nil || len(cs) != 2 || cs[0].AgentID != "generalist" {
		t.Errorf("FindAgents = %+v, %v", cs, err)
	}
	if err := v.e.UnregisterAgent(bg, "generalist"); err != nil {
		t.Fatal(err)
	}
	if _, err := v.e.GetAgent(bg, "generalist"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetAgent after unregister: %v", err)
	}
	_, err = v.e.RegisterAgent(bg, AgentProfile{ID: "a:b"})
	wantField(t, err, "AgentProfile.ID")
	_, err = v.e.RegisterAgent(bg, AgentProfile{ID: "x", Capabilities: []Capability{{Name: "go", Proficiency: 2}}})
	wantField(t, err, "AgentProfile.Capabilities[0].Capability.Proficiency")
}

// TestPacketLeavesExpiredFactsOut checks that a fact whose expiry has passed when the
// handoff is made does not travel in its packet, and one that expires later does.
func TestPacketLeavesExpiredFactsOut(t *testing.T) {
	t.Parallel()
	v := scenario(t)
	now := v.e.now()
	gone, later := verifiedFact("f-gone", "the deploy freeze holds until noon"), verifiedFact("f-later", "the release is cut on Thursday")
	gone.ExpiresAt, later.ExpiresAt = now.Add(-time.Minute), now.Add(time.Hour)
	v.put(t, "task/t1/inv", gone, later)
	h, err := v.e.CreateHandoff(bg, HandoffRequest{Task: "t1", Type: TypeFull, FromAgent: "inv"})
	if err != nil {
		t.Fatal(err)
	}
	got := factIDs(h.Packet.Facts)
	if slices.Contains(got, "f-gone") || !slices.Contains(got, "f-later") || !slices.Contains(got, "f-cause") {
		t.Errorf("packet facts %v; want f-cause and f-later, not the expired f-gone", got)
	}
}
