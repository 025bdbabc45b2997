package rerank

import (
	"context"
	"sync"
	"time"

	"github.com/day1ai/day1/store"
)

// Usage is a Reranker that lets the memories nobody uses fade: a candidate scores its
// base score times 0.5^(idle/HalfLife), where idle is the time from its last use to
// Now, or, for a memory never used, from its record's time (store.Record.RecordTime).
// A memory counts as used when a search this Reranker ranked returns it (Used): one
// that searches keep returning keeps its full weight however old it is, and one left
// unused loses half of it every HalfLife, so that an old, forgotten memory must
// match much better to outrank one in use.
//
// The base score is Next's score when Next is set, else the candidate's Relevance,
// else its Score, as with Recency. Uses are kept in Log, in the memory of the
// process, one entry for each memory ever returned: Clients given the same *UsageLog
// share them, and a new process starts with none (every memory then decays from its
// record's time, as with Recency). Off by default: set it as day1.Config.Reranker
// itself, not as another Reranker's Next, since the Client tells only its own
// Reranker which hits it returned (UseRecorder).
type Usage struct {
	// HalfLife is the time unused after which a candidate's score is halved.
	// Required, positive.
	HalfLife time.Duration
	// Now is the instant idle times are measured to, and the time of each use.
	// Default time.Now.
	Now func() time.Time
	// Next, when set, gives the base scores that Usage decays.
	Next Reranker
	// Log keeps the time of each memory's last use. Nil means a log of this
	// Usage's own, made at its first use.
	Log *UsageLog

	once sync.Once
}

// Rerank returns each candidate's base score decayed by the time since its last use.
func (u *Usage) Rerank(ctx context.Context, query string, candidates []store.Hit) ([]float64, error) {
	if u == nil || u.HalfLife <= 0 {
		return nil, store.Invalid("Usage.HalfLife", "must be a positive duration", nil)
	}
	log := u.log()
	return decay(ctx, u.Next, query, candidates, u.HalfLife, now(u.Now), func(h store.Hit) time.Time {
		since := h.Record.RecordTime()
		if at, ok := log.LastUsed(store.RefOf(h.Record)); ok && at.After(since) {
			since = at
		}
		return since
	})
}

// Used records the hits a search returned as used at Now. day1's Client calls it
// with the hits of every search this Reranker ranked, unless the ranking failed (see
// UseRecorder).
func (u *Usage) Used(ctx context.Context, hits []store.Hit) {
	if u == nil || ctx.Err() != nil {
		return
	}
	at := now(u.Now)
	refs := make([]store.Ref, 0, len(hits))
	for _, h := range hits {
		if h.Record != nil {
			refs = append(refs, store.RefOf(h.Record))
		}
	}
	u.log().Use(at, refs...)
}

// Name returns "usage", after Next's name when it has one.
func (u *Usage) Name() string {
	if u != nil && u.Next != nil {
		return u.Next.Name() + "+usage"
	}
	return "usage"
}

func (u *Usage) log() *UsageLog {
	u.once.Do(func() {
		if u.Log == nil {
			u.Log = new(UsageLog)
		}
	})
	return u.Log
}

// UseRecorder is a Reranker that wants to know which hits a search returned, after it
// ranked them and the search kept its Limit: day1's Client calls Used with them when
// the Reranker is its Config.Reranker and the ranking succeeded. Usage is one.
type UseRecorder interface {
	Used(ctx context.Context, hits []store.Hit)
}

// UsageLog keeps the time each memory (a record, by kind and id, on any branch) was
// last used. It is safe for concurrent use; the zero value is an empty log.
type UsageLog struct {
	mu   sync.Mutex
	last map[store.Ref]time.Time
}

// Use records refs as used at at. A use earlier than one already recorded changes
// nothing.
func (l *UsageLog) Use(at time.Time, refs ...store.Ref) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == nil {
		l.last = map[store.Ref]time.Time{}
	}
	for _, r := range refs {
		if prev, ok := l.last[r]; !ok || at.After(prev) {
			l.last[r] = at
		}
	}
}

// LastUsed returns when ref was last used, and whether it ever was.
func (l *UsageLog) LastUsed(ref store.Ref) (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	at, ok := l.last[ref]
	return at, ok
}

// Len returns how many memories the log holds a use of.
func (l *UsageLog) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.last)
}
