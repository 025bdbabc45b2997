package mcpserver

import (
	"strings"
	"testing"
)

func TestParseLineTooLong(t *testing.T) {
	if msg, reply := parseLine(line{tooLong: true}); msg != nil || !strings.Contains(string(reply), "-32600") {
		t.Errorf("a line too long: %v, %s", msg, reply)
	}
}
