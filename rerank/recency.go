package rerank

import (
	"context"
	"math"
	"time"

	"github.com/day1ai/day1/store"
)

// Recency is a Reranker that decays each candidate's score with its age, so that of
// two equally good answers the newer one comes first, and an old memory must match
// much better to outrank a recent one: a candidate scores its base score times
// 0.5^(age/HalfLife), where age is the time from its record's time
// (store.Record.RecordTime: when a fact was written, a message said) to Now.
//
// The base score is Next's score for the candidate when Next is set (a model's grade,
// say), else its Relevance, else its Score. Off by default: set it as
// day1.Config.Reranker to rank every search of a Client this way. Usage decays by the
// time since a memory was last used instead.
type Recency struct {
	// HalfLife is the age at which a candidate's score is halved. Required, positive.
	HalfLife time.Duration
	// Now is the instant ages are measured to. Default time.Now.
	Now func() time.Time
	// Next, when set, gives the base scores that Recency decays.
	Next Reranker
}

// Rerank returns each candidate's base score decayed by its age. A candidate dated
// after Now is not decayed.
func (r *Recency) Rerank(ctx context.Context, query string, candidates []store.Hit) ([]float64, error) {
	if r == nil || r.HalfLife <= 0 {
		return nil, store.Invalid("Recency.HalfLife", "must be a positive duration", nil)
	}
	return decay(ctx, r.Next, query, candidates, r.HalfLife, now(r.Now), func(h store.Hit) time.Time {
		return h.Record.RecordTime()
	})
}

// Name returns "recency", after Next's name when it has one.
func (r *Recency) Name() string {
	if r != nil && r.Next != nil {
		return r.Next.Name() + "+recency"
	}
	return "recency"
}

// decay returns each candidate's base score (next's score when next is set, else its
// Relevance, else its Score) times 0.5^(age/halfLife), where age runs from since(h)
// to now. A candidate whose since is after now, or that has no record, is not
// decayed.
func decay(ctx context.Context, next Reranker, query string, candidates []store.Hit, halfLife time.Duration,
	now time.Time, since func(store.Hit) time.Time) ([]float64, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	base := make([]float64, len(candidates))
	if next != nil {
		scores, err := next.Rerank(ctx, query, candidates)
		if err != nil {
			return nil, err
		}
		copy(base, scores)
	} else {
		for i, h := range candidates {
			base[i] = h.Relevance
			if base[i] == 0 {
				base[i] = h.Score
			}
		}
	}
	for i, h := range candidates {
		if h.Record == nil {
			continue
		}
		if age := now.Sub(since(h)); age > 0 {
			base[i] *= math.Exp2(-float64(age) / float64(halfLife))
		}
	}
	return base, nil
}

// now returns f's instant, or the clock's when f is nil.
func now(f func() time.Time) time.Time {
	if f != nil {
		return f()
	}
	return time.Now()
}
