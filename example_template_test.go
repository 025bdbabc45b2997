package day1_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/day1ai/day1"
)

// A branch with good knowledge becomes a template; new tasks of its type start from
// it as a branch, in constant time; the template gets new versions and is retired.
func ExampleClient_CreateTemplate() {
	ctx := context.Background()
	c, err := day1.Open(ctx, exampleConfig())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	if _, err := c.Branch(ctx, "playbooks/bug-fix", day1.BranchOptions{}); err != nil {
		log.Fatal(err)
	}
	if _, err := c.WriteFact(ctx, day1.Fact{Branch: "playbooks/bug-fix", Text: "Reproduce the bug with a failing test first"}); err != nil {
		log.Fatal(err)
	}
	tpl, err := c.CreateTemplate(ctx, day1.TemplateSpec{
		Name:         "bug-fix",
		SourceBranch: "playbooks/bug-fix",
		TaskTypes:    []string{"bug_fix"},
		Description:  "how this team fixes bugs",
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(tpl.Name, "v", tpl.Version, tpl.Status, tpl.Snapshot)

	best, err := c.FindTemplate(ctx, "bug_fix")
	if err != nil {
		log.Fatal(err)
	}
	inst, err := c.InstantiateTemplate(ctx, best.Name, day1.InstantiateRequest{Branch: "task/fix-42"})
	if err != nil {
		log.Fatal(err)
	}
	facts, err := c.ListFacts(ctx, day1.ListOptions{Branch: inst.Branch.Name})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(inst.Branch.Name, "from", inst.Branch.Metadata["template"], "v"+inst.Branch.Metadata["template_version"], "knows:", facts[0].Text)

	if _, err := c.WriteFact(ctx, day1.Fact{Branch: "playbooks/bug-fix", Text: "Bisect to find the breaking commit"}); err != nil {
		log.Fatal(err)
	}
	v2, err := c.UpdateTemplate(ctx, "bug-fix", day1.TemplateUpdate{SourceBranch: "playbooks/bug-fix", Note: "adds bisecting"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("version", v2.Version, "uses", v2.Uses, "history", len(v2.History))

	if _, err := c.DeprecateTemplate(ctx, "bug-fix", "replaced by bug-fix-2"); err != nil {
		log.Fatal(err)
	}
	_, err = c.FindTemplate(ctx, "bug_fix")
	fmt.Println(errors.Is(err, day1.ErrNotFound))
	_, err = c.InstantiateTemplate(ctx, "bug-fix", day1.InstantiateRequest{Branch: "task/fix-43"})
	fmt.Println(errors.Is(err, day1.ErrTemplateDeprecated))
	// Output:
	// bug-fix v 1 active template.bug-fix.v1
	// task/fix-42 from bug-fix v1 knows: Reproduce the bug with a failing test first
	// version 2 uses 1 history 2
	// true
	// true
}
