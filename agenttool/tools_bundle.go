package agenttool

import (
	"context"
	"fmt"
	"strings"

	"github.com/day1ai/day1"
)

// BundleCreateIn is the input of memory_bundle_create.
type BundleCreateIn struct {
	TaskID       string `json:"task_id,omitempty" jsonschema:"package what this task's branch added (give this or branch_name)"`
	BranchName   string `json:"branch_name,omitempty" jsonschema:"package this branch as it reads now (give this or task_id)"`
	Name         string `json:"name" jsonschema:"the bundle's name"`
	VerifiedOnly *bool  `json:"verified_only,omitempty" jsonschema:"take verified facts and conversations only (default true)"`
	Visibility   string `json:"visibility,omitempty" jsonschema:"private (default), team or public; team and public bundles get a share token"`
}

// BundleView is the output of memory_bundle_create.
type BundleView struct {
	BundleID     string         `json:"bundle_id"`
	Name         string         `json:"name"`
	Type         string         `json:"type" jsonschema:"task_export, curated or template"`
	Status       string         `json:"status"`
	Visibility   string         `json:"visibility"`
	ShareToken   string         `json:"share_token,omitempty"`
	Hash         string         `json:"hash"`
	Counts       map[string]int `json:"counts" jsonschema:"records by kind"`
	SourceTask   string         `json:"source_task,omitempty"`
	SourceBranch string         `json:"source_branch,omitempty"`
}

// BundleImportIn is the input of memory_bundle_import.
type BundleImportIn struct {
	BundleID     string `json:"bundle_id,omitempty" jsonschema:"a stored bundle's id (give this or share_token)"`
	ShareToken   string `json:"share_token,omitempty" jsonschema:"a shared bundle's token (give this or bundle_id)"`
	TargetBranch string `json:"target_branch,omitempty" jsonschema:"the branch that receives the records (default main)"`
	CreateBranch bool   `json:"create_branch,omitempty" jsonschema:"create target_branch from main when it does not exist"`
}

// BundleImportOut is the output of memory_bundle_import.
type BundleImportOut struct {
	BundleID      string `json:"bundle_id"`
	Name          string `json:"name"`
	Branch        string `json:"branch"`
	BranchCreated bool   `json:"branch_created"`
	Created       int    `json:"created"`
	Deduplicated  int    `json:"deduplicated"`
	Superseded    int    `json:"superseded"`
	Updated       int    `json:"updated"`
	Skipped       int    `json:"skipped"`
	Conflicts     int    `json:"conflicts"`
}

func bundleTools() []Tool {
	return []Tool{
		tool("memory_bundle_create",
			"Package the verified knowledge of a task or a branch as a portable, sealed bundle that other projects or agents can import.",
			(*caller).bundleCreate),
		tool("memory_bundle_import",
			"Import a stored or shared bundle into a branch, atomically; importing it again changes nothing.",
			(*caller).bundleImport)}
}

func viewBundle(b day1.Bundle) BundleView {
	return BundleView{
		BundleID: b.ID, Name: b.Name, Type: string(b.Type), Status: string(b.Status), Visibility: string(b.Visibility),
		ShareToken: b.ShareToken, Hash: b.Hash, SourceTask: b.SourceTask, SourceBranch: b.SourceBranch,
		Counts: map[string]int{
			"facts": b.Counts.Facts, "observations": b.Counts.Observations, "relations": b.Counts.Relations,
			"conversations": b.Counts.Conversations, "messages": b.Counts.Messages,
		},
	}
}

func (m *caller) bundleCreate(ctx context.Context, in BundleCreateIn) (BundleView, string, error) {
	b, err := m.c.CreateBundle(ctx, day1.CreateBundleRequest{
		Name: in.Name, Task: in.TaskID, Branch: in.BranchName,
		IncludeUnverified: !orDefault(in.VerifiedOnly, true), Visibility: day1.BundleVisibility(in.Visibility),
	})
	if err != nil {
		return BundleView{}, "", err
	}
	return viewBundle(b), fmt.Sprintf("bundle %s (%s) with %d facts", b.ID, b.Name, b.Counts.Facts), nil
}

func (m *caller) bundleImport(ctx context.Context, in BundleImportIn) (BundleImportOut, string, error) {
	res, err := m.c.ImportBundle(ctx, day1.ImportBundleRequest{
		Bundle: in.BundleID, ShareToken: in.ShareToken, Branch: in.TargetBranch, CreateBranch: in.CreateBranch,
	})
	if err != nil {
		return BundleImportOut{}, "", err
	}
	out := BundleImportOut{
		BundleID: res.Bundle.ID, Name: res.Bundle.Name, Branch: res.Branch, BranchCreated: res.BranchCreated,
		Created: res.Created, Deduplicated: res.Deduplicated, Superseded: res.Superseded,
		Updated: res.Updated, Skipped: res.Skipped, Conflicts: res.Conflicts,
	}
	return out, out.text(), nil
}

// text says what an import did, every count that is not zero included.
func (o BundleImportOut) text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "bundle %s imported into %s: %d created, %d already there", o.BundleID, o.Branch, o.Created, o.Deduplicated)
	for _, c := range []struct {
		n    int
		what string
	}{{o.Updated, "updated"}, {o.Superseded, "superseded"}, {o.Skipped, "skipped (the branch's version kept)"}, {o.Conflicts, "in conflict"}} {
		if c.n > 0 {
			fmt.Fprintf(&b, ", %d %s", c.n, c.what)
		}
	}
	return b.String()
}
