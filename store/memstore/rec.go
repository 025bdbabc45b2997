package memstore

import (
	"time"

	"github.com/day1ai/day1/store"
)

// factRec is a fact as a version keeps it, in about a third of a store.Fact's memory:
// the fields nearly every fact sets, and the others behind a pointer that is nil when
// they are all zero. The embedding is kept apart (version.emb). A store of a million
// facts holds a million of these, so their size is much of the store's.
type factRec struct {
	id, branch, text, category string
	status                     store.FactStatus
	confidence                 float64
	created, updated           time.Time
	more                       *factMore
}

// factMore holds the fields of a fact that many facts leave zero.
type factMore struct {
	sourceType, sourceID, parentID string
	sessionID, taskID, agentID     string
	metadata                       map[string]string
	verify                         store.Verification
	expires                        time.Time
}

// keepFact returns f as a version keeps it, without its embedding. The metadata map
// is shared with f.
func keepFact(f store.Fact) *factRec {
	r := &factRec{
		id: f.ID, branch: f.Branch, text: f.Text, category: f.Category,
		status: f.Status, confidence: f.Confidence, created: f.CreatedAt, updated: f.UpdatedAt,
	}
	if f.SourceType != "" || f.SourceID != "" || f.ParentID != "" || f.SessionID != "" || f.TaskID != "" ||
		f.AgentID != "" || f.Metadata != nil || f.Verify != (store.Verification{}) || !f.ExpiresAt.IsZero() {
		r.more = &factMore{
			sourceType: f.SourceType, sourceID: f.SourceID, parentID: f.ParentID,
			sessionID: f.SessionID, taskID: f.TaskID, agentID: f.AgentID,
			metadata: f.Metadata, verify: f.Verify, expires: f.ExpiresAt,
		}
	}
	return r
}

// session returns the SessionID of the fact r keeps.
func (r *factRec) session() string {
	if r.more == nil {
		return ""
	}
	return r.more.sessionID
}

// fact returns the fact r keeps, without its embedding. Its metadata map is the
// store's: a caller that may change it clones the fact (store.Clone).
func (r *factRec) fact() store.Fact {
	f := store.Fact{
		ID: r.id, Branch: r.branch, Text: r.text, Category: r.category,
		Status: r.status, Confidence: r.confidence, CreatedAt: r.created, UpdatedAt: r.updated,
	}
	if m := r.more; m != nil {
		f.SourceType, f.SourceID, f.ParentID = m.sourceType, m.sourceID, m.parentID
		f.SessionID, f.TaskID, f.AgentID = m.sessionID, m.taskID, m.agentID
		f.Metadata, f.Verify, f.ExpiresAt = m.metadata, m.verify, m.expires
	}
	return f
}

// expires returns the ExpiresAt of the fact r keeps.
func (r *factRec) expires() time.Time {
	if r.more == nil {
		return time.Time{}
	}
	return r.more.expires
}

// expired reports whether the version is a fact that has expired at t (a zero t
// checks nothing).
func (ver *version) expired(t time.Time) bool {
	if t.IsZero() {
		return false
	}
	f, ok := ver.rec.(*factRec)
	if !ok {
		return false
	}
	e := f.expires()
	return !e.IsZero() && !t.Before(e)
}

// keep returns what a version holds for r: a *factRec for a fact, which leaves the
// embedding out; r itself otherwise, which must have none (nil for a deletion).
func keep(r store.Record) any {
	if f, ok := r.(store.Fact); ok {
		return keepFact(f)
	}
	return r
}

// plain returns the version's record without its embedding, for reading only (its
// metadata map is the store's); nil for a deletion.
func (ver *version) plain() store.Record {
	switch r := ver.rec.(type) {
	case nil:
		return nil
	case *factRec:
		return r.fact()
	}
	return ver.rec.(store.Record)
}

// live reports whether the version is a fact whose status is live.
func (ver *version) live() bool {
	f, ok := ver.rec.(*factRec)
	return ok && f.status.Live()
}

// searchText returns the text the version is searched by (store.SearchText).
func (ver *version) searchText() string {
	if f, ok := ver.rec.(*factRec); ok {
		return f.text
	}
	return store.SearchText(ver.plain())
}

// The functions below hand a fact to store functions that do not keep their
// arguments, built on the caller's stack: plain would box it on the heap.

// matches reports whether the version's record passes the filter.
func (ver *version) matches(f store.Filter) bool {
	if fr, ok := ver.rec.(*factRec); ok {
		return f.Match(fr.fact())
	}
	return f.Match(ver.plain())
}

// holdsExceptEmbedding reports whether the version holds r's content, leaving the
// embeddings out (store.SameContentExceptEmbedding).
func (ver *version) holdsExceptEmbedding(r store.Record) bool {
	if fr, ok := ver.rec.(*factRec); ok {
		return store.SameContentExceptEmbedding(fr.fact(), r)
	}
	return store.SameContentExceptEmbedding(ver.plain(), r)
}

// equivalent reports whether two versions, either nil for none, hold equivalent
// records without their embeddings (store.Equivalent).
func equivalent(a, b *version) bool {
	fa, aok := factOf(a)
	fb, bok := factOf(b)
	if aok && bok {
		return store.Equivalent(fa.fact(), fb.fact())
	}
	return store.Equivalent(recOf(a), recOf(b))
}

// factOf returns the fact v holds, if it holds one.
func factOf(v *version) (*factRec, bool) {
	if v == nil {
		return nil, false
	}
	f, ok := v.rec.(*factRec)
	return f, ok
}
