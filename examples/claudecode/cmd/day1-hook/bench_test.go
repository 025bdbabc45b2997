package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/store"
	"github.com/day1ai/day1/store/memstore"
	"github.com/day1ai/day1/store/sqlite"
)

// BenchmarkPostToolUse runs the built hook on a PostToolUse input, process start to
// exit, against a durable store the hook opens itself: alone (direct), and while an
// MCP server has it open too (beside-server). It reports the 95th
// percentile in milliseconds; the target is under 30 ms. Run it with
// -benchtime=100x for a stable percentile.
func BenchmarkPostToolUse(b *testing.B) {
	in := payload(b, "post_tool_use.json")
	hookBinary(b)
	b.Run("direct", func(b *testing.B) {
		dir := b.TempDir()
		output(b, runHook(b, dir, in)) // creates the store
		benchHook(b, dir, in)
	})
	b.Run("direct-5k", func(b *testing.B) {
		// The direct path replays the store's log at every start: a store that
		// holds 5,000 observations already.
		dir := b.TempDir()
		fill(b, memstore.Options{Path: dir, Sync: memstore.SyncNever}, 5000)
		benchHook(b, dir, in)
	})
	for _, n := range []int{5000, 100_000} {
		b.Run(fmt.Sprintf("direct-sqlite-%dk", n/1000), func(b *testing.B) {
			// A memory kept in SQLite: the hook reads none of what is there.
			dir := b.TempDir()
			fill(b, sqlite.Options{Path: dir, NoSync: true}, n)
			benchHook(b, dir, in)
		})
	}
	b.Run("direct-1mb", func(b *testing.B) {
		// A tool response of 1 MB (a long test log): the hook reads it once.
		big := bigPayload(b, in, 1<<20)
		dir := b.TempDir()
		output(b, runHook(b, dir, big))
		benchHook(b, dir, big)
	})
	b.Run("beside-server", func(b *testing.B) {
		// The MCP server has the durable store open; the hook opens it too.
		dir := b.TempDir()
		startServer(b, dir)
		benchHook(b, dir, in)
	})
}

// bigPayload is the PostToolUse input in with a Bash output of about size bytes.
func bigPayload(b *testing.B, in []byte, size int) []byte {
	var hook map[string]any
	if err := json.Unmarshal(in, &hook); err != nil {
		b.Fatal(err)
	}
	var out strings.Builder
	for i := 0; out.Len() < size; i++ {
		fmt.Fprintf(&out, "=== RUN   TestLedger%05d\n--- PASS: TestLedger%05d (0.00s)\n", i, i)
	}
	hook["tool_response"] = map[string]any{"stdout": out.String(), "stderr": "", "interrupted": false, "isImage": false}
	data, err := json.Marshal(hook)
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// fill writes n observations to the durable store that opener opens, a batch at a
// time.
func fill(b *testing.B, opener store.Opener, n int) {
	ctx := context.Background()
	c, err := day1.Open(ctx, day1.Config{Backend: opener})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	for lo := 0; lo < n; lo += 1000 {
		obs := make([]day1.Observation, min(1000, n-lo))
		for i := range obs {
			obs[i] = day1.Observation{SessionID: "earlier", Type: "tool_use", Tool: "Bash",
				Summary: fmt.Sprintf("Bash: go test ./pkg%d/... → ok", lo+i), RawInput: strings.Repeat("i", 500), RawOutput: strings.Repeat("o", 1500)}
		}
		if _, err := c.WriteObservations(ctx, obs); err != nil {
			b.Fatal(err)
		}
	}
}

func benchHook(b *testing.B, dir string, in []byte) {
	took := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		r := runHook(b, dir, in)
		if r.exit != 0 || r.stderr != "" {
			b.Fatalf("exit %d, stderr %q", r.exit, r.stderr)
		}
		took = append(took, r.took)
	}
	b.StopTimer()
	slices.Sort(took)
	p := func(q float64) float64 {
		return float64(took[min(len(took)-1, int(q*float64(len(took))))].Microseconds()) / 1000
	}
	b.ReportMetric(p(0.5), "p50-ms")
	b.ReportMetric(p(0.95), "p95-ms")
}
