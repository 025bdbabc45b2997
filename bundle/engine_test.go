package bundle

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1/curation"
	"github.com/day1ai/day1/handoff"
	"github.com/day1ai/day1/internal/testkit"
	"github.com/day1ai/day1/llm"
	"github.com/day1ai/day1/merge"
	"github.com/day1ai/day1/store"
	"github.com/day1ai/day1/store/matrixone"
	"github.com/day1ai/day1/store/sqlite"
)

var bg = context.Background()

func init() {
	// Imports past one store batch are tested with bundles of a few thousand records
	// rather than past store.MaxBatch's ten thousand.
	oneBatch = 5 * ImportBatch / 2
}

type env struct {
	st  store.Store
	emb llm.Embedder
	e   *Engine
}

func newEnv(t *testing.T) *env {
	t.Helper()
	st := testkit.Store(t, nil)
	emb := llm.NewLocalEmbedder(64)
	return &env{st: st, emb: emb, e: &Engine{Store: st, Embedder: emb}}
}

func (v *env) put(t *testing.T, branch string, recs ...store.Record) {
	t.Helper()
	testkit.Put(t, v.st, branch, recs...)
}

func verified(id, text string) store.Fact {
	return store.Fact{ID: id, Text: text, Verify: store.Verification{Status: store.Verified, Score: 0.9}}
}

// knowledge writes a mix of verified and unverified records to branch.
func (v *env) knowledge(t *testing.T, branch string) {
	t.Helper()
	v.put(t, branch,
		verified("f-ok", "The gateway retries idempotent calls three times"),
		store.Fact{ID: "f-maybe", Text: "The cache might be stale after deploys", Confidence: 0.2},
		store.Fact{ID: "f-bad", Text: "The database is MongoDB", Verify: store.Verification{Status: store.Invalidated}},
		store.Relation{ID: "r1", Source: "Gateway", Target: "AuthService", Type: "calls"},
		store.Conversation{ID: "c-ok", Title: "retry design", Verify: store.Verification{Status: store.Verified}},
		store.Message{ID: "c-ok-1", ConversationID: "c-ok", Seq: 1, Role: store.RoleUser, Content: "How many retries?"},
		store.Message{ID: "c-ok-2", ConversationID: "c-ok", Seq: 2, Role: store.RoleAssistant, Content: "Three, with backoff"},
		store.Conversation{ID: "c-plain", Title: "chatter"},
		store.Message{ID: "c-plain-1", ConversationID: "c-plain", Seq: 1, Role: store.RoleUser, Content: "hello"},
		store.Observation{ID: "o1", Type: store.ObsDiscovery, Summary: "retries observed in the logs"},
	)
}

func refs(recs []store.Record) []string {
	var out []string
	for _, r := range recs {
		out = append(out, store.RefOf(r).String())
	}
	return out
}

func (v *env) listAll(t *testing.T, branch string) []store.Record {
	t.Helper()
	var out []store.Record
	for _, k := range store.Kinds {
		recs, err := v.st.List(bg, store.View{Branch: branch}, store.ListQuery{Kind: k, Order: store.OrderID})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, recs...)
	}
	return out
}

func TestCreateFromBranchTakesVerifiedKnowledge(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	v.knowledge(t, "main")
	b, err := v.e.Create(bg, CreateRequest{Name: "retries", Branch: "main", Tags: []string{"net"}, Owner: "lead"})
	if err != nil {
		t.Fatal(err)
	}
	if b.Type != Curated || b.SourceBranch != "main" || b.Status != Draft || b.Visibility != Private || b.ShareToken != "" || b.Version != DefaultVersion {
		t.Errorf("bundle = %+v", b)
	}
	want := Counts{Facts: 1, Relations: 1, Conversations: 1, Messages: 2}
	if b.Counts != want || len(b.Hash) != 64 || b.Embedder.Name != v.emb.Name() {
		t.Errorf("counts %+v hash %q embedder %+v; want %+v, a SHA-256 and %s", b.Counts, b.Hash, b.Embedder, want, v.emb.Name())
	}
	var file bytes.Buffer
	if _, err := v.e.Export(bg, b.ID, &file, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	m, recs, err := readAll(file.Bytes(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"fact/f-ok", "relation/r1", "conversation/c-ok", "message/c-ok-1", "message/c-ok-2"}, refs(recs)); d != "" {
		t.Errorf("exported records (-want +got):\n%s", d)
	}
	if m.Bundle.ID != b.ID || m.Counts != want {
		t.Errorf("manifest = %+v", m)
	}
	if f := recs[0].(store.Fact); len(f.Embedding) != 64 {
		t.Errorf("the fact travels with %d embedding values; want 64", len(f.Embedding))
	}

	all, err := v.e.Create(bg, CreateRequest{Name: "everything", Branch: "main", IncludeUnverified: true, IncludeObservations: true})
	if err != nil {
		t.Fatal(err)
	}
	if w := (Counts{Facts: 2, Observations: 1, Relations: 1, Conversations: 2, Messages: 3}); all.Counts != w {
		t.Errorf("with everything: %+v; want %+v (never the invalidated fact)", all.Counts, w)
	}
}

// TestBundlesLeaveExpiredFactsOut checks that a fact whose expiry has passed when the
// bundle is made is not in it, verified or not, and one that expires later is.
func TestBundlesLeaveExpiredFactsOut(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	v.e.Now = func() time.Time { return now }
	gone, later := verified("f-gone", "The deploy freeze holds until noon"), verified("f-later", "The release is cut on Thursday")
	gone.ExpiresAt, later.ExpiresAt = now.Add(-time.Minute), now.Add(time.Hour)
	gone.CreatedAt, later.CreatedAt = now.Add(-2*time.Hour), now.Add(-2*time.Hour)
	v.put(t, "main", gone, later)
	for _, all := range []bool{false, true} {
		b, err := v.e.Create(bg, CreateRequest{Name: fmt.Sprint("facts-", all), Branch: "main", IncludeUnverified: all})
		if err != nil {
			t.Fatal(err)
		}
		var file bytes.Buffer
		if _, err := v.e.Export(bg, b.ID, &file, ExportOptions{}); err != nil {
			t.Fatal(err)
		}
		_, recs, err := readAll(file.Bytes(), 0)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff([]string{"fact/f-later"}, refs(recs)); d != "" {
			t.Errorf("IncludeUnverified %v: exported records (-want +got):\n%s", all, d)
		}
	}
}

func TestCreateFromTaskTakesWhatTheTaskAdded(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	v.put(t, "main", verified("old", "A fact main had before the task"))
	tasks := &handoff.Engine{Store: v.st}
	if _, err := tasks.CreateTask(bg, handoff.TaskSpec{Name: "fix-retries", Type: "bug_fix"}); err != nil {
		t.Fatal(err)
	}
	v.knowledge(t, "task/fix-retries")
	v.put(t, "task/fix-retries", store.Fact{ID: "f-judged", Text: "Retries use exponential backoff with a cap of thirty seconds on gateway calls", Category: "architecture"})
	b, err := v.e.Create(bg, CreateRequest{Name: "retries fix", Task: "fix-retries", Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	if b.Type != TaskExport || b.SourceTask != "fix-retries" || b.SourceBranch != "task/fix-retries" {
		t.Errorf("bundle = %+v", b.Info)
	}
	_, recs, err := v.records(b.ID)
	if err != nil {
		t.Fatal(err)
	}
	got := refs(recs)
	if slices.Contains(got, "fact/old") {
		t.Errorf("a task export holds main's fact: %v", got)
	}
	// The heuristic judge verifies the specific architecture fact and not the vague one.
	if !slices.Contains(got, "fact/f-judged") || slices.Contains(got, "fact/f-maybe") || !slices.Contains(got, "fact/f-ok") {
		t.Errorf("task export after verification = %v; want f-ok and f-judged, not f-maybe", got)
	}
	// After the task's work reached main, the export still holds it.
	if _, err := (&merge.Engine{Store: v.st}).Merge(bg, merge.Request{Source: "task/fix-retries", Target: "main"}); err != nil {
		t.Fatal(err)
	}
	after, err := v.e.Create(bg, CreateRequest{Name: "after the merge", Task: "fix-retries"})
	if err != nil {
		t.Fatal(err)
	}
	if after.Counts != b.Counts {
		t.Errorf("export after the task merged into main: %+v; want %+v as before", after.Counts, b.Counts)
	}
	_, err = v.e.Create(bg, CreateRequest{Name: "x", Task: "nope"})
	if !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown task: %v; want ErrNotFound", err)
	}
}

func (v *env) records(id string) (Manifest, []store.Record, error) {
	var file bytes.Buffer
	if _, err := v.e.Export(bg, id, &file, ExportOptions{Compress: true}); err != nil {
		return Manifest{}, nil, err
	}
	return readAll(file.Bytes(), 0)
}

func TestCreateFromTemplate(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	v.knowledge(t, "main")
	cur := &curation.Engine{Store: v.st}
	if _, err := cur.CreateTemplate(bg, curation.TemplateSpec{Name: "retry-playbook", TaskTypes: []string{"bug_fix"}, SourceBranch: "main"}); err != nil {
		t.Fatal(err)
	}
	v.put(t, "main", verified("later", "Written after the template was made"))
	b, err := v.e.Create(bg, CreateRequest{Name: "playbook", Template: "retry-playbook"})
	if err != nil {
		t.Fatal(err)
	}
	_, recs, err := v.records(b.ID)
	if err != nil {
		t.Fatal(err)
	}
	if b.Type != TemplateExport || b.Metadata["template"] != "retry-playbook@v1" || slices.Contains(refs(recs), "fact/later") || !slices.Contains(refs(recs), "fact/f-ok") {
		t.Errorf("template bundle %+v holds %v; want the template's version only", b.Info, refs(recs))
	}
}

func TestCreateRejectsBadRequests(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	for _, c := range []struct {
		req   CreateRequest
		field string
	}{
		{CreateRequest{Branch: "main"}, "CreateRequest.Name"},
		{CreateRequest{Name: "x"}, "CreateRequest"},
		{CreateRequest{Name: "x", Branch: "main", Task: "t"}, "CreateRequest"},
		{CreateRequest{Name: "x", Branch: "main", Verify: true}, "CreateRequest.Verify"},
		{CreateRequest{Name: "x", Branch: "main", Visibility: "world"}, "CreateRequest.Visibility"},
		{CreateRequest{Name: "x", Branch: "bad name"}, "CreateRequest.Branch"},
		{CreateRequest{Name: "x", Branch: "main", Tags: []string{""}}, "CreateRequest.Tags"},
	} {
		_, err := v.e.Create(bg, c.req)
		var ve *store.ValidationError
		if !errors.As(err, &ve) || ve.Field != c.field {
			t.Errorf("%+v: %v; want a *store.ValidationError on %s", c.req, err, c.field)
		}
	}
	if bs, err := v.e.List(bg, Filter{}); err != nil || len(bs) != 0 {
		t.Errorf("bundles after refused requests: %v, %v", bs, err)
	}
}

func TestShareTokensAndRevocation(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	v.knowledge(t, "main")
	b, err := v.e.Create(bg, CreateRequest{Name: "shared", Branch: "main", Visibility: Team, Tags: []string{"a", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	tok := b.ShareToken
	if len(tok) != TokenLen || !strings.HasPrefix(tok, TokenPrefix) {
		t.Fatalf("token %q; want %d characters starting %q", tok, TokenLen, TokenPrefix)
	}
	if got, err := v.e.Shared(bg, tok); err != nil || got.ID != b.ID {
		t.Fatalf("Shared = %+v, %v", got, err)
	}
	if _, err := v.e.Shared(bg, "kb_short"); !errors.Is(err, store.ErrInvalidArgument) {
		t.Errorf("a malformed token: %v; want ErrInvalidArgument", err)
	}
	pub, err := v.e.SetVisibility(bg, b.ID, Public)
	if err != nil || pub.ShareToken != tok {
		t.Errorf("team to public: token %q, %v; want it kept", pub.ShareToken, err)
	}
	priv, err := v.e.SetVisibility(bg, b.ID, Private)
	if err != nil || priv.ShareToken != "" {
		t.Fatalf("to private: %+v, %v", priv, err)
	}
	if _, err := v.e.Shared(bg, tok); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a revoked token: %v; want ErrNotFound", err)
	}
	if _, err := v.e.Import(bg, ImportRequest{ShareToken: tok, Branch: "main"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("importing with a revoked token: %v; want ErrNotFound", err)
	}
	again, err := v.e.SetVisibility(bg, b.ID, Team)
	if err != nil || again.ShareToken == "" || again.ShareToken == tok {
		t.Errorf("shared again: token %q, %v; want a new one", again.ShareToken, err)
	}
	other, err := v.e.Create(bg, CreateRequest{Name: "other", Branch: "main", Tags: []string{"a"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		f    Filter
		want []string
	}{
		{Filter{}, []string{other.ID, b.ID}},
		{Filter{Tags: []string{"a", "b"}}, []string{b.ID}},
		{Filter{Visibility: Private}, []string{other.ID}},
		{Filter{Type: TaskExport}, nil},
	} {
		got, err := v.e.List(bg, c.f)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, g := range got {
			ids = append(ids, g.ID)
		}
		if d := cmp.Diff(c.want, ids); d != "" {
			t.Errorf("List(%+v) (-want +got):\n%s", c.f, d)
		}
	}
	if err := v.e.Delete(bg, b.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := v.e.Shared(bg, again.ShareToken); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the token of a deleted bundle: %v; want ErrNotFound", err)
	}
	if _, err := v.e.Get(bg, b.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get of a deleted bundle: %v; want ErrNotFound", err)
	}
	if parts, _ := v.st.ListDocs(bg, store.DocQuery{Collection: PartCollection, Where: map[string]string{"bundle": b.ID}}); len(parts) != 0 {
		t.Errorf("%d parts left after Delete", len(parts))
	}
}

func TestVerifyScoresTheContent(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	v.put(t, "main",
		store.Fact{ID: "f1", Text: "The auth service signs access tokens with RS256 keys rotated every ninety days", Category: "architecture", Verify: store.Verification{Status: store.Verified}},
	)
	b, err := v.e.Create(bg, CreateRequest{Name: "auth", Branch: "main"})
	if err != nil {
		t.Fatal(err)
	}
	vb, err := v.e.Verify(bg, b.ID)
	if err != nil {
		t.Fatal(err)
	}
	if vb.Status != Verified || vb.Score <= 0 || vb.VerifiedBy != "heuristic" || vb.VerifiedAt.IsZero() {
		t.Errorf("after Verify: status %q score %v by %q at %v", vb.Status, vb.Score, vb.VerifiedBy, vb.VerifiedAt)
	}
	m, _, err := v.records(b.ID)
	if err != nil {
		t.Fatal(err)
	}
	if m.Bundle.Status != Verified || m.Bundle.Score != vb.Score {
		t.Errorf("the exported manifest says %q, %v; want the verified status and score", m.Bundle.Status, m.Bundle.Score)
	}
}

func TestImportRoundTripIsIdempotentAndKeepsProvenance(t *testing.T) {
	t.Parallel()
	src := newEnv(t)
	src.knowledge(t, "main")
	b, err := src.e.Create(bg, CreateRequest{Name: "retries", Branch: "main", IncludeUnverified: true})
	if err != nil {
		t.Fatal(err)
	}
	var file bytes.Buffer
	if _, err := src.e.Export(bg, b.ID, &file, ExportOptions{Compress: true}); err != nil {
		t.Fatal(err)
	}
	dst := newEnv(t)
	res, err := dst.e.Import(bg, ImportRequest{From: bytes.NewReader(file.Bytes()), Branch: "kb", CreateBranch: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Created != b.Counts.Total() || res.Deduplicated != 0 || !res.BranchCreated || res.Hash != b.Hash || res.Embedded != 0 {
		t.Errorf("first import = %+v; want %d created on a new branch, the embeddings kept", res, b.Counts.Total())
	}
	got := dst.listAll(t, "kb")
	if len(got) != b.Counts.Total() {
		t.Fatalf("kb holds %d records; want %d", len(got), b.Counts.Total())
	}
	for _, r := range got {
		meta := metaOf(r)
		if meta[MetaBundleID] != b.ID || meta[MetaOriginID] != r.RecordID() || meta[MetaBundleSource] != "main" {
			t.Errorf("%s provenance = %v", store.RefOf(r), meta)
		}
		if f, ok := r.(store.Fact); ok && len(f.Embedding) != 64 {
			t.Errorf("%s has %d embedding values; want the bundle's 64", f.ID, len(f.Embedding))
		}
	}
	before := dst.listAll(t, "kb")
	res, err = dst.e.Import(bg, ImportRequest{From: bytes.NewReader(file.Bytes()), Branch: "kb", CreateBranch: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Deduplicated != b.Counts.Total() || res.Created+res.Updated+res.Skipped+res.Conflicts != 0 || res.BranchCreated {
		t.Errorf("second import = %+v; want everything deduplicated", res)
	}
	if d := cmp.Diff(before, dst.listAll(t, "kb")); d != "" {
		t.Errorf("the second import changed the branch:\n%s", d)
	}
}

func metaOf(r store.Record) map[string]string {
	switch v := r.(type) {
	case store.Fact:
		return v.Metadata
	case store.Observation:
		return v.Metadata
	case store.Relation:
		return v.Properties
	case store.Conversation:
		return v.Metadata
	case store.Message:
		return v.Metadata
	}
	return nil
}

func TestImportConflictPolicies(t *testing.T) {
	t.Parallel()
	src := newEnv(t)
	src.put(t, "main", verified("f1", "Bundle text one"), verified("f2", "Bundle text two"))
	b, err := src.e.Create(bg, CreateRequest{Name: "two", Branch: "main"})
	if err != nil {
		t.Fatal(err)
	}
	var file bytes.Buffer
	if _, err := src.e.Export(bg, b.ID, &file, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		policy ConflictPolicy
		want   string
	}{
		{"", "The branch's own text"},
		{TakeBundle, "Bundle text one"},
		{FailOnConflict, "The branch's own text"},
	} {
		dst := newEnv(t)
		dst.put(t, "main", store.Fact{ID: "f1", Text: "The branch's own text"}, store.Fact{ID: "same", Text: "bundle text two"})
		res, err := dst.e.Import(bg, ImportRequest{From: bytes.NewReader(file.Bytes()), Policy: c.policy})
		switch c.policy {
		case FailOnConflict:
			var ce *ConflictError
			if !errors.As(err, &ce) || !errors.Is(err, store.ErrConflict) || len(ce.Conflicting) != 1 {
				t.Errorf("fail policy: %v; want a *ConflictError on f1", err)
			}
			if _, err := dst.st.Get(bg, store.View{}, store.FactRef("f2")); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("a failed import wrote f2: %v", err)
			}
		default:
			if err != nil {
				t.Fatalf("policy %q: %v", c.policy, err)
			}
			// f2's text is on the branch already under another id: deduplicated.
			if res.Conflicts != 1 || res.Deduplicated != 1 || (c.policy == TakeBundle) != (res.Updated == 1) || (c.policy == "") != (res.Skipped == 1) {
				t.Errorf("policy %q: %+v", c.policy, res)
			}
		}
		f, err := dst.st.Get(bg, store.View{}, store.FactRef("f1"))
		if err != nil || f.(store.Fact).Text != c.want {
			t.Errorf("policy %q: f1 = %v, %v; want %q", c.policy, f, err, c.want)
		}
	}
}

func TestImportEmbedsAgainForAnotherEmbedder(t *testing.T) {
	t.Parallel()
	src := newEnv(t)
	src.e.Embedder = llm.NewLocalEmbedder(32)
	src.put(t, "main", verified("f1", "Embedded by another embedder"))
	var file bytes.Buffer
	if _, err := src.e.WriteFile(bg, &file, CreateRequest{Name: "x", Branch: "main"}, false); err != nil {
		t.Fatal(err)
	}
	dst := newEnv(t)
	res, err := dst.e.Import(bg, ImportRequest{From: &file})
	if err != nil {
		t.Fatal(err)
	}
	f, err := dst.st.Get(bg, store.View{}, store.FactRef("f1"))
	if err != nil || res.Embedded != 1 || len(f.(store.Fact).Embedding) != 64 {
		t.Errorf("import = %+v, fact %v, %v; want it embedded again with 64 dimensions", res, f, err)
	}
}

func TestImportOfABadBundleWritesNothing(t *testing.T) {
	t.Parallel()
	src := newEnv(t)
	src.knowledge(t, "main")
	var file bytes.Buffer
	if _, err := src.e.WriteFile(bg, &file, CreateRequest{Name: "x", Branch: "main"}, false); err != nil {
		t.Fatal(err)
	}
	tampered := strings.Replace(file.String(), "three times", "four times", 1)
	dst := newEnv(t)
	_, err := dst.e.Import(bg, ImportRequest{From: strings.NewReader(tampered), Branch: "new", CreateBranch: true})
	if !errors.Is(err, ErrTampered) {
		t.Errorf("a tampered bundle: %v; want ErrTampered", err)
	}
	if _, err := dst.st.GetBranch(bg, "new"); !errors.Is(err, store.ErrBranchNotFound) {
		t.Errorf("a refused import created its branch: %v", err)
	}
	_, err = dst.e.Import(bg, ImportRequest{From: bytes.NewReader(file.Bytes()), Branch: "missing"})
	if !errors.Is(err, store.ErrBranchNotFound) {
		t.Errorf("a missing branch without CreateBranch: %v; want ErrBranchNotFound", err)
	}
	for _, req := range []ImportRequest{{}, {From: &file, Bundle: "x"}, {From: &file, Policy: "merge"}, {From: &file, MaxBytes: -1}} {
		if _, err := dst.e.Import(bg, req); !errors.Is(err, store.ErrInvalidArgument) {
			t.Errorf("Import(%+v): %v; want ErrInvalidArgument", req, err)
		}
	}
	if n := len(dst.listAll(t, "main")); n != 0 {
		t.Errorf("main holds %d records after refused imports", n)
	}
}

// A bundle larger than one store batch lands through a staging branch and one merge.
func TestImportBeyondOneBatch(t *testing.T) {
	t.Parallel()
	n := oneBatch + 10
	file := bigBundle(t, n)
	for _, kind := range []string{"memory", "sqlite", "matrixone"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			dst := newEnv(t)
			if kind != "memory" {
				// A store that lands the staging branch itself (store.Lander).
				var opts store.Opener = sqlite.Options{Path: t.TempDir(), NoSync: true}
				if kind == "matrixone" {
					opts = matrixone.Options{DSN: testkit.MatrixOneDatabase(t, "day1_bundle_land")}
				}
				st, err := opts.OpenStore(bg, store.OpenEnv{Dimensions: dst.emb.Dimensions()})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { st.Close() })
				landing := &landCounter{Store: st, l: st.(store.Lander)}
				dst.st, dst.e.Store = st, landing
				defer func() {
					if landing.n != 1 {
						t.Errorf("the store landed %d branches; want the staging branch landed once", landing.n)
					}
				}()
			}
			importBeyondOneBatch(t, dst, file, n)
		})
	}
}

// landCounter is a store that counts the branches it lands.
type landCounter struct {
	store.Store
	l store.Lander
	n int
}

func (c *landCounter) Land(ctx context.Context, source, target string, rec store.MergeRecord) (store.MergeRecord, error) {
	c.n++
	return c.l.Land(ctx, source, target, rec)
}

func importBeyondOneBatch(t *testing.T, dst *env, file []byte, n int) {
	res, err := dst.e.Import(bg, ImportRequest{From: bytes.NewReader(file)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Created != n || res.Merge == "" {
		t.Errorf("import = created %d, merge %q; want %d through a merge", res.Created, res.Merge, n)
	}
	if got := len(dst.listAll(t, "main")); got != n {
		t.Errorf("main holds %d records; want %d", got, n)
	}
	bs, _ := dst.st.ListBranches(bg, store.BranchFilter{})
	if len(bs) != 1 {
		t.Errorf("branches after the import: %v; want the staging branch gone", bs)
	}
	ms, err := dst.st.ListMerges(bg, store.MergeFilter{Target: "main"})
	if err != nil || len(ms) != 1 || ms[0].ID != res.Merge || !strings.HasPrefix(ms[0].Source, "import/") || len(ms[0].Merged) != n {
		t.Errorf("merges into main: %+v, %v; want the import's one, from its staging branch", ms, err)
	}
	res, err = dst.e.Import(bg, ImportRequest{From: bytes.NewReader(file)})
	if err != nil || res.Deduplicated != n || res.Merge != "" {
		t.Errorf("again: %+v, %v; want all deduplicated and no merge", res, err)
	}
}

// exportOf creates a bundle of branch in v and returns its file.
func (v *env) exportOf(t *testing.T, branch string) (Bundle, []byte) {
	t.Helper()
	b, err := v.e.Create(bg, CreateRequest{Name: "k", Branch: branch})
	if err != nil {
		t.Fatal(err)
	}
	var file bytes.Buffer
	if _, err := v.e.Export(bg, b.ID, &file, ExportOptions{Compress: true}); err != nil {
		t.Fatal(err)
	}
	return b, file.Bytes()
}

// An import tells "nothing new" from "something clashed" by its counts: records the
// branch holds already with the same content are deduplicated, whatever their
// provenance and times, and left as they are.
func TestImportFindsWhatIsThereAlready(t *testing.T) {
	t.Parallel()
	src := newEnv(t)
	src.put(t, "main", verified("f1", "Bundle text one"), verified("f2", "Bundle text two"),
		store.Relation{ID: "r1", Source: "Gateway", Target: "AuthService", Type: "calls"})
	v := src.listAll(t, "main")
	for _, r := range v {
		if f, ok := r.(store.Fact); ok {
			f.Status = store.FactVerified
			src.put(t, "main", f)
		}
	}
	b, file := src.exportOf(t, "main")

	// Back into the branch it came from.
	before := src.listAll(t, "main")
	res, err := src.e.Import(bg, ImportRequest{From: bytes.NewReader(file)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Deduplicated != b.Counts.Total() || res.Created+res.Updated+res.Skipped+res.Conflicts+res.Superseded != 0 {
		t.Errorf("import into the source branch = %+v; want all %d deduplicated", res, b.Counts.Total())
	}
	if d := cmp.Diff(before, src.listAll(t, "main")); d != "" {
		t.Errorf("the import changed its source branch:\n%s", d)
	}

	// Into a branch that holds one of its facts, written there on its own.
	dst := newEnv(t)
	f1 := verified("f1", "Bundle text one")
	f1.Status = store.FactVerified
	dst.put(t, "main", f1)
	res, err = dst.e.Import(bg, ImportRequest{From: bytes.NewReader(file)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Deduplicated != 1 || res.Created != b.Counts.Total()-1 || res.Updated+res.Skipped+res.Conflicts != 0 {
		t.Errorf("import into a branch holding f1 = %+v; want f1 deduplicated and the rest created", res)
	}
	got, err := dst.st.Get(bg, store.View{}, store.FactRef("f1"))
	if err != nil || len(metaOf(got)) != 0 {
		t.Errorf("f1 after the import = %+v, %v; want it untouched, with no provenance", got, err)
	}
}

// A record the store accepted can be bundled: a fact with no words has no
// embedding, and travels without one.
func TestBundleOfFactsWithoutWords(t *testing.T) {
	t.Parallel()
	src := newEnv(t)
	src.put(t, "main", verified("f-sym", "<<< >>> !!!"), verified("f-emoji", "🙂🙂🙂"), verified("f-words", "The queue drains every minute"))
	_, file := src.exportOf(t, "main")
	dst := newEnv(t)
	res, err := dst.e.Import(bg, ImportRequest{From: bytes.NewReader(file)})
	if err != nil || res.Created != 3 {
		t.Fatalf("import = %+v, %v; want 3 created", res, err)
	}
	for id, dims := range map[string]int{"f-sym": 0, "f-emoji": 0, "f-words": 64} {
		r, err := dst.st.Get(bg, store.View{}, store.FactRef(id))
		if err != nil || len(store.EmbeddingOf(r)) != dims {
			t.Errorf("%s: %v, %d embedding values; want %d", id, err, len(store.EmbeddingOf(r)), dims)
		}
	}
	// Another embedder embeds again on import, and passes over the wordless ones.
	other := newEnv(t)
	other.e.Embedder = llm.NewLocalEmbedder(32)
	if res, err := other.e.Import(bg, ImportRequest{From: bytes.NewReader(file)}); err != nil || res.Created != 3 {
		t.Errorf("import with another embedder = %+v, %v", res, err)
	}
}

// The provenance an import adds does not count against the user's metadata budget.
func TestImportProvenanceOutsideTheMetadataBudget(t *testing.T) {
	t.Parallel()
	src := newEnv(t)
	f := verified("f-full", "A fact with every metadata pair the store allows")
	f.Metadata = map[string]string{}
	for i := range store.MaxMetadataPairs {
		f.Metadata[fmt.Sprintf("k%02d", i)] = "v"
	}
	src.put(t, "main", f)
	_, file := src.exportOf(t, "main")
	dst := newEnv(t)
	if res, err := dst.e.Import(bg, ImportRequest{From: bytes.NewReader(file)}); err != nil || res.Created != 1 {
		t.Fatalf("import = %+v, %v; want the fact created", res, err)
	}
	got, err := dst.st.Get(bg, store.View{}, store.FactRef("f-full"))
	if err != nil || len(metaOf(got)) != store.MaxMetadataPairs+3 || metaOf(got)[MetaBundleID] == "" {
		t.Errorf("imported fact: %d metadata pairs, %v; want %d and the provenance", len(metaOf(got)), err, store.MaxMetadataPairs+3)
	}
	// The user's own pairs stay bounded.
	f.Metadata["one-more"] = "v"
	if _, err := src.st.Put(bg, "main", []store.Record{f}, store.PutOptions{}); !errors.Is(err, store.ErrInvalidArgument) {
		t.Errorf("a fact with %d pairs of its own: %v; want an invalid argument", len(f.Metadata), err)
	}
}

// bigBundle returns the file of a bundle of n verified facts.
func bigBundle(t *testing.T, n int) []byte {
	t.Helper()
	src := newEnv(t)
	var recs []store.Record
	for i := range n {
		recs = append(recs, verified(fmt.Sprintf("f%05d", i), fmt.Sprintf("fact number %d about subsystem %d", i, i%97)))
	}
	for lo := 0; lo < n; lo += store.MaxBatch {
		src.put(t, "main", recs[lo:min(lo+store.MaxBatch, n)]...)
	}
	var file bytes.Buffer
	if _, err := src.e.WriteFile(bg, &file, CreateRequest{Name: "big", Branch: "main"}, true); err != nil {
		t.Fatal(err)
	}
	return file.Bytes()
}

// onlyReader hides every method of a reader but Read, as a pipe or a network stream.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

// An import reads a bundle a batch at a time: it reports its progress, stops between
// batches when cancelled, and leaves nothing behind, a temporary copy of a stream
// included.
func TestImportStreams(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	n := oneBatch + 3*ImportBatch/2 // beyond one store batch: a staging branch and a merge
	file := bigBundle(t, n)

	dst := newEnv(t)
	var seen []ImportProgress
	res, err := dst.e.Import(bg, ImportRequest{From: onlyReader{bytes.NewReader(file)}, Progress: func(p ImportProgress) { seen = append(seen, p) }})
	if err != nil || res.Created != n || res.Merge == "" {
		t.Fatalf("import from a stream = %+v, %v; want %d created through a merge", res, err, n)
	}
	var want []ImportProgress
	for _, phase := range []ImportPhase{PhaseCheck, PhaseWrite} {
		for done := ImportBatch; done < n; done += ImportBatch {
			want = append(want, ImportProgress{phase, done, n})
		}
		want = append(want, ImportProgress{phase, n, n})
	}
	want = append(want, ImportProgress{PhaseMerge, n, n})
	if d := cmp.Diff(want, seen); d != "" {
		t.Errorf("progress (-want +got):\n%s", d)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("the import left %d files in the temporary folder", len(left))
	}

	// Cancelled in the middle of writing: nothing lands, no staging branch stays.
	dst = newEnv(t)
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	_, err = dst.e.Import(ctx, ImportRequest{From: bytes.NewReader(file), Branch: "kb", CreateBranch: true, Progress: func(p ImportProgress) {
		if p.Phase == PhaseWrite {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled import = %v; want context.Canceled", err)
	}
	if bs, _ := dst.st.ListBranches(bg, store.BranchFilter{}); len(bs) != 1 || bs[0].Name != store.DefaultBranch {
		t.Errorf("branches after a cancelled import: %v; want main alone", bs)
	}

	// A conflict in any batch fails the import whole and names every conflict.
	dst = newEnv(t)
	dst.put(t, "main", store.Fact{ID: "f00007", Text: "another text"}, store.Fact{ID: fmt.Sprintf("f%05d", n-3), Text: "and another"})
	_, err = dst.e.Import(bg, ImportRequest{From: bytes.NewReader(file), Policy: FailOnConflict})
	var ce *ConflictError
	if !errors.As(err, &ce) || len(ce.Conflicting) != 2 {
		t.Errorf("fail policy over batches = %v; want a *ConflictError naming both", err)
	}
	if got := len(dst.listAll(t, "main")); got != 2 {
		t.Errorf("main holds %d records after a failed import; want its 2", got)
	}
}
