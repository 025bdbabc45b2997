package day1_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/go-sql-driver/mysql"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/store/sqlite"
)

// exampleTenants returns cfg with the examples' Client seams; when the examples run on
// MatrixOne, the tenants live in databases of their own there instead of folders.
func exampleTenants(cfg day1.TenantsConfig) day1.TenantsConfig {
	cfg.Client = exampleConfig()
	cfg.Client.DSN = ""
	if examplesSQLite != "" {
		// Each tenant a SQLite memory in its folder under cfg.Path.
		cfg.Client.Backend = sqlite.Options{}
		return cfg
	}
	if examplesDSN == "" {
		return cfg
	}
	c, err := mysql.ParseDSN(examplesDSN)
	if err != nil {
		panic(err)
	}
	c.DBName = ""
	cfg.Path, cfg.DSN = "", c.FormatDSN()
	cfg.DatabasePrefix = fmt.Sprintf("%s_%d_t_", examplesPrefix, exampleDBs.Add(1))
	return cfg
}

// Serving many users from one process: each tenant has a memory of its own, in a
// folder of its own here (a database of its own on MatrixOne), opened on first use.
// One tenant's ids read as not found through another's Client.
func ExampleOpenTenants() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "day1-tenants")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	tenants, err := day1.OpenTenants(ctx, exampleTenants(day1.TenantsConfig{
		Path:    dir, // dir/acme, dir/globex, ...
		MaxOpen: 100, // at most 100 tenants open at once; idle ones close after 5 minutes
	}))
	if err != nil {
		log.Fatal(err)
	}
	defer tenants.Close()

	for _, name := range []string{"acme", "globex"} {
		if err := tenants.Create(ctx, name); err != nil {
			log.Fatal(err)
		}
	}
	err = tenants.Use(ctx, "acme", func(c *day1.Client) error {
		_, err := c.WriteFact(ctx, day1.Fact{ID: "deploys", Text: "Acme deploys on Fridays"})
		return err
	})
	if err != nil {
		log.Fatal(err)
	}
	err = tenants.Use(ctx, "globex", func(c *day1.Client) error {
		_, err := c.GetFact(ctx, "main", "deploys")
		fmt.Println("globex reads acme's fact:", errors.Is(err, day1.ErrNotFound))
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}

	// A lease holds a tenant open until it is released.
	lease, err := tenants.Acquire(ctx, "acme")
	if err != nil {
		log.Fatal(err)
	}
	f, err := lease.Client().GetFact(ctx, "main", "deploys")
	lease.Release()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("acme:", f.Text)

	names, err := tenants.List(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("tenants:", names)
	_, err = tenants.Acquire(ctx, "initech")
	fmt.Println("never created:", errors.Is(err, day1.ErrTenantNotFound))
	_, err = tenants.Acquire(ctx, "../acme")
	fmt.Println("invalid name:", errors.Is(err, day1.ErrInvalidArgument))
	// Output:
	// globex reads acme's fact: true
	// acme: Acme deploys on Fridays
	// tenants: [acme globex]
	// never created: true
	// invalid name: true
}

// Knowledge crosses tenants only when its tenant shares it: CopyBundle takes a share
// token that resolves in the source tenant alone, and a private bundle stays home.
func ExampleTenants_CopyBundle() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "day1-tenants")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	tenants, err := day1.OpenTenants(ctx, exampleTenants(day1.TenantsConfig{Path: dir, AutoCreate: true}))
	if err != nil {
		log.Fatal(err)
	}
	defer tenants.Close()

	var shared, private day1.Bundle
	err = tenants.Use(ctx, "acme", func(c *day1.Client) error {
		if _, err := c.WriteFact(ctx, day1.Fact{Text: "The payments API rejects amounts with more than two decimals",
			Verify: day1.Verification{Status: day1.Verified}}); err != nil {
			return err
		}
		var err error
		if shared, err = c.CreateBundle(ctx, day1.CreateBundleRequest{Name: "payments", Branch: "main", Visibility: day1.BundleTeam}); err != nil {
			return err
		}
		private, err = c.CreateBundle(ctx, day1.CreateBundleRequest{Name: "internal", Branch: "main"})
		return err
	})
	if err != nil {
		log.Fatal(err)
	}

	res, err := tenants.CopyBundle(ctx, day1.CopyBundleRequest{
		From: "acme", ShareToken: shared.ShareToken, To: "globex", Branch: "from-acme", CreateBranch: true,
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("copied:", res.Created, "fact into", res.Branch)

	_, err = tenants.CopyBundle(ctx, day1.CopyBundleRequest{From: "acme", Bundle: private.ID, To: "globex"})
	fmt.Println("private bundle refused:", errors.Is(err, day1.ErrInvalidArgument))
	// The token means nothing in another tenant.
	err = tenants.Use(ctx, "globex", func(c *day1.Client) error {
		_, err := c.SharedBundle(ctx, shared.ShareToken)
		fmt.Println("acme's token in globex:", errors.Is(err, day1.ErrNotFound))
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// copied: 1 fact into from-acme
	// private bundle refused: true
	// acme's token in globex: true
}
