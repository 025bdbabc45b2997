package day1_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/store/matrixone"
	"github.com/day1ai/day1/store/memstore"
)

// use runs fn on a tenant's Client and fails the test on an error.
func use(t *testing.T, tn *day1.Tenants, name string, fn func(c *day1.Client) error) {
	t.Helper()
	if err := tn.Use(context.Background(), name, fn); err != nil {
		t.Fatalf("Use(%s): %v", name, err)
	}
}

// Records, branches, snapshots, bundles and share tokens of one tenant are out of
// reach of another: its ids read as not found, and a bundle crosses only by
// CopyBundle, with a current share token of a bundle its tenant shares.
func TestTenantsIsolation(t *testing.T) {
	eachTenantsBackend(t, func(t *testing.T, cfg day1.TenantsConfig) {
		ctx := context.Background()
		tn := openTenants(t, cfg)
		for _, n := range []string{"alpha", "beta"} {
			if err := tn.Create(ctx, n); err != nil {
				t.Fatal(err)
			}
		}
		var team, private, revoked day1.Bundle
		use(t, tn, "alpha", func(c *day1.Client) error {
			if _, err := c.WriteFact(ctx, day1.Fact{ID: "f1", Text: "The alpha vault code is kept in the north tower",
				Verify: day1.Verification{Status: day1.Verified}}); err != nil {
				return err
			}
			if _, err := c.WriteFact(ctx, day1.Fact{ID: "same", Text: "alpha's own fact under a shared id"}); err != nil {
				return err
			}
			if _, err := c.Branch(ctx, "feature", day1.BranchOptions{}); err != nil {
				return err
			}
			if _, err := c.Snapshot(ctx, "main", "before", day1.SnapshotOptions{}); err != nil {
				return err
			}
			var err error
			if team, err = c.CreateBundle(ctx, day1.CreateBundleRequest{Name: "team", Branch: "main", Visibility: day1.BundleTeam}); err != nil {
				return err
			}
			if private, err = c.CreateBundle(ctx, day1.CreateBundleRequest{Name: "private", Branch: "main"}); err != nil {
				return err
			}
			if revoked, err = c.CreateBundle(ctx, day1.CreateBundleRequest{Name: "revoked", Branch: "main", Visibility: day1.BundlePublic}); err != nil {
				return err
			}
			_, err = c.SetBundleVisibility(ctx, revoked.ID, day1.BundlePrivate)
			return err
		})
		if team.ShareToken == "" || revoked.ShareToken == "" || private.ShareToken != "" {
			t.Fatalf("tokens: team %q, revoked %q, private %q", team.ShareToken, revoked.ShareToken, private.ShareToken)
		}

		use(t, tn, "beta", func(c *day1.Client) error {
			if _, err := c.GetFact(ctx, "main", "f1"); !errors.Is(err, day1.ErrNotFound) {
				t.Errorf("beta reads alpha's fact id: %v; want ErrNotFound", err)
			}
			hits, err := c.Search(ctx, day1.SearchQuery{Text: "alpha vault code north tower"})
			if err != nil || len(hits) != 0 {
				t.Errorf("beta's search for alpha's text = %d hits, %v; want none", len(hits), err)
			}
			if _, err := c.ListFacts(ctx, day1.ListOptions{Branch: "feature"}); !errors.Is(err, day1.ErrBranchNotFound) {
				t.Errorf("beta reads alpha's branch: %v; want ErrBranchNotFound", err)
			}
			if _, err := c.TimeTravel(day1.AtSnapshot("before")).ListFacts(ctx, day1.ListOptions{}); !errors.Is(err, day1.ErrSnapshotNotFound) {
				t.Errorf("beta reads alpha's snapshot: %v; want ErrSnapshotNotFound", err)
			}
			// The same names and ids are beta's own to use.
			if _, err := c.Branch(ctx, "feature", day1.BranchOptions{}); err != nil {
				t.Errorf("beta makes its own branch feature: %v", err)
			}
			w, err := c.WriteFact(ctx, day1.Fact{ID: "same", Text: "beta's own fact under a shared id"})
			if err != nil || w.Outcome != day1.Created {
				t.Errorf("beta writes id same: %v, %v; want Created", w.Outcome, err)
			}
			for _, b := range []day1.Bundle{team, private, revoked} {
				if _, err := c.GetBundle(ctx, b.ID); !errors.Is(err, day1.ErrNotFound) {
					t.Errorf("beta gets alpha's bundle %s: %v; want ErrNotFound", b.Name, err)
				}
				if _, err := c.ImportBundle(ctx, day1.ImportBundleRequest{Bundle: b.ID}); !errors.Is(err, day1.ErrNotFound) {
					t.Errorf("beta imports alpha's bundle %s by id: %v; want ErrNotFound", b.Name, err)
				}
			}
			for _, tok := range []string{team.ShareToken, revoked.ShareToken} {
				if _, err := c.SharedBundle(ctx, tok); !errors.Is(err, day1.ErrNotFound) {
					t.Errorf("beta resolves alpha's token: %v; want ErrNotFound", err)
				}
				if _, err := c.ImportBundle(ctx, day1.ImportBundleRequest{ShareToken: tok}); !errors.Is(err, day1.ErrNotFound) {
					t.Errorf("beta imports by alpha's token: %v; want ErrNotFound", err)
				}
			}
			return nil
		})

		// CopyBundle resolves a token in the tenant it names only, refuses revoked
		// tokens and private bundles, and copies what is shared.
		for _, tc := range []struct {
			name string
			req  day1.CopyBundleRequest
			want error
		}{
			{"token looked up in the wrong tenant", day1.CopyBundleRequest{From: "beta", ShareToken: team.ShareToken, To: "alpha"}, day1.ErrNotFound},
			{"revoked token", day1.CopyBundleRequest{From: "alpha", ShareToken: revoked.ShareToken, To: "beta"}, day1.ErrNotFound},
			{"private bundle by id", day1.CopyBundleRequest{From: "alpha", Bundle: private.ID, To: "beta"}, day1.ErrInvalidArgument},
			{"id looked up in the wrong tenant", day1.CopyBundleRequest{From: "beta", Bundle: team.ID, To: "alpha"}, day1.ErrNotFound},
			{"token and id", day1.CopyBundleRequest{From: "alpha", ShareToken: team.ShareToken, Bundle: team.ID, To: "beta"}, day1.ErrInvalidArgument},
			{"unknown source tenant", day1.CopyBundleRequest{From: "gamma", ShareToken: team.ShareToken, To: "beta"}, day1.ErrTenantNotFound},
		} {
			if _, err := tn.CopyBundle(ctx, tc.req); !errors.Is(err, tc.want) {
				t.Errorf("CopyBundle, %s: %v; want %v", tc.name, err, tc.want)
			}
		}
		var ve *day1.ValidationError
		if _, err := tn.CopyBundle(ctx, day1.CopyBundleRequest{From: "alpha", Bundle: private.ID, To: "beta"}); !errors.As(err, &ve) || ve.Field != "CopyBundleRequest.Bundle" {
			t.Errorf("CopyBundle of a private bundle: %v; want a *ValidationError for CopyBundleRequest.Bundle", err)
		}
		res, err := tn.CopyBundle(ctx, day1.CopyBundleRequest{From: "alpha", ShareToken: team.ShareToken, To: "beta", Branch: "from-alpha", CreateBranch: true})
		if err != nil || res.Created != 1 {
			t.Fatalf("CopyBundle of the team bundle = %+v, %v; want 1 created", res, err)
		}
		if res, err := tn.CopyBundle(ctx, day1.CopyBundleRequest{From: "alpha", Bundle: team.ID, To: "beta", Branch: "from-alpha"}); err != nil || res.Deduplicated != 1 {
			t.Errorf("CopyBundle again by id = %+v, %v; want 1 deduplicated", res, err)
		}
		use(t, tn, "beta", func(c *day1.Client) error {
			got, err := c.ListFacts(ctx, day1.ListOptions{Branch: "from-alpha"})
			if err != nil {
				return err
			}
			var texts []string
			for _, f := range got {
				texts = append(texts, f.Text)
			}
			if !slices.Contains(texts, "The alpha vault code is kept in the north tower") || slices.Contains(texts, "alpha's own fact under a shared id") {
				t.Errorf("beta's from-alpha branch holds %q; want the bundled fact and not alpha's unverified one", texts)
			}
			main, err := c.ListFacts(ctx, day1.ListOptions{})
			if err != nil || len(main) != 1 || main[0].Text != "beta's own fact under a shared id" {
				t.Errorf("beta's main = %v, %v; want only its own fact", main, err)
			}
			return nil
		})
		use(t, tn, "alpha", func(c *day1.Client) error {
			f, err := c.GetFact(ctx, "main", "same")
			if err != nil || f.Text != "alpha's own fact under a shared id" {
				t.Errorf("alpha's fact same = %q, %v; want alpha's text", f.Text, err)
			}
			return nil
		})
	})
}

// Names that could escape a folder, quote SQL or alias another tenant by case,
// Unicode or normalisation are refused with a *ValidationError before anything is
// touched; distinct valid names reach distinct memories.
func TestTenantNamesAdversarial(t *testing.T) {
	bad := []string{
		"", ".", "..", "../x", "../../etc", "a/b", "a/../b", "/etc", "/tmp/x", `C:\x`, `a\b`, `..\x`,
		"a\x00b", "\x00", "a\n", "a b", " a", "a\t",
		"a'b", "a\"b", "a`b", "a;drop database mo_catalog", "x`; drop database day1; --", "a%2fb", "a*", "a?", "a:b",
		"Alice", "ALICE", "aLice",
		"аlice",       // Cyrillic а
		"ａlice",       // fullwidth a
		"al\u200dice", // zero-width joiner
		"al\u200bice", // zero-width space
		"caf\u00e9",   // é, NFC
		"cafe\u0301",  // e and a combining accent, NFD
		"\u212a",      // Kelvin sign, which folds to k
		"ﬁle",         // the fi ligature
		"-a", "_a", ".a", "a.b", "a..b",
		strings.Repeat("a", 64),
		"con", "nul", "prn", "aux", "com1", "lpt9",
	}
	eachTenantsBackend(t, func(t *testing.T, cfg day1.TenantsConfig) {
		ctx := context.Background()
		cfg.AutoCreate = true // even so, nothing may be created
		tn := openTenants(t, cfg)
		if err := tn.Create(ctx, "alice"); err != nil {
			t.Fatal(err)
		}
		isInvalid := func(op, name, field string, err error) {
			t.Helper()
			var ve *day1.ValidationError
			if !errors.As(err, &ve) || ve.Field != field || !errors.Is(err, day1.ErrInvalidArgument) {
				t.Errorf("%s(%q) = %v; want a *ValidationError for %s", op, name, err, field)
			}
		}
		for _, name := range bad {
			isInvalid("Create", name, "tenant", tn.Create(ctx, name))
			_, err := tn.Acquire(ctx, name)
			isInvalid("Acquire", name, "tenant", err)
			isInvalid("Use", name, "tenant", tn.Use(ctx, name, func(*day1.Client) error {
				t.Errorf("Use(%q) ran its function", name)
				return nil
			}))
			isInvalid("Delete", name, "tenant", tn.Delete(ctx, name))
			_, err = tn.CopyBundle(ctx, day1.CopyBundleRequest{From: name, ShareToken: "x", To: "alice"})
			isInvalid("CopyBundle From", name, "CopyBundleRequest.From", err)
			_, err = tn.CopyBundle(ctx, day1.CopyBundleRequest{From: "alice", ShareToken: "x", To: name})
			isInvalid("CopyBundle To", name, "CopyBundleRequest.To", err)
			isInvalid("ValidateTenantName", name, "tenant", day1.ValidateTenantName(name))
		}
		got, err := tn.List(ctx)
		if err != nil || !slices.Equal(got, []string{"alice"}) {
			t.Errorf("List after the refused names = %v, %v; want [alice]", got, err)
		}
		if cfg.Path != "" {
			// Nothing was made beside the tenants' folder, nor inside it but alice's.
			parent, err := os.ReadDir(filepath.Dir(cfg.Path))
			if err != nil || len(parent) != 1 || parent[0].Name() != filepath.Base(cfg.Path) {
				t.Errorf("the folder above Path holds %v, %v; want only %s", parent, err, filepath.Base(cfg.Path))
			}
			inside, err := os.ReadDir(cfg.Path)
			if err != nil || len(inside) != 1 || inside[0].Name() != "alice" {
				t.Errorf("Path holds %v, %v; want only alice", inside, err)
			}
		}

		// Names that differ only in '-' and '_' are distinct tenants. Each costs a
		// database on MatrixOne, so it checks the four that matter most there.
		names := []string{"a-b", "a_b", "a--b", "a__b", "a-_b", "a_-b", "ab", "a-b-", "a_u", "a0"}
		if cfg.DSN != "" {
			names = names[:4]
		}
		for _, n := range names {
			use(t, tn, n, func(c *day1.Client) error {
				_, err := c.WriteFact(ctx, day1.Fact{ID: "who", Text: "this memory belongs to " + n})
				return err
			})
		}
		for _, n := range names {
			use(t, tn, n, func(c *day1.Client) error {
				fs, err := c.ListFacts(ctx, day1.ListOptions{})
				if err != nil || len(fs) != 1 || fs[0].Text != "this memory belongs to "+n {
					t.Errorf("tenant %s holds %v, %v; want its own fact alone", n, fs, err)
				}
				return nil
			})
		}
		got, _ = tn.List(ctx)
		want := append(slices.Clone(names), "alice")
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("List = %v; want %v", got, want)
		}

		// The longest name fits a folder; a database name has 64 characters at most.
		long := strings.Repeat("z", day1.MaxTenantNameLen)
		err = tn.Create(ctx, long)
		if cfg.DSN == "" && err != nil {
			t.Errorf("Create of a %d-character name: %v", len(long), err)
		}
		if cfg.DSN != "" {
			isInvalid("Create", long, "tenant", err)
		}
	})
}

// Create, List, Acquire, Delete and AutoCreate; a tenant's memory outlives the
// manager.
func TestTenantsLifecycle(t *testing.T) {
	eachTenantsBackend(t, func(t *testing.T, cfg day1.TenantsConfig) {
		ctx := context.Background()
		tn, err := day1.OpenTenants(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := tn.List(ctx); err != nil || len(got) != 0 {
			t.Errorf("List of a new manager = %v, %v; want none", got, err)
		}
		if _, err := tn.Acquire(ctx, "acme"); !errors.Is(err, day1.ErrTenantNotFound) || !errors.Is(err, day1.ErrNotFound) {
			t.Errorf("Acquire of an unknown tenant: %v; want ErrTenantNotFound", err)
		}
		if err := tn.Create(ctx, "acme"); err != nil {
			t.Fatal(err)
		}
		if err := tn.Create(ctx, "acme"); !errors.Is(err, day1.ErrTenantExists) || !errors.Is(err, day1.ErrExists) {
			t.Errorf("Create twice: %v; want ErrTenantExists", err)
		}
		use(t, tn, "acme", func(c *day1.Client) error {
			_, err := c.WriteFact(ctx, day1.Fact{ID: "f", Text: "acme ships on fridays"})
			return err
		})
		if err := tn.Create(ctx, "acme"); !errors.Is(err, day1.ErrTenantExists) {
			t.Errorf("Create of an open tenant: %v; want ErrTenantExists", err)
		}
		if err := tn.Close(); err != nil {
			t.Fatal(err)
		}

		// A new manager finds the tenant and its memory.
		tn = openTenants(t, cfg)
		if got, err := tn.List(ctx); err != nil || !slices.Equal(got, []string{"acme"}) {
			t.Errorf("List after reopening = %v, %v; want [acme]", got, err)
		}
		use(t, tn, "acme", func(c *day1.Client) error {
			f, err := c.GetFact(ctx, "main", "f")
			if err != nil || f.Text != "acme ships on fridays" {
				t.Errorf("acme's fact after reopening = %q, %v", f.Text, err)
			}
			return nil
		})

		if err := tn.Delete(ctx, "acme"); err != nil {
			t.Fatalf("Delete: %v", err)
		}
		if err := tn.Delete(ctx, "acme"); !errors.Is(err, day1.ErrTenantNotFound) {
			t.Errorf("Delete twice: %v; want ErrTenantNotFound", err)
		}
		if got, err := tn.List(ctx); err != nil || len(got) != 0 {
			t.Errorf("List after Delete = %v, %v; want none", got, err)
		}
		if err := tn.Use(ctx, "acme", func(*day1.Client) error { return nil }); !errors.Is(err, day1.ErrTenantNotFound) {
			t.Errorf("Use after Delete: %v; want ErrTenantNotFound", err)
		}
		// A tenant made again under the name starts empty.
		if err := tn.Create(ctx, "acme"); err != nil {
			t.Fatal(err)
		}
		use(t, tn, "acme", func(c *day1.Client) error {
			if _, err := c.GetFact(ctx, "main", "f"); !errors.Is(err, day1.ErrNotFound) {
				t.Errorf("the deleted tenant's fact in the new one: %v; want ErrNotFound", err)
			}
			return nil
		})

		// With AutoCreate, the first use creates the tenant.
		cfg.AutoCreate = true
		auto := openTenants(t, cfg)
		use(t, auto, "newcomer", func(c *day1.Client) error {
			_, err := c.WriteFact(ctx, day1.Fact{Text: "made on first use"})
			return err
		})
		if got, _ := auto.List(ctx); !slices.Equal(got, []string{"acme", "newcomer"}) {
			t.Errorf("List with AutoCreate = %v; want [acme newcomer]", got)
		}
	})
}

// A folder under Path without the marker is no tenant: List passes over it and
// Delete leaves it alone.
func TestTenantsFolderWithoutMarker(t *testing.T) {
	ctx := context.Background()
	root := filepath.Join(t.TempDir(), "tenants")
	keep := filepath.Join(root, "documents")
	if err := os.MkdirAll(keep, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(keep, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	tn := openTenants(t, day1.TenantsConfig{Path: root, Client: tenantsClient()})
	if got, err := tn.List(ctx); err != nil || len(got) != 0 {
		t.Errorf("List = %v, %v; want none", got, err)
	}
	if err := tn.Delete(ctx, "documents"); !errors.Is(err, day1.ErrTenantNotFound) {
		t.Errorf("Delete of a folder that is no tenant: %v; want ErrTenantNotFound", err)
	}
	if err := tn.Use(ctx, "documents", func(*day1.Client) error { return nil }); !errors.Is(err, day1.ErrTenantNotFound) {
		t.Errorf("Use of a folder that is no tenant: %v; want ErrTenantNotFound", err)
	}
	if err := tn.Create(ctx, "documents"); !errors.Is(err, day1.ErrExists) {
		t.Errorf("Create over a folder with files: %v; want ErrExists", err)
	}
	if b, err := os.ReadFile(filepath.Join(keep, "notes.txt")); err != nil || string(b) != "mine" {
		t.Errorf("the folder's file after all that: %q, %v", b, err)
	}
	// An empty folder (a creation cut short) is adopted.
	if err := os.Mkdir(filepath.Join(root, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := tn.Create(ctx, "empty"); err != nil {
		t.Errorf("Create over an empty folder: %v", err)
	}
}

// Many goroutines on many tenants through a small bound: no write is lost or lands
// in another tenant, no Client is closed under its user, and no more than MaxOpen
// stores are ever open at once.
func TestTenantsConcurrent(t *testing.T) {
	const (
		tenants    = 12
		goroutines = 24
		ops        = 40
		maxOpen    = 3
	)
	run := func(t *testing.T, cfg day1.TenantsConfig, stores *memTenantStores) {
		ctx := context.Background()
		cfg.MaxOpen = maxOpen
		tn := openTenants(t, cfg)
		name := func(i int) string { return fmt.Sprintf("t%02d", i) }
		for i := range tenants {
			if err := tn.Create(ctx, name(i)); err != nil {
				t.Fatal(err)
			}
		}
		var mu sync.Mutex
		written := map[string]int{}
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Go(func() {
				for i := range ops {
					tenant := name((g*7 + i*5) % tenants)
					id := fmt.Sprintf("g%d-%d", g, i)
					text := fmt.Sprintf("goroutine %d op %d writes to tenant %s", g, i, tenant)
					op := func(c *day1.Client) error {
						if _, err := c.WriteFact(ctx, day1.Fact{ID: id, Text: text}); err != nil {
							return err
						}
						f, err := c.GetFact(ctx, "main", id)
						if err == nil && f.Text != text {
							err = fmt.Errorf("read back %q", f.Text)
						}
						return err
					}
					var err error
					if i%3 == 0 {
						var l *day1.TenantLease
						if l, err = tn.Acquire(ctx, tenant); err == nil {
							err = op(l.Client())
							l.Release()
							l.Release() // a second release does nothing
						}
					} else {
						err = tn.Use(ctx, tenant, op)
					}
					if err != nil {
						t.Errorf("%s on %s: %v", id, tenant, err)
						return
					}
					mu.Lock()
					written[tenant]++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		st := tn.Stats()
		if st.Open > maxOpen || st.Leases != 0 || st.Waiting != 0 {
			t.Errorf("Stats after the run = %+v; want at most %d open, no lease, nobody waiting", st, maxOpen)
		}
		if st.Evicted < tenants-maxOpen {
			t.Errorf("Stats.Evicted = %d; %d tenants through %d slots evict at least %d", st.Evicted, tenants, maxOpen, tenants-maxOpen)
		}
		for i := range tenants {
			use(t, tn, name(i), func(c *day1.Client) error {
				fs, err := c.ListFacts(ctx, day1.ListOptions{})
				if err != nil {
					return err
				}
				if len(fs) != written[name(i)] {
					t.Errorf("tenant %s holds %d facts; %d were written to it", name(i), len(fs), written[name(i)])
				}
				for _, f := range fs {
					if !strings.HasSuffix(f.Text, "tenant "+name(i)) {
						t.Errorf("tenant %s holds %q", name(i), f.Text)
					}
				}
				return nil
			})
		}
		if stores != nil {
			if _, most, _ := stores.counts(); most > maxOpen {
				t.Errorf("%d stores were open at once; MaxOpen is %d", most, maxOpen)
			}
		}
	}
	t.Run("stores", func(t *testing.T) {
		s := newMemTenantStores()
		run(t, day1.TenantsConfig{Stores: s, Client: tenantsClient()}, s)
	})
	t.Run("folders", func(t *testing.T) {
		c := tenantsClient()
		c.Backend = memstore.Options{Sync: memstore.SyncNever}
		run(t, day1.TenantsConfig{Path: t.TempDir(), Client: c}, nil)
	})
}

// An eviction passes over a held tenant and waits for a release; a waiter gives up
// when its context ends.
func TestTenantsEvictionWaitsForHolders(t *testing.T) {
	ctx := context.Background()
	stores := newMemTenantStores()
	tn := openTenants(t, day1.TenantsConfig{Stores: stores, Client: tenantsClient(), MaxOpen: 1})
	for _, n := range []string{"a", "b"} {
		if err := tn.Create(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	la, err := tn.Acquire(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	_, err = tn.Acquire(short, "b")
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire while the only slot is held: %v; want the context's deadline", err)
	}
	got := make(chan error, 1)
	var lb *day1.TenantLease
	go func() {
		var err error
		lb, err = tn.Acquire(ctx, "b")
		got <- err
	}()
	waitFor(t, "an Acquire waiting for a slot", func() bool { return tn.Stats().Waiting == 1 })
	if _, err := la.Client().WriteFact(ctx, day1.Fact{Text: "still mine while b waits"}); err != nil {
		t.Fatalf("the held Client while another waits: %v", err)
	}
	a := la.Client()
	la.Release()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	defer lb.Release()
	if _, err := a.ListFacts(ctx, day1.ListOptions{}); !errors.Is(err, day1.ErrClosed) {
		t.Errorf("a's Client after its eviction: %v; want ErrClosed", err)
	}
	if st := tn.Stats(); st.Evicted != 1 || st.Open != 1 {
		t.Errorf("Stats = %+v; want 1 evicted, 1 open", st)
	}
	if open, most, _ := stores.counts(); open != 1 || most != 1 {
		t.Errorf("stores open %d, at most %d; want 1 and 1", open, most)
	}
}

// waitFor polls cond until it holds, failing the test after ten seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// A waiter for a tenant being opened does not inherit the opener's cancelled
// context: it opens the tenant itself.
func TestTenantsOpenerCancelled(t *testing.T) {
	ctx := context.Background()
	stores := newMemTenantStores()
	tn := openTenants(t, day1.TenantsConfig{Stores: stores, Client: tenantsClient()})
	if err := tn.Create(ctx, "slow"); err != nil {
		t.Fatal(err)
	}
	gate := make(chan struct{})
	stores.mu.Lock()
	stores.gate["slow"] = gate
	stores.mu.Unlock()

	opener, cancel := context.WithCancel(ctx)
	first := make(chan error, 1)
	go func() {
		_, err := tn.Acquire(opener, "slow")
		first <- err
	}()
	waitFor(t, "the opener", func() bool { return tn.Stats().Leases == 1 })
	second := make(chan error, 1)
	go func() {
		second <- tn.Use(ctx, "slow", func(c *day1.Client) error {
			_, err := c.WriteFact(ctx, day1.Fact{Text: "opened by the second caller"})
			return err
		})
	}()
	waitFor(t, "the second caller to wait", func() bool { return tn.Stats().Leases == 2 })
	cancel()
	if err := <-first; !errors.Is(err, context.Canceled) {
		t.Errorf("the opener: %v; want context.Canceled", err)
	}
	close(gate)
	if err := <-second; err != nil {
		t.Errorf("the second caller: %v; want it to open the tenant itself", err)
	}
}

// A failed open leaves nothing behind, and the next Acquire tries again.
func TestTenantsOpenFailure(t *testing.T) {
	ctx := context.Background()
	stores := newMemTenantStores()
	tn := openTenants(t, day1.TenantsConfig{Stores: stores, Client: tenantsClient(), MaxOpen: 1})
	if err := tn.Create(ctx, "flaky"); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("disk on fire")
	stores.mu.Lock()
	stores.failing["flaky"] = boom
	stores.mu.Unlock()
	if err := tn.Use(ctx, "flaky", func(*day1.Client) error { return nil }); !errors.Is(err, boom) {
		t.Errorf("Use of a tenant whose store fails: %v; want the store's error", err)
	}
	if st := tn.Stats(); st.Open != 0 || st.Leases != 0 {
		t.Errorf("Stats after a failed open = %+v; want nothing open", st)
	}
	stores.mu.Lock()
	delete(stores.failing, "flaky")
	stores.mu.Unlock()
	if err := tn.Use(ctx, "flaky", func(*day1.Client) error { return nil }); err != nil {
		t.Errorf("Use once the store works: %v", err)
	}

	// A store that panics while opening leaves the manager as it was.
	if err := tn.Create(ctx, "wild"); err != nil {
		t.Fatal(err)
	}
	stores.mu.Lock()
	stores.panics["wild"] = true
	stores.mu.Unlock()
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the store's panic did not reach the caller")
			}
		}()
		_ = tn.Use(ctx, "wild", func(*day1.Client) error { return nil })
	}()
	if st := tn.Stats(); st.Leases != 0 || st.Open != 0 {
		t.Errorf("Stats after a panicking open = %+v; want nothing open and no lease", st)
	}
	stores.mu.Lock()
	delete(stores.panics, "wild")
	stores.mu.Unlock()
	if err := tn.Use(ctx, "wild", func(*day1.Client) error { return nil }); err != nil {
		t.Errorf("Use once the store behaves: %v", err)
	}
}

// Close refuses new work at once, waits for the leases, then closes every Client;
// Shutdown gives up waiting when its context ends and leaves held tenants open.
func TestTenantsClose(t *testing.T) {
	ctx := context.Background()
	stores := newMemTenantStores()
	tn, err := day1.OpenTenants(ctx, day1.TenantsConfig{Stores: stores, Client: tenantsClient(), AutoCreate: true})
	if err != nil {
		t.Fatal(err)
	}
	use(t, tn, "idle", func(*day1.Client) error { return nil })
	l, err := tn.Acquire(ctx, "held")
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	err = tn.Shutdown(short)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Shutdown while a lease is held: %v; want the context's deadline", err)
	}
	if _, err := l.Client().WriteFact(ctx, day1.Fact{Text: "written during the shutdown"}); err != nil {
		t.Errorf("the held Client during Shutdown: %v", err)
	}
	for name, err := range map[string]error{
		"Acquire": func() error { _, err := tn.Acquire(ctx, "idle"); return err }(),
		"Use":     tn.Use(ctx, "held", func(*day1.Client) error { return nil }),
		"Create":  tn.Create(ctx, "another"),
		"Delete":  tn.Delete(ctx, "idle"),
		"List":    func() error { _, err := tn.List(ctx); return err }(),
	} {
		if !errors.Is(err, day1.ErrClosed) {
			t.Errorf("%s after Shutdown: %v; want ErrClosed", name, err)
		}
	}
	closed := make(chan error, 1)
	go func() { closed <- tn.Close() }()
	select {
	case err := <-closed:
		t.Fatalf("Close returned %v while a lease is held", err)
	case <-time.After(20 * time.Millisecond):
	}
	c := l.Client()
	l.Release()
	if err := <-closed; err != nil {
		t.Errorf("Close: %v", err)
	}
	if _, err := c.ListFacts(ctx, day1.ListOptions{}); !errors.Is(err, day1.ErrClosed) {
		t.Errorf("a tenant's Client after Close: %v; want ErrClosed", err)
	}
	if open, _, _ := stores.counts(); open != 0 {
		t.Errorf("%d stores open after Close; want 0", open)
	}
	if err := tn.Close(); !errors.Is(err, day1.ErrClosed) {
		t.Errorf("Close twice: %v; want ErrClosed", err)
	}
}

// Delete waits for the tenant's holders, and gives up, leaving the tenant as it was,
// when its context ends first.
func TestTenantsDeleteWaitsForHolders(t *testing.T) {
	ctx := context.Background()
	stores := newMemTenantStores()
	tn := openTenants(t, day1.TenantsConfig{Stores: stores, Client: tenantsClient()})
	if err := tn.Create(ctx, "doomed"); err != nil {
		t.Fatal(err)
	}
	l, err := tn.Acquire(ctx, "doomed")
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	err = tn.Delete(short, "doomed")
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Delete while held: %v; want the context's deadline", err)
	}
	if _, err := l.Client().WriteFact(ctx, day1.Fact{Text: "still here"}); err != nil {
		t.Errorf("the held Client after a Delete gave up: %v", err)
	}
	deleted := make(chan error, 1)
	go func() { deleted <- tn.Delete(ctx, "doomed") }()
	// Once Delete has claimed the tenant, new users wait for it and then find none.
	waitFor(t, "Delete to claim the tenant", func() bool {
		short, cancel := context.WithTimeout(ctx, time.Millisecond)
		defer cancel()
		l, err := tn.Acquire(short, "doomed")
		if err == nil {
			l.Release()
		}
		return errors.Is(err, context.DeadlineExceeded)
	})
	later := make(chan error, 1)
	go func() { later <- tn.Use(ctx, "doomed", func(*day1.Client) error { return nil }) }()
	l.Release()
	if err := <-deleted; err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if err := <-later; !errors.Is(err, day1.ErrTenantNotFound) {
		t.Errorf("Use that waited for the Delete: %v; want ErrTenantNotFound", err)
	}
	if open, _, _ := stores.counts(); open != 0 || !slices.Equal(stores.deleted, []string{"doomed"}) {
		t.Errorf("stores open %d, deleted %v; want 0 and [doomed]", open, stores.deleted)
	}
}

// A tenant's Client belongs to the manager: closing it is refused and changes
// nothing.
func TestTenantClientCloseRefused(t *testing.T) {
	ctx := context.Background()
	tn := openTenants(t, day1.TenantsConfig{Stores: newMemTenantStores(), Client: tenantsClient(), AutoCreate: true})
	use(t, tn, "acme", func(c *day1.Client) error {
		var ve *day1.ValidationError
		if err := c.Close(); !errors.As(err, &ve) || ve.Field != "Client" {
			t.Errorf("Close of a tenant's Client: %v; want a *ValidationError for Client", err)
		}
		_, err := c.WriteFact(ctx, day1.Fact{Text: "still open"})
		return err
	})
}

// A configuration that makes no sense is a *ValidationError naming its field.
func TestTenantsConfigInvalid(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name  string
		cfg   day1.TenantsConfig
		field string
	}{
		{"nothing", day1.TenantsConfig{}, "TenantsConfig"},
		{"two places", day1.TenantsConfig{Path: dir, Stores: newMemTenantStores()}, "TenantsConfig"},
		{"client path", day1.TenantsConfig{Path: dir, Client: day1.Config{Path: dir}}, "TenantsConfig.Client.Path"},
		{"client dsn", day1.TenantsConfig{Path: dir, Client: day1.Config{DSN: "root@tcp(x)/"}}, "TenantsConfig.Client.DSN"},
		{"negative bound", day1.TenantsConfig{Path: dir, MaxOpen: -1}, "TenantsConfig.MaxOpen"},
		{"prefix without DSN", day1.TenantsConfig{Path: dir, DatabasePrefix: "x_"}, "TenantsConfig.DatabasePrefix"},
		{"bad prefix", day1.TenantsConfig{DSN: "root:111@tcp(127.0.0.1:1)/", DatabasePrefix: "X-"}, "TenantsConfig.DatabasePrefix"},
		{"DSN with a database", day1.TenantsConfig{DSN: "root:111@tcp(127.0.0.1:1)/day1"}, "TenantsConfig.DSN"},
		{"backend options on stores", day1.TenantsConfig{Stores: newMemTenantStores(), Client: day1.Config{Backend: memstore.Options{Sync: memstore.SyncNever}}}, "TenantsConfig.Client.Backend"},
		{"MatrixOne options on folders", day1.TenantsConfig{Path: dir, Client: day1.Config{Backend: matrixone.Options{}}}, "TenantsConfig.Client.Backend"},
		{"a path in the folders' options", day1.TenantsConfig{Path: dir, Client: day1.Config{Backend: memstore.Options{Path: dir}}}, "TenantsConfig.Client.Backend"},
		{"bad folder options", day1.TenantsConfig{Path: dir, Client: day1.Config{Backend: memstore.Options{LockTimeout: -1}}}, "TenantsConfig.Client.Backend.LockTimeout"},
		{"bad client threshold", day1.TenantsConfig{Path: dir, Client: day1.Config{DedupeThreshold: 2}}, "TenantsConfig.Client.DedupeThreshold"},
	} {
		_, err := day1.OpenTenants(context.Background(), tc.cfg)
		var ve *day1.ValidationError
		if !errors.As(err, &ve) || ve.Field != tc.field {
			t.Errorf("%s: %v; want a *ValidationError for %s", tc.name, err, tc.field)
		}
	}
}

// BenchmarkTenantsUse measures Use on a tenant that is open (hot) and through a bound
// smaller than the tenants used in turn, so that every Use closes one Client and
// opens another (churn), on stores kept in memory and on the folders of durable
// embedded stores.
func BenchmarkTenantsUse(b *testing.B) {
	ctx := context.Background()
	for _, bc := range []struct {
		name             string
		tenants, maxOpen int
		folders          bool
	}{{"hot", 1, 4, false}, {"churn", 8, 2, false}, {"hot-folders", 1, 4, true}, {"churn-folders", 8, 2, true}} {
		b.Run(bc.name, func(b *testing.B) {
			cfg := day1.TenantsConfig{Stores: newMemTenantStores(), Client: tenantsClient(), MaxOpen: bc.maxOpen, AutoCreate: true}
			if bc.folders {
				cfg.Stores, cfg.Path = nil, b.TempDir()
			}
			tn, err := day1.OpenTenants(ctx, cfg)
			if err != nil {
				b.Fatal(err)
			}
			defer tn.Close()
			names := make([]string, bc.tenants)
			for i := range names {
				names[i] = fmt.Sprintf("t%d", i)
			}
			noop := func(*day1.Client) error { return nil }
			i := 0
			for b.Loop() {
				if err := tn.Use(ctx, names[i%len(names)], noop); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
