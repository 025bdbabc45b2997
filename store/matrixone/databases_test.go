package matrixone_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/day1ai/day1/store"
	"github.com/day1ai/day1/store/matrixone"
)

// A Server creates, finds, lists and drops databases, and says which of those fail.
func TestServerDatabases(t *testing.T) {
	dsn := testDSN(t)
	ctx := context.Background()
	srv, err := matrixone.OpenServer(dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() }) // after the drops below: cleanups run last first
	prefix := fmt.Sprintf("day1srv_%d_", os.Getpid())
	a, b := prefix+"a", prefix+"b"
	t.Cleanup(func() {
		for _, n := range []string{a, b} {
			if err := srv.DropDatabase(context.Background(), n); err != nil && !errors.Is(err, store.ErrNotFound) {
				t.Errorf("dropping %s: %v", n, err)
			}
		}
	})

	for _, n := range []string{a, b} {
		if err := srv.CreateDatabase(ctx, n); err != nil {
			t.Fatalf("CreateDatabase(%s): %v", n, err)
		}
	}
	if err := srv.CreateDatabase(ctx, a); !errors.Is(err, store.ErrExists) {
		t.Errorf("CreateDatabase of an existing database = %v; want ErrExists", err)
	}
	got, err := srv.Databases(ctx, prefix)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []string{a, b}) {
		t.Errorf("Databases(%q) = %v; want [%s %s]", prefix, got, a, b)
	}
	if ok, err := srv.HasDatabase(ctx, a); err != nil || !ok {
		t.Errorf("HasDatabase(%s) = %v, %v; want true", a, ok, err)
	}

	// A database made here opens as a store.
	cfg, err := matrixone.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DBName = a
	s, err := matrixone.Open(ctx, matrixone.Options{DSN: cfg.FormatDSN(), Dimensions: 8})
	if err != nil {
		t.Fatalf("Open on a created database: %v", err)
	}
	s.Close()

	if err := srv.DropDatabase(ctx, a); err != nil {
		t.Fatalf("DropDatabase: %v", err)
	}
	if ok, err := srv.HasDatabase(ctx, a); err != nil || ok {
		t.Errorf("HasDatabase after the drop = %v, %v; want false", ok, err)
	}
	if err := srv.DropDatabase(ctx, a); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("DropDatabase of a missing database = %v; want ErrNotFound", err)
	}

	for _, bad := range []string{"", "a-b", "a`b", "x; drop database mo_catalog", "é", "a b", string(make([]byte, 65))} {
		var ve *store.ValidationError
		if err := srv.CreateDatabase(ctx, bad); !errors.As(err, &ve) || ve.Field != "database" {
			t.Errorf("CreateDatabase(%q) = %v; want a *ValidationError for database", bad, err)
		}
		if err := srv.DropDatabase(ctx, bad); !errors.As(err, &ve) {
			t.Errorf("DropDatabase(%q) = %v; want a *ValidationError", bad, err)
		}
		if _, err := srv.HasDatabase(ctx, bad); !errors.As(err, &ve) {
			t.Errorf("HasDatabase(%q) = %v; want a *ValidationError", bad, err)
		}
	}
}
