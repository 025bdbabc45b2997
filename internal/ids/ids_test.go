package ids

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func checkFormat(t *testing.T, id string) {
	t.Helper()
	if len(id) != Len {
		t.Fatalf("id %q has %d characters, want %d", id, len(id), Len)
	}
	for i := range len(id) {
		if !strings.ContainsRune(crockford, rune(id[i])) {
			t.Fatalf("id %q has %q at %d, not Crockford base32", id, id[i], i)
		}
	}
	if id[0] > '7' {
		t.Fatalf("id %q starts above 7: the timestamp overflows 48 bits", id)
	}
}

func TestNewFormatAndTime(t *testing.T) {
	t.Parallel()
	before := time.Now().Truncate(time.Millisecond)
	id := New()
	after := time.Now()
	checkFormat(t, id)
	got, err := Time(id)
	if err != nil {
		t.Fatalf("Time(%q): %v", id, err)
	}
	if got.Before(before) || got.After(after) {
		t.Errorf("Time(%q) = %v, want between %v and %v", id, got, before, after)
	}
}

func TestNewIsStrictlyIncreasing(t *testing.T) {
	t.Parallel()
	prev := New()
	for range 100000 {
		id := New()
		if id <= prev {
			t.Fatalf("New() = %q after %q: not increasing", id, prev)
		}
		prev = id
	}
}

func TestNewConcurrentUnique(t *testing.T) {
	t.Parallel()
	const workers, per = 8, 5000
	results := make([][]string, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out := make([]string, per)
			for i := range out {
				out[i] = New()
			}
			results[w] = out
		}()
	}
	wg.Wait()
	seen := make(map[string]bool, workers*per)
	for w, out := range results {
		if !slices.IsSorted(out) {
			t.Errorf("worker %d saw ids out of order", w)
		}
		for _, id := range out {
			if seen[id] {
				t.Fatalf("duplicate id %q", id)
			}
			seen[id] = true
		}
	}
}

// fakeClock is a settable clock; random returns a fixed pattern so results are exact.
type fakeClock struct{ ms int64 }

func (c *fakeClock) now() time.Time { return time.UnixMilli(c.ms) }

func newTestGen(c *fakeClock, fillByte byte) *generator {
	return &generator{now: c.now, random: func(b []byte) {
		for i := range b {
			b[i] = fillByte
		}
	}}
}

func TestGeneratorSequence(t *testing.T) {
	t.Parallel()
	c := &fakeClock{ms: 1_700_000_000_000}
	g := newTestGen(c, 0)
	steps := []struct {
		ms   int64
		want string
	}{
		{1_700_000_000_000, encode(1_700_000_000_000, 0, 0)},
		{1_700_000_000_000, encode(1_700_000_000_000, 0, 1)}, // same ms counts up
		{1_700_000_000_000, encode(1_700_000_000_000, 0, 2)},
		{1_699_999_999_000, encode(1_700_000_000_000, 0, 3)}, // clock stepped back
		{1_700_000_000_001, encode(1_700_000_000_001, 0, 0)}, // new ms draws afresh
	}
	prev := ""
	for i, s := range steps {
		c.ms = s.ms
		got := g.next()
		if got != s.want {
			t.Errorf("step %d: next() = %q, want %q", i, got, s.want)
		}
		if got <= prev {
			t.Errorf("step %d: %q not after %q", i, got, prev)
		}
		prev = got
	}
}

func TestGeneratorCarry(t *testing.T) {
	t.Parallel()
	c := &fakeClock{ms: 5000}
	g := newTestGen(c, 0xff) // random part all ones: the next increment overflows 80 bits
	first := g.next()
	if want := encode(5000, 0xffff, ^uint64(0)); first != want {
		t.Fatalf("first = %q, want %q", first, want)
	}
	if !strings.HasSuffix(first, "ZZZZZZZZZZZZZZZZ") {
		t.Errorf("first = %q, want 16 Z for an all-ones random part", first)
	}
	second := g.next()
	if want := encode(5001, 0, 0); second != want {
		t.Errorf("after overflow next() = %q, want %q (borrowed next millisecond)", second, want)
	}
	// The low word carries into the high bits.
	g2 := newTestGen(c, 0)
	c.ms = 9000
	g2.next()
	g2.lo = ^uint64(0)
	if got, want := g2.next(), encode(9000, 1, 0); got != want {
		t.Errorf("carry: next() = %q, want %q", got, want)
	}
}

func TestEncode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		ms   uint64
		hi   uint16
		lo   uint64
		want string
	}{
		{0, 0, 0, "00000000000000000000000000"},
		{maxTime, 0xffff, ^uint64(0), "7ZZZZZZZZZZZZZZZZZZZZZZZZZ"},
		{1, 0, 1, "00000000010000000000000001"},
		{0, 0, 31, "0000000000000000000000000Z"},
		{0, 0, 32, "00000000000000000000000010"},
		{0, 1, 0, "0000000000000" + "G" + "000000000000"}, // 2^64 = 16 * 32^12
		// The ULID specification's example timestamp.
		{1469922850259, 0, 0, "01ARZ3NDEK" + "0000000000000000"},
	}
	for _, tt := range tests {
		if got := encode(tt.ms, tt.hi, tt.lo); got != tt.want {
			t.Errorf("encode(%d, %d, %d) = %q, want %q", tt.ms, tt.hi, tt.lo, got, tt.want)
		}
	}
}

func TestTime(t *testing.T) {
	t.Parallel()
	tests := []struct {
		id      string
		want    int64
		wantErr string
	}{
		{"01ARZ3NDEKTSV4RRFFQ69G5FAV", 1469922850259, ""},
		{"00000000000000000000000000", 0, ""},
		{"7ZZZZZZZZZZZZZZZZZZZZZZZZZ", maxTime, ""},
		{"80000000000000000000000000", 0, "out of range"},
		{"01ARZ3NDEKTSV4RRFFQ69G5FA", 0, "26 characters"},
		{"01ARZ3NDEKTSV4RRFFQ69G5FAVX", 0, "26 characters"},
		{"01ARZ3NDEKTSV4RRFFQ69G5FAU", 0, "Crockford"}, // U is not in the alphabet
		{"01arz3ndektsv4rrffq69g5fav", 0, "Crockford"}, // lower case is not produced
		{"", 0, "26 characters"},
	}
	for _, tt := range tests {
		got, err := Time(tt.id)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.HasPrefix(err.Error(), "day1: ") {
				t.Errorf("Time(%q) error = %v, want one mentioning %q", tt.id, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got.UnixMilli() != tt.want {
			t.Errorf("Time(%q) = %v, %v; want %d ms", tt.id, got.UnixMilli(), err, tt.want)
		}
	}
}

func TestSequential(t *testing.T) {
	t.Parallel()
	g := Sequential("fact")
	for i, want := range []string{"fact-000001", "fact-000002", "fact-000003"} {
		if got := g(); got != want {
			t.Errorf("call %d: %q, want %q", i+1, got, want)
		}
	}
	// Independent generators keep independent counts.
	if got := Sequential("")(); got != "-000001" {
		t.Errorf("Sequential(\"\")() = %q, want -000001", got)
	}
	// Past six digits the number grows.
	big := Sequential("x")
	for range 999999 {
		big()
	}
	if got := big(); got != "x-1000000" {
		t.Errorf("millionth id = %q, want x-1000000", got)
	}
}

func TestSequentialConcurrent(t *testing.T) {
	t.Parallel()
	g := Sequential("t")
	const workers, per = 8, 1000
	var mu sync.Mutex
	seen := map[string]bool{}
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range per {
				id := g()
				mu.Lock()
				seen[id] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(seen) != workers*per {
		t.Fatalf("got %d distinct ids, want %d", len(seen), workers*per)
	}
	for i := 1; i <= workers*per; i++ {
		if id := fmt.Sprintf("t-%06d", i); !seen[id] {
			t.Fatalf("missing %q", id)
		}
	}
}

var sinkID string

func BenchmarkNew(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sinkID = New()
	}
}

func BenchmarkNewParallel(b *testing.B) {
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			sinkID = New()
		}
	})
}
