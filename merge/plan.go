package merge

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/day1ai/day1/store"
)

// planner computes one merge plan from one diff.
type planner struct {
	e    *Engine
	req  Request
	diff *store.Diff
	now  time.Time
	b    *builder
	sq   *squash // Squash merges only
	// promote writes the verified facts of the plan with status promoted.
	promote bool
}

// plan decides every change of the diff and returns the plan, with its record id.
func (p *planner) plan(ctx context.Context, id string) (store.MergePlan, error) {
	var err error
	if p.req.Strategy == store.CherryPick {
		err = p.cherryPick(ctx)
	} else {
		err = p.mergeAll(ctx)
	}
	if err != nil {
		return store.MergePlan{}, err
	}
	p.dedupeTexts()
	puts, deletes := p.b.finish()
	if p.promote {
		promote(puts)
	}
	return store.MergePlan{
		Source:     p.req.Source,
		Target:     p.req.Target,
		ExpectHead: p.diff.TargetHead,
		Puts:       puts,
		Deletes:    deletes,
		MarkMerged: p.req.MarkMerged,
		SourceRev:  p.diff.SourceRev,
		Record: store.MergeRecord{
			ID:          id,
			Source:      p.req.Source,
			Target:      p.req.Target,
			Strategy:    p.req.Strategy,
			Merged:      p.b.merged,
			Rejected:    p.b.rejected,
			Resolutions: p.b.resolutions,
			MergedBy:    p.req.MergedBy,
			Message:     p.req.Message,
			CreatedAt:   p.now,
		},
	}, nil
}

// promote sets the status of the verified facts of puts to promoted, in place.
func promote(puts []store.Record) {
	for i, r := range puts {
		if f, ok := r.(store.Fact); ok && f.IsVerified() && f.Status != store.FactPromoted {
			f.Status = store.FactPromoted
			puts[i] = f
		}
	}
}

// mergeAll plans Native, Squash and Auto merges: every source change is adopted,
// except the squashed ones and those in a conflict, which are decided per conflict.
func (p *planner) mergeAll(ctx context.Context) error {
	d := p.diff
	if p.req.Strategy == store.Squash {
		p.sq = newSquash(d.SourceChanges)
	}
	if p.req.Strategy != store.Auto && p.req.Policy == store.ConflictFail && len(d.Conflicts) > 0 {
		return &store.MergeConflictError{Source: p.req.Source, Target: p.req.Target, Conflicts: slices.Clone(d.Conflicts)}
	}
	inConflict := make(map[store.Ref]bool, len(d.Conflicts))
	for _, c := range d.Conflicts {
		inConflict[c.Source.Ref] = true
		for _, ch := range p.sourceSide(c) {
			inConflict[ch.Ref] = true
		}
	}
	for _, ch := range d.SourceChanges {
		switch {
		case p.sq.isSquashed(ch.Ref):
			p.b.reject(ch.Ref, store.ActionSkip, "squashed")
		case inConflict[ch.Ref]:
			// decided with its conflict below
		default:
			if err := p.adopt(ch, store.ActionAdopt, ""); err != nil {
				return err
			}
		}
	}
	for _, c := range d.Conflicts {
		if err := ctx.Err(); err != nil {
			return err
		}
		var err error
		if p.req.Strategy == store.Auto {
			err = p.resolve(ctx, c)
		} else {
			err = p.byPolicy(c)
		}
		if err != nil {
			return err
		}
	}
	if p.sq != nil {
		return p.rewriteParents(ctx)
	}
	p.keepChainsWhole()
	return nil
}

// dedupeTexts applies the rule of a direct write to the facts the merge adds: a live
// fact new to the target whose text (store.NormText) equals that of a live fact the
// target added since the merge base, under another id, is not written beside it. It is
// the same knowledge; the merge records it as deduplicated, naming the target's fact.
// Target facts the plan itself changes or deletes do not count.
func (p *planner) dedupeTexts() {
	var held map[string]string // normalized text -> the target's fact id
	for _, ch := range p.diff.TargetChanges {
		f, ok := ch.After.(store.Fact)
		if !ok || !f.Status.Live() {
			continue
		}
		if _, planned := p.b.ops[ch.Ref]; planned {
			continue
		}
		if held == nil {
			held = map[string]string{}
		}
		held[store.NormText(f.Text)] = f.ID
	}
	if held == nil {
		return
	}
	added := map[store.Ref]bool{}
	for _, ch := range p.diff.SourceChanges {
		if ch.Op == store.OpAdded {
			added[ch.Ref] = true
		}
	}
	for _, ref := range slices.Clone(p.b.order) {
		f, ok := p.b.ops[ref].(store.Fact)
		if !ok || !f.Status.Live() || !added[ref] {
			continue
		}
		id, dup := held[store.NormText(f.Text)]
		if !dup || id == f.ID {
			continue
		}
		p.b.unplan(ref)
		p.b.item(false, ref, store.ActionDeduplicate, "the target holds the same text as fact "+id)
	}
}

// keepChainsWhole leaves out every source fact that supersedes a fact the source added
// and the merge left out (a conflict kept the target's version): a superseding chain
// merges as a unit, so no merged fact names a parent the target does not have.
func (p *planner) keepChainsWhole() {
	left := map[string]bool{}
	for _, ch := range p.diff.SourceChanges {
		if ch.Op != store.OpAdded || ch.Ref.Kind != store.KindFact {
			continue
		}
		if r, ok := p.b.ops[ch.Ref]; !ok || r == nil {
			left[ch.Ref.ID] = true
		}
	}
	for changed := len(left) > 0; changed; {
		changed = false
		for _, ref := range p.b.order {
			f, ok := p.b.ops[ref].(store.Fact)
			if !ok || !left[f.ParentID] || left[f.ID] {
				continue
			}
			p.b.unplan(ref)
			p.b.reject(ref, store.ActionSkip, "its parent "+f.ParentID+" was not merged: a superseding chain merges as a unit")
			left[f.ID] = true
			changed = true
		}
	}
}

// byPolicy settles a conflict of a Native or Squash merge by the request's policy.
func (p *planner) byPolicy(c store.Conflict) error {
	switch p.req.Policy {
	case store.ConflictSkip:
		for _, ch := range p.sourceSide(c) {
			p.b.reject(ch.Ref, store.ActionKeepTarget, fmt.Sprintf("conflict (%s): policy skip keeps the target's version", c.Reason))
		}
		p.b.resolve(store.Resolution{Ref: c.Ref, Action: store.ActionKeepTarget, By: "policy", Reason: "skip: the target's version is kept"})
	case store.ConflictAccept:
		result, err := p.takeSource(c, store.ActionAdopt, true, fmt.Sprintf("conflict (%s): policy accept takes the source's version", c.Reason))
		if err != nil {
			return err
		}
		p.b.resolve(store.Resolution{Ref: c.Ref, Action: store.ActionAdopt, By: "policy", Reason: "accept: the source's version is taken", ResultRef: result})
	}
	return nil
}

// resolve settles a conflict of an Auto merge by asking the resolver.
func (p *planner) resolve(ctx context.Context, c store.Conflict) error {
	r := p.e.resolver()
	d, err := r.Resolve(ctx, c)
	if err != nil {
		return fmt.Errorf("%w (merge %s into %s: resolver %s on %s)", err, p.req.Source, p.req.Target, r.Name(), c.Ref)
	}
	var result store.Ref
	switch d.Action {
	case store.ActionAdopt:
		result, err = p.takeSource(c, store.ActionAdopt, true, d.Reason)
	case store.ActionKeepTarget:
		p.b.reject(c.Source.Ref, store.ActionKeepTarget, d.Reason)
	case store.ActionKeepBoth:
		result, err = p.keepBoth(c, d.Reason)
	case store.ActionMerged:
		result, err = p.merged(c, d)
	default:
		err = store.Invalid("Decision.Action", "must be adopt, keep_target, keep_both or merged", d.Action)
	}
	if err != nil {
		return fmt.Errorf("%w (merge %s into %s: resolver %s on %s)", err, p.req.Source, p.req.Target, r.Name(), c.Ref)
	}
	p.b.resolve(store.Resolution{Ref: c.Ref, Action: d.Action, By: "resolver:" + r.Name(), Reason: d.Reason, ResultRef: result})
	return nil
}

// takeSource adopts the source side of a conflict. When the source's new fact wins a
// conflict of competing facts (BothSuperseded, Contradictory) and supersede is set, the
// target's competing fact is marked superseded. It returns the first record written.
func (p *planner) takeSource(c store.Conflict, action store.MergeAction, supersede bool, reason string) (store.Ref, error) {
	var result store.Ref
	for _, ch := range p.sourceSide(c) {
		if err := p.adopt(ch, action, reason); err != nil {
			return store.Ref{}, err
		}
		if ch.Op != store.OpDeleted && result == (store.Ref{}) {
			result = ch.Ref
		}
	}
	if supersede && c.Reason.Competing() && result != (store.Ref{}) {
		p.supersede(c.Target.After, "superseded by "+result.String())
	}
	return result, nil
}

// keepBoth writes the source's version beside the target's. For competing facts
// (BothSuperseded, Contradictory) the source's new fact simply joins the target's. For BothChanged the source's version is
// written under a derived id, or under its own when the target deleted the record.
func (p *planner) keepBoth(c store.Conflict, reason string) (store.Ref, error) {
	if c.Reason.Competing() {
		return p.takeSource(c, store.ActionKeepBoth, false, reason)
	}
	src := c.Source
	switch {
	case src.Op == store.OpDeleted || src.After == nil:
		p.b.reject(src.Ref, store.ActionKeepTarget, "keep both: the source deleted it, so the target's version is all there is to keep")
		return store.Ref{}, nil
	case c.Target.Op == store.OpDeleted || c.Target.After == nil:
		p.b.put(src.After, store.ActionKeepBoth, reason)
		return src.Ref, nil
	}
	rec := withID(src.After, keepBothID(p.req.Source, src.Ref))
	p.b.put(rec, store.ActionKeepBoth, reason)
	return store.RefOf(rec), nil
}

// merged writes a resolver's merged record. Conflicting facts it replaces are marked
// superseded.
func (p *planner) merged(c store.Conflict, d Decision) (store.Ref, error) {
	m := d.Merged
	if m == nil {
		return store.Ref{}, store.Invalid("Decision.Merged", "must be set when the action is merged", nil)
	}
	if m.RecordKind() != c.Ref.Kind {
		return store.Ref{}, store.Invalid("Decision.Merged", fmt.Sprintf("must be a %s, like the conflicting records", c.Ref.Kind), m.RecordKind())
	}
	f, isFact := m.(store.Fact)
	switch {
	case isFact:
		if f.ID == "" {
			f.ID = p.e.newID()
		}
		if f.ParentID == "" && f.ID != c.Ref.ID {
			f.ParentID = c.Ref.ID
		}
		m = f
	case m.RecordID() == "":
		// Other kinds have no supersede chain: the merged version replaces the record.
		m = withID(m, c.Ref.ID)
	}
	m = store.WithDefaults(m, p.now)
	if err := store.ValidateRecord(m, 0); err != nil {
		return store.Ref{}, err
	}
	ref := store.RefOf(m)
	p.b.put(m, store.ActionMerged, d.Reason)
	if !isFact {
		return ref, nil
	}
	var replaced []store.Record
	if c.Reason.Competing() {
		replaced = []store.Record{c.Source.After, c.Target.After}
	} else if c.Target.After != nil {
		replaced = []store.Record{c.Target.After}
	} else {
		replaced = []store.Record{c.Source.After}
	}
	for _, r := range replaced {
		if r != nil && store.RefOf(r) != ref {
			p.supersede(r, "merged into "+ref.String())
		}
	}
	return ref, nil
}

// adopt writes the source's version of one change to the target.
func (p *planner) adopt(ch store.Change, action store.MergeAction, reason string) error {
	if ch.Op == store.OpDeleted {
		p.b.del(ch.Ref, reason)
		return nil
	}
	if ch.After == nil {
		return fmt.Errorf("day1: merge %s into %s: the diff lists %s as %s without its record; the store returned a malformed diff",
			p.req.Source, p.req.Target, ch.Ref, ch.Op)
	}
	p.b.put(ch.After, action, reason)
	return nil
}

// supersede writes a copy of a fact marked superseded. Other kinds are left alone.
func (p *planner) supersede(r store.Record, reason string) {
	f, ok := r.(store.Fact)
	if !ok {
		return
	}
	f.Status = store.FactSuperseded
	f.UpdatedAt = p.now
	p.b.put(f, store.ActionSupersede, reason)
}

// sourceSide is the source changes a conflict decides: its source change, or for a
// squashed fact the last facts of its chain.
func (p *planner) sourceSide(c store.Conflict) []store.Change {
	if !p.sq.isSquashed(c.Source.Ref) {
		return []store.Change{c.Source}
	}
	var out []store.Change
	for _, id := range p.sq.tails(c.Source.Ref.ID) {
		out = append(out, p.sq.added[id])
	}
	return out
}

// cherryPick plans a CherryPick merge: each picked record as the source has it now.
func (p *planner) cherryPick(ctx context.Context) error {
	changes := make(map[store.Ref]store.Change, len(p.diff.SourceChanges))
	for _, ch := range p.diff.SourceChanges {
		changes[ch.Ref] = ch
	}
	conflicts := make(map[store.Ref][]store.Conflict)
	for _, c := range p.diff.Conflicts {
		conflicts[c.Source.Ref] = append(conflicts[c.Source.Ref], c)
	}
	source, target := store.View{Branch: p.req.Source}, store.View{Branch: p.req.Target}
	for _, ref := range p.req.Pick {
		if err := ctx.Err(); err != nil {
			return err
		}
		var result store.Ref
		rec, err := p.e.Store.Get(ctx, source, ref)
		switch {
		case err == nil:
			cur, err := p.e.Store.Get(ctx, target, ref)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return wrap(p.req, "get "+ref.String(), err)
			}
			if err == nil && store.SameContent(rec, cur) {
				p.b.reject(ref, store.ActionSkip, "picked: already on the target")
				continue
			}
			p.b.put(rec, store.ActionAdopt, "picked")
			result = ref
		case errors.Is(err, store.ErrNotFound):
			if ch, ok := changes[ref]; !ok || ch.Op != store.OpDeleted {
				return &missingError{
					v:     store.Invalid("Request.Pick", fmt.Sprintf("names a record that branch %s does not have; pick records that exist there", p.req.Source), ref),
					cause: err,
				}
			}
			p.b.del(ref, "picked: deleted on the source")
		default:
			return wrap(p.req, "get "+ref.String(), err)
		}
		for _, c := range conflicts[ref] {
			if c.Reason.Competing() && result != (store.Ref{}) {
				p.supersede(c.Target.After, "superseded by picked "+ref.String())
			}
			p.b.resolve(store.Resolution{Ref: c.Ref, Action: store.ActionAdopt, By: string(store.CherryPick), Reason: "picked: the source's version wins", ResultRef: result})
		}
	}
	return nil
}

// missingError is a *store.ValidationError caused by a store.ErrNotFound: errors.As
// finds the first, errors.Is matches both.
type missingError struct {
	v     *store.ValidationError
	cause error
}

func (e *missingError) Error() string   { return e.v.Error() }
func (e *missingError) Unwrap() []error { return []error{e.v, e.cause} }

// rewriteParents points each planned fact whose parent was squashed away at the first
// ancestor of its chain the target has after the merge, or at nothing.
func (p *planner) rewriteParents(ctx context.Context) error {
	for _, ref := range p.b.order {
		f, ok := p.b.ops[ref].(store.Fact)
		if !ok || !p.sq.squashed[f.ParentID] {
			continue
		}
		parent, err := p.firstOnTarget(ctx, f.ParentID)
		if err != nil {
			return err
		}
		f.ParentID = parent
		p.b.ops[ref] = f
		note := "squashed chain: no ancestor on the target, ParentID cleared"
		if parent != "" {
			note = "squashed chain: ParentID set to " + parent
		}
		p.b.annotate(ref, note)
	}
	return nil
}

// firstOnTarget walks up a squashed chain from id to the first fact the target has
// after the merge.
func (p *planner) firstOnTarget(ctx context.Context, id string) (string, error) {
	seen := make(map[string]bool)
	for id != "" && !seen[id] {
		seen[id] = true
		ok, err := p.onTarget(ctx, store.Ref{Kind: store.KindFact, ID: id})
		if err != nil || ok {
			return id, err
		}
		if !p.sq.squashed[id] {
			return "", nil
		}
		id = p.sq.fact(id).ParentID
	}
	return "", nil
}

// onTarget reports whether the target has ref once the plan is applied.
func (p *planner) onTarget(ctx context.Context, ref store.Ref) (bool, error) {
	if r, ok := p.b.ops[ref]; ok {
		return r != nil, nil
	}
	_, err := p.e.Store.Get(ctx, store.View{Branch: p.req.Target}, ref)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, store.ErrNotFound):
		return false, nil
	}
	return false, wrap(p.req, "get "+ref.String(), err)
}

// squash knows the supersede chains among the facts added on the source.
type squash struct {
	added    map[string]store.Change // facts added on the source, by id
	children map[string][]string     // fact id -> added facts naming it as parent, sorted
	squashed map[string]bool         // added, superseded and named as parent by another added fact
}

func newSquash(changes []store.Change) *squash {
	s := &squash{added: map[string]store.Change{}, children: map[string][]string{}, squashed: map[string]bool{}}
	for _, ch := range changes {
		if _, ok := ch.After.(store.Fact); ok && ch.Op == store.OpAdded {
			s.added[ch.Ref.ID] = ch
		}
	}
	for id := range s.added {
		if parent := s.fact(id).ParentID; parent != "" && parent != id {
			if _, ok := s.added[parent]; ok {
				s.children[parent] = append(s.children[parent], id)
			}
		}
	}
	for id, kids := range s.children {
		slices.Sort(kids)
		if s.fact(id).Status == store.FactSuperseded {
			s.squashed[id] = true
		}
	}
	return s
}

func (s *squash) fact(id string) store.Fact {
	f, _ := s.added[id].After.(store.Fact)
	return f
}

func (s *squash) isSquashed(ref store.Ref) bool {
	return s != nil && ref.Kind == store.KindFact && s.squashed[ref.ID]
}

// tails returns the last facts of the chains through id: id itself unless it is
// squashed, else the tails of the facts superseding it.
func (s *squash) tails(id string) []string {
	var out []string
	seen := make(map[string]bool)
	var walk func(string)
	walk = func(id string) {
		if seen[id] {
			return
		}
		seen[id] = true
		if !s.squashed[id] {
			out = append(out, id)
			return
		}
		for _, kid := range s.children[id] {
			walk(kid)
		}
	}
	walk(id)
	return out
}

// builder collects a plan's writes and its history entries. A later write to a ref
// replaces an earlier one; repeated history items are kept once.
type builder struct {
	order       []store.Ref
	ops         map[store.Ref]store.Record // nil: delete
	merged      []store.MergeItem
	rejected    []store.MergeItem
	seen        map[itemKey]bool
	resolutions []store.Resolution
}

type itemKey struct {
	rejected bool
	ref      store.Ref
	action   store.MergeAction
}

// newBuilder returns a builder sized for about n writes.
func newBuilder(n int) *builder {
	return &builder{
		order: make([]store.Ref, 0, n),
		ops:   make(map[store.Ref]store.Record, n),
		seen:  make(map[itemKey]bool, n),
	}
}

func (b *builder) put(r store.Record, action store.MergeAction, reason string) {
	ref := store.RefOf(r)
	b.set(ref, r)
	b.item(false, ref, action, reason)
}

func (b *builder) del(ref store.Ref, reason string) {
	b.set(ref, nil)
	b.item(false, ref, store.ActionDelete, reason)
}

func (b *builder) reject(ref store.Ref, action store.MergeAction, reason string) {
	b.item(true, ref, action, reason)
}

func (b *builder) resolve(r store.Resolution) { b.resolutions = append(b.resolutions, r) }

// unplan takes ref out of the plan and its merged items.
func (b *builder) unplan(ref store.Ref) {
	delete(b.ops, ref)
	b.order = slices.DeleteFunc(b.order, func(r store.Ref) bool { return r == ref })
	b.merged = slices.DeleteFunc(b.merged, func(it store.MergeItem) bool { return it.Ref == ref })
	for k := range b.seen {
		if !k.rejected && k.ref == ref {
			delete(b.seen, k)
		}
	}
}

func (b *builder) set(ref store.Ref, r store.Record) {
	if _, ok := b.ops[ref]; !ok {
		b.order = append(b.order, ref)
	}
	b.ops[ref] = r
}

func (b *builder) item(rejected bool, ref store.Ref, action store.MergeAction, reason string) {
	k := itemKey{rejected, ref, action}
	if b.seen[k] {
		return
	}
	b.seen[k] = true
	it := store.MergeItem{Ref: ref, Action: action, Reason: reason}
	if rejected {
		b.rejected = append(b.rejected, it)
	} else {
		b.merged = append(b.merged, it)
	}
}

// annotate adds a note to the reasons of the merged items of ref.
func (b *builder) annotate(ref store.Ref, note string) {
	for i := range b.merged {
		if b.merged[i].Ref != ref {
			continue
		}
		if b.merged[i].Reason == "" {
			b.merged[i].Reason = note
		} else {
			b.merged[i].Reason += "; " + note
		}
	}
}

// finish returns the records to write and the refs to delete, in first-decided order.
func (b *builder) finish() ([]store.Record, []store.Ref) {
	var puts []store.Record
	var deletes []store.Ref
	for _, ref := range b.order {
		if r := b.ops[ref]; r == nil {
			deletes = append(deletes, ref)
		} else {
			if puts == nil {
				puts = make([]store.Record, 0, len(b.order))
			}
			puts = append(puts, r)
		}
	}
	return puts, deletes
}
