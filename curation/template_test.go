package curation_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1/curation"
	"github.com/day1ai/day1/store"
)

func TestTemplateLifecycle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, st := newEngine(t, nil)
	branch(t, st, "playbook", "main")
	put(t, st, "playbook", store.Fact{ID: "f1", Text: "Reproduce the bug with a failing test first"})

	tpl, err := e.CreateTemplate(ctx, curation.TemplateSpec{Name: "bug-fix", SourceBranch: "playbook", TaskTypes: []string{"Bug_Fix", "bug_fix", "debugging"}, Description: "how we fix bugs"})
	if err != nil {
		t.Fatal(err)
	}
	if tpl.Version != 1 || tpl.Status != curation.TemplateActive || tpl.Snapshot != "template.bug-fix.v1" ||
		!cmp.Equal(tpl.TaskTypes, []string{"bug_fix", "debugging"}) || len(tpl.History) != 1 || tpl.DocVersion != 1 {
		t.Errorf("created = %+v", tpl)
	}
	// The template is frozen: later writes to the source do not reach instances.
	put(t, st, "playbook", store.Fact{ID: "f2", Text: "written after version 1"})

	inst, err := e.InstantiateTemplate(ctx, "bug-fix", curation.InstantiateRequest{Branch: "task/fix-42"})
	if err != nil {
		t.Fatal(err)
	}
	if inst.Branch.Parent != "playbook" || inst.Branch.Metadata["template"] != "bug-fix" || inst.Branch.Metadata["template_version"] != "1" ||
		inst.Template.Uses != 1 || inst.Branch.Description != "from template bug-fix v1" {
		t.Errorf("instance = %+v", inst)
	}
	if got := ids(listFacts(t, st, "task/fix-42")); !cmp.Equal(got, []string{"f1"}) {
		t.Errorf("instance facts = %v; want [f1]", got)
	}

	// Version 2 from another branch; the first instance is unaffected.
	branch(t, st, "playbook2", "main")
	put(t, st, "playbook2", store.Fact{ID: "g1", Text: "Bisect to find the breaking commit"})
	v2, err := e.UpdateTemplate(ctx, "bug-fix", curation.TemplateUpdate{SourceBranch: "playbook2", Note: "bisect first"})
	if err != nil {
		t.Fatal(err)
	}
	if v2.Version != 2 || v2.SourceBranch != "playbook2" || len(v2.History) != 2 || v2.History[1].Note != "bisect first" || v2.Uses != 1 || v2.Description != "how we fix bugs" {
		t.Errorf("updated = %+v", v2)
	}
	inst2, err := e.InstantiateTemplate(ctx, "bug-fix", curation.InstantiateRequest{Branch: "task/fix-43", Description: "fix 43"})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(listFacts(t, st, "task/fix-43")); !cmp.Equal(got, []string{"g1"}) || inst2.Template.Uses != 2 {
		t.Errorf("v2 instance facts = %v, uses %d", got, inst2.Template.Uses)
	}
	if got := ids(listFacts(t, st, "task/fix-42")); !cmp.Equal(got, []string{"f1"}) {
		t.Errorf("v1 instance changed: %v", got)
	}

	// Deprecation hides it from Find and refuses instances and updates.
	dep, err := e.DeprecateTemplate(ctx, "bug-fix", "superseded by bug-fix-2")
	if err != nil || dep.Status != curation.TemplateDeprecated {
		t.Fatalf("deprecate = %+v, %v", dep, err)
	}
	if again, err := e.DeprecateTemplate(ctx, "bug-fix", "x"); err != nil || again.DocVersion != dep.DocVersion {
		t.Errorf("deprecating twice = %+v, %v; want no change", again, err)
	}
	if _, err := e.FindTemplate(ctx, "bug_fix"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Find after deprecation = %v; want ErrNotFound", err)
	}
	if _, err := e.InstantiateTemplate(ctx, "bug-fix", curation.InstantiateRequest{Branch: "task/x"}); !errors.Is(err, curation.ErrTemplateDeprecated) {
		t.Errorf("instantiate a deprecated template = %v", err)
	}
	if _, err := e.UpdateTemplate(ctx, "bug-fix", curation.TemplateUpdate{SourceBranch: "playbook"}); !errors.Is(err, curation.ErrTemplateDeprecated) {
		t.Errorf("update a deprecated template = %v", err)
	}
	all, err := e.ListTemplates(ctx, curation.TemplateFilter{Status: curation.TemplateDeprecated})
	if err != nil || len(all) != 1 {
		t.Errorf("list deprecated = %v, %v", all, err)
	}
}

func ids(fs []store.Fact) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.ID)
	}
	return out
}

func TestFindTemplate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, st := newEngine(t, nil)
	branch(t, st, "src", "main")
	for _, s := range []curation.TemplateSpec{
		{Name: "old-fix", TaskTypes: []string{"bug_fix"}},
		{Name: "refactor", TaskTypes: []string{"refactor"}},
		{Name: "new-fix", TaskTypes: []string{"bug_fix", "hotfix"}},
	} {
		s.SourceBranch = "src"
		if _, err := e.CreateTemplate(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	best, err := e.FindTemplate(ctx, "BUG_FIX")
	if err != nil || best.Name != "new-fix" {
		t.Errorf("FindTemplate(bug_fix) = %q, %v; want the newest, new-fix", best.Name, err)
	}
	// A newer version makes old-fix the most recent.
	if _, err := e.UpdateTemplate(ctx, "old-fix", curation.TemplateUpdate{SourceBranch: "src"}); err != nil {
		t.Fatal(err)
	}
	if best, _ := e.FindTemplate(ctx, "bug_fix"); best.Name != "old-fix" {
		t.Errorf("after an update FindTemplate = %q; want old-fix", best.Name)
	}
	list, err := e.ListTemplates(ctx, curation.TemplateFilter{TaskType: "bug_fix"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range list {
		names = append(names, l.Name)
	}
	if diff := cmp.Diff([]string{"new-fix", "old-fix"}, names); diff != "" {
		t.Errorf("ListTemplates (-want +got):\n%s", diff)
	}
	if _, err := e.FindTemplate(ctx, "docs"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("FindTemplate(docs) = %v; want ErrNotFound", err)
	}
}

func TestTemplateBadInput(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, st := newEngine(t, nil)
	branch(t, st, "src", "main")
	for _, c := range []struct {
		spec  curation.TemplateSpec
		field string
	}{
		{curation.TemplateSpec{SourceBranch: "src", TaskTypes: []string{"x"}}, "TemplateSpec.Name"},
		{curation.TemplateSpec{Name: "a b", SourceBranch: "src", TaskTypes: []string{"x"}}, "TemplateSpec.Name"},
		{curation.TemplateSpec{Name: "a", TaskTypes: []string{"x"}}, "TemplateSpec.SourceBranch"},
		{curation.TemplateSpec{Name: "a", SourceBranch: "src"}, "TemplateSpec.TaskTypes"},
		{curation.TemplateSpec{Name: "a", SourceBranch: "src", TaskTypes: []string{"bug fix"}}, "TemplateSpec.TaskTypes"},
	} {
		_, err := e.CreateTemplate(ctx, c.spec)
		var ve *store.ValidationError
		if !errors.As(err, &ve) || ve.Field != c.field {
			t.Errorf("CreateTemplate(%+v) = %v; want a ValidationError on %s", c.spec, err, c.field)
		}
	}
	if _, err := e.CreateTemplate(ctx, curation.TemplateSpec{Name: "a", SourceBranch: "missing", TaskTypes: []string{"x"}}); !errors.Is(err, store.ErrBranchNotFound) {
		t.Errorf("missing source = %v", err)
	}
	if _, err := e.CreateTemplate(ctx, curation.TemplateSpec{Name: "a", SourceBranch: "src", TaskTypes: []string{"x"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.CreateTemplate(ctx, curation.TemplateSpec{Name: "a", SourceBranch: "src", TaskTypes: []string{"x"}}); !errors.Is(err, curation.ErrTemplateExists) {
		t.Errorf("duplicate = %v; want ErrTemplateExists", err)
	}
	if _, err := e.GetTemplate(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetTemplate(nope) = %v", err)
	}
	if _, err := e.InstantiateTemplate(ctx, "a", curation.InstantiateRequest{Branch: "src"}); !errors.Is(err, store.ErrBranchExists) {
		t.Errorf("instantiate onto an existing branch = %v", err)
	}
	if _, err := e.InstantiateTemplate(ctx, "a", curation.InstantiateRequest{}); !errors.Is(err, store.ErrInvalidArgument) {
		t.Errorf("instantiate without a branch = %v", err)
	}
	if _, err := e.ListTemplates(ctx, curation.TemplateFilter{Status: "gone"}); !errors.Is(err, store.ErrInvalidArgument) {
		t.Errorf("bad status filter = %v", err)
	}
}

// Concurrent creators of one name: exactly one wins, and no snapshot is left behind
// by the losers. Concurrent instantiations are all counted.
func TestTemplateRaces(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, st := newEngine(t, nil)
	branch(t, st, "src", "main")
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = e.CreateTemplate(ctx, curation.TemplateSpec{Name: "race", SourceBranch: "src", TaskTypes: []string{"x"}})
		}()
	}
	wg.Wait()
	wins := 0
	for _, err := range errs {
		switch {
		case err == nil:
			wins++
		case !errors.Is(err, curation.ErrTemplateExists):
			t.Errorf("losing create = %v; want ErrTemplateExists", err)
		}
	}
	if wins != 1 {
		t.Errorf("%d creators won; want 1", wins)
	}
	snaps, err := st.ListSnapshots(ctx, "src")
	if err != nil || len(snaps) != 1 {
		t.Errorf("snapshots = %v, %v; want one", snaps, err)
	}
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := e.InstantiateTemplate(ctx, "race", curation.InstantiateRequest{Branch: fmt.Sprintf("inst-%d", i)}); err != nil {
				t.Errorf("instantiate %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	if tpl, err := e.GetTemplate(ctx, "race"); err != nil || tpl.Uses != n {
		t.Errorf("uses = %d, %v; want %d", tpl.Uses, err, n)
	}
}
