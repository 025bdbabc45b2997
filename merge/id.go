package merge

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/day1ai/day1/store"
)

// newTimeID returns an id that sorts by time: 12 hex digits of Unix milliseconds, a
// dash, and 16 random hex digits.
func newTimeID(now time.Time) string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	ms := max(now.UnixMilli(), 0)
	return fmt.Sprintf("%012x-%x", ms, b)
}

// keepBothID is the id under which a store.ActionKeepBoth decision writes the source's
// version of ref: the id, "@", and 8 hex digits of sha256 over the source branch and
// the ref. It is deterministic, so merging the same conflict again updates the same
// copy instead of adding another, and it stays within store.MaxIDLen.
func keepBothID(source string, ref store.Ref) string {
	sum := sha256.Sum256([]byte(source + "\x00" + string(ref.Kind) + "\x00" + ref.ID))
	suffix := "@" + hex.EncodeToString(sum[:4])
	id := ref.ID
	if len(id)+len(suffix) > store.MaxIDLen {
		id = id[:store.MaxIDLen-len(suffix)]
	}
	return id + suffix
}

// withID returns a copy of r with its id set.
func withID(r store.Record, id string) store.Record {
	switch r := r.(type) {
	case store.Fact:
		r.ID = id
		return r
	case store.Observation:
		r.ID = id
		return r
	case store.Relation:
		r.ID = id
		return r
	case store.Conversation:
		r.ID = id
		return r
	case store.Message:
		r.ID = id
		return r
	}
	return r
}
