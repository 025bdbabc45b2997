package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/agenttool"
)

// contractTools are the tools other programs rely on, by name.
var contractTools = []string{
	"memory_write_fact", "memory_fact_correct", "memory_extract", "memory_write_observation", "memory_write_relation",
	"memory_search", "memory_graph_query", "memory_timeline", "memory_record_get", "memory_task_list",
	"memory_branch_create", "memory_branch_list", "memory_branch_switch", "memory_branch_diff", "memory_branch_merge",
	"memory_snapshot", "memory_snapshot_list", "memory_time_travel",
	"memory_handoff_create", "memory_handoff_accept", "memory_handoff_list",
	"memory_cherry_pick_conversation", "memory_cherry_pick_decisions",
	"memory_verify_branch", "memory_verify_fact",
	"memory_bundle_create", "memory_bundle_import",
	"memory_task_replay", "memory_compare_tasks",
	"memory_task_create", "memory_task_join", "memory_task_objective_update", "memory_task_complete",
	"memory_conversation_create", "memory_message_append",
	"memory_session_start", "memory_session_end", "memory_session_list",
}

func TestListTools(t *testing.T) {
	t.Parallel()
	cs := connectStdio(t, "-memory")
	ctx := context.Background()
	var names []string
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
		if tool.Description == "" {
			t.Errorf("%s has no description", tool.Name)
		}
		if tool.OutputSchema == nil {
			t.Errorf("%s has no output schema", tool.Name)
		}
	}
	for _, want := range contractTools {
		if !slices.Contains(names, want) {
			t.Errorf("tool %s missing", want)
		}
	}
	if len(names) != len(contractTools) {
		t.Errorf("got %d tools, want %d: %v", len(names), len(contractTools), names)
	}
	// The server serves agenttool's list, which the framework adapters offer too.
	var described []string
	for _, tl := range agenttool.Tools() {
		described = append(described, tl.Name)
	}
	slices.Sort(described)
	served := slices.Sorted(slices.Values(names))
	if !slices.Equal(served, described) {
		t.Errorf("the server serves %v; agenttool describes %v", served, described)
	}
	// The README counts them; the plugin and the server's README name one binary.
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("%d tools", len(names)); !strings.Contains(string(readme), want) {
		t.Errorf("README.md does not say %q", want)
	}
	own, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(own), "\n") {
		if strings.Contains(l, "go build -o") && !strings.Contains(l, "day1-mcpserver") {
			t.Errorf("examples/mcpserver/README.md builds another binary than the plugin's day1-mcpserver: %s", l)
		}
	}

	// The hooks' arguments are named as the contract says.
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		if tool.Name != "memory_session_end" {
			continue
		}
		props := tool.InputSchema.(map[string]any)["properties"].(map[string]any)
		for _, arg := range []string{"session_id", "summary", "status", "consolidate"} {
			if _, ok := props[arg]; !ok {
				t.Errorf("memory_session_end has no argument %s", arg)
			}
		}
	}
}

func TestMemoryTools(t *testing.T) {
	t.Parallel()
	cs := connectStdio(t, "-memory")

	// Writes and reads.
	f := call[agenttool.WriteFactOut](t, cs, "memory_write_fact", map[string]any{
		"fact_text": "The auth service signs JWTs with RS256", "category": "architecture", "confidence": 0.9,
	})
	if f.Outcome != "created" || f.FactID == "" || f.Fact.Branch != "main" || f.Fact.Confidence != 0.9 {
		t.Fatalf("write_fact = %+v", f)
	}
	again := call[agenttool.WriteFactOut](t, cs, "memory_write_fact", map[string]any{"fact_text": "The auth service signs JWTs with RS256"})
	if again.Outcome != "deduplicated" || again.FactID != f.FactID {
		t.Errorf("repeated write_fact = %+v, want deduplicated %s", again, f.FactID)
	}
	o := call[agenttool.WriteObservationOut](t, cs, "memory_write_observation", map[string]any{
		"observation_type": "error", "summary": "pytest reported three failing token tests", "tool_name": "Bash",
	})
	if o.Outcome != "created" || o.Observation.Type != "error" || o.Observation.Tool != "Bash" {
		t.Errorf("write_observation = %+v", o)
	}
	r := call[agenttool.WriteRelationOut](t, cs, "memory_write_relation", map[string]any{
		"source_entity": "AuthService", "target_entity": "UserModel", "relation_type": "depends_on",
		"properties": map[string]any{"via": "orm"},
	})
	if r.Relation.Properties["via"] != "orm" || r.Relation.Source != "AuthService" {
		t.Errorf("write_relation = %+v", r)
	}
	s := call[agenttool.SearchOut](t, cs, "memory_search", map[string]any{"query": "JWTs RS256", "search_type": "keyword"})
	if len(s.Hits) == 0 || s.Hits[0].ID != f.FactID || s.Hits[0].Kind != "fact" {
		t.Errorf("search = %+v, want %s first", s, f.FactID)
	}
	if len(s.Hits) > 0 && !(s.Hits[0].Relevance > 0.9 && s.Hits[0].Relevance <= 1) {
		t.Errorf("search hit relevance = %v, want close to 1 for a fact holding every word", s.Hits[0].Relevance)
	}
	// Nothing in memory is about this: the default relevance floor answers nothing,
	// and min_relevance 0 returns whatever ranks.
	none := call[agenttool.SearchOut](t, cs, "memory_search", map[string]any{"query": "quantum banana smoothie service"})
	if msg := resultText(callResult(t, cs, "memory_search", map[string]any{"query": "quantum banana smoothie service"})); len(none.Hits) != 0 || !strings.Contains(msg, "nothing relevant") {
		t.Errorf("search of what memory does not hold = %+v, %q; want nothing relevant", none, msg)
	}
	every := call[agenttool.SearchOut](t, cs, "memory_search", map[string]any{"query": "quantum banana smoothie service", "min_relevance": 0})
	if len(every.Hits) == 0 {
		t.Errorf("search with min_relevance 0 = %+v; want the weak hits", every)
	}
	// A contradiction is reported with the write.
	ttl := call[agenttool.WriteFactOut](t, cs, "memory_write_fact", map[string]any{"fact_text": "The session cache TTL is 24 hours"})
	ttl2 := call[agenttool.WriteFactOut](t, cs, "memory_write_fact", map[string]any{"fact_text": "The session cache TTL is 12 hours"})
	if len(ttl2.Contradicts) != 1 || ttl2.Contradicts[0].FactID != ttl.FactID || ttl2.Contradicts[0].Kind != "value" {
		t.Errorf("a contradicting write = %+v; want it to name %s", ttl2, ttl.FactID)
	}
	// Corrections: an update keeps who and why; a correction without a reason is a
	// tool error.
	fixed := call[agenttool.CorrectFactOut](t, cs, "memory_fact_correct", map[string]any{
		"fact_id": f.FactID, "action": "update", "fact_text": "The auth service signs JWTs with ES256", "reason": "rotated to EC keys"})
	if fixed.Fact.Text != "The auth service signs JWTs with ES256" || fixed.Fact.Metadata["correction_reason"] != "rotated to EC keys" || fixed.Fact.Metadata["corrected_by"] == "" {
		t.Errorf("fact_correct = %+v", fixed)
	}
	if msg := callError(t, cs, "memory_fact_correct", map[string]any{"fact_id": f.FactID, "action": "invalidate", "reason": " "}); !strings.Contains(msg, "FactCorrection.Why") {
		t.Errorf("a correction without a reason: %q", msg)
	}
	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	s = call[agenttool.SearchOut](t, cs, "memory_search", map[string]any{"query": "JWTs RS256", "time_range": map[string]any{"after": future}})
	if len(s.Hits) != 0 {
		t.Errorf("search after %s = %+v, want none", future, s.Hits)
	}
	g := call[agenttool.GraphOut](t, cs, "memory_graph_query", map[string]any{"entity": "AuthService"})
	if len(g.Edges) != 1 || len(g.Nodes) != 2 || g.Nodes[1].Entity != "UserModel" {
		t.Errorf("graph_query = %+v", g)
	}
	tl := call[agenttool.TimelineOut](t, cs, "memory_timeline", map[string]any{})
	if len(tl.Events) != 5 { // the fact, observation and relation, and the two cache TTL facts
		t.Errorf("timeline has %d events, want 5: %+v", len(tl.Events), tl.Events)
	}
	// Newest first, the corrected fact stands at its correction with by_update and at
	// its creation without.
	for _, c := range []struct {
		byUpdate bool
		want     string
	}{{true, f.FactID}, {false, ttl2.FactID}} {
		tl := call[agenttool.TimelineOut](t, cs, "memory_timeline", map[string]any{"kinds": []string{"fact"}, "newest": true, "by_update": c.byUpdate, "limit": 1})
		if len(tl.Events) != 1 || tl.Events[0].ID != c.want {
			t.Errorf("newest fact with by_update %v = %+v; want %s", c.byUpdate, tl.Events, c.want)
		}
	}
	// Extraction: without a model, the findings of the assistant's turns are kept.
	x := call[agenttool.ExtractOut](t, cs, "memory_extract", map[string]any{"session_id": "s-extract", "turns": []map[string]any{
		{"role": "user", "content": "Why do logins fail after an hour?"},
		{"role": "assistant", "content": "I found the cause: the refresh token is never rotated."},
	}})
	if x.By != "heuristic" || len(x.Added) != 1 || x.Added[0].Text != "I found the cause: the refresh token is never rotated." ||
		x.Added[0].Metadata["extracted_from_turns"] != "2" || len(x.Updated) != 0 || len(x.Invalidated) != 0 {
		t.Errorf("extract = %+v", x)
	}
	if msg := callError(t, cs, "memory_extract", map[string]any{"turns": []map[string]any{{"role": "robot", "content": "x"}}}); !strings.Contains(msg, "Extraction.Messages[0].Role") {
		t.Errorf("an extraction with an unknown role: %q", msg)
	}

	// Branches: switch, write, diff, merge.
	b := call[agenttool.BranchView](t, cs, "memory_branch_create", map[string]any{"branch_name": "experiment", "description": "try HS256"})
	if b.Name != "experiment" || b.Parent != "main" || b.Status != "active" {
		t.Errorf("branch_create = %+v", b)
	}
	sw := call[agenttool.BranchSwitchOut](t, cs, "memory_branch_switch", map[string]any{"branch_name": "experiment"})
	if sw.Current != "experiment" || sw.Previous != "main" {
		t.Errorf("branch_switch = %+v", sw)
	}
	onBranch := call[agenttool.WriteFactOut](t, cs, "memory_write_fact", map[string]any{"fact_text": "Token refresh happens in the gateway", "category": "architecture"})
	if onBranch.Fact.Branch != "experiment" {
		t.Errorf("a write after the switch landed on %s, want experiment", onBranch.Fact.Branch)
	}
	bl := call[agenttool.BranchListOut](t, cs, "memory_branch_list", map[string]any{"status": "active"})
	if bl.Current != "experiment" || len(bl.Branches) != 2 {
		t.Errorf("branch_list = %+v", bl)
	}
	d := call[agenttool.BranchDiffOut](t, cs, "memory_branch_diff", map[string]any{"source_branch": "experiment", "target_branch": "main"})
	if len(d.SourceChanges) != 1 || d.SourceChanges[0].Ref != "fact/"+onBranch.FactID || d.SourceChanges[0].Op != "added" {
		t.Errorf("branch_diff = %+v", d)
	}
	d = call[agenttool.BranchDiffOut](t, cs, "memory_branch_diff", map[string]any{"source_branch": "experiment", "target_branch": "main", "category": "bug_fix"})
	if len(d.SourceChanges) != 0 {
		t.Errorf("branch_diff of bug_fix = %+v, want nothing", d)
	}
	dry := call[agenttool.BranchMergeOut](t, cs, "memory_branch_merge", map[string]any{"source_branch": "experiment", "strategy": "cherry_pick", "items": []string{onBranch.FactID}, "dry_run": true})
	if dry.Applied || len(dry.Merged) != 1 {
		t.Errorf("dry-run merge = %+v", dry)
	}
	mg := call[agenttool.BranchMergeOut](t, cs, "memory_branch_merge", map[string]any{"source_branch": "experiment", "strategy": "native"})
	if !mg.Applied || mg.Target != "main" || len(mg.Merged) != 1 || mg.MergeID == "" {
		t.Errorf("merge = %+v", mg)
	}
	s = call[agenttool.SearchOut](t, cs, "memory_search", map[string]any{"query": "token refresh gateway", "branch": "main"})
	if len(s.Hits) == 0 || s.Hits[0].ID != onBranch.FactID {
		t.Errorf("after the merge main's search = %+v", s)
	}
	call[agenttool.BranchSwitchOut](t, cs, "memory_branch_switch", map[string]any{"branch_name": "main"})

	// Snapshots and time travel.
	snap := call[agenttool.SnapshotView](t, cs, "memory_snapshot", map[string]any{"label": "before-refactor"})
	if snap.Branch != "main" || snap.Label != "before-refactor" {
		t.Errorf("snapshot = %+v", snap)
	}
	late := call[agenttool.WriteFactOut](t, cs, "memory_write_fact", map[string]any{"fact_text": "Sessions expire after thirty minutes of inactivity"})
	sl := call[agenttool.SnapshotListOut](t, cs, "memory_snapshot_list", map[string]any{})
	if len(sl.Snapshots) != 1 || sl.Snapshots[0].Label != "before-refactor" {
		t.Errorf("snapshot_list = %+v", sl)
	}
	tt := call[agenttool.TimeTravelOut](t, cs, "memory_time_travel", map[string]any{"snapshot": "before-refactor", "query": "sessions expire inactivity"})
	for _, h := range tt.Hits {
		if h.ID == late.FactID {
			t.Errorf("time travel to the snapshot found %s, written after it", late.FactID)
		}
	}
	tt = call[agenttool.TimeTravelOut](t, cs, "memory_time_travel", map[string]any{"timestamp": time.Now().UTC().Format(time.RFC3339Nano), "query": "sessions expire inactivity"})
	if len(tt.Hits) == 0 || tt.Hits[0].ID != late.FactID {
		t.Errorf("time travel to now = %+v, want %s", tt, late.FactID)
	}

	// Tasks, conversations, cherry-picks, verification, handoffs.
	task := call[agenttool.TaskView](t, cs, "memory_task_create", map[string]any{"name": "fix-auth", "objectives": []string{"find the cause", "fix it"}, "type": "bug_fix"})
	if task.Branch != "task/fix-auth" || len(task.Objectives) != 2 {
		t.Errorf("task_create = %+v", task)
	}
	mb := call[agenttool.MemberView](t, cs, "memory_task_join", map[string]any{"task_id": "fix-auth", "agent_id": "agent-a", "role": "investigator", "objectives": []int{1}})
	if mb.Branch != "task/fix-auth/agent-a" {
		t.Errorf("task_join = %+v", mb)
	}
	call[agenttool.MemberView](t, cs, "memory_task_join", map[string]any{"task_id": "fix-auth", "agent_id": "agent-b"})
	obj := call[agenttool.ObjectiveView](t, cs, "memory_task_objective_update", map[string]any{"task_id": "fix-auth", "objective": 1, "status": "done", "agent_id": "agent-a", "note": "found it"})
	if obj.Status != "done" {
		t.Errorf("objective_update = %+v", obj)
	}
	agentBranch := "task/fix-auth/agent-a"
	conv := call[agenttool.ConversationCreateOut](t, cs, "memory_conversation_create", map[string]any{"title": "debugging the token check", "branch": agentBranch, "task_id": "fix-auth", "agent_id": "agent-a"})
	for _, m := range []map[string]any{
		{"role": "user", "content": "Why do the token tests fail?"},
		{"role": "assistant", "content": "I'll check the signing algorithm the validator expects."},
		{"role": "tool_call", "content": "grep -r alg auth/", "tool": "Bash"},
	} {
		m["conversation_id"], m["branch"] = conv.ConversationID, agentBranch
		call[agenttool.MessageAppendOut](t, cs, "memory_message_append", m)
	}
	last := call[agenttool.MessageAppendOut](t, cs, "memory_message_append", map[string]any{"conversation_id": conv.ConversationID, "branch": agentBranch, "role": "tool_result", "content": "auth/jwt.go: alg RS256", "tool": "Bash"})
	if last.Seq != 4 {
		t.Errorf("fourth message has seq %d", last.Seq)
	}
	// The messages are searchable, with the turns around a hit.
	ms := call[agenttool.SearchOut](t, cs, "memory_search", map[string]any{"query": "signing algorithm validator", "branch": agentBranch,
		"kinds": []string{"message"}, "role": "assistant", "window": 1, "limit": 1})
	if len(ms.Hits) != 1 || ms.Hits[0].Kind != "message" || ms.Hits[0].Seq != 2 || ms.Hits[0].Role != "assistant" ||
		ms.Hits[0].Title != "debugging the token check" || len(ms.Hits[0].Before) != 1 || len(ms.Hits[0].After) != 1 ||
		ms.Hits[0].After[0].Content != "grep -r alg auth/" {
		t.Errorf("message search = %+v", ms)
	}
	if msg := callError(t, cs, "memory_search", map[string]any{"query": "x", "kinds": []string{"relation"}}); !strings.Contains(msg, "kinds") {
		t.Errorf("a search of relations: %q", msg)
	}
	pick := call[agenttool.PickOut](t, cs, "memory_cherry_pick_conversation", map[string]any{"conversation_id": conv.ConversationID, "source_branch": agentBranch, "target_branch": "task/fix-auth"})
	if pick.ConversationID != conv.ConversationID || len(pick.Picked) != 4 {
		t.Errorf("cherry_pick_conversation = %+v", pick)
	}
	rng := call[agenttool.PickOut](t, cs, "memory_cherry_pick_conversation", map[string]any{"conversation_id": conv.ConversationID, "source_branch": agentBranch, "target_branch": "experiment", "from_sequence": 1, "to_sequence": 2})
	if rng.Messages != 2 || rng.ConversationID == conv.ConversationID {
		t.Errorf("cherry_pick of a range = %+v", rng)
	}
	dec := call[agenttool.PickOut](t, cs, "memory_cherry_pick_decisions", map[string]any{"conversation_id": conv.ConversationID, "source_branch": agentBranch, "target_branch": "experiment"})
	if len(dec.Decisions) == 0 || dec.By != "heuristic" {
		t.Errorf("cherry_pick_decisions = %+v", dec)
	}
	cause := call[agenttool.WriteFactOut](t, cs, "memory_write_fact", map[string]any{
		"fact_text": "The token validator rejected RS256 tokens because its configuration still listed HS256 as the only accepted algorithm after the key rotation",
		"category":  "bug_fix", "confidence": 0.95, "branch": "task/fix-auth", "task_id": "fix-auth", "agent_id": "agent-a",
	})
	rec := call[agenttool.RecordOut](t, cs, "memory_record_get", map[string]any{"ref": "fact/" + cause.FactID, "branch": "task/fix-auth"})
	if rec.Kind != "fact" || rec.ID != cause.FactID || rec.Record["text"] == nil || rec.Record["embedding"] != nil {
		t.Errorf("record_get = %+v", rec)
	}
	ftl := call[agenttool.TimelineOut](t, cs, "memory_timeline", map[string]any{"branch": "task/fix-auth", "kinds": []string{"fact"}})
	if len(ftl.Events) == 0 || ftl.Events[len(ftl.Events)-1].ID != cause.FactID {
		t.Errorf("timeline of facts = %+v", ftl)
	}
	tasks := call[agenttool.TaskListOut](t, cs, "memory_task_list", map[string]any{"task_id": "fix-auth"})
	if len(tasks.Tasks) != 1 || tasks.Tasks[0].ObjectiveCount != 2 || len(tasks.Tasks[0].Objectives) != 2 {
		t.Errorf("task_list = %+v", tasks)
	}
	vf := call[agenttool.VerifyFactOut](t, cs, "memory_verify_fact", map[string]any{"fact_id": cause.FactID, "branch": "task/fix-auth"})
	if vf.Verdict.Status != "verified" || vf.Fact.Verification != "verified" || vf.Verdict.By != "heuristic" {
		t.Errorf("verify_fact = %+v", vf)
	}
	call[agenttool.WriteFactOut](t, cs, "memory_write_fact", map[string]any{"fact_text": "maybe cache", "confidence": 0.2, "branch": "task/fix-auth", "task_id": "fix-auth"})
	vb := call[agenttool.VerifyBranchOut](t, cs, "memory_verify_branch", map[string]any{"branch_name": "task/fix-auth"})
	if vb.Threshold != 0.7 || vb.Invalidated != 1 || vb.Total != vb.Verified+vb.Invalidated+vb.Pending {
		t.Errorf("verify_branch = %+v", vb)
	}
	h := call[agenttool.HandoffCreateOut](t, cs, "memory_handoff_create", map[string]any{
		"task_id": "fix-auth", "from_agent_id": "agent-a", "to_agent_id": "agent-c", "handoff_type": "escalation",
		"instructions": "finish the fix", "priority_objectives": []int{2}, "blockers": []string{"no staging keys"},
	})
	if h.Handoff.Status != "pending" || h.Packet.Branch != "task/fix-auth" || len(h.Packet.Facts) != 1 || !slices.Contains(h.Packet.Blockers, "no staging keys") {
		t.Errorf("handoff_create = %+v", h)
	}
	cp := call[agenttool.HandoffCreateOut](t, cs, "memory_handoff_create", map[string]any{"task_id": "fix-auth", "from_agent_id": "agent-b", "handoff_type": "checkpoint", "instructions": "halfway"})
	if cp.Handoff.Type != "checkpoint" || cp.Handoff.HandoffID == "" {
		t.Errorf("checkpoint = %+v", cp)
	}
	hl := call[agenttool.HandoffListOut](t, cs, "memory_handoff_list", map[string]any{"task_id": "fix-auth", "status": "pending"})
	if len(hl.Handoffs) != 1 || hl.Handoffs[0].HandoffID != h.Handoff.HandoffID {
		t.Errorf("handoff_list = %+v", hl)
	}
	acc := call[agenttool.HandoffAcceptOut](t, cs, "memory_handoff_accept", map[string]any{"handoff_id": h.Handoff.HandoffID, "agent_id": "agent-c"})
	if acc.Branch != "task/fix-auth/agent-c" || acc.Handoff.Status != "accepted" || acc.Packet.Instructions != "finish the fix" {
		t.Errorf("handoff_accept = %+v", acc)
	}

	// Completion, bundles, replay.
	done := call[agenttool.TaskCompleteOut](t, cs, "memory_task_complete", map[string]any{"task_id": "fix-auth", "result_summary": "validator accepts RS256", "agent_id": "agent-c"})
	if done.Task.Status != "completed" || !slices.Contains(done.Promoted, "fact/"+cause.FactID) || done.MergeID == "" {
		t.Errorf("task_complete = %+v", done)
	}
	bun := call[agenttool.BundleView](t, cs, "memory_bundle_create", map[string]any{"task_id": "fix-auth", "name": "auth fix", "visibility": "team"})
	if bun.ShareToken == "" || bun.Counts["facts"] != 1 || bun.Type != "task_export" {
		t.Errorf("bundle_create = %+v", bun)
	}
	imp := call[agenttool.BundleImportOut](t, cs, "memory_bundle_import", map[string]any{"share_token": bun.ShareToken, "target_branch": "imported", "create_branch": true})
	if imp.BundleID != bun.BundleID || !imp.BranchCreated || imp.Created+imp.Deduplicated+imp.Updated == 0 {
		t.Errorf("bundle_import = %+v", imp)
	}
	rp := call[agenttool.TaskReplayOut](t, cs, "memory_task_replay", map[string]any{"task_id": "fix-auth"})
	if rp.Outcome.Status != "completed" || len(rp.Timeline) == 0 || len(rp.KeyFacts) != 1 || len(rp.Agents) < 2 {
		t.Errorf("task_replay = %+v", rp)
	}
	call[agenttool.TaskView](t, cs, "memory_task_create", map[string]any{"name": "fix-auth-2", "objectives": []string{"fix it again"}})
	cmp := call[agenttool.CompareTasksOut](t, cs, "memory_compare_tasks", map[string]any{"task_id_a": "fix-auth", "task_id_b": "fix-auth-2"})
	if cmp.A.TaskID != "fix-auth" || cmp.B.TaskID != "fix-auth-2" || len(cmp.OnlyA) == 0 {
		t.Errorf("compare_tasks = %+v", cmp)
	}

	// Resources.
	ctx := context.Background()
	for _, uri := range []string{"day1://branches", "day1://timeline/task/fix-auth/agent-a", "day1://replay/fix-auth"} {
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			t.Errorf("reading %s: %v", uri, err)
			continue
		}
		if len(res.Contents) != 1 || !strings.Contains(res.Contents[0].Text, "fix-auth") && uri != "day1://branches" {
			t.Errorf("%s = %+v", uri, res.Contents)
		}
	}
}

func TestSessionTools(t *testing.T) {
	t.Parallel()
	cs := connectStdio(t, "-memory")
	for _, id := range []string{"s-old", "s-new"} {
		st := call[agenttool.SessionView](t, cs, "memory_session_start", map[string]any{"session_id": id, "agent_id": "claude"})
		if st.Status != "active" || st.Branch != "main" {
			t.Fatalf("session_start = %+v", st)
		}
		time.Sleep(5 * time.Millisecond) // distinct start times
	}
	call[agenttool.WriteObservationOut](t, cs, "memory_write_observation", map[string]any{
		"observation_type": "discovery", "summary": "The build uses Bazel, not Make", "session_id": "s-new",
	})
	end := call[agenttool.SessionEndOut](t, cs, "memory_session_end", map[string]any{"session_id": "s-new", "summary": "learned the build"})
	if end.Session.Status != "completed" || end.Session.EndedAt.IsZero() || end.Consolidated == nil ||
		end.Consolidated.Observations != 1 || len(end.Consolidated.Facts) != 1 {
		t.Fatalf("session_end = %+v", end)
	}
	noCons := call[agenttool.SessionEndOut](t, cs, "memory_session_end", map[string]any{"session_id": "s-old", "status": "abandoned", "consolidate": false})
	if noCons.Consolidated != nil || noCons.Session.Status != "abandoned" {
		t.Errorf("session_end without consolidation = %+v", noCons)
	}
	list := call[agenttool.SessionListOut](t, cs, "memory_session_list", map[string]any{"agent_id": "claude"})
	if len(list.Sessions) != 2 || list.Sessions[0].ID != "s-new" || list.Sessions[0].Summary != "learned the build" {
		t.Errorf("session_list = %+v", list)
	}
	one := call[agenttool.SessionListOut](t, cs, "memory_session_list", map[string]any{"limit": 1})
	if len(one.Sessions) != 1 || one.Sessions[0].ID != "s-new" {
		t.Errorf("session_list limit 1 = %+v", one)
	}
}

// TestToolErrors checks that bad input comes back as a tool error carrying the
// library's message, and that the server goes on serving.
func TestToolErrors(t *testing.T) {
	t.Parallel()
	cs := connectStdio(t, "-memory")
	lib, err := day1.Open(context.Background(), day1.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer lib.Close()
	ctx := context.Background()
	libErr := func(err error) string {
		t.Helper()
		if err == nil {
			t.Fatal("the library accepted what the test calls bad input")
		}
		return err.Error()
	}

	_, err = lib.Branch(ctx, "bad name!", day1.BranchOptions{})
	if got, want := callError(t, cs, "memory_branch_create", map[string]any{"branch_name": "bad name!"}), libErr(err); got != want {
		t.Errorf("branch_create error = %q, want %q", got, want)
	}
	_, err = lib.Merge(ctx, day1.MergeRequest{Source: "nope", Target: "main"})
	if got, want := callError(t, cs, "memory_branch_merge", map[string]any{"source_branch": "nope", "strategy": "native"}), libErr(err); got != want {
		t.Errorf("branch_merge error = %q, want %q", got, want)
	}
	_, err = lib.WriteObservation(ctx, day1.Observation{Type: "bogus", Summary: "x"})
	if got, want := callError(t, cs, "memory_write_observation", map[string]any{"observation_type": "bogus", "summary": "x"}), libErr(err); got != want {
		t.Errorf("write_observation error = %q, want %q", got, want)
	}
	_, err = lib.GetBranch(ctx, "nowhere")
	if got, want := callError(t, cs, "memory_branch_switch", map[string]any{"branch_name": "nowhere"}), libErr(err); got != want {
		t.Errorf("branch_switch error = %q, want %q", got, want)
	}
	if got := callError(t, cs, "memory_time_travel", map[string]any{"timestamp": "yesterday", "query": "x"}); !strings.Contains(got, "RFC 3339") {
		t.Errorf("time_travel with a bad timestamp: %q", got)
	}
	if got := callError(t, cs, "memory_write_fact", map[string]any{"category": "x"}); !strings.Contains(got, "fact_text") {
		t.Errorf("write_fact without fact_text: %q", got)
	}
	for arg, bad := range map[string]string{"expires_in": "-2h", "expires_at": "Friday"} {
		if got := callError(t, cs, "memory_write_fact", map[string]any{"fact_text": "x", arg: bad}); !strings.Contains(got, arg) {
			t.Errorf("write_fact with %s %q: %q; want an error naming it", arg, bad, got)
		}
	}
	if got := callError(t, cs, "memory_write_fact", map[string]any{"fact_text": "x", "expires_at": "2001-01-01T00:00:00Z"}); !strings.Contains(got, "ExpiresAt") {
		t.Errorf("write_fact expiring in the past: %q; want an error naming the expiry", got)
	}
	freeze := call[agenttool.WriteFactOut](t, cs, "memory_write_fact", map[string]any{"fact_text": "The deploy freeze holds this week", "expires_in": "72h"})
	if got := freeze.Fact.ExpiresAt.Sub(freeze.Fact.CreatedAt); got != 72*time.Hour {
		t.Errorf("a fact written with expires_in 72h expires %v after it was written", got)
	}
	// A fact that expires leaves search, unless include_expired asks for it.
	brief := call[agenttool.WriteFactOut](t, cs, "memory_write_fact", map[string]any{"fact_text": "The wombat demo runs in room nine", "expires_in": "300ms"})
	time.Sleep(time.Until(brief.Fact.ExpiresAt) + 50*time.Millisecond)
	if s := call[agenttool.SearchOut](t, cs, "memory_search", map[string]any{"query": "wombat demo room"}); len(s.Hits) != 0 {
		t.Errorf("search after the fact expired: %+v; want nothing", s.Hits)
	}
	// (The fact written just before it may come along as its context.)
	if s := call[agenttool.SearchOut](t, cs, "memory_search", map[string]any{"query": "wombat demo room", "include_expired": true}); len(s.Hits) == 0 || s.Hits[0].ID != brief.FactID {
		t.Errorf("search with include_expired: %+v; want the expired fact first", s.Hits)
	}

	// Still serving, and the failed switch left the current branch alone.
	w := call[agenttool.WriteFactOut](t, cs, "memory_write_fact", map[string]any{"fact_text": "still here"})
	if w.Fact.Branch != "main" {
		t.Errorf("after the errors a write landed on %s", w.Fact.Branch)
	}
}
