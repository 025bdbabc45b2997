package store

import (
	"maps"
	"reflect"
	"slices"
	"time"
)

// Match reports whether r passes the filter.
func (f Filter) Match(r Record) bool {
	var category, session, task, agent, conv string
	var status FactStatus
	var obsType ObservationType
	var meta map[string]string
	switch r := r.(type) {
	case Fact:
		category, status, session, task, agent, meta = r.Category, r.Status, r.SessionID, r.TaskID, r.AgentID, r.Metadata
	case Observation:
		session, task, agent, obsType, meta = r.SessionID, r.TaskID, r.AgentID, r.Type, r.Metadata
	case Relation:
		session, task, agent, meta = r.SessionID, r.TaskID, r.AgentID, r.Properties
		if f.Entity != "" && r.Source != f.Entity && r.Target != f.Entity {
			return false
		}
		if f.RelationType != "" && r.Type != f.RelationType {
			return false
		}
	case Conversation:
		session, task, agent, meta = r.SessionID, r.TaskID, r.AgentID, r.Metadata
	case Message:
		session, task, agent, conv, meta = r.SessionID, r.TaskID, r.AgentID, r.ConversationID, r.Metadata
	default:
		return false
	}
	if _, ok := r.(Relation); !ok && (f.Entity != "" || f.RelationType != "") {
		return false
	}
	if f.Category != "" && category != f.Category ||
		f.Status != "" && status != f.Status ||
		len(f.Statuses) > 0 && !slices.Contains(f.Statuses, status) ||
		f.SessionID != "" && session != f.SessionID ||
		f.TaskID != "" && task != f.TaskID ||
		f.AgentID != "" && agent != f.AgentID ||
		f.ConversationID != "" && conv != f.ConversationID ||
		f.ObsType != "" && obsType != f.ObsType {
		return false
	}
	if len(f.IDs) > 0 && !slices.Contains(f.IDs, r.RecordID()) {
		return false
	}
	t := r.RecordTime()
	if !f.Since.IsZero() && t.Before(f.Since) || !f.Until.IsZero() && !t.Before(f.Until) {
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
	}
	return r
}

// WithDefaults fills zero timestamps with now, a zero fact status with active, zero
// confidences with 1, and a zero Relation.ValidFrom with its CreatedAt.
func WithDefaults(r Record, now time.Time) Record {
	now = now.UTC()
	switch r := r.(type) {
	case Fact:
		if r.CreatedAt.IsZero() {
			r.CreatedAt = now
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
		if r.CreatedAt.IsZero() {
			r.CreatedAt = now
		}
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
		return r
	}
	return r
}

// SameContent reports whether a and b are the same record with the same content. The
// Branch field, and CreatedAt/UpdatedAt when one side leaves them zero, are ignored, so
// a repeated write of the same input counts as the same content.
func SameContent(a, b Record) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	if a.RecordKind() != b.RecordKind() || a.RecordID() != b.RecordID() {
		return false
	}
	// Embeddings are compared apart: reflect would visit each component, and they are
	// the bulk of a record.
	if !slices.Equal(EmbeddingOf(a), EmbeddingOf(b)) {
		return false
	}
	return reflect.DeepEqual(comparable(a, b), comparable(b, a))
}

// comparable strips what SameContent ignores from x, given the other side y, and the
// embedding, which SameContent compares itself.
func comparable(x, y Record) Record {
	x = WithBranch(x, "")
	zeroTimes := func(ca, ua *time.Time, cb, ub time.Time) {
		if ca.IsZero() || cb.IsZero() {
			*ca = time.Time{}
		} else {
			*ca = ca.UTC()
		}
		if ua == nil {
			return
		}
		if ua.IsZero() || ub.IsZero() {
			*ua = time.Time{}
		} else {
			*ua = ua.UTC()
		}
	}
	switch xv := x.(type) {
	case Fact:
		yv := y.(Fact)
		zeroTimes(&xv.CreatedAt, &xv.UpdatedAt, yv.CreatedAt, yv.UpdatedAt)
		xv.Verify.At = xv.Verify.At.UTC()
		xv.Metadata = emptyNil(xv.Metadata)
		xv.Embedding = nil
		return xv
	case Observation:
		yv := y.(Observation)
		zeroTimes(&xv.CreatedAt, nil, yv.CreatedAt, time.Time{})
		xv.Metadata = emptyNil(xv.Metadata)
		xv.Embedding = nil
		return xv
	case Relation:
		yv := y.(Relation)
		zeroTimes(&xv.CreatedAt, nil, yv.CreatedAt, time.Time{})
		xv.ValidFrom, xv.ValidTo = xv.ValidFrom.UTC(), xv.ValidTo.UTC()
		xv.Properties = emptyNil(xv.Properties)
		return xv
	case Conversation:
		yv := y.(Conversation)
		zeroTimes(&xv.CreatedAt, &xv.UpdatedAt, yv.CreatedAt, yv.UpdatedAt)
		xv.Verify.At = xv.Verify.At.UTC()
		xv.Metadata = emptyNil(xv.Metadata)
		return xv
	case Message:
		yv := y.(Message)
		zeroTimes(&xv.CreatedAt, nil, yv.CreatedAt, time.Time{})
		xv.Metadata = emptyNil(xv.Metadata)
		if len(xv.PickedTo) == 0 {
			xv.PickedTo = nil
		}
		return xv
	}
	return x
}

// emptyNil maps an empty map to nil; the result is only compared, never changed.
func emptyNil(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
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

// EmbeddingOf returns the embedding of a fact or an observation, nil otherwise.
func EmbeddingOf(r Record) []float32 {
	switch r := r.(type) {
	case Fact:
		return r.Embedding
	case Observation:
		return r.Embedding
	}
	return nil
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
		r.PickedTo = slices.Clone(r.PickedTo)
		r.Metadata = maps.Clone(r.Metadata)
		return r
	}
	return r
}

// Equivalent reports whether a and b hold the same content apart from Branch and
// UpdatedAt. Diffs compare records with it: two sides that reached the same content at
// different moments have made no change that needs merging.
func Equivalent(a, b Record) bool {
	return SameContent(withoutUpdated(a), withoutUpdated(b))
}

func withoutUpdated(r Record) Record {
	switch v := r.(type) {
	case Fact:
		v.UpdatedAt = time.Time{}
		return v
	case Conversation:
		v.UpdatedAt = time.Time{}
		return v
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
	}
	return WithDefaults(in, cur.RecordTime())
}

// IsZero reports whether the filter matches everything.
func (f Filter) IsZero() bool {
	return f.Category == "" && f.Status == "" && len(f.Statuses) == 0 && f.SessionID == "" &&
		f.TaskID == "" && f.AgentID == "" && f.ConversationID == "" && f.ObsType == "" &&
		f.Entity == "" && f.RelationType == "" && f.Since.IsZero() && f.Until.IsZero() &&
		len(f.Metadata) == 0 && len(f.IDs) == 0
}
