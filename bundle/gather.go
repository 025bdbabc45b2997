package bundle

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/day1ai/day1/curation"
	"github.com/day1ai/day1/store"
)

// gather checks a request, reads its source's records and returns the bundle's Info
// and the records to bundle, sorted by kind, then id.
func (e *Engine) gather(ctx context.Context, req CreateRequest) (Info, []store.Record, error) {
	if err := validInfo(req); err != nil {
		return Info{}, nil, err
	}
	n := 0
	for _, s := range []string{req.Task, req.Branch, req.Template} {
		if s != "" {
			n++
		}
	}
	if n != 1 {
		return Info{}, nil, store.Invalid("CreateRequest", "must name exactly one source: Task, Branch or Template", nil)
	}
	if req.Verify && req.Task == "" {
		return Info{}, nil, store.Invalid("CreateRequest.Verify", "applies to task exports only", nil)
	}
	info := Info{ID: e.newID(), Name: req.Name, Description: req.Description, Version: req.Version,
		Status: Draft, Tags: slices.Clone(req.Tags), Metadata: maps.Clone(req.Metadata), Owner: req.Owner, CreatedAt: e.now()}
	if info.Version == "" {
		info.Version = DefaultVersion
	}
	if err := store.ValidateID("bundle id", info.ID); err != nil {
		return Info{}, nil, err
	}
	var recs []store.Record
	var err error
	switch {
	case req.Task != "":
		info.Type, info.SourceTask = TaskExport, req.Task
		recs, info.SourceBranch, err = e.fromTask(ctx, req)
	case req.Branch != "":
		info.Type, info.SourceBranch = Curated, req.Branch
		if err = store.ValidateBranchName("CreateRequest.Branch", req.Branch); err == nil {
			recs, err = e.fromView(ctx, store.View{Branch: req.Branch}, req.IncludeObservations)
		}
	default:
		info.Type = TemplateExport
		var t curation.Template
		if t, err = e.curator().GetTemplate(ctx, req.Template); err == nil {
			info.SourceBranch = t.SourceBranch
			info.Metadata = withKey(info.Metadata, "template", fmt.Sprintf("%s@v%d", t.Name, t.Version))
			recs, err = e.fromView(ctx, store.View{Branch: t.SourceBranch, At: store.Point{Snapshot: t.Snapshot}}, req.IncludeObservations)
		}
	}
	if err != nil {
		return Info{}, nil, err
	}
	recs = keep(recs, req.IncludeUnverified, e.now())
	slices.SortFunc(recs, func(a, b store.Record) int { return compareRefs(store.RefOf(a), store.RefOf(b)) })
	return info, recs, nil
}

func withKey(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}

// fromTask returns what a task's branch added since it was forked (whether or not it
// reached the parent since, by merges or the task's completion), after verifying the
// branch when asked, and the branch's name.
func (e *Engine) fromTask(ctx context.Context, req CreateRequest) ([]store.Record, string, error) {
	t, err := e.tasks().GetTask(ctx, req.Task)
	if err != nil {
		return nil, "", err
	}
	if req.Verify {
		if _, err := e.curator().VerifyBranch(ctx, curation.BatchRequest{Branch: t.Branch}); err != nil {
			return nil, "", fmt.Errorf("day1: verifying task %q before its export: %w", t.Name, err)
		}
	}
	br, err := e.Store.GetBranch(ctx, t.Branch)
	if err != nil {
		return nil, "", err
	}
	now, err := e.fromView(ctx, store.View{Branch: t.Branch}, req.IncludeObservations)
	if err != nil {
		return nil, "", err
	}
	fork, err := e.fromView(ctx, store.View{Branch: br.Parent, At: store.Point{Time: br.ForkedAt}}, req.IncludeObservations)
	if err != nil {
		return nil, "", fmt.Errorf("day1: reading what task %q started from: %w", t.Name, err)
	}
	before := make(map[store.Ref]store.Record, len(fork))
	for _, r := range fork {
		before[store.RefOf(r)] = r
	}
	out := now[:0]
	for _, r := range now {
		if b, ok := before[store.RefOf(r)]; !ok || !store.Equivalent(store.WithBranch(b, ""), store.WithBranch(r, "")) {
			out = append(out, r)
		}
	}
	return out, t.Branch, nil
}

// fromView returns every record a view reads, observations only when asked.
func (e *Engine) fromView(ctx context.Context, v store.View, observations bool) ([]store.Record, error) {
	var out []store.Record
	for _, k := range store.Kinds {
		if k == store.KindObservation && !observations {
			continue
		}
		recs, err := e.Store.List(ctx, v, store.ListQuery{Kind: k, Order: store.OrderID})
		if err != nil {
			return nil, err
		}
		out = append(out, recs...)
	}
	return out, nil
}

// keep drops what a bundle never carries (superseded and invalidated facts, and facts
// expired at now) and, unless all is set, what is not verified: facts that are not
// (store.Fact.IsVerified), and conversations that are neither verified nor
// cherry-picked, with their messages.
func keep(recs []store.Record, all bool, now time.Time) []store.Record {
	msgs := map[string][]store.Message{}
	for _, r := range recs {
		if m, ok := r.(store.Message); ok {
			msgs[m.ConversationID] = append(msgs[m.ConversationID], m)
		}
	}
	convs := map[string]bool{}
	for _, r := range recs {
		c, ok := r.(store.Conversation)
		if !ok || c.Verify.Status == store.Invalidated {
			continue
		}
		if all || c.Verify.Status == store.Verified || slices.ContainsFunc(msgs[c.ID], store.Message.Picked) {
			convs[c.ID] = true
		}
	}
	out := recs[:0]
	for _, r := range recs {
		switch v := r.(type) {
		case store.Fact:
			if !v.Status.Live() || v.Verify.Status == store.Invalidated || v.Expired(now) || (!all && !v.IsVerified()) {
				continue
			}
		case store.Conversation:
			if !convs[v.ID] {
				continue
			}
		case store.Message:
			if !convs[v.ConversationID] {
				continue
			}
		}
		out = append(out, r)
	}
	return out
}
