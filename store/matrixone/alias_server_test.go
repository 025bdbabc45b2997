package matrixone_test

import (
	"testing"

	"github.com/day1ai/day1/store"
)

// TestAliasTablesMigration: a database from before migration 008 (no aliases tables)
// gains one per branch on Open, forked the way the branch was, and aliases written
// afterwards on an old branch diff and merge like records.
func TestAliasTablesMigration(t *testing.T) {
	t.Parallel()
	dsn := testDatabase(t)
	s := openTest(t, dsn)
	ctx := t.Context()
	put(t, s, "main", []store.Record{store.Fact{ID: "canon", Text: "the queue is kafka"}})
	if _, err := s.CreateBranch(ctx, store.BranchSpec{Name: "task/a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateBranch(ctx, store.BranchSpec{Name: "task/a/sub", From: "task/a"}); err != nil {
		t.Fatal(err)
	}
	rows, err := s.DB().QueryContext(ctx, "SELECT suffix FROM day1_branches")
	if err != nil {
		t.Fatal(err)
	}
	var drops []string
	for rows.Next() {
		var sfx string
		if err := rows.Scan(&sfx); err != nil {
			t.Fatal(err)
		}
		drops = append(drops, "DROP TABLE aliases_"+sfx)
	}
	rows.Close()
	if len(drops) != 3 {
		t.Fatalf("%d branches; want 3", len(drops))
	}
	for _, q := range append(drops, "DELETE FROM day1_migrations WHERE version = 8") {
		if _, err := s.DB().ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	s.Close()
	s2 := openTest(t, dsn)
	defer s2.Close()
	res, err := s2.Put(ctx, "task/a/sub", []store.Record{store.Fact{ID: "mine", Text: "The queue is Kafka"}}, store.PutOptions{})
	if err != nil || res[0].AliasOf != "canon" {
		t.Fatalf("Put on a branch made before the migration: %+v, %v; want an alias of canon", res, err)
	}
	d, err := s2.Diff(ctx, "task/a/sub", "task/a")
	if err != nil || len(d.SourceChanges) != 1 || d.SourceChanges[0].Ref != store.AliasRef("mine") {
		t.Fatalf("Diff = %+v, %v; want the one alias", d, err)
	}
	if got, err := s2.Get(ctx, store.View{Branch: "task/a/sub"}, store.FactRef("mine")); err != nil || got.RecordID() != "canon" {
		t.Errorf("Get(mine) = %v, %v; want canon", got, err)
	}
	if _, err := s2.Get(ctx, store.View{Branch: "task/a"}, store.FactRef("mine")); err == nil {
		t.Errorf("Get(task/a, mine) found the child's alias")
	}
}
