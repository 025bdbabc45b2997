package main

import (
	"strings"
	"testing"
)

// TestServeRefuses checks what day1 serve refuses before it opens the memory: a
// reachable address without a token, a token under 32 characters, a malformed address.
func TestServeRefuses(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("k", 32)
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"serve", "--addr", "0.0.0.0:0"}, "--token"},
		{[]string{"serve", "--addr", "127.0.0.1:0", "--token", "s3cret"}, "at least 32"},
		{[]string{"serve", "--addr", "0.0.0.0:0", "--token", strings.Repeat("k", 31)}, "at least 32"},
		{[]string{"serve", "--addr", "nonsense"}, "host:port"},
	} {
		stdout, stderr, code := day1Run(t, dir, "", c.args...)
		if code != exitUsage || !strings.Contains(stderr, c.says) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want a usage error saying %q", c.args, code, stdout, stderr, c.says)
		}
	}
	if err := checkAddr("0.0.0.0:7077", long); err != nil {
		t.Errorf("a 32-character token on every interface: %v", err)
	}
	if err := checkAddr("localhost:7077", ""); err != nil {
		t.Errorf("loopback without a token: %v", err)
	}
}
