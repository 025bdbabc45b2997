package store

import (
	"slices"
	"strings"
	"time"
)

// SortRecords orders List results: by CreatedAt, then (for messages) Seq, then id for
// OrderCreated; the same by UpdateTime for OrderUpdated; by id for OrderID; by
// conversation, Seq and id for OrderSeq. desc reverses the order. Every store sorts
// with it, so List orders agree.
func SortRecords(rs []Record, order Order, desc bool) {
	cmp := func(a, b Record) int {
		switch order {
		case OrderID:
			return strings.Compare(a.RecordID(), b.RecordID())
		case OrderSeq:
			ma, oka := a.(Message)
			mb, okb := b.(Message)
			if oka && okb {
				if c := strings.Compare(ma.ConversationID, mb.ConversationID); c != 0 {
					return c
				}
				if ma.Seq != mb.Seq {
					return ma.Seq - mb.Seq
				}
				return strings.Compare(a.RecordID(), b.RecordID())
			}
		}
		ta, tb := a.RecordTime(), b.RecordTime()
		if order == OrderUpdated {
			ta, tb = UpdateTime(a), UpdateTime(b)
		}
		if c := ta.Compare(tb); c != 0 {
			return c
		}
		ma, oka := a.(Message)
		mb, okb := b.(Message)
		if oka && okb && ma.Seq != mb.Seq {
			return ma.Seq - mb.Seq
		}
		return strings.Compare(a.RecordID(), b.RecordID())
	}
	slices.SortStableFunc(rs, func(a, b Record) int {
		if desc {
			return cmp(b, a)
		}
		return cmp(a, b)
	})
}

// UpdateTime returns when a record's current version was written: UpdatedAt for a
// fact or a conversation (CreatedAt when UpdatedAt is zero), CreatedAt for the kinds
// that have no UpdatedAt.
func UpdateTime(r Record) time.Time {
	var t time.Time
	switch r := r.(type) {
	case Fact:
		t = r.UpdatedAt
	case Conversation:
		t = r.UpdatedAt
	}
	if t.IsZero() {
		return r.RecordTime()
	}
	return t
}

// Updatable reports whether records of kind k carry an UpdatedAt of their own, so
// that OrderUpdated may order them differently from OrderCreated.
func Updatable(k Kind) bool { return k == KindFact || k == KindConversation }

// KeepCreated gives an update the creation time of the version it replaces, when the
// caller left CreatedAt unset (unset is whether the input's creation time was zero).
func KeepCreated(r, cur Record, unset bool) Record {
	if !unset {
		return r
	}
	created := cur.RecordTime()
	switch v := r.(type) {
	case Fact:
		v.CreatedAt = created
		return v
	case Conversation:
		v.CreatedAt = created
		return v
	case Relation:
		v.CreatedAt = created
		return v
	case Observation:
		v.CreatedAt = created
		return v
	case Message:
		v.CreatedAt = created
		return v
	case Alias:
		v.CreatedAt = created
		return v
	}
	return r
}

// NormText folds case and white space: two fact texts are the same text for exact
// deduplication when their NormText is equal.
func NormText(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(s)), " ")
}

// Page returns the items of a list that offset and limit keep (limit 0: all that
// follow offset), nil when offset is past the end: the page a List returns once its
// records are ordered.
func Page[T any](items []T, offset, limit int) []T {
	if offset >= len(items) {
		return nil
	}
	items = items[offset:]
	if limit > 0 && len(items) > limit {
		items = items[:limit]
	}
	return items
}
