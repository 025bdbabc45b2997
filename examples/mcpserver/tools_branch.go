package main

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/day1ai/day1"
)

type branchCreateIn struct {
	BranchName   string `json:"branch_name" jsonschema:"the new branch, e.g. experiment-new-auth or task/fix-auth/agent-a"`
	ParentBranch string `json:"parent_branch,omitempty" jsonschema:"the branch to fork from (default main); the new branch sees it as it is now"`
	Description  string `json:"description,omitempty" jsonschema:"what the branch is for"`
}

type branchListIn struct {
	Status string `json:"status,omitempty" jsonschema:"keep branches with this status: active, merged or archived"`
}

type branchListOut struct {
	Current  string       `json:"current" jsonschema:"this session's current branch"`
	Branches []branchView `json:"branches"`
}

type branchSwitchIn struct {
	BranchName string `json:"branch_name" jsonschema:"the branch later calls of this session use when they name none"`
}

type branchSwitchOut struct {
	Current  string     `json:"current"`
	Previous string     `json:"previous"`
	Branch   branchView `json:"branch"`
}

type branchDiffIn struct {
	SourceBranch string `json:"source_branch" jsonschema:"the branch whose changes would be merged"`
	TargetBranch string `json:"target_branch" jsonschema:"the branch that would receive them, e.g. main"`
	Category     string `json:"category,omitempty" jsonschema:"compare facts of this category only"`
}

type changeView struct {
	Ref     string `json:"ref" jsonschema:"kind/id of the record"`
	Op      string `json:"op" jsonschema:"added, updated or deleted"`
	Summary string `json:"summary"`
}

type conflictView struct {
	Ref    string `json:"ref"`
	Reason string `json:"reason" jsonschema:"both_changed, both_superseded, contradictory (each side added a fact that contradicts the other's) or duplicate (each side added a fact that says the same as the other's)"`
	Source string `json:"source" jsonschema:"the source side's version"`
	Target string `json:"target" jsonschema:"the target side's version"`
}

type branchDiffOut struct {
	Source        string         `json:"source_branch"`
	Target        string         `json:"target_branch"`
	Base          string         `json:"merge_base" jsonschema:"the branch or merge the comparison starts from"`
	SourceChanges []changeView   `json:"source_changes"`
	TargetChanges []changeView   `json:"target_changes"`
	Conflicts     []conflictView `json:"conflicts"`
}

type branchMergeIn struct {
	SourceBranch   string   `json:"source_branch" jsonschema:"the branch whose changes are merged"`
	TargetBranch   string   `json:"target_branch,omitempty" jsonschema:"the branch that receives them (default main)"`
	Strategy       string   `json:"strategy" jsonschema:"native (adopt every change; conflicts follow conflict_policy), auto (non-conflicting changes adopted, conflicts decided by the judge), cherry_pick (only the records in items) or squash (the net effect)"`
	Items          []string `json:"items,omitempty" jsonschema:"for cherry_pick: the records to copy, as kind/id (fact/ID, observation/ID, relation/ID, conversation/ID, message/ID) or a bare fact id"`
	ConflictPolicy string   `json:"conflict_policy,omitempty" jsonschema:"for native and squash: fail (default: refuse the merge), skip (keep the target's version) or accept (take the source's)"`
	DryRun         bool     `json:"dry_run,omitempty" jsonschema:"compute what would be merged without changing anything"`
}

type mergeItemView struct {
	Ref    string `json:"ref"`
	Action string `json:"action"`
}

type branchMergeOut struct {
	MergeID  string          `json:"merge_id,omitempty"`
	Source   string          `json:"source_branch"`
	Target   string          `json:"target_branch"`
	Strategy string          `json:"strategy"`
	Applied  bool            `json:"applied" jsonschema:"false for a dry run"`
	Merged   []mergeItemView `json:"merged"`
	Rejected []mergeItemView `json:"rejected"`
	Resolved int             `json:"conflicts_resolved"`
}

func (m *memServer) addBranchTools(s *mcp.Server) {
	addTool(s, "memory_branch_create",
		"Create an isolated branch of memory to experiment or to work on a task without touching main; it starts as a copy of its parent, in constant time.",
		m.branchCreate)
	addTool(s, "memory_branch_list",
		"List the branches of memory, and this session's current branch.",
		m.branchList)
	addTool(s, "memory_branch_switch",
		"Make a branch this session's current branch: later calls that name no branch read and write it.",
		m.branchSwitch)
	addTool(s, "memory_branch_diff",
		"Compare two branches: what each side added, updated or deleted since they parted, and the conflicts a merge would meet.",
		m.branchDiff)
	addTool(s, "memory_branch_merge",
		"Merge a branch into another (main by default), atomically and recorded in the merge history; use dry_run to preview.",
		m.branchMerge)
}

func (m *memServer) branchCreate(ctx context.Context, _ *mcp.ServerSession, in branchCreateIn) (branchView, string, error) {
	b, err := m.c.Branch(ctx, in.BranchName, day1.BranchOptions{From: in.ParentBranch, Description: in.Description})
	if err != nil {
		return branchView{}, "", err
	}
	return viewBranch(b), fmt.Sprintf("branch %s created from %s", b.Name, b.Parent), nil
}

func (m *memServer) branchList(ctx context.Context, ss *mcp.ServerSession, in branchListIn) (branchListOut, string, error) {
	bs, err := m.c.Branches(ctx, day1.BranchFilter{Status: day1.BranchStatus(in.Status)})
	if err != nil {
		return branchListOut{}, "", err
	}
	out := branchListOut{Current: m.currentBranch(ss), Branches: make([]branchView, len(bs))}
	for i, b := range bs {
		out.Branches[i] = viewBranch(b)
	}
	return out, fmt.Sprintf("%d branches; current %s", len(bs), out.Current), nil
}

func (m *memServer) branchSwitch(ctx context.Context, ss *mcp.ServerSession, in branchSwitchIn) (branchSwitchOut, string, error) {
	b, err := m.c.GetBranch(ctx, in.BranchName)
	if err != nil {
		return branchSwitchOut{}, "", err
	}
	prev := branchName(m.setBranch(ss, b.Name))
	return branchSwitchOut{Current: b.Name, Previous: prev, Branch: viewBranch(b)}, "switched to " + b.Name, nil
}

func (m *memServer) branchDiff(ctx context.Context, _ *mcp.ServerSession, in branchDiffIn) (branchDiffOut, string, error) {
	d, err := m.c.Diff(ctx, in.SourceBranch, in.TargetBranch)
	if err != nil {
		return branchDiffOut{}, "", err
	}
	// The library keeps the facts of the category, as they are now or were before.
	d = d.Filter(day1.Filter{Category: in.Category})
	out := branchDiffOut{
		Source: d.Source, Target: d.Target, Base: d.Base,
		SourceChanges: viewChanges(d.SourceChanges), TargetChanges: viewChanges(d.TargetChanges),
		Conflicts: []conflictView{},
	}
	for _, c := range d.Conflicts {
		out.Conflicts = append(out.Conflicts, conflictView{
			Ref: c.Ref.String(), Reason: string(c.Reason),
			Source: summarize(changeRecord(c.Source)), Target: summarize(changeRecord(c.Target)),
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

func viewChanges(cs []day1.Change) []changeView {
	out := []changeView{}
	for _, c := range cs {
		r := changeRecord(c)
		if r == nil {
			continue
		}
		out = append(out, changeView{Ref: c.Ref.String(), Op: string(c.Op), Summary: summarize(r)})
	}
	return out
}

func (m *memServer) branchMerge(ctx context.Context, _ *mcp.ServerSession, in branchMergeIn) (branchMergeOut, string, error) {
	req := day1.MergeRequest{
		Source: in.SourceBranch, Target: in.TargetBranch, Strategy: day1.Strategy(in.Strategy),
		Policy: day1.ConflictPolicy(in.ConflictPolicy), DryRun: in.DryRun, MergedBy: "mcp",
	}
	if req.Target == "" {
		req.Target = day1.DefaultBranch
	}
	for i, it := range in.Items {
		ref, err := parseRef(fmt.Sprintf("items[%d]", i), it)
		if err != nil {
			return branchMergeOut{}, "", err
		}
		req.Pick = append(req.Pick, ref)
	}
	res, err := m.c.Merge(ctx, req)
	if err != nil {
		return branchMergeOut{}, "", err
	}
	r := res.Record
	out := branchMergeOut{
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

func viewMergeItems(items []day1.MergeItem) []mergeItemView {
	out := make([]mergeItemView, len(items))
	for i, it := range items {
		out[i] = mergeItemView{Ref: it.Ref.String(), Action: string(it.Action)}
	}
	return out
}
