package day1_test

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/internal/testkit"
)

// A bundle made on the embedded store imports into MatrixOne, and a bundle of what
// landed there imports back into the embedded store with the same records.
func TestBundleAcrossStores(t *testing.T) {
	dsn := testkit.MatrixOneDatabase(t, "day1_bundle")
	ctx := context.Background()

	local, err := day1.Open(ctx, day1.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	if _, err := local.WriteFacts(ctx, []day1.Fact{
		{ID: "f1", Text: "The gateway retries idempotent calls three times", Category: "architecture", Verify: day1.Verification{Status: day1.Verified}},
		{ID: "f2", Text: "Sessions live in Redis for thirty minutes", Verify: day1.Verification{Status: day1.Verified}},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := local.WriteRelation(ctx, day1.Relation{ID: "r1", Source: "Gateway", Target: "AuthService", Type: "calls"}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := local.WriteBundle(ctx, &out, day1.CreateBundleRequest{Name: "to matrixone", Branch: "main"}, true); err != nil {
		t.Fatal(err)
	}

	remote, err := day1.Open(ctx, day1.Config{DSN: dsn})
	if err != nil {
		t.Fatal(err)
	}
	defer remote.Close()
	res, err := remote.ImportBundle(ctx, day1.ImportBundleRequest{From: bytes.NewReader(out.Bytes()), Branch: "kb", CreateBranch: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Created != 3 || res.Embedded != 0 {
		t.Errorf("import into MatrixOne = %+v; want 3 created with their embeddings", res)
	}
	again, err := remote.ImportBundle(ctx, day1.ImportBundleRequest{From: bytes.NewReader(out.Bytes()), Branch: "kb"})
	if err != nil || again.Deduplicated != 3 {
		t.Errorf("second import into MatrixOne = %+v, %v; want 3 deduplicated", again, err)
	}
	stored, err := remote.CreateBundle(ctx, day1.CreateBundleRequest{Name: "back", Branch: "kb", Visibility: day1.BundlePublic})
	if err != nil {
		t.Fatal(err)
	}
	var back bytes.Buffer
	if _, err := remote.ExportBundle(ctx, stored.ID, &back, day1.ExportBundleOptions{}); err != nil {
		t.Fatal(err)
	}

	home, err := day1.Open(ctx, day1.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer home.Close()
	res, err = home.ImportBundle(ctx, day1.ImportBundleRequest{From: &back})
	if err != nil || res.Created != 3 {
		t.Fatalf("import back = %+v, %v; want 3 created", res, err)
	}
	for _, id := range []string{"f1", "f2"} {
		want, err := local.GetFact(ctx, "main", id)
		if err != nil {
			t.Fatal(err)
		}
		got, err := home.GetFact(ctx, "main", id)
		if err != nil {
			t.Fatal(err)
		}
		if got.Text != want.Text || !slices.Equal(got.Embedding, want.Embedding) || got.Metadata[day1.BundleMetaOriginID] != id {
			t.Errorf("%s after the round trip: %q (%d dims, provenance %v); want %q with the same embedding",
				id, got.Text, len(got.Embedding), got.Metadata, want.Text)
		}
	}
}
