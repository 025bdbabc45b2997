// Package demo seeds a small memory that the day1 command's tests, its inspector's
// browser tests and the README's screenshot share: a main branch, two agents'
// branches that disagree about one fact, a merged branch, a snapshot, and a task
// with a pending handoff. With Config its ids and times are fixed, so every reading
// of it is the same.
package demo

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/store/memstore"
)

// Start is the instant of the first write of the seeded memory; each write moves the
// clock one second on.
var Start = time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)

// Config returns a Config for a durable store at path ("" for memory only) with a
// fixed clock starting at Start and counted ids.
func Config(path string) day1.Config {
	var mu sync.Mutex
	now, n := Start, 0
	cfg := day1.Config{Test: day1.TestConfig{
		Now: func() time.Time {
			mu.Lock()
			defer mu.Unlock()
			now = now.Add(time.Second)
			return now
		},
		NewID: func() string {
			mu.Lock()
			defer mu.Unlock()
			n++
			return fmt.Sprintf("id-%03d", n)
		},
	}}
	if path != "" {
		cfg.Backend = memstore.Options{Path: path, Sync: memstore.SyncNever}
	}
	return cfg
}

// Seed writes the demo memory to c.
func Seed(ctx context.Context, c *day1.Client) error {
	s := seeder{ctx: ctx, c: c}
	s.fact("main", "f-jwt", "lead", "architecture", "The auth service signs JWTs with RS256")
	s.fact("main", "f-db", "lead", "architecture", "Postgres 16 holds the user database")
	s.fact("main", "f-retry", "lead", "bug", "Token refresh retries twice before giving up")
	s.do(func() error {
		_, err := c.WriteObservation(ctx, day1.Observation{ID: "o-grep", Branch: "main", AgentID: "lead", Type: day1.ObsToolUse,
			Tool: "grep", Summary: "grep -n refresh token_service.py found the refresh path at line 142"})
		return err
	})
	s.do(func() error {
		_, err := c.WriteRelation(ctx, day1.Relation{ID: "r-uses", Branch: "main", AgentID: "lead", Source: "auth-service", Target: "postgres", Type: "uses"})
		return err
	})
	s.do(func() error {
		_, err := c.Snapshot(ctx, "main", "before-agents", day1.SnapshotOptions{Description: "before the agents forked"})
		return err
	})
	s.branch("agent-a", "agent A fixes the token refresh")
	s.branch("agent-b", "agent B fixes the token refresh")
	s.branch("agent-c", "agent C documents the database")
	s.fact("agent-a", "f-a1", "agent-a", "bug", "The refresh token is dropped when a refresh fails at line 142")
	s.fact("agent-a", "f-retry", "agent-a", "bug", "Token refresh retries three times with exponential backoff")
	s.fact("agent-b", "f-b1", "agent-b", "bug", "Clock skew between hosts breaks the token expiry check")
	s.fact("agent-b", "f-retry", "agent-b", "bug", "Token refresh never retries; one failure logs the user out")
	s.fact("agent-c", "f-c1", "agent-c", "docs", "The user database keeps sessions for thirty days")
	s.do(func() error {
		_, err := c.Merge(ctx, day1.MergeRequest{Source: "agent-c", Target: "main", MarkMerged: true, MergedBy: "lead", Message: "database notes"})
		return err
	})
	s.fact("main", "f-main2", "lead", "process", "Every merge into main needs a passing test run")
	s.do(func() error {
		_, err := c.CreateTask(ctx, day1.TaskSpec{Name: "fix-auth", Type: "bug_fix", Description: "Fix the token refresh",
			Objectives: []string{"Find the cause", "Fix the refresh", "Add a regression test"}, CreatedBy: "lead"})
		return err
	})
	s.do(func() error {
		_, err := c.JoinTask(ctx, day1.JoinRequest{Task: "fix-auth", Agent: "investigator", Role: "investigator", Objectives: []int{1}})
		return err
	})
	s.fact("task/fix-auth/investigator", "f-t1", "investigator", "bug", "The refresh path swallows the 401 from the identity provider")
	s.do(func() error {
		_, err := c.Handoff(ctx, day1.HandoffRequest{Task: "fix-auth", Type: day1.HandoffEscalation, FromAgent: "investigator",
			ToAgent: "expert", Instructions: "The fix needs the OAuth2 state machine", Reason: "needs an OAuth expert"})
		return err
	})
	return s.err
}

type seeder struct {
	ctx context.Context
	c   *day1.Client
	err error
}

func (s *seeder) do(f func() error) {
	if s.err == nil {
		s.err = f()
	}
}

func (s *seeder) fact(branch, id, agent, category, text string) {
	s.do(func() error {
		_, err := s.c.WriteFact(s.ctx, day1.Fact{ID: id, Branch: branch, AgentID: agent, Category: category, Text: text, Confidence: 0.8})
		return err
	})
}

func (s *seeder) branch(name, desc string) {
	s.do(func() error {
		_, err := s.c.Branch(s.ctx, name, day1.BranchOptions{Description: desc})
		return err
	})
}
