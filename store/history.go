package store

import (
	"cmp"
	"slices"
)

// BranchRev is a branch as of a revision: every version the branch saw when the store's
// revision counter stood at Rev. Revisions are a store's own ordered numbers (the
// embedded store's sequence numbers, MatrixOne's commit revisions); a BranchRev means
// nothing to another store.
type BranchRev struct {
	Branch string
	Rev    uint64
}

// MergePoint records that a merge into Target, committed at revision At, took in
// Source as it was at revision SourceAt. Every merge but a cherry-pick is one: a later
// diff of the two branches, in either direction, starts from it.
type MergePoint struct {
	Target   string
	At       uint64
	Source   string
	SourceAt uint64
}

// History is the ancestry of a store's branches: where each one forked, and the merge
// points that joined them. It is what a store finds merge bases with; it holds no
// records. The zero value is empty and ready to use. A History is not safe for
// concurrent use.
//
// As in git, point p is an ancestor of point q when q's branch is p's branch at a later
// revision, when q's branch forked from p (or from a descendant of p), or when a merge
// took p (or a descendant of p) into q's branch at or before q.
type History struct {
	forks  map[string]BranchRev    // a branch's parent as of its fork; absent for a root
	merges map[string][]MergePoint // merge points by target, in the order added
}

// AddBranch records that branch forked from parent as of revision forkRev. A root
// branch (no parent) needs no call.
func (h *History) AddBranch(branch, parent string, forkRev uint64) {
	if parent == "" {
		return
	}
	if h.forks == nil {
		h.forks = map[string]BranchRev{}
	}
	h.forks[branch] = BranchRev{Branch: parent, Rev: forkRev}
}

// AddMerge records a merge point.
func (h *History) AddMerge(m MergePoint) {
	if h.merges == nil {
		h.merges = map[string][]MergePoint{}
	}
	h.merges[m.Target] = append(h.merges[m.Target], m)
}

// DropBranch forgets a deleted branch: its fork and every merge point into or out of
// it, so that a new branch of the same name starts a history of its own.
func (h *History) DropBranch(branch string) {
	delete(h.forks, branch)
	delete(h.merges, branch)
	for t, ms := range h.merges {
		ms = slices.DeleteFunc(ms, func(m MergePoint) bool { return m.Source == branch })
		if len(ms) == 0 {
			delete(h.merges, t)
		} else {
			h.merges[t] = ms
		}
	}
}

// Merges returns the number of merge points recorded.
func (h *History) Merges() int {
	n := 0
	for _, ms := range h.merges {
		n += len(ms)
	}
	return n
}

// Ancestors returns every point p descends from, itself included, as the newest
// revision of each branch it descends from: p descends from (b, r) for every r at or
// below Ancestors(p)[b].
func (h *History) Ancestors(p BranchRev) map[string]uint64 {
	anc := map[string]uint64{}
	stack := []BranchRev{p}
	for len(stack) > 0 {
		q := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if r, ok := anc[q.Branch]; ok && r >= q.Rev {
			continue
		}
		anc[q.Branch] = q.Rev
		if f, ok := h.forks[q.Branch]; ok {
			stack = append(stack, BranchRev{Branch: f.Branch, Rev: min(f.Rev, q.Rev)})
		}
		for _, m := range h.merges[q.Branch] {
			if m.At <= q.Rev {
				stack = append(stack, BranchRev{Branch: m.Source, Rev: m.SourceAt})
			}
		}
	}
	return anc
}

// Base is the merge base of two points: their newest common ancestors. Usually one
// point; after criss-cross merges (each of two branches merged into the other from
// points neither of which descends from the other) there are several, and Below is
// their own merge base. ResolveBase gives a record's version at such a base.
type Base struct {
	// Points are the common ancestors of which no other is a descendant, newest
	// revision first. Empty when the two points share no history.
	Points []BranchRev
	// Below is the merge base of Points when there are several; nil otherwise.
	Below *Base
}

// maxBaseDepth bounds how many levels of criss-cross bases a merge base is made of.
// Deeper histories settle on the newest points of the last level.
const maxBaseDepth = 8

// MergeBase returns the merge base of a and b.
func (h *History) MergeBase(a, b BranchRev) *Base {
	return h.commonBase([]map[string]uint64{h.Ancestors(a), h.Ancestors(b)}, maxBaseDepth)
}

// commonBase returns the newest points that every ancestry in ancs holds.
func (h *History) commonBase(ancs []map[string]uint64, depth int) *Base {
	var common []BranchRev
	for br, r := range ancs[0] {
		in := true
		for _, a := range ancs[1:] {
			ar, ok := a[br]
			if !ok {
				in = false
				break
			}
			r = min(r, ar)
		}
		if in {
			common = append(common, BranchRev{Branch: br, Rev: r})
		}
	}
	// Keep the points no other common point descends from. A point descends only from
	// points at or below its revision, so newest first, a point is ruled out by one
	// met before it; the ancestry of a point ruled out is not needed, as whatever it
	// rules out the point that ruled it out does too. Only the few candidates left
	// have their ancestry read: the base of two branches costs the size of the
	// history once, not once per branch that was ever merged.
	slices.SortFunc(common, newestFirst)
	var cands []BranchRev
	var below []map[string]uint64
	covered := map[string]uint64{}
	for _, c := range common {
		if r, ok := covered[c.Branch]; ok && r >= c.Rev {
			continue
		}
		anc := h.Ancestors(c)
		cands, below = append(cands, c), append(below, anc)
		for b, r := range anc {
			if r > covered[b] {
				covered[b] = r
			}
		}
	}
	base := &Base{}
	var kept []map[string]uint64
	for i, c := range cands {
		dominated := false
		for j, d := range cands {
			if i == j || below[j][c.Branch] < c.Rev {
				continue
			}
			// d descends from c. When c descends from d as well, the two are one state
			// reached on two branches at one revision (a branch merged into its parent,
			// or the parent into it, before either wrote anything): keep one of them,
			// the first by name, rather than let each rule the other out and leave no
			// base at all.
			if below[i][d.Branch] >= d.Rev && c.Branch < d.Branch {
				continue
			}
			dominated = true
			break
		}
		if !dominated {
			base.Points = append(base.Points, c)
			kept = append(kept, below[i])
		}
	}
	slices.SortFunc(base.Points, newestFirst)
	if len(base.Points) > 1 && depth > 1 {
		// No point descends from another, so what they share lies strictly below them.
		base.Below = h.commonBase(kept, depth-1)
		if len(base.Below.Points) == 0 {
			base.Below = nil
		}
	}
	return base
}

// newestFirst orders points by revision, newest first, then by branch name.
func newestFirst(x, y BranchRev) int {
	if c := cmp.Compare(y.Rev, x.Rev); c != 0 {
		return c
	}
	return cmp.Compare(x.Branch, y.Branch)
}

// ResolveBase returns a record's version at base, given its version at each point
// (at) and an equality of versions. At a base of one point it is that point's version.
// At a criss-cross base it is the version every point holds when they agree; else the
// one version some points changed it to from the base below, when there is one; else,
// when the points changed it differently, the version below, so that both sides of
// the diff count as changing the record and a merge sees the conflict.
func ResolveBase[T any](base *Base, at func(BranchRev) T, equal func(a, b T) bool) T {
	var zero T
	if base == nil || len(base.Points) == 0 {
		return zero
	}
	first := at(base.Points[0])
	vs := []T{first}
	agree := true
	for _, p := range base.Points[1:] {
		v := at(p)
		vs = append(vs, v)
		agree = agree && equal(first, v)
	}
	if agree || base.Below == nil {
		return first
	}
	old := ResolveBase(base.Below, at, equal)
	var changed []T
	for _, v := range vs {
		if equal(v, old) {
			continue
		}
		if len(changed) > 0 && !equal(changed[0], v) {
			return old
		}
		changed = append(changed, v)
	}
	if len(changed) > 0 {
		return changed[0]
	}
	return old
}

// MergePoints returns a copy of every merge point recorded, by target name and then
// in the order added.
func (h *History) MergePoints() []MergePoint {
	targets := make([]string, 0, len(h.merges))
	for t := range h.merges {
		targets = append(targets, t)
	}
	slices.Sort(targets)
	var out []MergePoint
	for _, t := range targets {
		out = append(out, h.merges[t]...)
	}
	return out
}

// Pins returns, by branch, the revisions up to horizon that reads may still ask for
// once history before horizon is let go: horizon itself, each snapshot, the fork
// point of each child branch, and each revision a merge took a branch at (the
// points merge bases are made of). Each list is sorted, without repeats. A read of a
// branch at one of its pins reads its ancestors at their children's fork points,
// which are theirs.
func (h *History) Pins(horizon uint64, snapshots []BranchRev) map[string][]uint64 {
	pins := map[string][]uint64{}
	add := func(p BranchRev) {
		if p.Rev <= horizon {
			pins[p.Branch] = append(pins[p.Branch], p.Rev)
		}
	}
	for _, parent := range h.forks {
		add(parent)
	}
	for _, s := range snapshots {
		add(s)
	}
	for _, ms := range h.merges {
		for _, m := range ms {
			add(BranchRev{Branch: m.Source, Rev: m.SourceAt})
		}
	}
	for b, ps := range pins {
		ps = append(ps, horizon)
		slices.Sort(ps)
		pins[b] = slices.Compact(ps)
	}
	return pins
}

// Retained reports whether a version written at revision seq and replaced at
// revision next (math.MaxUint64 while it is current) must be kept once history before
// horizon is let go: it is read after horizon, or at one of its branch's pins
// (History.Pins; nil for a branch with none, which then keeps only what horizon
// reads).
func Retained(pins []uint64, horizon, seq, next uint64) bool {
	if next > horizon {
		return true
	}
	i, _ := slices.BinarySearch(pins, seq)
	return i < len(pins) && pins[i] < next
}
