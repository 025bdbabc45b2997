package replay

import (
	"context"
	"time"

	"github.com/day1ai/day1/store"
)

// maxProbes bounds the reads one commit instant may cost.
const maxProbes = 160

// firstStep is the first distance the search for a commit instant looks ahead.
const firstStep = time.Microsecond

// commitInstant returns the earliest instant, at or after from and at most limit, at
// which a read of branch shows ref in a version ok accepts: the commit instant of the
// write that made that version. A record's own times (CreatedAt, UpdatedAt,
// Verification.At) are taken from a clock read before the write commits, so the
// version is often not yet visible at them; the instant is then found by reading
// ahead with doubling steps, then halving the last step. ok must be monotone: once it
// accepts a version at some instant, it accepts every later one. found is false when
// no instant up to limit shows such a version (the record was deleted, say); the
// caller then keeps from.
func (e *Engine) commitInstant(ctx context.Context, branch string, ref store.Ref, from, limit time.Time, ok func(store.Record) bool) (at time.Time, found bool, err error) {
	probes := 0
	visible := func(t time.Time) (bool, error) {
		probes++
		r, err := e.Store.Get(ctx, store.View{Branch: branch, At: store.Point{Time: t}}, ref)
		if err != nil {
			if missing(err) {
				return false, nil
			}
			return false, err
		}
		return ok(r), nil
	}
	if v, err := visible(from); err != nil || v {
		return from, v, err
	}
	if limit.Before(from) {
		return from, false, nil
	}
	lo, hi := from, time.Time{}
	for step := firstStep; probes < maxProbes; step *= 2 {
		t := lo.Add(step)
		if !t.Before(limit) {
			t = limit
		}
		v, err := visible(t)
		if err != nil {
			return from, false, err
		}
		if v {
			hi = t
			break
		}
		if t.Equal(limit) {
			return from, false, nil
		}
		lo = t
	}
	if hi.IsZero() {
		return from, false, nil
	}
	for hi.Sub(lo) > time.Nanosecond && probes < maxProbes {
		mid := lo.Add(hi.Sub(lo) / 2)
		v, err := visible(mid)
		if err != nil {
			return from, false, err
		}
		if v {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, true, nil
}

// stamp is the time a record's version carries: UpdatedAt for the kinds that are
// updated in place (facts, conversations), CreatedAt for the others.
func stamp(r store.Record) time.Time {
	switch v := r.(type) {
	case store.Fact:
		return v.UpdatedAt
	case store.Conversation:
		return v.UpdatedAt
	}
	return r.RecordTime()
}

// verifiedAt returns the time a fact or conversation was judged, zero for the rest.
func verifiedAt(r store.Record) time.Time {
	switch v := r.(type) {
	case store.Fact:
		return v.Verify.At
	case store.Conversation:
		return v.Verify.At
	}
	return time.Time{}
}

// anyVersion accepts every version: the record exists.
func anyVersion(store.Record) bool { return true }

// judgedSince accepts a version judged at or after t.
func judgedSince(t time.Time) func(store.Record) bool {
	return func(r store.Record) bool {
		at := verifiedAt(r)
		return !at.IsZero() && !at.Before(t)
	}
}

// stampedSince accepts a version stamped at or after t.
func stampedSince(t time.Time) func(store.Record) bool {
	return func(r store.Record) bool { return !stamp(r).Before(t) }
}
