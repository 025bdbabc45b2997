package day1_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"sync"
	"time"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/store/memstore"
)

// Compact replaces the log of a durable store by a checkpoint, so that the next Open
// loads what memory holds now instead of replaying every write. With a Retention, it
// drops the versions older than that which nothing still reads; a snapshot keeps its
// own.
func ExampleClient_Compact() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "day1-compact-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	// A clock the example moves by days.
	var mu sync.Mutex
	now := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	later := func(days int) { mu.Lock(); defer mu.Unlock(); now = now.AddDate(0, 0, days) }
	cfg := day1.Config{Backend: memstore.Options{Path: dir, Retention: 7 * 24 * time.Hour}, Test: day1.TestConfig{Now: clock}}

	c, err := day1.Open(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	for _, text := range []string{"Deploys go out on Mondays", "Deploys go out on Tuesdays", "Deploys go out on Thursdays"} {
		if _, err := c.WriteFact(ctx, day1.Fact{ID: "deploy-day", Text: text}); err != nil {
			log.Fatal(err)
		}
		if text == "Deploys go out on Mondays" {
			if _, err := c.Snapshot(ctx, "main", "first-policy", day1.SnapshotOptions{}); err != nil {
				log.Fatal(err)
			}
		}
		later(10)
	}
	st, err := c.Compact(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("generation %d: kept %d versions, dropped %d\n", st.Generation, st.Versions, st.Dropped)
	if err := c.Close(); err != nil {
		log.Fatal(err)
	}

	c, err = day1.Open(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	for _, at := range []day1.At{{}, day1.AtSnapshot("first-policy"), day1.AtTime(clock().AddDate(0, 0, -15))} {
		f, err := c.TimeTravel(at).GetFact(ctx, "main", "deploy-day")
		switch {
		case errors.Is(err, day1.ErrTooOld):
			fmt.Println("15 days ago: older than the retention")
		case err != nil:
			log.Fatal(err)
		default:
			fmt.Println(f.Text)
		}
	}
	// Output:
	// generation 1: kept 2 versions, dropped 1
	// Deploys go out on Thursdays
	// Deploys go out on Mondays
	// 15 days ago: older than the retention
}

// WithProgress hears how far a long call has come: here the versions a compaction
// writes to the log store's checkpoint, which a command line shows as a bar.
func ExampleWithProgress() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "day1-progress-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	c, err := day1.Open(ctx, day1.Config{Backend: memstore.Options{Path: dir}})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	facts := make([]day1.Fact, 5000)
	for i := range facts {
		facts[i] = day1.Fact{Text: fmt.Sprintf("Service %d answers on port %d", i, 8000+i)}
	}
	if _, err := c.WriteFacts(ctx, facts); err != nil {
		log.Fatal(err)
	}
	report := func(done, total int) { fmt.Printf("compacting: %d of %d versions\n", done, total) }
	if _, err := c.Compact(day1.WithProgress(ctx, report)); err != nil {
		log.Fatal(err)
	}
	// Output:
	// compacting: 0 of 5000 versions
	// compacting: 4096 of 5000 versions
	// compacting: 5000 of 5000 versions
}
