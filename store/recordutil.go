package store

import (
	"maps"
	"slices"
	"time"
)

// Match reports whether r passes the filter.
func (f Filter) Match(r Record) bool {
	var id, category, session, task, agent, conv string
	var role Role
	var status FactStatus
	var obsType ObservationType
	var meta map[string]string
	var t, expires time.Time
	// The id and time are read in each case, from the concrete type: a call through
	// the interface would make r escape, and a caller could not keep it on its stack.
	switch r := r.(type) {
	case Fact:
		category, status, session, task, agent, meta = r.Category, r.Status, r.SessionID, r.TaskID, r.AgentID, r.Metadata
		id, t, expires = r.RecordID(), r.RecordTime(), r.ExpiresAt
	case Observation:
		session, task, agent, obsType, meta = r.SessionID, r.TaskID, r.AgentID, r.Type, r.Metadata
		id, t = r.RecordID(), r.RecordTime()
	case Relation:
		session, task, agent, meta = r.SessionID, r.TaskID, r.AgentID, r.Properties
		if f.Entity != "" && r.Source != f.Entity && r.Target != f.Entity {
			return false
		}
		if f.RelationType != "" && r.Type != f.RelationType {
			return false
		}
		id, t = r.RecordID(), r.RecordTime()
	case Conversation:
		session, task, agent, meta = r.SessionID, r.TaskID, r.AgentID, r.Metadata
		id, t = r.RecordID(), r.RecordTime()
	case Message:
		session, task, agent, conv, role, meta = r.SessionID, r.TaskID, r.AgentID, r.ConversationID, r.Role, r.Metadata
		id, t = r.RecordID(), r.RecordTime()
	case Alias:
		id, t = r.RecordID(), r.RecordTime()
	default:
		return false
	}
	if _, ok := r.(Relation); !ok && (f.Entity != "" || f.RelationType != "") {
		return false
	}
	if f.Category != "" && category != f.Category ||
		f.Status != "" && status != f.Status ||
		len(f.Statuses) > 0 && !slices.Contains(f.Statuses, status) ||
		status != "" && slices.Contains(f.ExcludeStatuses, status) ||
		f.SessionID != "" && session != f.SessionID ||
		f.TaskID != "" && task != f.TaskID ||
		f.AgentID != "" && agent != f.AgentID ||
		f.ConversationID != "" && conv != f.ConversationID ||
		f.Role != "" && role != f.Role ||
		f.ObsType != "" && obsType != f.ObsType {
		return false
	}
	if len(f.IDs) > 0 && !slices.Contains(f.IDs, id) {
		return false
	}
	if !f.Since.IsZero() && t.Before(f.Since) || !f.Until.IsZero() && !t.Before(f.Until) {
		return false
	}
	if !f.LiveAt.IsZero() && !expires.IsZero() && !f.LiveAt.Before(expires) {
		return false
	}
	for k, v := range f.Metadata {
		if got, ok := meta[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// WithBranch returns a copy of r with its Branch field set.
func WithBranch(r Record, branch string) Record {
	switch r := r.(type) {
	case Fact:
		r.Branch = branch
		return r
	case Observation:
		r.Branch = branch
		return r
	case Relation:
		r.Branch = branch
		return r
	case Conversation:
		r.Branch = branch
		return r
	case Message:
		r.Branch = branch
		return r
	case Alias:
		r.Branch = branch
		return r
	}
	return r
}

// WithDefaults fills zero timestamps with now, a zero fact status with active, zero
// confidences with 1, and a zero Relation.ValidFrom with its CreatedAt. A fact or an
// observation with nothing to fill is returned as it is, without a copy.
func WithDefaults(r Record, now time.Time) Record {
	now = now.UTC()
	in := r
	switch r := r.(type) {
	case Fact:
		if !r.CreatedAt.IsZero() && !r.UpdatedAt.IsZero() && r.Status != "" && r.Confidence != 0 && r.TTL == 0 {
			return in
		}
		if r.CreatedAt.IsZero() {
			r.CreatedAt = now
		}
		if r.TTL > 0 && r.ExpiresAt.IsZero() {
			r.ExpiresAt, r.TTL = r.CreatedAt.Add(r.TTL), 0
		}
		if r.UpdatedAt.IsZero() {
			r.UpdatedAt = r.CreatedAt
		}
		if r.Status == "" {
			r.Status = FactActive
		}
		if r.Confidence == 0 {
			r.Confidence = 1
		}
		return r
	case Observation:
		if !r.CreatedAt.IsZero() {
			return in
		}
		r.CreatedAt = now
		return r
	case Relation:
		if r.CreatedAt.IsZero() {
			r.CreatedAt = now
		}
		if r.ValidFrom.IsZero() {
			r.ValidFrom = r.CreatedAt
		}
		if r.Confidence == 0 {
			r.Confidence = 1
		}
		return r
	case Conversation:
		if r.CreatedAt.IsZero() {
			r.CreatedAt = now
		}
		if r.UpdatedAt.IsZero() {
			r.UpdatedAt = r.CreatedAt
		}
		return r
	case Message:
		if r.CreatedAt.IsZero() {
			r.CreatedAt = now
		}
		return SyncPicks(r)
	case Alias:
		if r.CreatedAt.IsZero() {
			r.CreatedAt = now
		}
		return r
	}
	return r
}

// SameContent reports whether a and b are the same record with the same content. The
// Branch field, and CreatedAt/UpdatedAt when one side leaves them zero, are ignored, so
// a repeated write of the same input counts as the same content. Times compare as
// instants; an empty map or slice equals a nil one.
func SameContent(a, b Record) bool {
	return sameContent(a, b, false, false)
}

// SameContentExceptEmbedding is SameContent without comparing the embeddings of facts,
// observations and messages. A store that lists lean diffs (LeanDiffer) tells with it a record
// of a lean plan from the version it was listed from.
func SameContentExceptEmbedding(a, b Record) bool {
	return sameContent(a, b, false, true)
}

// Equivalent reports whether a and b hold the same content apart from Branch and
// UpdatedAt. Diffs compare records with it: two sides that reached the same content at
// different moments have made no change that needs merging. A fact promoted by a
// merge (FactPromoted) is equivalent to its verified self (see Fact.IsVerified): the
// promotion marks where the knowledge sits, not a change of it.
func Equivalent(a, b Record) bool {
	return sameContent(a, b, true, false)
}

// Agree reports whether two sides' versions of one record have converged: they are
// Equivalent, or they are facts or conversations equal in everything but the details
// of a verdict (its score, per-dimension scores, judge, notes and time) and
// UpdatedAt, with verdicts of the same status. Diffs leave agreeing versions out, so a
// merge neither lists nor writes them and the target's version stands.
//
// A verdict is a judgement about a record, not a change of its content: verifying a
// record a branch inherited writes a new version on that branch with Verify, Status
// and UpdatedAt changed and every other field as it was. Two branches that verify the
// same inherited fact and reach the same status have made no change that conflicts;
// a merge keeps the target's verdict. Verdicts of different statuses (one side
// verified, the other invalidated) disagree and conflict as BothChanged.
func Agree(a, b Record) bool {
	if Equivalent(a, b) {
		return true
	}
	switch x := a.(type) {
	case Fact:
		y, ok := b.(Fact)
		if !ok || x.Verify.Status != y.Verify.Status {
			return false
		}
		y.Verify, y.UpdatedAt = x.Verify, x.UpdatedAt
		return Equivalent(x, y)
	case Conversation:
		y, ok := b.(Conversation)
		if !ok || x.Verify.Status != y.Verify.Status {
			return false
		}
		y.Verify, y.UpdatedAt = x.Verify, x.UpdatedAt
		return Equivalent(x, y)
	}
	return false
}

// sameContent compares field by field: it runs for every record a write, diff or merge
// touches, so it must not allocate. TestSameContentCoversEveryField keeps it complete.
func sameContent(a, b Record, ignoreUpdated, ignoreEmbedding bool) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	switch x := a.(type) {
	case Fact:
		y, ok := b.(Fact)
		return ok && x.ID == y.ID && x.Text == y.Text && (ignoreEmbedding || slices.Equal(x.Embedding, y.Embedding)) &&
			x.Category == y.Category && x.Confidence == y.Confidence &&
			(x.Status == y.Status || ignoreUpdated && promotedFrom(x, y)) &&
			x.SourceType == y.SourceType && x.SourceID == y.SourceID && x.ParentID == y.ParentID &&
			x.SessionID == y.SessionID && x.TaskID == y.TaskID && x.AgentID == y.AgentID &&
			maps.Equal(x.Metadata, y.Metadata) && x.Verify.equal(y.Verify) && x.ExpiresAt.Equal(y.ExpiresAt) &&
			sameStamp(x.CreatedAt, y.CreatedAt) && (ignoreUpdated || sameStamp(x.UpdatedAt, y.UpdatedAt))
	case Observation:
		y, ok := b.(Observation)
		return ok && x.ID == y.ID && x.SessionID == y.SessionID && x.TaskID == y.TaskID &&
			x.AgentID == y.AgentID && x.Type == y.Type && x.Tool == y.Tool && x.Summary == y.Summary &&
			(ignoreEmbedding || slices.Equal(x.Embedding, y.Embedding)) && x.RawInput == y.RawInput && x.RawOutput == y.RawOutput &&
			maps.Equal(x.Metadata, y.Metadata) && sameStamp(x.CreatedAt, y.CreatedAt)
	case Relation:
		y, ok := b.(Relation)
		return ok && x.ID == y.ID && x.Source == y.Source && x.Target == y.Target && x.Type == y.Type &&
			maps.Equal(x.Properties, y.Properties) && x.Confidence == y.Confidence &&
			x.ValidFrom.Equal(y.ValidFrom) && x.ValidTo.Equal(y.ValidTo) && x.SessionID == y.SessionID &&
			x.TaskID == y.TaskID && x.AgentID == y.AgentID && sameStamp(x.CreatedAt, y.CreatedAt)
	case Conversation:
		y, ok := b.(Conversation)
		return ok && x.ID == y.ID && x.SessionID == y.SessionID && x.AgentID == y.AgentID &&
			x.TaskID == y.TaskID && x.Title == y.Title && x.Verify.equal(y.Verify) &&
			maps.Equal(x.Metadata, y.Metadata) && sameStamp(x.CreatedAt, y.CreatedAt) &&
			(ignoreUpdated || sameStamp(x.UpdatedAt, y.UpdatedAt))
	case Message:
		y, ok := b.(Message)
		return ok && x.ID == y.ID && x.ConversationID == y.ConversationID && x.Seq == y.Seq &&
			x.Role == y.Role && x.Content == y.Content && (ignoreEmbedding || slices.Equal(x.Embedding, y.Embedding)) && x.Tool == y.Tool && slices.Equal(x.PickedTo, y.PickedTo) && slices.EqualFunc(x.Picks, y.Picks, Pick.equal) &&
			x.SessionID == y.SessionID && x.TaskID == y.TaskID && x.AgentID == y.AgentID &&
			maps.Equal(x.Metadata, y.Metadata) && sameStamp(x.CreatedAt, y.CreatedAt)
	case Alias:
		y, ok := b.(Alias)
		return ok && x.ID == y.ID && x.Target == y.Target && sameStamp(x.CreatedAt, y.CreatedAt)
	}
	return false
}

// promotedFrom reports whether one of two facts is promoted and the other verified:
// the same knowledge before and after a promoting merge.
func promotedFrom(x, y Fact) bool {
	return x.Status == FactPromoted && y.IsVerified() || y.Status == FactPromoted && x.IsVerified()
}

// sameStamp compares a time the store stamps: equal instants, or either side zero.
func sameStamp(a, b time.Time) bool {
	return a.IsZero() || b.IsZero() || a.Equal(b)
}

func (p Pick) equal(o Pick) bool {
	return p.Branch == o.Branch && p.ConversationID == o.ConversationID && p.At.Equal(o.At)
}

func (v Verification) equal(o Verification) bool {
	return v.Status == o.Status && v.Score == o.Score && v.By == o.By && v.At.Equal(o.At) &&
		v.Notes == o.Notes && v.Scores == o.Scores
}

// SearchText is the text of r that keyword search indexes: a fact's Text, an
// observation's Summary, a message's Content, a conversation's Title, a relation's
// "source type target".
func SearchText(r Record) string {
	switch r := r.(type) {
	case Fact:
		return r.Text
	case Observation:
		return r.Summary
	case Message:
		return r.Content
	case Conversation:
		return r.Title
	case Relation:
		return r.Source + " " + r.Type + " " + r.Target
	}
	return ""
}

// EmbeddingOf returns the embedding of a fact, an observation or a message, nil
// otherwise.
func EmbeddingOf(r Record) []float32 {
	switch r := r.(type) {
	case Fact:
		return r.Embedding
	case Observation:
		return r.Embedding
	case Message:
		return r.Embedding
	}
	return nil
}

// WithEmbedding returns r with its embedding set to emb (nil removes it): a fact, an
// observation or a message; other kinds, which have none, are returned as they are.
func WithEmbedding(r Record, emb []float32) Record {
	switch r := r.(type) {
	case Fact:
		r.Embedding = emb
		return r
	case Observation:
		r.Embedding = emb
		return r
	case Message:
		r.Embedding = emb
		return r
	}
	return r
}

// Clone returns a deep copy of r, so callers may keep or change it freely.
func Clone(r Record) Record {
	switch r := r.(type) {
	case Fact:
		r.Embedding = slices.Clone(r.Embedding)
		r.Metadata = maps.Clone(r.Metadata)
		return r
	case Observation:
		r.Embedding = slices.Clone(r.Embedding)
		r.Metadata = maps.Clone(r.Metadata)
		return r
	case Relation:
		r.Properties = maps.Clone(r.Properties)
		return r
	case Conversation:
		r.Metadata = maps.Clone(r.Metadata)
		return r
	case Message:
		r.Embedding = slices.Clone(r.Embedding)
		r.PickedTo = slices.Clone(r.PickedTo)
		r.Picks = slices.Clone(r.Picks)
		r.Metadata = maps.Clone(r.Metadata)
		return r
	}
	return r
}

// StampLike fills the timestamps that in leaves zero (CreatedAt, UpdatedAt, a relation's
// ValidFrom) from cur, another version of the same record, and the remaining defaults as
// WithDefaults does. Stores use it to tell a repeated write of the same input from a
// change: the repeat leaves times zero and matches cur exactly.
func StampLike(in, cur Record) Record {
	switch v := in.(type) {
	case Fact:
		if c, ok := cur.(Fact); ok {
			if v.CreatedAt.IsZero() {
				v.CreatedAt = c.CreatedAt
			}
			if v.UpdatedAt.IsZero() {
				v.UpdatedAt = c.UpdatedAt
			}
		}
		in = v
	case Conversation:
		if c, ok := cur.(Conversation); ok {
			if v.CreatedAt.IsZero() {
				v.CreatedAt = c.CreatedAt
			}
			if v.UpdatedAt.IsZero() {
				v.UpdatedAt = c.UpdatedAt
			}
		}
		in = v
	case Relation:
		if c, ok := cur.(Relation); ok {
			if v.CreatedAt.IsZero() {
				v.CreatedAt = c.CreatedAt
			}
			if v.ValidFrom.IsZero() {
				v.ValidFrom = c.ValidFrom
			}
		}
		in = v
	case Observation:
		if c, ok := cur.(Observation); ok && v.CreatedAt.IsZero() {
			v.CreatedAt = c.CreatedAt
		}
		in = v
	case Message:
		if c, ok := cur.(Message); ok && v.CreatedAt.IsZero() {
			v.CreatedAt = c.CreatedAt
		}
		in = v
	case Alias:
		if c, ok := cur.(Alias); ok && v.CreatedAt.IsZero() {
			v.CreatedAt = c.CreatedAt
		}
		in = v
	}
	return WithDefaults(in, cur.RecordTime())
}

// IsZero reports whether the filter matches everything.
func (f Filter) IsZero() bool {
	return f.LiveAt.IsZero() && !f.NotExpired && f.Category == "" && f.Status == "" && len(f.Statuses) == 0 && len(f.ExcludeStatuses) == 0 && f.SessionID == "" &&
		f.TaskID == "" && f.AgentID == "" && f.ConversationID == "" && f.Role == "" && f.ObsType == "" &&
		f.Entity == "" && f.RelationType == "" && f.Since.IsZero() && f.Until.IsZero() &&
		len(f.Metadata) == 0 && len(f.IDs) == 0
}

// Supersede returns a near-duplicate fact old marked superseded by f, and f naming
// old as its parent (unless it names one already). f keeps the higher confidence of
// the two: the knowledge it restates was already held that firmly. Stores write both
// when a new fact supersedes a near-duplicate.
func Supersede(old, f Fact) (Fact, Fact) {
	old.Status = FactSuperseded
	old.UpdatedAt = f.UpdatedAt
	if f.ParentID == "" {
		f.ParentID = old.ID
	}
	f.Confidence = max(f.Confidence, old.Confidence)
	return old, f
}

// AsWritten returns r, a record a store wrote from the caller's record in, as a Put
// result: holding in's embedding and metadata in place of the store's copies of them.
// The caller owns those already, so the result costs no copy, and the store's stay
// out of the caller's reach.
func AsWritten(r, in Record) Record {
	switch v := r.(type) {
	case Fact:
		if w, ok := in.(Fact); ok {
			v.Embedding, v.Metadata = w.Embedding, w.Metadata
			return v
		}
	case Observation:
		if w, ok := in.(Observation); ok {
			v.Embedding, v.Metadata = w.Embedding, w.Metadata
			return v
		}
	}
	return Clone(r)
}
