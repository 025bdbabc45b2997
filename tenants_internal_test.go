package day1

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/day1ai/day1/llm"
	"github.com/day1ai/day1/store/memstore"
)

// manualClock is a clock that moves only when told.
type manualClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *manualClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func openTestTenants(t *testing.T, cfg TenantsConfig) *Tenants {
	t.Helper()
	cfg.Path = t.TempDir()
	cfg.AutoCreate = true
	cfg.Client = Config{Embedder: llm.NewStemEmbedder(16), Backend: memstore.Options{Sync: memstore.SyncNever}}
	tn, err := OpenTenants(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tn.Close() })
	return tn
}

// Tenants idle for IdleTimeout close; a held tenant stays open however long it is
// held, and its idle time starts at its release.
func TestTenantsCloseIdle(t *testing.T) {
	ctx := context.Background()
	clk := &manualClock{t: t0}
	tn := openTestTenants(t, TenantsConfig{IdleTimeout: time.Hour, Test: TenantsTestConfig{Now: clk.Now}})
	if err := tn.Use(ctx, "idle", func(*Client) error { return nil }); err != nil {
		t.Fatal(err)
	}
	held, err := tn.Acquire(ctx, "held")
	if err != nil {
		t.Fatal(err)
	}
	clk.advance(59 * time.Minute)
	tn.closeIdle()
	if st := tn.Stats(); st.Open != 2 || st.IdleClosed != 0 {
		t.Fatalf("after 59 minutes: %+v; want both open", st)
	}
	clk.advance(2 * time.Hour)
	tn.closeIdle()
	if st := tn.Stats(); st.Open != 1 || st.IdleClosed != 1 || st.InUse != 1 {
		t.Fatalf("after 2 hours: %+v; want the held tenant alone open", st)
	}
	if _, err := held.Client().WriteFact(ctx, Fact{Text: "held through the idle sweep"}); err != nil {
		t.Errorf("the held Client after the sweep: %v", err)
	}
	held.Release()
	clk.advance(30 * time.Minute)
	tn.closeIdle()
	if st := tn.Stats(); st.Open != 1 {
		t.Errorf("30 minutes after its release: %+v; want it open", st)
	}
	clk.advance(31 * time.Minute)
	tn.closeIdle()
	if st := tn.Stats(); st.Open != 0 || st.IdleClosed != 2 {
		t.Errorf("61 minutes after its release: %+v; want it closed", st)
	}
	// A closed tenant opens again, with what it held.
	if err := tn.Use(ctx, "held", func(c *Client) error {
		fs, err := c.ListFacts(ctx, ListOptions{})
		if err == nil && len(fs) != 1 {
			t.Errorf("held after reopening: %d facts; want 1", len(fs))
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

// The manager's own goroutine closes idle tenants on the real clock.
func TestTenantsIdleReaper(t *testing.T) {
	tn := openTestTenants(t, TenantsConfig{IdleTimeout: 5 * time.Millisecond})
	if err := tn.Use(context.Background(), "brief", func(*Client) error { return nil }); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for tn.Stats().IdleClosed == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the idle tenant was not closed: %+v", tn.Stats())
		}
		time.Sleep(time.Millisecond)
	}
	if st := tn.Stats(); st.Open != 0 {
		t.Errorf("Stats = %+v; want nothing open", st)
	}
}

// The least recently used idle tenant makes room; a held one is passed over.
func TestTenantsEvictsLeastRecentlyUsed(t *testing.T) {
	ctx := context.Background()
	tn := openTestTenants(t, TenantsConfig{MaxOpen: 3, IdleTimeout: -1})
	use := func(name string) {
		if err := tn.Use(ctx, name, func(*Client) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	open := func() []string {
		tn.mu.Lock()
		defer tn.mu.Unlock()
		var out []string
		for el := tn.lru.Front(); el != nil; el = el.Next() {
			out = append(out, el.Value.(*tenantEntry).name)
		}
		return out
	}
	use("a")
	use("b")
	use("c")
	use("a") // b is now the least recent
	use("d")
	if got := strings.Join(open(), " "); got != "d a c" {
		t.Errorf("open, most recent first: %s; want d a c", got)
	}
	l, err := tn.Acquire(ctx, "c") // c held: the next eviction takes a
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	use("d")
	use("e")
	if got := strings.Join(open(), " "); got != "e d c" {
		t.Errorf("open, most recent first: %s; want e d c", got)
	}
}

// The database name of a tenant is reversible, so no two tenants share one, and is
// made of what MatrixOne accepts unquoted.
func TestTenantDatabaseNames(t *testing.T) {
	for name, want := range map[string]string{
		"acme": "acme", "acme-eu": "acme__eu", "org_42": "org_u42", "a--b": "a____b", "a_-b": "a_u__b",
		"3f2c9a1e-7b4d-4c2a-9e8f-0a1b2c3d4e5f": "3f2c9a1e__7b4d__4c2a__9e8f__0a1b2c3d4e5f",
	} {
		if got := tenantDatabaseSuffix(name); got != want {
			t.Errorf("tenantDatabaseSuffix(%q) = %q; want %q", name, got, want)
		}
		if back, ok := tenantFromDatabaseSuffix(want); !ok || back != name {
			t.Errorf("tenantFromDatabaseSuffix(%q) = %q, %v; want %q", want, back, ok, name)
		}
	}
	for _, s := range []string{"", "_", "a_", "a_x", "_ab", "a_U", "A", "a-b", "___"} {
		if name, ok := tenantFromDatabaseSuffix(s); ok {
			t.Errorf("tenantFromDatabaseSuffix(%q) = %q; want no tenant", s, name)
		}
	}
	seen := map[string]string{}
	for _, n := range []string{"a-b", "a_b", "a--b", "a__b", "a-_b", "a_-b", "ab", "a-b-", "a_u", "au", "a-u", "a_b_"} {
		db := tenantDatabaseSuffix(n)
		if other, ok := seen[db]; ok {
			t.Errorf("%q and %q both map to %q", n, other, db)
		}
		seen[db] = n
	}
	if _, err := tenantDatabase("tenant", "day1_t_", strings.Repeat("a", 57)); err != nil {
		t.Errorf("a 64-character database name: %v", err)
	}
	_, err := tenantDatabase("tenant", "day1_t_", strings.Repeat("a", 58))
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Field != "tenant" {
		t.Errorf("a 65-character database name: %v; want a *ValidationError for tenant", err)
	}
}

var databasePattern = regexp.MustCompile(`^[a-z0-9_]+$`)

// FuzzTenantName checks that a name is accepted only when it is a safe folder and
// database name, and that the database mapping round-trips, so it is injective.
func FuzzTenantName(f *testing.F) {
	for _, s := range []string{"acme", "a-b", "a_b", "../x", "a/b", "A", "a\x00", "ａ", "con", "com1", "-a", "a--_"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if ValidateTenantName(name) != nil {
			return
		}
		if len(name) > MaxTenantNameLen || strings.ContainsAny(name, `/\.:`) || strings.ToLower(name) != name || windowsDevice(name) {
			t.Fatalf("%q was accepted", name)
		}
		db := tenantDatabaseSuffix(name)
		if !databasePattern.MatchString(db) {
			t.Fatalf("%q maps to the database suffix %q", name, db)
		}
		back, ok := tenantFromDatabaseSuffix(db)
		if !ok || back != name {
			t.Fatalf("%q maps to %q, which maps back to %q, %v", name, db, back, ok)
		}
	})
}
