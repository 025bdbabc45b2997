package main

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestReportSaysDay1Once checks that an error wrapped at several layers is printed
// with one "day1:" prefix.
func TestReportSaysDay1Once(t *testing.T) {
	var b strings.Builder
	err := fmt.Errorf("day1: opening the store: %w", errors.New("day1: memstore: open /x: permission denied"))
	if code := report(&b, err, false); code != exitError {
		t.Errorf("exit %d, want %d", code, exitError)
	}
	if got, want := b.String(), "day1: opening the store: memstore: open /x: permission denied\n"; got != want {
		t.Errorf("report wrote %q, want %q", got, want)
	}
}

// TestProgress checks the progress bar: nothing on a writer that is not a terminal;
// on a terminal, counts of what the bar counts, the rate and the time left, the
// counts taking the place of a spinner.
func TestProgress(t *testing.T) {
	var quiet strings.Builder
	p := newProgress(&quiet, "compacting")
	p.spin()
	p.update(10, 100)
	p.done()
	if quiet.Len() != 0 {
		t.Errorf("progress on a writer that is no terminal wrote %q", quiet.String())
	}
	var term strings.Builder
	p = newProgress(&term, "compacting")
	p.on, p.its = true, "versions"
	p.spin()
	time.Sleep(150 * time.Millisecond)
	for i := 0; i <= 4000; i += 1000 {
		p.update(i, 4000)
		time.Sleep(110 * time.Millisecond) // past the bar's throttle
	}
	p.done()
	out := term.String()
	for _, want := range []string{"compacting", "/4000", "versions/s", "s]"} {
		if !strings.Contains(out, want) {
			t.Errorf("the bar lacks %q: %q", want, out)
		}
	}
}
