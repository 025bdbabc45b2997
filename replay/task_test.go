package replay_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1/handoff"
	"github.com/day1ai/day1/internal/testkit"
	"github.com/day1ai/day1/replay"
	"github.com/day1ai/day1/store"
)

const fixText = "Retry the refresh call with exponential backoff before dropping the token"

// steps renders a timeline as "kind agent id" lines.
func steps(tl []replay.Event) []string {
	out := make([]string, len(tl))
	for i, ev := range tl {
		out[i] = fmt.Sprintf("%s %s %s", ev.Kind, ev.Agent, ev.ID)
	}
	return out
}

func TestTaskReplayTimeline(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	runScenario(t, e, "fix", fixText)
	tr, err := e.replay.TaskReplay(context.Background(), "fix", replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"task.created  id-001",
		"agent.joined investigator id-002",
		"conversation investigator fix-c-inv",
		"message investigator fix-c-inv-m1",
		"message investigator fix-c-inv-m2",
		"message investigator fix-c-inv-m3",
		"message investigator fix-c-inv-m4",
		"message investigator fix-c-inv-m5",
		"fact investigator fix-f-root",
		"objective.updated investigator id-003",
		"handoff.created investigator id-004",
		"handoff.status expert id-004",
		"agent.joined expert handoff_member:fix:expert",
		"handoff.status expert id-004",
		"agent.left investigator id-008",
		"fact expert fix-f-fix",
		"verification expert fix-f-fix",
		"merge expert id-009",
		"agent.joined tester id-010",
		"fact tester fix-f-test",
		"merge expert id-011",
		"task.completed expert id-012",
	}
	if diff := cmp.Diff(want, steps(tr.Timeline)); diff != "" {
		t.Errorf("timeline (-want +got):\n%s", diff)
	}
	for i := 1; i < len(tr.Timeline); i++ {
		if tr.Timeline[i].At.Before(tr.Timeline[i-1].At) {
			t.Errorf("event %d (%s) at %s is before event %d at %s", i, tr.Timeline[i].Kind, tr.Timeline[i].At, i-1, tr.Timeline[i-1].At)
		}
	}
	byKind := map[replay.EventKind][]replay.Event{}
	for _, ev := range tr.Timeline {
		byKind[ev.Kind] = append(byKind[ev.Kind], ev)
	}
	if h := byKind[replay.EventHandoffCreated][0].Handoff; h == nil || h.Type != handoff.TypeEscalation || h.ToAgent != "expert" {
		t.Errorf("handoff.created payload = %+v, want the escalation to expert", h)
	}
	if m := byKind[replay.EventMerge][1].Merge; m == nil || m.Target != "main" || m.Strategy != store.CherryPick {
		t.Errorf("completion merge payload = %+v, want a cherry-pick into main", m)
	}
	v := byKind[replay.EventVerification][0]
	if f, ok := v.Record.(store.Fact); !ok || f.Verify.Status != store.Verified || v.Branch != "task/fix/expert" {
		t.Errorf("verification = %+v on %s, want the verified fact on the expert's branch", v.Record, v.Branch)
	}
	if got := byKind[replay.EventMessage][2].Summary; got != "#3 tool_call grep: grep -n refresh token_service.py" {
		t.Errorf("message summary = %q", got)
	}
}

// visible reports whether a read of ev's branch at instant at shows ev's write.
func visible(t *testing.T, st store.Store, ev replay.Event, at time.Time) bool {
	t.Helper()
	ref := store.RefOf(ev.Record)
	r, err := st.Get(context.Background(), store.View{Branch: ev.Branch, At: store.Point{Time: at}}, ref)
	if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrTooOld) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	if ev.Kind == replay.EventVerification {
		f, _ := r.(store.Fact)
		return !f.Verify.At.IsZero()
	}
	return true
}

func TestTaskReplayInstants(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	runScenario(t, e, "fix", fixText)
	tr, err := e.replay.TaskReplay(context.Background(), "fix", replay.Options{IncludeObservations: true})
	if err != nil {
		t.Fatal(err)
	}
	var recs []replay.Event
	for _, ev := range tr.Timeline {
		if ev.Record != nil {
			recs = append(recs, ev)
		}
		if ev.At.Before(ev.Time) {
			t.Errorf("%s %s: instant %s before its own time %s", ev.Kind, ev.ID, ev.At, ev.Time)
		}
	}
	if len(recs) < 10 {
		t.Fatalf("only %d record events", len(recs))
	}
	for i, ev := range recs {
		if !visible(t, e.st, ev, ev.At) {
			t.Errorf("%s %s is not visible at its instant %s", ev.Kind, ev.ID, ev.At)
		}
		if visible(t, e.st, ev, ev.At.Add(-time.Nanosecond)) {
			t.Errorf("%s %s is visible before its instant", ev.Kind, ev.ID)
		}
		if i+1 < len(recs) && visible(t, e.st, recs[i+1], ev.At) {
			t.Errorf("%s %s is visible at the instant of the step before it (%s %s)", recs[i+1].Kind, recs[i+1].ID, ev.Kind, ev.ID)
		}
	}
	// The completion merge's instant is the first at which main shows the fix.
	for _, ev := range tr.Timeline {
		if ev.Kind != replay.EventMerge || ev.Branch != "main" {
			continue
		}
		for at, want := range map[time.Time]bool{ev.At: true, ev.At.Add(-time.Nanosecond): false} {
			_, err := e.st.Get(context.Background(), store.View{Branch: "main", At: store.Point{Time: at}}, store.FactRef("fix-f-fix"))
			if got := err == nil; got != want {
				t.Errorf("main shows the fix at %s: %v, want %v", at, got, want)
			}
		}
	}
}

func TestTaskReplayContributionsAndOutcome(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	runScenario(t, e, "fix", fixText)
	tr, err := e.replay.TaskReplay(context.Background(), "fix", replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	type contrib struct {
		Agent, Role      string
		Status           handoff.MemberStatus
		Facts            []string
		Verified, Errors int
		Convs            []string
		Messages         int
		Given, Received  []string
	}
	var got []contrib
	for _, c := range tr.Agents {
		got = append(got, contrib{c.Agent, c.Role, c.Status, c.Facts, c.FactsVerified, c.Errors, c.Conversations, c.Messages, c.HandoffsGiven, c.HandoffsReceived})
	}
	want := []contrib{
		{"investigator", "investigator", handoff.MemberLeft, []string{"fix-f-root"}, 0, 1, []string{"fix-c-inv"}, 5, []string{"id-004"}, nil},
		{"expert", "oauth-expert", handoff.MemberActive, []string{"fix-f-fix"}, 1, 0, nil, 0, nil, []string{"id-004"}},
		{"tester", "tester", handoff.MemberActive, []string{"fix-f-test"}, 0, 0, nil, 0, nil, nil},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("contributions (-want +got):\n%s", diff)
	}
	wantSummary := `oauth-expert: 1 fact (1 verified), 0 conversations, 0 observations, 1 handoff received; first: "` + fixText + `"`
	if tr.Agents[1].Summary != wantSummary {
		t.Errorf("expert summary = %q, want %q", tr.Agents[1].Summary, wantSummary)
	}
	if len(tr.KeyFacts) != 1 || tr.KeyFacts[0].ID != "fix-f-fix" || len(tr.KeyConversations) != 0 {
		t.Errorf("key facts %v, key conversations %v", tr.KeyFacts, tr.KeyConversations)
	}
	o := tr.Outcome
	if o.Status != handoff.TaskCompleted || o.ResultSummary != "refresh retried with backoff" || o.MergedInto != "main" ||
		o.FactsMerged != 1 || o.Facts != 3 || o.FactsVerified != 1 || o.Duration <= 0 {
		t.Errorf("outcome = %+v", o)
	}
	if o.VerificationScore != tr.KeyFacts[0].Verify.Score || o.VerificationScore < 0.6 {
		t.Errorf("verification score = %v, want the fix's %v", o.VerificationScore, tr.KeyFacts[0].Verify.Score)
	}
}

func TestTaskReplayOptions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	runScenario(t, e, "fix", fixText)
	count := func(tl []replay.Event) map[replay.EventKind]int {
		n := map[replay.EventKind]int{}
		for _, ev := range tl {
			n[ev.Kind]++
		}
		return n
	}
	const decision = "I'll grep the token service for the refresh path"
	tests := []struct {
		name      string
		opts      replay.Options
		want      map[replay.EventKind]int // counts of these kinds
		decisions []string                 // the contents of the decision points
	}{
		{"default", replay.Options{}, map[replay.EventKind]int{replay.EventConversation: 1, replay.EventMessage: 5, replay.EventObservation: 0, replay.EventFact: 3}, []string{decision}},
		{"observations", replay.Options{IncludeObservations: true}, map[replay.EventKind]int{replay.EventObservation: 1, replay.EventFact: 3}, []string{decision}},
		{"no conversations", replay.Options{ExcludeConversations: true}, map[replay.EventKind]int{replay.EventConversation: 0, replay.EventMessage: 0, replay.EventFact: 3}, nil},
		{"verified only", replay.Options{VerifiedOnly: true}, map[replay.EventKind]int{replay.EventConversation: 0, replay.EventMessage: 0, replay.EventFact: 1, replay.EventVerification: 1, replay.EventHandoffCreated: 1}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := e.replay.TaskReplay(context.Background(), "fix", tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			n := count(tr.Timeline)
			got := map[replay.EventKind]int{}
			for k := range tt.want {
				got[k] = n[k]
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("event counts (-want +got):\n%s", diff)
			}
			var decisions []string
			for _, d := range tr.Decisions {
				decisions = append(decisions, d.Content)
				if d.Conversation == "" || d.MessageID == "" || d.Seq == 0 || len(d.Reasons) == 0 {
					t.Errorf("decision %+v lacks its place or reasons", d)
				}
			}
			if diff := cmp.Diff(tt.decisions, decisions); diff != "" {
				t.Errorf("decisions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTaskReplayAsOf(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	runScenario(t, e, "fix", fixText)
	full, err := e.replay.TaskReplay(ctx, "fix", replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var offered replay.Event
	for _, ev := range full.Timeline {
		if ev.Kind == replay.EventHandoffCreated {
			offered = ev
		}
	}
	tr, err := e.replay.TaskReplay(ctx, "fix", replay.Options{AsOf: store.Point{Time: offered.At}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(steps(full.Timeline[:11]), steps(tr.Timeline)); diff != "" {
		t.Errorf("timeline as of the handoff (-want +got):\n%s", diff)
	}
	if !tr.AsOf.Equal(offered.At) || tr.Task.Status != handoff.TaskActive || tr.Outcome.Status != handoff.TaskActive ||
		tr.Outcome.MergedInto != "" || len(tr.KeyFacts) != 0 {
		t.Errorf("as of the handoff: as of %s, task %s, outcome %+v, key facts %v", tr.AsOf, tr.Task.Status, tr.Outcome, tr.KeyFacts)
	}
	if len(tr.Task.Members) != 1 || tr.Task.Members[0].Status != handoff.MemberActive {
		t.Errorf("members as of the handoff = %+v, want the investigator, active", tr.Task.Members)
	}
	if o := tr.Task.Objectives; o[0].Status != handoff.ObjectiveDone || o[1].Status != handoff.ObjectivePending {
		t.Errorf("objectives as of the handoff = %+v", o)
	}

	// A snapshot of the task's branch bounds the replay the same way.
	if _, err := e.tasks.CreateTask(ctx, handoff.TaskSpec{Name: "snap"}); err != nil {
		t.Fatal(err)
	}
	e.put(t, "task/snap", store.Fact{ID: "s1", Text: "first finding", TaskID: "snap"})
	if _, err := e.st.CreateSnapshot(ctx, "task/snap", "before-s2", ""); err != nil {
		t.Fatal(err)
	}
	e.put(t, "task/snap", store.Fact{ID: "s2", Text: "second finding", TaskID: "snap"})
	tr, err = e.replay.TaskReplay(ctx, "snap", replay.Options{AsOf: store.Point{Snapshot: "before-s2"}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"task.created  id-013", "fact  s1"}, steps(tr.Timeline)); diff != "" {
		t.Errorf("timeline at the snapshot (-want +got):\n%s", diff)
	}
}

func TestTaskReplayErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	runScenario(t, e, "fix", fixText)
	tests := []struct {
		name  string
		eng   *replay.Engine
		task  string
		opts  replay.Options
		field string // a *store.ValidationError naming it, else
		is    error  // an error matching it
	}{
		{name: "no store", eng: &replay.Engine{}, task: "fix", field: "Engine.Store"},
		{name: "bad similarity", eng: &replay.Engine{Store: e.st, Similarity: 2}, task: "fix", field: "Engine.Similarity"},
		{name: "empty task", task: "", field: "task"},
		{name: "branch name", task: "task/fix", field: "task"},
		{name: "both points", task: "fix", opts: replay.Options{AsOf: store.Point{Snapshot: "s", Time: testkit.Start}}, field: "Options.AsOf"},
		{name: "unknown task", task: "nope", is: store.ErrNotFound},
		{name: "unknown snapshot", task: "fix", opts: replay.Options{AsOf: store.Point{Snapshot: "nope"}}, is: store.ErrNotFound},
		{name: "before the task", task: "fix", opts: replay.Options{AsOf: store.Point{Time: testkit.Start}}, is: store.ErrTooOld},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eng := tt.eng
			if eng == nil {
				eng = e.replay
			}
			_, err := eng.TaskReplay(ctx, tt.task, tt.opts)
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
}

func TestTaskReplayScope(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	e.put(t, "main", store.Fact{ID: "old", Text: "known before the task"})
	if _, err := e.tasks.CreateTask(ctx, handoff.TaskSpec{Name: "scope"}); err != nil {
		t.Fatal(err)
	}
	m, err := e.tasks.JoinTask(ctx, handoff.JoinRequest{Task: "scope", Agent: "a", Role: "solo"})
	check(t, err)
	e.put(t, "task/scope", store.Fact{ID: "untagged", Text: "written on the task branch without a task id"})
	e.put(t, m.Branch, store.Relation{ID: "rel", Source: "refresh", Target: "token_service", Type: "calls"})
	e.put(t, "main", store.Fact{ID: "elsewhere", Text: "written on main for the task", TaskID: "scope"})
	c, err := e.tasks.Checkpoint(ctx, handoff.CheckpointRequest{Task: "scope", Agent: "a", Note: "half way"})
	check(t, err)
	_, err = e.tasks.ResumeFromCheckpoint(ctx, handoff.ResumeRequest{Task: "scope", Agent: "a"})
	check(t, err)
	tr, err := e.replay.TaskReplay(ctx, "scope", replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"task.created  id-001",
		"agent.joined a id-002",
		"fact  untagged",
		"relation a rel",
		"checkpoint.created a " + c.ID,
		"checkpoint.resumed a " + c.ID,
	}
	if diff := cmp.Diff(want, steps(tr.Timeline)); diff != "" {
		t.Errorf("timeline (-want +got):\n%s", diff)
	}
	for _, ev := range tr.Timeline {
		if (ev.Kind == replay.EventCheckpoint || ev.Kind == replay.EventCheckpointResumed) && (ev.Checkpoint == nil || ev.Checkpoint.Note != "half way") {
			t.Errorf("%s payload = %+v", ev.Kind, ev.Checkpoint)
		}
		if ev.Kind == replay.EventRelation && ev.Summary != "refresh -calls-> token_service" {
			t.Errorf("relation summary = %q", ev.Summary)
		}
	}
	if len(tr.Agents) != 1 || tr.Agents[0].Agent != "a" || tr.Outcome.Facts != 1 {
		t.Errorf("agents %+v, outcome %+v", tr.Agents, tr.Outcome)
	}
}
