package main

import (
	"errors"
	"fmt"
	"strings"
	"testing"
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
