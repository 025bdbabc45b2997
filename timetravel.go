package day1

import (
	"time"

	"github.com/day1ai/day1/store"
)

// At is a point in the past: a named snapshot or an instant. The zero At is the head.
// Build one with AtSnapshot or AtTime. Snapshot names a snapshot: reads see its
// branch as it was when it was taken. Time is an instant: reads see each branch as it
// was then. Set one of them, not both. It is the store's Point, so the same value
// serves every read of the past (TimeTravel, BranchOptions.At, ReplayOptions.AsOf).
type At = store.Point

// AtSnapshot returns the point a named snapshot captures.
func AtSnapshot(name string) At { return At{Snapshot: name} }

// AtTime returns the instant t.
func AtTime(t time.Time) At { return At{Time: t} }

// checkAt checks a point given as field (At, BranchOptions.At, ReplayOptions.AsOf).
func checkAt(field string, a At) (store.Point, error) {
	if a.Snapshot != "" && !a.Time.IsZero() {
		return store.Point{}, store.Invalid(field, "set Snapshot or Time, not both", nil)
	}
	if a.Snapshot != "" {
		if err := store.ValidateID(field+".Snapshot", a.Snapshot); err != nil {
			return store.Point{}, err
		}
	}
	return a, nil
}

// View reads memory as it was at one point in the past. It has every read method of
// the Client (see Reader), each returning exactly what was visible then: records
// written later are absent, records deleted or superseded later appear as they were.
// A View is cheap, safe for concurrent use, and valid until its Client is closed.
//
// In a View at a snapshot an empty branch means the snapshot's branch; naming another
// branch is a *ValidationError. Graph queries with a zero ValidAt use the View's
// instant. A snapshot that does not exist surfaces on each read as
// ErrSnapshotNotFound.
type View struct {
	reader
}

// TimeTravel returns a View of memory at a snapshot or an instant. The zero At reads
// the head, like the Client. It does no I/O: errors, such as a missing snapshot or an
// At that sets both fields, surface on the View's reads.
func (c *Client) TimeTravel(at At) *View {
	return &View{reader{c: c, at: at}}
}

// At returns the point the View reads at.
func (v *View) At() At { return v.at }
