// Command quickstart is a tour of day1 on the embedded in-memory store: no network, no
// keys. It writes facts, observations, relations and a conversation to main, searches
// them, lets an agent work on its own branch, diffs and merges that branch, snapshots
// main and reads it back in time.
//
//	go run ./examples/quickstart
//
// With -dsn (or DAY1_DSN) it opens MatrixOne instead, when the store is built in.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/store/matrixone"
)

func main() {
	dsn := flag.String("dsn", os.Getenv("DAY1_DSN"), "MatrixOne data source name, such as root:111@tcp(127.0.0.1:6001)/day1 (default $DAY1_DSN; empty uses the embedded in-memory store)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Stdout, *dsn); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		if *dsn != "" {
			fmt.Fprintln(os.Stderr, "quickstart: is MatrixOne running? scripts/matrixone.sh start starts one on 127.0.0.1:6001")
		}
		os.Exit(1)
	}
}

const agentBranch = "task/fix-auth/agent-a"

// run is the whole tour, printed to w. An empty dsn uses the embedded in-memory store.
func run(ctx context.Context, w io.Writer, dsn string) error {
	c, err := day1.Open(ctx, day1.Config{DSN: dsn})
	if err != nil {
		return err
	}
	defer c.Close()
	p := &printer{w: w}

	caps := c.Capabilities()
	p.heading("Opened day1")
	p.line("store %s (durable: %v), embedder %s (%d dimensions)", caps.Store, caps.Durable, caps.Embedder, caps.Dimensions)
	p.line("features: %s", strings.Join(caps.Features, ", "))
	var ms *matrixone.Store
	if c.As(&ms) {
		mo := ms.Capabilities()
		p.line("matrixone %s: branch path %s, data branch %v, account snapshots %v, pitr %v, full-text %v, ivfflat %v, hnsw %v",
			mo.Version, mo.BranchPath, mo.DataBranch, mo.AccountSnapshots, mo.PITR, mo.FullText, mo.IVFFlat, mo.HNSW)
	}

	// Memory on main.
	p.heading("Writing to main")
	facts, err := c.WriteFacts(ctx, []day1.Fact{
		{Text: "The auth service signs JWT access tokens with RS256", Category: "architecture"},
		{Text: "Access tokens expire after 15 minutes; refresh tokens after 30 days", Category: "architecture"},
		{Text: "User sessions are stored in Redis", Category: "architecture"},
		{Text: "Users get logged out when the refresh handler rejects a valid token", Category: "bug"},
	})
	if err != nil {
		return err
	}
	for _, f := range facts {
		p.item("fact %-12s %s", f.Outcome, f.Record.Text)
	}
	again, err := c.WriteFact(ctx, day1.Fact{Text: "User sessions are stored in Redis"})
	if err != nil {
		return err
	}
	p.item("fact %-12s %s (the same text again)", again.Outcome, again.Record.Text)
	obs, err := c.WriteObservations(ctx, []day1.Observation{
		{Type: day1.ObsError, Tool: "go test", Summary: "TestRefresh fails: token rejected as expired one minute early"},
		{Type: day1.ObsDiscovery, Summary: "The refresh handler compares expiry against the server clock without leeway"},
	})
	if err != nil {
		return err
	}
	for _, o := range obs {
		p.item("observation %-9s %s", o.Record.Type, o.Record.Summary)
	}
	for _, r := range []day1.Relation{
		{Source: "Gateway", Type: "calls", Target: "AuthService"},
		{Source: "AuthService", Type: "uses", Target: "Redis"},
		{Source: "AuthService", Type: "issues", Target: "JWT"},
	} {
		wr, err := c.WriteRelation(ctx, r)
		if err != nil {
			return err
		}
		p.item("relation %s -%s-> %s", wr.Record.Source, wr.Record.Type, wr.Record.Target)
	}
	conv, err := c.WriteConversation(ctx, day1.Conversation{Title: "Why are users logged out?"})
	if err != nil {
		return err
	}
	for _, m := range []day1.Message{
		{Role: day1.RoleUser, Content: "Users get logged out every 15 minutes."},
		{Role: day1.RoleAssistant, Content: "The refresh call fails. Checking the handler's expiry check."},
		{Role: day1.RoleAssistant, Content: "It rejects tokens that expire within the next minute."},
	} {
		m.ConversationID = conv.Record.ID
		if _, err := c.AppendMessage(ctx, m); err != nil {
			return err
		}
	}
	msgs, err := c.Messages(ctx, "main", conv.Record.ID)
	if err != nil {
		return err
	}
	p.item("conversation %q with %d messages", conv.Record.Title, len(msgs))

	// Search.
	const query = "why are users logged out after the token expires"
	p.heading("Hybrid search: %q", query)
	// The local embedder is lexical: the default fusion keeps keyword search's ranking
	// and lets the vector retriever fill what keyword search leaves empty.
	p.item("fusion for the %s embedder: keyword hits first, vector hits fill the rest", c.Capabilities().Embedder)
	hits, err := c.Search(ctx, day1.SearchQuery{Text: query, Limit: 4})
	if err != nil {
		return err
	}
	for i, h := range hits {
		p.item("%d. score %.4f  keyword %-3s vector %-3s found by %-14s %s",
			i+1, h.Score, rank(h.KeywordRank), rank(h.VectorRank), retrievers(h.FoundBy), text(h.Record))
	}

	// An agent works on its own branch.
	p.heading("Branch %s", agentBranch)
	b, err := c.Branch(ctx, agentBranch, day1.BranchOptions{From: "main", Description: "agent A fixes the logout bug"})
	if err != nil {
		return err
	}
	p.line("created from %s: %s", b.Parent, b.Description)
	fix, err := c.WriteFact(ctx, day1.Fact{Branch: agentBranch, Text: "The refresh handler must allow 60 seconds of clock leeway", Category: "bug_fix", AgentID: "agent-a"})
	if err != nil {
		return err
	}
	p.item("fact %-12s %s", fix.Outcome, fix.Record.Text)
	if _, err := c.WriteObservation(ctx, day1.Observation{Branch: agentBranch, Type: day1.ObsDecision, Summary: "Add a 60 second leeway to the expiry check", AgentID: "agent-a"}); err != nil {
		return err
	}
	p.item("observation %-9s %s", day1.ObsDecision, "Add a 60 second leeway to the expiry check")
	if _, err := c.GetFact(ctx, "main", fix.Record.ID); errors.Is(err, day1.ErrNotFound) {
		p.line("main does not see the branch's fact yet")
	} else if err != nil {
		return err
	}

	p.heading("Diff %s -> main", agentBranch)
	d, err := c.Diff(ctx, agentBranch, "main")
	if err != nil {
		return err
	}
	for _, ch := range d.SourceChanges {
		p.item("%-7s %-11s %s", ch.Op, ch.Ref.Kind, text(ch.After))
	}
	p.line("%d change(s) on the branch, %d on main, %d conflict(s)", len(d.SourceChanges), len(d.TargetChanges), len(d.Conflicts))

	p.heading("Merge (native)")
	res, err := c.Merge(ctx, day1.MergeRequest{Source: agentBranch, Target: "main", MergedBy: "lead", Message: "logout fix", MarkMerged: true})
	if err != nil {
		return err
	}
	p.line("merged %d record(s) into main, merge %s by %s", len(res.Record.Merged), res.Record.ID, res.Record.MergedBy)
	merged, err := c.GetBranch(ctx, agentBranch)
	if err != nil {
		return err
	}
	p.line("branch %s is now %s", merged.Name, merged.Status)

	// Snapshot, more writes, time travel.
	p.heading("Snapshot main")
	snap, err := c.Snapshot(ctx, "main", "after-logout-fix", day1.SnapshotOptions{Description: "main after the logout fix"})
	if err != nil {
		return err
	}
	p.line("snapshot %s of %s", snap.Name, snap.Branch)
	ttl := facts[1].Record
	ttl.Text = "Access tokens expire after 30 minutes; refresh tokens after 30 days"
	upd, err := c.WriteFact(ctx, ttl)
	if err != nil {
		return err
	}
	p.item("fact %-12s %s", upd.Outcome, upd.Record.Text)
	added, err := c.WriteFact(ctx, day1.Fact{Text: "Sessions are replicated to a second Redis region", Category: "architecture"})
	if err != nil {
		return err
	}
	p.item("fact %-12s %s", added.Outcome, added.Record.Text)

	p.heading("Time travel to %s", snap.Name)
	now, err := c.ListFacts(ctx, day1.ListOptions{Branch: "main", Filter: day1.Filter{Statuses: []day1.FactStatus{day1.FactActive, day1.FactVerified, day1.FactPromoted}}})
	if err != nil {
		return err
	}
	past := c.TimeTravel(day1.AtSnapshot(snap.Name))
	then, err := past.ListFacts(ctx, day1.ListOptions{Branch: "main", Filter: day1.Filter{Statuses: []day1.FactStatus{day1.FactActive, day1.FactVerified, day1.FactPromoted}}})
	if err != nil {
		return err
	}
	p.line("main has %d fact(s) now and had %d at the snapshot", len(now), len(then))
	thenByID := map[string]string{}
	for _, f := range then {
		thenByID[f.ID] = f.Text
	}
	for _, f := range now {
		switch old, ok := thenByID[f.ID]; {
		case !ok:
			p.item("added since:   %s", f.Text)
		case old != f.Text:
			p.item("changed since: %s", f.Text)
			p.item("        was:   %s", old)
		}
	}
	pastHits, err := past.Search(ctx, day1.SearchQuery{Text: "access token expiry minutes", Mode: day1.Keyword, Limit: 1})
	if err != nil {
		return err
	}
	if len(pastHits) > 0 {
		p.line("searching the snapshot finds: %s", text(pastHits[0].Record))
	}

	p.heading("Graph around AuthService")
	g, err := c.Graph(ctx, day1.GraphQuery{Entity: "AuthService", Depth: 2})
	if err != nil {
		return err
	}
	for _, e := range g.Edges {
		p.item("%s -%s-> %s", e.Source, e.Type, e.Target)
	}
	p.heading("Done")
	return p.err
}

// text is the one-line text of a record.
func text(r day1.Record) string {
	switch r := r.(type) {
	case day1.Fact:
		return r.Text
	case day1.Observation:
		return r.Summary
	case day1.Message:
		return r.Content
	case day1.Conversation:
		return r.Title
	case day1.Relation:
		return r.Source + " -" + r.Type + "-> " + r.Target
	}
	return ""
}

// rank formats a retriever's 1-based rank, "-" when it did not find the hit.
func rank(r int) string {
	if r == 0 {
		return "-"
	}
	return fmt.Sprintf("#%d", r)
}

func retrievers(rs []day1.Retriever) string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = string(r)
	}
	slices.Sort(s)
	return strings.Join(s, "+")
}

// printer writes the tour's lines and keeps the first write error.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) printf(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

func (p *printer) heading(format string, args ...any) {
	p.printf("\n== "+format+"\n", args...)
}

func (p *printer) line(format string, args ...any) { p.printf(format+"\n", args...) }

func (p *printer) item(format string, args ...any) { p.printf("  "+format+"\n", args...) }
