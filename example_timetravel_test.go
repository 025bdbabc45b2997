package day1_test

import (
	"context"
	"fmt"
	"log"

	"github.com/day1ai/day1"
)

// A snapshot names the head of a branch; a time-travel View reads memory exactly as it
// was then, with the same methods as the Client.
func ExampleClient_TimeTravel() {
	ctx := context.Background()
	c, err := day1.Open(ctx, exampleConfig())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	first, err := c.WriteFact(ctx, day1.Fact{ID: "runtime", Text: "The API runs on Go 1.22"})
	if err != nil {
		log.Fatal(err)
	}
	snap, err := c.Snapshot(ctx, "main", "before-upgrade", day1.SnapshotOptions{Description: "before the Go upgrade"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("snapshot", snap.Name, "of", snap.Branch, "at", snap.At.Format("15:04:05"))

	if _, err := c.WriteFact(ctx, day1.Fact{ID: "runtime", Text: "The API runs on Go 1.26"}); err != nil {
		log.Fatal(err)
	}
	if _, err := c.WriteFact(ctx, day1.Fact{Text: "Profile-guided optimisation is on"}); err != nil {
		log.Fatal(err)
	}

	print := func(label string, r day1.Reader) {
		facts, err := r.ListFacts(ctx, day1.ListOptions{})
		if err != nil {
			log.Fatal(err)
		}
		for _, f := range facts {
			fmt.Println(label, f.Text)
		}
	}
	print("now:", c)
	print("then:", c.TimeTravel(day1.AtSnapshot("before-upgrade")))
	written := first.Record.CreatedAt
	print("at "+written.Format("15:04:05")+":", c.TimeTravel(day1.AtTime(written)))
	// Output:
	// snapshot before-upgrade of main at 09:00:03
	// now: The API runs on Go 1.26
	// now: Profile-guided optimisation is on
	// then: The API runs on Go 1.22
	// at 09:00:02: The API runs on Go 1.22
}
