package day1_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/internal/testkit"
	"github.com/day1ai/day1/llm"
	"github.com/day1ai/day1/store"
	"github.com/day1ai/day1/store/memstore"
)

// memTenantStores is a TenantStores keeping each tenant's store in memory for the life
// of the test: Open hands out a view of it that the manager closes. It counts the
// stores open at once and can block or fail Open, for tests of the manager.
type memTenantStores struct {
	mu      sync.Mutex
	stores  map[string]*memstore.Store
	open    int
	maxOpen int
	opens   int
	failing map[string]error         // Open fails with this error
	panics  map[string]bool          // Open panics
	gate    map[string]chan struct{} // Open waits for this channel (or its context)
	deleted []string
}

func newMemTenantStores() *memTenantStores {
	return &memTenantStores{stores: map[string]*memstore.Store{}, failing: map[string]error{}, panics: map[string]bool{}, gate: map[string]chan struct{}{}}
}

func (m *memTenantStores) Create(ctx context.Context, tenant string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.stores[tenant]; ok {
		return fmt.Errorf("%w: store of %s", store.ErrExists, tenant)
	}
	s, err := memstore.Open(ctx, memstore.Options{})
	if err != nil {
		return err
	}
	m.stores[tenant] = s
	return nil
}

func (m *memTenantStores) Open(ctx context.Context, tenant string) (store.Store, error) {
	m.mu.Lock()
	gate := m.gate[tenant]
	m.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.failing[tenant]; err != nil {
		return nil, err
	}
	if m.panics[tenant] {
		panic("memTenantStores: told to panic")
	}
	s, ok := m.stores[tenant]
	if !ok {
		return nil, fmt.Errorf("%w: no store for %s", store.ErrNotFound, tenant)
	}
	m.open++
	m.opens++
	m.maxOpen = max(m.maxOpen, m.open)
	return &heldStore{Store: s, m: m}, nil
}

func (m *memTenantStores) List(context.Context) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := []string{}
	for n := range m.stores {
		out = append(out, n)
	}
	return out, nil
}

func (m *memTenantStores) Delete(_ context.Context, tenant string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.stores[tenant]
	if !ok {
		return fmt.Errorf("%w: no store for %s", store.ErrNotFound, tenant)
	}
	delete(m.stores, tenant)
	m.deleted = append(m.deleted, tenant)
	return s.Close()
}

func (m *memTenantStores) counts() (open, maxOpen, opens int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.open, m.maxOpen, m.opens
}

// heldStore is one Open of a tenant's store; its Close ends that Open only.
type heldStore struct {
	store.Store
	m      *memTenantStores
	closed atomic.Bool
}

func (h *heldStore) Close() error {
	if h.closed.Swap(true) {
		return errors.New("heldStore: closed twice")
	}
	h.m.mu.Lock()
	h.m.open--
	h.m.mu.Unlock()
	return nil
}

// tenantsClient is the Client configuration of the tenant tests: a small embedder and
// no near-duplicate detection, so that similar test texts stay apart.
func tenantsClient() day1.Config {
	return day1.Config{Embedder: llm.NewStemEmbedder(32), DedupeThreshold: -1}
}

// tenantsBackend is one place tenants live, for tests that run on each.
type tenantsBackend struct {
	name string
	// config returns a fresh manager configuration.
	config func(t *testing.T) day1.TenantsConfig
}

var tenantPrefixes atomic.Int64

// tenantsBackends lists the folders of the embedded store, injected stores and, with
// DAY1_TEST_DSN, the databases of MatrixOne.
func tenantsBackends() []tenantsBackend {
	return []tenantsBackend{
		{"folders", func(t *testing.T) day1.TenantsConfig {
			c := tenantsClient()
			c.Backend = memstore.Options{Sync: memstore.SyncNever}
			return day1.TenantsConfig{Path: filepath.Join(t.TempDir(), "tenants"), Client: c}
		}},
		{"stores", func(t *testing.T) day1.TenantsConfig {
			return day1.TenantsConfig{Stores: newMemTenantStores(), Client: tenantsClient()}
		}},
		{"matrixone", func(t *testing.T) day1.TenantsConfig {
			return day1.TenantsConfig{DSN: tenantsServer(t), DatabasePrefix: tenantsPrefix(t), Client: tenantsClient()}
		}},
	}
}

// tenantsServer returns the DSN of the MatrixOne server without a database, or skips.
func tenantsServer(t *testing.T) string {
	t.Helper()
	dsn := os.Getenv("DAY1_TEST_DSN")
	if dsn == "" {
		t.Skip("DAY1_TEST_DSN is not set; start MatrixOne with scripts/matrixone.sh start and set DAY1_TEST_DSN='root:111@tcp(127.0.0.1:6001)/'")
	}
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DBName = ""
	return cfg.FormatDSN()
}

// tenantsPrefix returns a database prefix of the test's own, whose databases the
// test's end drops.
func tenantsPrefix(t *testing.T) string {
	t.Helper()
	prefix := fmt.Sprintf("day1tt_%d_%d_", os.Getpid()%100000, tenantPrefixes.Add(1))
	dsn := tenantsServer(t)
	t.Cleanup(func() { testkit.DropDatabases(t, dsn, prefix) })
	return prefix
}

// openTenants opens a manager on cfg and closes it when the test ends.
func openTenants(t *testing.T, cfg day1.TenantsConfig) *day1.Tenants {
	t.Helper()
	tn, err := day1.OpenTenants(context.Background(), cfg)
	if err != nil {
		t.Fatalf("OpenTenants: %v", err)
	}
	t.Cleanup(func() {
		if err := tn.Close(); err != nil && !errors.Is(err, day1.ErrClosed) {
			t.Errorf("Tenants.Close: %v", err)
		}
	})
	return tn
}

// eachTenantsBackend runs test on every backend as a subtest.
func eachTenantsBackend(t *testing.T, test func(t *testing.T, cfg day1.TenantsConfig)) {
	for _, b := range tenantsBackends() {
		t.Run(b.name, func(t *testing.T) { test(t, b.config(t)) })
	}
}
