package main

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/day1ai/day1"
)

// memory is what the hooks need of day1's memory: a Client, and the branch every
// method writes to or reads from (main unless DAY1_BRANCH says otherwise).
type memory struct {
	c      *day1.Client
	branch string
}

// liveFacts are the statuses of facts worth showing.
var liveFacts = []day1.FactStatus{day1.FactActive, day1.FactVerified, day1.FactPromoted}

// StartSession records the start of a session; starting it again is harmless.
func (d *memory) StartSession(ctx context.Context, s sessionStart) error {
	_, err := d.c.StartSession(ctx, day1.Session{ID: s.ID, AgentID: s.AgentID, Branch: d.branch})
	return err
}

// EndSession ends a session with a summary and consolidates its observations
// into candidate facts; it returns how many facts consolidation wrote. A session
// that was never started is started first.
func (d *memory) EndSession(ctx context.Context, s sessionEnd) (int, error) {
	_, err := d.c.EndSession(ctx, s.ID, day1.SessionStatus(s.Status), s.Summary)
	if errors.Is(err, day1.ErrNotFound) {
		// The plugin was enabled in the middle of the session: start it now.
		if err = d.StartSession(ctx, sessionStart{ID: s.ID, AgentID: agentID}); err == nil {
			_, err = d.c.EndSession(ctx, s.ID, day1.SessionStatus(s.Status), s.Summary)
		}
	}
	if err != nil {
		return 0, err
	}
	res, err := d.c.Consolidate(ctx, day1.ConsolidateRequest{Branch: d.branch, SessionID: s.ID})
	if err != nil {
		return 0, err
	}
	return len(res.Facts), nil
}

// RecentSessions returns up to limit sessions, newest first.
func (d *memory) RecentSessions(ctx context.Context, limit int) ([]sessionInfo, error) {
	ss, err := d.c.Sessions(ctx, day1.SessionFilter{Branch: d.branchName()})
	if err != nil {
		return nil, err
	}
	// Sessions lists oldest first.
	slices.Reverse(ss)
	var out []sessionInfo
	for _, s := range ss[:min(limit, len(ss))] {
		out = append(out, sessionInfo{ID: s.ID, Summary: s.Summary, Status: string(s.Status),
			StartedAt: s.StartedAt.UTC().Format("2006-01-02 15:04")})
	}
	return out, nil
}

// Facts returns up to limit facts about query, best first, topped up with the
// most recent facts when the search finds fewer.
func (d *memory) Facts(ctx context.Context, query string, limit int) ([]hit, error) {
	var out []hit
	seen := map[string]bool{}
	add := func(f day1.Fact) {
		if !seen[f.ID] && len(out) < limit {
			seen[f.ID] = true
			out = append(out, hit{ID: f.ID, Text: f.Text, Category: f.Category})
		}
	}
	if strings.TrimSpace(query) != "" {
		// Keyword only: no query embedding, so a session starts fast.
		hits, err := d.c.Search(ctx, day1.SearchQuery{Branch: d.branch, Text: query, Mode: day1.Keyword,
			Kinds: []day1.Kind{day1.KindFact}, Filter: day1.Filter{Statuses: liveFacts}, Limit: limit,
			MinRelevance: day1.DefaultMinRelevance})
		if err != nil {
			return nil, err
		}
		for _, h := range hits {
			if f, ok := h.Fact(); ok {
				add(f)
			}
		}
	}
	if len(out) < limit {
		recent, err := d.c.ListFacts(ctx, day1.ListOptions{Branch: d.branch,
			Filter: day1.Filter{Statuses: liveFacts}, Desc: true, Limit: limit})
		if err != nil {
			return nil, err
		}
		for _, f := range recent {
			add(f)
		}
	}
	return out, nil
}

// Branches returns the active branches.
func (d *memory) Branches(ctx context.Context) ([]branchInfo, error) {
	bs, err := d.c.Branches(ctx, day1.BranchFilter{Status: day1.BranchActive})
	if err != nil {
		return nil, err
	}
	out := make([]branchInfo, 0, len(bs))
	for _, b := range bs {
		out = append(out, branchInfo{Name: b.Name, Description: b.Description})
	}
	return out, nil
}

// WriteObservation writes an observation and returns its id.
func (d *memory) WriteObservation(ctx context.Context, o observation) (string, error) {
	w, err := d.c.WriteObservation(ctx, day1.Observation{Branch: d.branch, SessionID: o.SessionID,
		AgentID: agentID, Type: day1.ObservationType(o.Type), Tool: o.Tool, Summary: o.Summary,
		RawInput: o.RawInput, RawOutput: o.RawOutput})
	return w.Record.ID, err
}

// Extract keeps what the turns of a transcript taught, with the library's
// extraction (day1.Client.ExtractFacts): by the memory's model, or by heuristics when
// heuristic is set or there is none. It returns how many facts memory gained or
// changed (not those it held already) and what extracted them.
func (d *memory) Extract(ctx context.Context, turns []turn, sessionID string, heuristic bool) (int, string, error) {
	msgs := make([]day1.Message, 0, len(turns))
	for _, t := range turns {
		role := day1.RoleUser
		if t.Role == "assistant" {
			role = day1.RoleAssistant
		}
		msgs = append(msgs, day1.Message{Role: role, Content: t.Text})
	}
	res, err := d.c.ExtractFacts(ctx, day1.Extraction{Branch: d.branch, Messages: msgs, SessionID: sessionID,
		AgentID: agentID, By: agentID, Heuristic: heuristic})
	if err != nil {
		return 0, "", err
	}
	n := len(res.Updated) + len(res.Invalidated)
	for _, w := range res.Added {
		if w.Outcome != day1.Deduplicated {
			n++
		}
	}
	return n, res.By, nil
}

// WriteRelation writes a relation and returns its id.
func (d *memory) WriteRelation(ctx context.Context, r relation) (string, error) {
	w, err := d.c.WriteRelation(ctx, day1.Relation{Branch: d.branch, SessionID: r.SessionID,
		AgentID: agentID, Source: r.Source, Target: r.Target, Type: r.Type})
	return w.Record.ID, err
}

// Close releases the memory.
func (d *memory) Close() error { return d.c.Close() }

func (d *memory) branchName() string {
	if d.branch == "" {
		return day1.DefaultBranch
	}
	return d.branch
}
