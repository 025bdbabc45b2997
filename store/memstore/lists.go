package memstore

import (
	"iter"
	"slices"
)

// versionLists maps keys to lists of versions, oldest first. Most keys hold one
// version: it sits in a map slot, the later ones in a second map, so that such a key
// costs no list of its own.
type versionLists[K comparable] struct {
	first map[K]*version
	more  map[K][]*version
}

func newVersionLists[K comparable](size int) versionLists[K] {
	return versionLists[K]{first: make(map[K]*version, size), more: map[K][]*version{}}
}

// add appends v to k's list.
func (l versionLists[K]) add(k K, v *version) {
	if _, ok := l.first[k]; !ok {
		l.first[k] = v
		return
	}
	l.more[k] = append(l.more[k], v)
}

// all yields k's versions, oldest first.
func (l versionLists[K]) all(k K) iter.Seq[*version] {
	return func(yield func(*version) bool) {
		first := l.first[k]
		if first == nil || !yield(first) {
			return
		}
		for _, v := range l.more[k] {
			if !yield(v) {
				return
			}
		}
	}
}

// newest returns k's last version, or nil.
func (l versionLists[K]) newest(k K) *version {
	if more := l.more[k]; len(more) > 0 {
		return more[len(more)-1]
	}
	return l.first[k]
}

// deleteFunc removes from every list the versions for which del is true, keeping the
// others in order.
func (l versionLists[K]) deleteFunc(del func(*version) bool) {
	for k, vs := range l.more {
		if vs = slices.DeleteFunc(vs, del); len(vs) == 0 {
			delete(l.more, k)
		} else {
			l.more[k] = vs
		}
	}
	for k, first := range l.first {
		if !del(first) {
			continue
		}
		vs := l.more[k]
		if len(vs) == 0 {
			delete(l.first, k)
			continue
		}
		l.first[k] = vs[0]
		if len(vs) == 1 {
			delete(l.more, k)
		} else {
			l.more[k] = vs[1:]
		}
	}
}
