package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/day1ai/day1"
)

// TestScenario checks every step of the story. The second memory is a durable
// embedded store, or MatrixOne when DAY1_TEST_DSN names a server.
func TestScenario(t *testing.T) {
	o := options{importPath: t.TempDir()}
	if dsn := os.Getenv("DAY1_TEST_DSN"); dsn != "" {
		mc, err := mysql.ParseDSN(dsn)
		if err != nil {
			t.Fatal(err)
		}
		server := mc.FormatDSN()
		mc.DBName = fmt.Sprintf("day1_scenario_%d", time.Now().UnixNano())
		o.importDSN = mc.FormatDSN()
		t.Cleanup(func() {
			if db, err := sql.Open("mysql", server); err == nil {
				db.Exec("DROP DATABASE IF EXISTS " + mc.DBName)
				db.Close()
			}
		})
	}
	var out bytes.Buffer
	r, err := run(context.Background(), &out, o)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	t.Log("\n" + out.String())

	// 1-2: the task and its members' branches.
	if r.taskBranch != "task/"+task || r.investigatorBranch != r.taskBranch+"/agent-investigator" || r.expertBranch != r.taskBranch+"/agent-oauth-expert" {
		t.Errorf("branches: %q, %q, %q", r.taskBranch, r.investigatorBranch, r.expertBranch)
	}
	// 3-4: the packet carries the investigator's finding, conversation and blocker.
	if r.packetFacts == 0 || r.packetConversations == 0 || len(r.packetBlockers) == 0 || r.packetBlockers[0] != "Unclear OAuth2 state transition after refresh failure" {
		t.Errorf("packet: %d facts, %d conversations, blockers %q", r.packetFacts, r.packetConversations, r.packetBlockers)
	}
	// 6-7: the guess is invalidated and stays off main; the fix reaches it.
	if r.verified == 0 || r.invalidated == 0 || !r.fixOnMain || r.guessOnMain {
		t.Errorf("verification: %d verified, %d invalidated; fix on main %v, guess on main %v", r.verified, r.invalidated, r.fixOnMain, r.guessOnMain)
	}
	// The replay has every kind of step and the outcome.
	for _, k := range []day1.ReplayEventKind{day1.ReplayTaskCreated, day1.ReplayAgentJoined, day1.ReplayFact, day1.ReplayHandoffCreated,
		day1.ReplayVerification, day1.ReplayMerge, day1.ReplayTaskCompleted} {
		if r.replayKinds[k] == 0 {
			t.Errorf("the replay has no %s step: %v", k, r.replayKinds)
		}
	}
	if r.outcome.Status != day1.TaskCompleted || r.outcome.MergedInto != day1.DefaultBranch || r.outcome.FactsMerged == 0 || r.replayAgents != 3 {
		t.Errorf("replay outcome %+v by %d agents", r.outcome, r.replayAgents)
	}
	// 8: the bundle holds the verified facts and the picked conversations, and is shared.
	b := r.bundle
	if b.Type != day1.BundleTaskExport || b.Counts.Facts == 0 || b.Counts.Conversations == 0 || b.Visibility != day1.BundleTeam || len(b.ShareToken) != 64 {
		t.Errorf("bundle %+v", b)
	}
	// 9: the second memory holds it whole, finds the fix first, and not the guess.
	if r.imported.Created != b.Counts.Total() || r.imported.Hash != b.Hash {
		t.Errorf("import %+v; want %d created under seal %s", r.imported, b.Counts.Total(), b.Hash)
	}
	if !strings.Contains(r.found, "exponential backoff") || r.guessImported {
		t.Errorf("the second memory finds %q first; the guess imported: %v", r.found, r.guessImported)
	}
}
