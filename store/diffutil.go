package store

// ChangeOf describes how a record went from before (at the merge base) to after (now)
// on one side of a diff; nil means absent or deleted. It reports false when nothing
// changed: both absent, or equivalent content. Stores build their diffs with it.
func ChangeOf(ref Ref, before, after Record) (Change, bool) {
	c := Change{Ref: ref, Before: before, After: after}
	switch {
	case before == nil && after == nil:
		return c, false
	case before == nil:
		c.Op = OpAdded
	case after == nil:
		c.Op = OpDeleted
	case Equivalent(before, after):
		return c, false
	default:
		c.Op = OpUpdated
	}
	return c, true
}

// SupersedeConflicts returns a BothSuperseded conflict for every pair of facts added on
// the two sides of d that supersede the same parent fact.
func SupersedeConflicts(d *Diff) []Conflict {
	byParent := map[string][]Change{}
	for _, c := range d.TargetChanges {
		if f, ok := c.After.(Fact); ok && c.Op == OpAdded && f.ParentID != "" {
			byParent[f.ParentID] = append(byParent[f.ParentID], c)
		}
	}
	var out []Conflict
	for _, c := range d.SourceChanges {
		f, ok := c.After.(Fact)
		if !ok || c.Op != OpAdded || f.ParentID == "" {
			continue
		}
		for _, tc := range byParent[f.ParentID] {
			if tc.Ref.ID != f.ID {
				out = append(out, Conflict{Ref: Ref{Kind: KindFact, ID: f.ParentID},
					Reason: BothSuperseded, Source: c, Target: tc})
			}
		}
	}
	return out
}

// AddChanges adds to d what a diff found of one record: its change on the source
// when onSource, on the target when onTarget, and, when both, a BothChanged conflict
// between them.
func (d *Diff) AddChanges(sc Change, onSource bool, tc Change, onTarget bool) {
	if onSource {
		d.SourceChanges = append(d.SourceChanges, sc)
	}
	if onTarget {
		d.TargetChanges = append(d.TargetChanges, tc)
	}
	if onSource && onTarget {
		d.Conflicts = append(d.Conflicts, Conflict{Ref: sc.Ref, Reason: BothChanged, Source: sc, Target: tc})
	}
}
