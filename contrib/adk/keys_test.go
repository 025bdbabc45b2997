package adk

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/day1ai/day1/store"
)

// TestPutJSON checks that a long JSON document is cut into valid UTF-8 metadata
// values of at most 4096 bytes, whatever byte a cut falls on, and read back whole.
func TestPutJSON(t *testing.T) {
	for shift := range 4 {
		text := strings.Repeat("x", shift) + strings.Repeat("é€𝄞 ", 3000)
		md := map[string]string{}
		if err := putJSON(md, MetaState, "state", map[string]any{"t": text}); err != nil {
			t.Fatal(err)
		}
		if len(md) < 4 {
			t.Fatalf("shift %d: %d values, want the document cut in several", shift, len(md))
		}
		for k, v := range md {
			if len(v) > metaValueMax || !utf8.ValidString(v) {
				t.Errorf("shift %d: value %s is %d bytes, valid UTF-8 %v", shift, k, len(v), utf8.ValidString(v))
			}
		}
		var back map[string]any
		if ok, err := getJSON(md, MetaState, &back); !ok || err != nil || back["t"] != text {
			t.Errorf("shift %d: read back %v, %v, equal %v", shift, ok, err, back["t"] == text)
		}
	}
	if err := putJSON(map[string]string{}, MetaEvent, "Event", strings.Repeat("x", MaxJSON)); err == nil {
		t.Error("a document over MaxJSON was kept")
	}
}

// TestDefaultMemoryBranch checks that every app and user get a valid branch name, and
// that names that read alike get different branches.
func TestDefaultMemoryBranch(t *testing.T) {
	seen := map[string]string{}
	for _, pair := range [][2]string{
		{"travel", "ana"}, {"travel", "Ana"}, {"travel", "a na"}, {"travel", "a-na"},
		{"", ""}, {"..", "/"}, {"app/x", "y"}, {"app", "x/y"}, {"应用", "用户"},
		{strings.Repeat("a", 300), strings.Repeat("b", 300)}, {"-lead", "_lead"},
	} {
		b := DefaultMemoryBranch(pair[0], pair[1])
		if err := store.ValidateBranchName("branch", b); err != nil {
			t.Errorf("%q: %v", pair, err)
		}
		key := pair[0] + "\x00" + pair[1]
		if other, ok := seen[b]; ok && other != key {
			t.Errorf("%q and %q share branch %s", pair, other, b)
		}
		seen[b] = key
	}
	if got := DefaultMemoryBranch("travel", "ana"); !strings.HasPrefix(got, "adk-memory/travel/ana-") {
		t.Errorf("branch %q does not read as its names", got)
	}
}
