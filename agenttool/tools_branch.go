package agenttool

import (
	"context"
	"fmt"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/internal/memview"
)

// BranchCreateIn is the input of memory_branch_create.
type BranchCreateIn struct {
	BranchName   string `json:"branch_name" jsonschema:"the new branch, e.g. experiment-new-auth or task/fix-auth/agent-a"`
	ParentBranch string `json:"parent_branch,omitempty" jsonschema:"the branch to fork from (default main); the new branch sees it as it is now"`
	Description  string `json:"description,omitempty" jsonschema:"what the branch is for"`
}

// BranchListIn is the input of memory_branch_list.
type BranchListIn struct {
	Status string `json:"status,omitempty" jsonschema:"keep branches with this status: active, merged or archived"`
}

// BranchListOut is the output of memory_branch_list.
type BranchListOut struct {
	Current  string       `json:"current" jsonschema:"this session's current branch"`
	Branches []BranchView `json:"branches"`
}

// BranchSwitchIn is the input of memory_branch_switch.
type BranchSwitchIn struct {
	BranchName string `json:"branch_name" jsonschema:"the branch later calls of this session use when they name none"`
}

// BranchSwitchOut is the output of memory_branch_switch.
type BranchSwitchOut struct {
	Current  string     `json:"current"`
	Previous string     `json:"previous"`
	Branch   BranchView `json:"branch"`
}

// BranchDiffIn is the input of memory_branch_diff.
type BranchDiffIn struct {
	SourceBranch string `json:"source_branch" jsonschema:"the branch whose changes would be merged"`
	TargetBranch string `json:"target_branch" jsonschema:"the branch that would receive them, e.g. main"`
	Category     string `json:"category,omitempty" jsonschema:"compare facts of this category only"`
}

// ChangeView is a change as the tools return it.
type ChangeView struct {
	Ref     string `json:"ref" jsonschema:"kind/id of the record"`
	Op      string `json:"op" jsonschema:"added, updated or deleted"`
	Summary string `json:"summary"`
}

// ConflictView is a conflict as the tools return it.
type ConflictView struct {
	Ref    string `json:"ref"`
	Reason string `json:"reason" jsonschema:"both_changed, both_superseded, contradictory (each side added a fact that contradicts the other's) or duplicate (each side added a fact that says the same as the other's)"`
	Source string `json:"source" jsonschema:"the source side's version"`
	Target string `json:"target" jsonschema:"the target side's version"`
}

// BranchDiffOut is the output of memory_branch_diff.
type BranchDiffOut struct {
	Source        string         `json:"source_branch"`
	Target        string         `json:"target_branch"`
	Base          string         `json:"merge_base" jsonschema:"the branch or merge the comparison starts from"`
	SourceChanges []ChangeView   `json:"source_changes"`
	TargetChanges []ChangeView   `json:"target_changes"`
	Conflicts     []ConflictView `json:"conflicts"`
}

// BranchMergeIn is the input of memory_branch_merge.
type BranchMergeIn struct {
	SourceBranch   string   `json:"source_branch" jsonschema:"the branch whose changes are merged"`
	TargetBranch   string   `json:"target_branch,omitempty" jsonschema:"the branch that receives them (default main)"`
	Strategy       string   `json:"strategy" jsonschema:"native (adopt every change; conflicts follow conflict_policy), auto (non-conflicting changes adopted, conflicts decided by the judge), cherry_pick (only the records in items) or squash (the net effect)"`
	Items          []string `json:"items,omitempty" jsonschema:"for cherry_pick: the records to copy, as kind/id (fact/ID, observation/ID, relation/ID, conversation/ID, message/ID) or a bare fact id"`
	ConflictPolicy string   `json:"conflict_policy,omitempty" jsonschema:"for native and squash: fail (default: refuse the merge), skip (keep the target's version) or accept (take the source's)"`
	DryRun         bool     `json:"dry_run,omitempty" jsonschema:"compute what would be merged without changing anything"`
}

// MergeItemView is a merge item as the tools return it.
type MergeItemView struct {
	Ref    string `json:"ref"`
	Action string `json:"action"`
}

// BranchMergeOut is the output of memory_branch_merge.
type BranchMergeOut struct {
	MergeID  string          `json:"merge_id,omitempty"`
	Source   string          `json:"source_branch"`
	Target   string          `json:"target_branch"`
	Strategy string          `json:"strategy"`
	Applied  bool            `json:"applied" jsonschema:"false for a dry run"`
	Merged   []MergeItemView `json:"merged"`
	Rejected []MergeItemView `json:"rejected"`
	Resolved int             `json:"conflicts_resolved"`
}

func branchTools() []Tool {
	return []Tool{
		tool("memory_branch_create",
			"Create an isolated branch of memory to experiment or to work on a task without touching main; it starts as a copy of its parent, in constant time.",
			(*caller).branchCreate),
		tool("memory_branch_list",
			"List the branches of memory, and this session's current branch.",
			(*caller).branchList),
		tool("memory_branch_switch",
			"Make a branch this session's current branch: later calls that name no branch read and write it.",
			(*caller).branchSwitch),
		tool("memory_branch_diff",
			"Compare two branches: what each side added, updated or deleted since they parted, and the conflicts a merge would meet.",
			(*caller).branchDiff),
		tool("memory_branch_merge",
			"Merge a branch into another (main by default), atomically and recorded in the merge history; use dry_run to preview.",
			(*caller).branchMerge)}
}

func (m *caller) branchCreate(ctx context.Context, in BranchCreateIn) (BranchView, string, error) {
	b, err := m.c.Branch(ctx, in.BranchName, day1.BranchOptions{From: in.ParentBranch, Description: in.Description})
	if err != nil {
		return BranchView{}, "", err
	}
	return viewBranch(b), fmt.Sprintf("branch %s created from %s", b.Name, b.Parent), nil
}

func (m *caller) branchList(ctx context.Context, in BranchListIn) (BranchListOut, string, error) {
	bs, err := m.c.Branches(ctx, day1.BranchFilter{Status: day1.BranchStatus(in.Status)})
	if err != nil {
		return BranchListOut{}, "", err
	}
	out := BranchListOut{Current: m.currentBranch(), Branches: make([]BranchView, len(bs))}
	for i, b := range bs {
		out.Branches[i] = viewBranch(b)
	}
	return out, fmt.Sprintf("%d branches; current %s", len(bs), out.Current), nil
}

func (m *caller) branchSwitch(ctx context.Context, in BranchSwitchIn) (BranchSwitchOut, string, error) {
	b, err := m.c.GetBranch(ctx, in.BranchName)
	if err != nil {
		return BranchSwitchOut{}, "", err
	}
	prev := branchName(m.setBranch(b.Name))
	return BranchSwitchOut{Current: b.Name, Previous: prev, Branch: viewBranch(b)}, "switched to " + b.Name, nil
}

func (m *caller) branchDiff(ctx context.Context, in BranchDiffIn) (BranchDiffOut, string, error) {
	d, err := m.c.Diff(ctx, in.SourceBranch, in.TargetBranch)
	if err != nil {
		return BranchDiffOut{}, "", err
	}
	// The library keeps the facts of the category, as they are now or were before.
	d = d.Filter(day1.Filter{Category: in.Category})
	out := BranchDiffOut{
		Source: d.Source, Target: d.Target, Base: d.Base,
		SourceChanges: viewChanges(d.SourceChanges), TargetChanges: viewChanges(d.TargetChanges),
		Conflicts: []ConflictView{},
	}
	for _, c := range d.Conflicts {
		out.Conflicts = append(out.Conflicts, ConflictView{
			Ref: c.Ref.String(), Reason: string(c.Reason),
			Source: memview.Summary(changeRecord(c.Source), 200), Target: memview.Summary(changeRecord(c.Target), 200),
		})
	}
	return out, fmt.Sprintf("%s has %d changes, %s has %d, %d conflicts",
		d.Source, len(out.SourceChanges), d.Target, len(out.TargetChanges), len(out.Conflicts)), nil
}

// changeRecord returns the record a change leaves, or the one it deleted.
func changeRecord(c day1.Change) day1.Record {
	if c.After != nil {
		return c.After
	}
	return c.Before
}

func viewChanges(cs []day1.Change) []ChangeView {
	out := []ChangeView{}
	for _, c := range cs {
		r := changeRecord(c)
		if r == nil {
			continue
		}
		out = append(out, ChangeView{Ref: c.Ref.String(), Op: string(c.Op), Summary: memview.Summary(r, 200)})
	}
	return out
}

func (m *caller) branchMerge(ctx context.Context, in BranchMergeIn) (BranchMergeOut, string, error) {
	req := day1.MergeRequest{
		Source: in.SourceBranch, Target: in.TargetBranch, Strategy: day1.Strategy(in.Strategy),
		Policy: day1.ConflictPolicy(in.ConflictPolicy), DryRun: in.DryRun, MergedBy: m.name(),
	}
	if req.Target == "" {
		req.Target = day1.DefaultBranch
	}
	for i, it := range in.Items {
		ref, err := parseRef(fmt.Sprintf("items[%d]", i), it)
		if err != nil {
			return BranchMergeOut{}, "", err
		}
		req.Pick = append(req.Pick, ref)
	}
	res, err := m.c.Merge(ctx, req)
	if err != nil {
		return BranchMergeOut{}, "", err
	}
	r := res.Record
	out := BranchMergeOut{
		MergeID: r.ID, Source: r.Source, Target: r.Target, Strategy: string(r.Strategy), Applied: res.Applied,
		Merged: viewMergeItems(r.Merged), Rejected: viewMergeItems(r.Rejected), Resolved: len(r.Resolutions),
	}
	if !res.Applied {
		out.MergeID = ""
	}
	verb := "merged"
	if !res.Applied {
		verb = "would merge"
	}
	return out, fmt.Sprintf("%s %d records of %s into %s (%s)", verb, len(out.Merged), r.Source, r.Target, r.Strategy), nil
}

func viewMergeItems(items []day1.MergeItem) []MergeItemView {
	out := make([]MergeItemView, len(items))
	for i, it := range items {
		out[i] = MergeItemView{Ref: it.Ref.String(), Action: string(it.Action)}
	}
	return out
}
