package day1

import (
	"bytes"
	listpkg "container/list"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/day1ai/day1/store"
	"github.com/day1ai/day1/store/matrixone"
	"github.com/day1ai/day1/store/memstore"
)

// Defaults of TenantsConfig.
const (
	DefaultMaxOpenTenants       = 64
	DefaultTenantIdleTimeout    = 5 * time.Minute
	DefaultTenantDatabasePrefix = "day1_t_"
)

// TenantsConfig configures a Tenants manager. Exactly one of Path, DSN and Stores says
// where the tenants' memories live; each tenant has its own, so no tenant can reach
// another's records, branches, bundles or share tokens.
type TenantsConfig struct {
	// Path is a directory holding a durable embedded store per tenant, in the folder
	// named after the tenant (Path/acme), marked by a TenantMarkerFile. The directory
	// is created if missing.
	Path string

	// DSN names a MatrixOne server, such as "root:111@tcp(127.0.0.1:6001)/", on which
	// each tenant has its own database: DatabasePrefix followed by the tenant's name
	// with each '-' written "__" and each '_' written "_u" (tenant "acme-eu" is
	// database day1_t_acme__eu). The DSN must not name a database.
	DSN string

	// DatabasePrefix starts the name of every tenant's database on the DSN's server;
	// databases that start with it are taken for tenants by List. 1 to 40 lowercase
	// letters, digits or underscores, starting with a letter. Default
	// DefaultTenantDatabasePrefix ("day1_t_"). Only with DSN.
	DatabasePrefix string

	// Stores makes, opens, lists and deletes the tenants' stores when they live
	// elsewhere: one store per tenant, which the manager closes with the tenant.
	Stores TenantStores

	// Client configures every tenant's Client: embedder, model, resolver, merge gate,
	// verification, dedupe threshold and test seams, as in Config. Its Path, DSN and
	// Store must be empty: the manager sets them for each tenant. Its Backend, when
	// set, holds the settings of every tenant's store: sqlite.Options or
	// memstore.Options with an empty Path, with TenantsConfig.Path, or matrixone.Options with an empty DSN, with
	// TenantsConfig.DSN; the manager fills in the tenant's folder or database. One
	// Embedder (and Model) serves every tenant, so it must be safe for concurrent use,
	// as the default is.
	Client Config

	// MaxOpen bounds how many tenants have an open Client at once. Acquiring a tenant
	// that is not open while MaxOpen are closes the least recently used tenant that
	// nobody holds; when every open tenant is held, Acquire waits until one is
	// released or its context is done. Default DefaultMaxOpenTenants (64).
	MaxOpen int

	// IdleTimeout closes the Client of a tenant nobody has held for that long; the
	// next Acquire opens it again. The manager looks every IdleTimeout/2, and at least
	// once a minute. Default DefaultTenantIdleTimeout (5 minutes); a negative value
	// keeps idle tenants open (MaxOpen still bounds them).
	IdleTimeout time.Duration

	// AutoCreate creates a tenant on its first Acquire or Use. Default false: only
	// Create makes a tenant, and acquiring an unknown one fails with
	// ErrTenantNotFound, so a mistyped name never makes an empty memory.
	AutoCreate bool

	// Test holds seams for tests. Leave it zero in production.
	Test TenantsTestConfig
}

// TenantsTestConfig holds the test seams of a Tenants manager.
type TenantsTestConfig struct {
	// Now is the clock that measures idle time. Default time.Now.
	Now func() time.Time
}

var tenantPrefixPattern = regexp.MustCompile(`^[a-z][a-z0-9_]{0,39}$`)

func (c TenantsConfig) withDefaults() TenantsConfig {
	if c.MaxOpen == 0 {
		c.MaxOpen = DefaultMaxOpenTenants
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = DefaultTenantIdleTimeout
	}
	if c.DSN != "" && c.DatabasePrefix == "" {
		c.DatabasePrefix = DefaultTenantDatabasePrefix
	}
	if c.Test.Now == nil {
		c.Test.Now = time.Now
	}
	return c
}

func (c TenantsConfig) validate() error {
	set := 0
	for _, s := range []bool{c.Path != "", c.DSN != "", c.Stores != nil} {
		if s {
			set++
		}
	}
	if set != 1 {
		return store.Invalid("TenantsConfig", "set exactly one of Path (a folder per tenant), DSN (a MatrixOne database per tenant) and Stores (your own store per tenant)", nil)
	}
	for _, f := range []struct {
		field string
		set   bool
	}{{"Path", c.Client.Path != ""}, {"DSN", c.Client.DSN != ""}, {"Store", c.Client.Store != nil}} {
		if f.set {
			return store.Invalid("TenantsConfig.Client."+f.field, "must be empty: the manager gives each tenant its own memory (set TenantsConfig.Path, DSN or Stores)", nil)
		}
	}
	if err := c.checkBackend(); err != nil {
		return err
	}
	// The Client Config is checked as the manager will complete it.
	probe := c.Client
	if c.Path != "" && probe.Backend == nil {
		probe.Path = c.Path
	}
	if err := probe.validate(); err != nil {
		var ve *ValidationError
		if errors.As(err, &ve) {
			return store.Invalid("TenantsConfig.Client"+strings.TrimPrefix(ve.Field, "Config"), ve.Reason, nilIfEmpty(ve.Value))
		}
		return err
	}
	if c.MaxOpen < 0 {
		return store.Invalid("TenantsConfig.MaxOpen", "must be 1 or more (0 means the default, 64)", c.MaxOpen)
	}
	if c.DatabasePrefix != "" && c.DSN == "" {
		return store.Invalid("TenantsConfig.DatabasePrefix", "applies only with TenantsConfig.DSN", c.DatabasePrefix)
	}
	if c.DatabasePrefix != "" && !tenantPrefixPattern.MatchString(c.DatabasePrefix) {
		return store.Invalid("TenantsConfig.DatabasePrefix", "must be 1 to 40 lowercase letters, digits or underscores, starting with a letter", c.DatabasePrefix)
	}
	return nil
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// Tenants serves many tenants, each with a memory of its own, from one process: a
// folder per tenant on the embedded store, a database per tenant on MatrixOne, or a
// store per tenant from TenantStores. It opens a tenant's Client on first use, keeps
// at most TenantsConfig.MaxOpen open (closing the least recently used idle one),
// and closes those idle for TenantsConfig.IdleTimeout. It is safe for concurrent use.
//
// A Client reached through Use or Acquire is never closed while it is held: eviction,
// the idle timeout, Delete and Close wait for (or pass over) tenants in use. Every
// method of a tenant's Client reads and writes that tenant's memory only; records,
// branches, bundles and share tokens cross tenants only through CopyBundle, or a
// bundle file exported by one tenant's Client and imported by another's.
//
// Open one manager per Path (or per DSN and DatabasePrefix) in a process: two would
// each hold a copy of a tenant's memory open, both correct (commits take turns on a
// Path, see sqlite.Options.LockTimeout) but twice the memory.
type Tenants struct {
	cfg  TenantsConfig
	back tenantBackend

	mu      sync.Mutex
	entries map[string]*tenantEntry  // tenants with an open (or opening) Client
	lru     *listpkg.List            // of *tenantEntry, most recently acquired first
	busy    map[string]chan struct{} // tenants being closed, created or deleted; closed when done
	orphans int                      // Clients closing with no entry counting for them
	changed chan struct{}            // closed and replaced when a slot, a tenant or a lease frees
	closed  bool                     // Close was called: no more acquires
	done    bool                     // Close finished
	stats   TenantsStats

	stopReaper chan struct{}
	reaperDone chan struct{}
	stopOnce   sync.Once
}

// tenantEntry is one tenant in the manager.
type tenantEntry struct {
	name   string
	ready  chan struct{} // closed once client or err is set
	client *Client
	err    error
	refs   int // leases, and the opener while opening
	used   time.Time
	elem   *listpkg.Element
}

// TenantsStats counts what a Tenants manager holds and has done.
type TenantsStats struct {
	// Open is the number of tenants with an open (or opening) Client; InUse of those
	// are held by at least one lease; Leases counts the leases.
	Open, InUse, Leases int
	// Waiting counts the Acquire calls waiting for a tenant to be released because
	// MaxOpen are open and held.
	Waiting int
	// Opened counts the Clients opened; Evicted those closed to make room for another
	// tenant; IdleClosed those closed after IdleTimeout.
	Opened, Evicted, IdleClosed uint64
}

// OpenTenants checks cfg and returns a manager. It opens no tenant: each opens on its
// first Acquire or Use. With DSN it checks that the server answers. An invalid config
// is a *ValidationError naming the field.
func OpenTenants(ctx context.Context, cfg TenantsConfig) (*Tenants, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	t := &Tenants{
		cfg:     cfg,
		entries: map[string]*tenantEntry{},
		lru:     listpkg.New(),
		busy:    map[string]chan struct{}{},
		changed: make(chan struct{}),
	}
	switch {
	case cfg.Path != "":
		t.back = dirTenants{root: cfg.Path}
	case cfg.DSN != "":
		back, err := openMySQLTenants(ctx, cfg)
		if err != nil {
			return nil, err
		}
		t.back = back
	default:
		t.back = injectedTenants{s: cfg.Stores}
	}
	if cfg.IdleTimeout > 0 {
		t.stopReaper, t.reaperDone = make(chan struct{}), make(chan struct{})
		go t.reap()
	}
	return t, nil
}

func openMySQLTenants(ctx context.Context, cfg TenantsConfig) (*mysqlTenants, error) {
	mc, err := mysql.ParseDSN(cfg.DSN)
	if err != nil {
		return nil, store.Invalid("TenantsConfig.DSN", err.Error(), nil)
	}
	if mc.DBName != "" {
		return nil, store.Invalid("TenantsConfig.DSN", "must not name a database: each tenant has its own (DatabasePrefix and the tenant's name); end the DSN with '/'", mc.DBName)
	}
	srv, err := matrixone.OpenServer(cfg.DSN)
	if err != nil {
		return nil, err
	}
	if _, err := srv.HasDatabase(ctx, "mo_catalog"); err != nil {
		srv.Close()
		return nil, fmt.Errorf("day1: tenants: reaching the MatrixOne server: %w", err)
	}
	return &mysqlTenants{srv: srv, cfg: mc, prefix: cfg.DatabasePrefix}, nil
}

// errTenantsClosed is what every method returns after Close.
var errTenantsClosed = fmt.Errorf("%w: the Tenants manager is closed", ErrClosed)

// broadcast wakes every waiter. t.mu must be held.
func (t *Tenants) broadcast() {
	close(t.changed)
	t.changed = make(chan struct{})
}

// wait blocks until ch is closed or ctx is done.
func wait(ctx context.Context, ch <-chan struct{}) error {
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TenantLease holds one tenant's Client open: the manager neither evicts nor closes it
// until the lease is released. Release it exactly once when done; Use does so itself.
type TenantLease struct {
	t        *Tenants
	e        *tenantEntry
	released atomic.Bool
}

// Tenant returns the tenant's name.
func (l *TenantLease) Tenant() string { return l.e.name }

// Client returns the tenant's Client. It stays open until the lease is released; do
// not keep it beyond that, and do not Close it (the manager does).
func (l *TenantLease) Client() *Client { return l.e.client }

// Release lets the manager close the tenant's Client again (when it is idle or needs
// the room). Later calls do nothing.
func (l *TenantLease) Release() {
	if l.released.CompareAndSwap(false, true) {
		l.t.release(l.e)
	}
}

// Use runs fn with the Client of tenant name, held open until fn returns (or
// panics). See Acquire for the errors.
func (t *Tenants) Use(ctx context.Context, name string, fn func(*Client) error) error {
	l, err := t.Acquire(ctx, name)
	if err != nil {
		return err
	}
	defer l.Release()
	return fn(l.Client())
}

// Acquire returns a lease on tenant name's Client, opening it if needed; release it
// when done. Errors: a *ValidationError for an invalid name (see
// ValidateTenantName); ErrTenantNotFound for a tenant that was not created (unless
// TenantsConfig.AutoCreate); ErrClosed after Close; the context's error when ctx is
// done while Acquire waits (for a free slot, or for the tenant to finish closing,
// being created or deleted); an error from opening the store.
//
// A goroutine that holds a lease and acquires another tenant may wait for ever when
// MaxOpen tenants are held: release one lease before acquiring the next where the
// bound is small (CopyBundle does).
func (t *Tenants) Acquire(ctx context.Context, name string) (*TenantLease, error) {
	if err := ValidateTenantName(name); err != nil {
		return nil, err
	}
	e, err := t.acquire(ctx, name)
	if err != nil {
		return nil, err
	}
	return &TenantLease{t: t, e: e}, nil
}

func (t *Tenants) acquire(ctx context.Context, name string) (*tenantEntry, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		t.mu.Lock()
		if t.closed {
			t.mu.Unlock()
			return nil, errTenantsClosed
		}
		if ch, ok := t.busy[name]; ok {
			t.mu.Unlock()
			if err := wait(ctx, ch); err != nil {
				return nil, err
			}
			continue
		}
		if e := t.entries[name]; e != nil {
			e.refs++
			t.lru.MoveToFront(e.elem)
			t.mu.Unlock()
			select {
			case <-e.ready:
			case <-ctx.Done():
				t.release(e)
				return nil, ctx.Err()
			}
			if e.err != nil {
				t.release(e)
				// The opener's context ended, not ours: try again.
				if isContextErr(e.err) {
					continue
				}
				return nil, e.err
			}
			return e, nil
		}
		var victim *tenantEntry
		if len(t.entries)+t.orphans >= t.cfg.MaxOpen {
			victim = t.leastRecentIdle()
			if victim == nil {
				ch := t.changed
				t.stats.Waiting++
				t.mu.Unlock()
				err := wait(ctx, ch)
				t.mu.Lock()
				t.stats.Waiting--
				t.mu.Unlock()
				if err != nil {
					return nil, err
				}
				continue
			}
			// The new entry takes the victim's slot: it opens after the victim closed.
			t.detach(victim)
			t.stats.Evicted++
		}
		e := &tenantEntry{name: name, ready: make(chan struct{}), refs: 1}
		e.elem = t.lru.PushFront(e)
		t.entries[name] = e
		t.mu.Unlock()
		return t.open(ctx, e, victim)
	}
}

// open closes the victim whose slot e takes, if any, then opens e's Client and tells
// those waiting for it. Even if opening panics (in a TenantStores, say), e leaves the
// manager and its waiters are told, before the panic goes on.
func (t *Tenants) open(ctx context.Context, e *tenantEntry, victim *tenantEntry) (_ *tenantEntry, err error) {
	var c *Client
	finished := false
	defer func() {
		if !finished {
			err = fmt.Errorf("day1: tenants: opening %q panicked", e.name)
		}
		t.mu.Lock()
		e.client, e.err, e.used = c, err, t.cfg.Test.Now()
		if err != nil {
			e.refs--
			delete(t.entries, e.name)
			t.lru.Remove(e.elem)
		} else {
			t.stats.Opened++
		}
		close(e.ready)
		t.broadcast()
		t.mu.Unlock()
	}()
	if victim != nil {
		_ = t.closeDetached(victim)
	}
	c, err = t.openClient(ctx, e.name)
	finished = true
	if err != nil {
		return nil, err
	}
	return e, nil
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// leastRecentIdle returns the least recently acquired open tenant that nobody holds,
// or nil. t.mu must be held.
func (t *Tenants) leastRecentIdle() *tenantEntry {
	for el := t.lru.Back(); el != nil; el = el.Prev() {
		if e := el.Value.(*tenantEntry); e.refs == 0 {
			return e
		}
	}
	return nil
}

// detach takes an idle entry out of the manager and marks its name busy until
// closeDetached has closed it. t.mu must be held.
func (t *Tenants) detach(e *tenantEntry) {
	delete(t.entries, e.name)
	t.lru.Remove(e.elem)
	t.busy[e.name] = make(chan struct{})
}

// closeDetached closes a detached entry's Client and frees its name.
func (t *Tenants) closeDetached(e *tenantEntry) error {
	err := e.client.close()
	t.mu.Lock()
	close(t.busy[e.name])
	delete(t.busy, e.name)
	t.broadcast()
	t.mu.Unlock()
	if err != nil {
		return fmt.Errorf("day1: tenants: closing %q: %w", e.name, err)
	}
	return nil
}

// release drops one lease.
func (t *Tenants) release(e *tenantEntry) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e.refs--
	if e.refs == 0 {
		e.used = t.cfg.Test.Now()
		t.broadcast()
	}
}

// checkBackend checks that Client.Backend, when set, holds the options of the
// backend the tenants live on, with their place left for the manager to fill.
func (c TenantsConfig) checkBackend() error {
	const field = "TenantsConfig.Client.Backend"
	validate := func(o store.Opener) error {
		if v, ok := o.(store.Validator); ok {
			return optionsField(field, v.Validate())
		}
		return nil
	}
	switch o := c.Client.Backend.(type) {
	case nil:
		return nil
	case store.FolderOpener:
		if c.Path == "" {
			return store.Invalid(field, "holds the options of a store kept in a folder, which apply only with TenantsConfig.Path", nil)
		}
		if o.Folder() != "" {
			return store.Invalid(field, "must leave the folder (Path) empty: each tenant has its own folder under TenantsConfig.Path", o.Folder())
		}
		return validate(o.WithFolder(c.Path))
	case store.DatabaseOpener:
		if c.DSN == "" {
			return store.Invalid(field, "holds the options of a store kept in a database server, which apply only with TenantsConfig.DSN", nil)
		}
		if o.Database() != "" {
			return store.Invalid(field, "must leave the DSN empty: each tenant has its own database on TenantsConfig.DSN's server", nil)
		}
		return validate(o.WithDatabase(c.DSN))
	default:
		return store.Invalid(field, "must be the options of a store kept in a folder (memstore.Options, sqlite.Options) or in a database (matrixone.Options); with Stores, the stores carry their own settings", fmt.Sprintf("%T", o))
	}
}

// backendAt returns the options of a tenant's store at path or dsn: Client.Backend's
// with the tenant's place filled in, or the backend's defaults.
func (t *Tenants) backendAt(path, dsn string) store.Opener {
	switch o := t.cfg.Client.Backend.(type) {
	case store.FolderOpener:
		if path != "" {
			return o.WithFolder(path)
		}
	case store.DatabaseOpener:
		if dsn != "" {
			return o.WithDatabase(dsn)
		}
	}
	if path != "" {
		return memstore.Options{Path: path}
	}
	return matrixone.Options{DSN: dsn}
}

// openClient opens the Client of a tenant, creating the tenant first with AutoCreate.
func (t *Tenants) openClient(ctx context.Context, name string) (*Client, error) {
	where, err := t.back.open(ctx, name)
	if errors.Is(err, ErrTenantNotFound) && t.cfg.AutoCreate {
		if err := t.back.create(ctx, name); err != nil && !errors.Is(err, ErrTenantExists) {
			return nil, err
		}
		where, err = t.back.open(ctx, name)
	}
	if err != nil {
		return nil, err
	}
	cfg := t.cfg.Client
	cfg.Backend = nil
	if where.Store != nil {
		cfg.Store = where.Store
	} else {
		cfg.Backend = t.backendAt(where.Path, where.DSN)
	}
	c, err := Open(ctx, cfg)
	if err != nil {
		if where.Store != nil {
			_ = where.Store.Close()
		}
		return nil, fmt.Errorf("day1: tenants: opening %q: %w", name, err)
	}
	if where.Store != nil {
		c.ownStore = true
	}
	c.managed = true
	return c, nil
}

// reap closes idle tenants until Close.
func (t *Tenants) reap() {
	defer close(t.reaperDone)
	every := min(max(t.cfg.IdleTimeout/2, time.Millisecond), time.Minute)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-t.stopReaper:
			return
		case <-tick.C:
			t.closeIdle()
		}
	}
}

// closeIdle closes the tenants nobody has held for IdleTimeout.
func (t *Tenants) closeIdle() {
	now := t.cfg.Test.Now()
	t.mu.Lock()
	var idle []*tenantEntry
	for el := t.lru.Back(); el != nil; {
		e := el.Value.(*tenantEntry)
		el = el.Prev()
		if e.refs == 0 && now.Sub(e.used) >= t.cfg.IdleTimeout {
			t.detach(e)
			t.orphans++
			t.stats.IdleClosed++
			idle = append(idle, e)
		}
	}
	t.mu.Unlock()
	for _, e := range idle {
		_ = t.closeDetached(e)
		t.mu.Lock()
		t.orphans--
		t.broadcast()
		t.mu.Unlock()
	}
}

// Create makes a new tenant with an empty memory; it opens on first use. It fails
// with ErrTenantExists (which matches ErrExists) when the tenant exists, with a
// *ValidationError for an invalid name, and with ErrClosed after Close.
func (t *Tenants) Create(ctx context.Context, name string) error {
	if err := ValidateTenantName(name); err != nil {
		return err
	}
	done, err := t.claim(ctx, name, func(e *tenantEntry) (bool, error) {
		select {
		case <-e.ready:
			return false, tenantExists(name)
		default:
			// It is being opened, which may yet find no tenant: wait and see.
			return false, nil
		}
	})
	if err != nil {
		return err
	}
	defer done()
	return t.back.create(ctx, name)
}

// Delete closes a tenant and removes its memory: its folder, its database, or its
// store (TenantStores.Delete). It waits until nobody holds the tenant, and new
// acquires of it wait for the deletion (then find no tenant, or create a new one with
// AutoCreate). It fails with ErrTenantNotFound when the tenant does not exist, with
// the context's error when ctx is done first (the tenant is then left as it was), with
// a *ValidationError for an invalid name, and with ErrClosed after Close.
func (t *Tenants) Delete(ctx context.Context, name string) error {
	if err := ValidateTenantName(name); err != nil {
		return err
	}
	var open *tenantEntry
	done, err := t.claim(ctx, name, func(e *tenantEntry) (bool, error) {
		open = e
		return e.refs == 0, nil
	})
	if err != nil {
		return err
	}
	defer done()
	if open != nil {
		if err := open.client.close(); err != nil {
			return fmt.Errorf("day1: tenants: closing %q before deleting it: %w", name, err)
		}
	}
	return t.back.remove(ctx, name)
}

// claim marks name busy for an operation on the tenant as a whole, once no other
// holds it. When the tenant is open, onOpen decides: an error ends the claim, false
// waits until the tenant changes, true takes the open entry out of the manager (the
// caller then closes its Client). done frees the name.
func (t *Tenants) claim(ctx context.Context, name string, onOpen func(*tenantEntry) (bool, error)) (done func(), err error) {
	var mine chan struct{}
	defer func() {
		if err != nil && mine != nil {
			t.mu.Lock()
			t.unclaim(name, mine)
			t.mu.Unlock()
		}
	}()
	for {
		t.mu.Lock()
		if t.closed {
			t.mu.Unlock()
			return nil, errTenantsClosed
		}
		if ch, ok := t.busy[name]; ok && ch != mine {
			t.mu.Unlock()
			if err := wait(ctx, ch); err != nil {
				return nil, err
			}
			continue
		}
		if mine == nil {
			// Claiming first holds off new acquires while the tenant's users finish.
			mine = make(chan struct{})
			t.busy[name] = mine
		}
		e := t.entries[name]
		if e == nil {
			t.mu.Unlock()
			return t.doneFunc(name, mine, false), nil
		}
		take, err := onOpen(e)
		if err != nil {
			t.mu.Unlock()
			return nil, err
		}
		if take {
			delete(t.entries, name)
			t.lru.Remove(e.elem)
			t.orphans++ // its Client is open until the caller closes it
			t.mu.Unlock()
			return t.doneFunc(name, mine, true), nil
		}
		ch := t.changed
		t.mu.Unlock()
		if err := wait(ctx, ch); err != nil {
			return nil, err
		}
	}
}

func (t *Tenants) doneFunc(name string, mine chan struct{}, orphan bool) func() {
	return func() {
		t.mu.Lock()
		if orphan {
			t.orphans--
		}
		t.unclaim(name, mine)
		t.mu.Unlock()
	}
}

// unclaim frees a name claimed with mine. t.mu must be held.
func (t *Tenants) unclaim(name string, mine chan struct{}) {
	if t.busy[name] == mine {
		delete(t.busy, name)
	}
	close(mine)
	t.broadcast()
}

// List returns the names of the tenants, sorted: those with a folder under Path, a
// database under DatabasePrefix, or a store in TenantStores.List.
func (t *Tenants) List(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if t.isClosed() {
		return nil, errTenantsClosed
	}
	return t.back.list(ctx)
}

func (t *Tenants) isClosed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.closed
}

// Stats returns what the manager holds and has done.
func (t *Tenants) Stats() TenantsStats {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.stats
	s.Open = len(t.entries)
	for _, e := range t.entries {
		if e.refs > 0 {
			s.InUse++
			s.Leases += e.refs
		}
	}
	return s
}

// Close refuses new acquires at once (they fail with ErrClosed), waits until every
// lease is released, closes every tenant's Client and releases the manager. It
// returns the errors of closing the stores; a second call returns ErrClosed.
func (t *Tenants) Close() error {
	return t.Shutdown(context.Background())
}

// Shutdown is Close with a bound on the wait for leases: when ctx is done first, it
// returns the context's error and leaves the tenants still held open for their
// holders; the manager stays closed to new acquires, and a later Close or Shutdown
// closes what is left.
func (t *Tenants) Shutdown(ctx context.Context) error {
	t.mu.Lock()
	if t.done {
		t.mu.Unlock()
		return errTenantsClosed
	}
	t.closed = true
	t.broadcast()
	t.mu.Unlock()
	t.stopOnce.Do(func() {
		if t.stopReaper != nil {
			close(t.stopReaper)
			<-t.reaperDone
		}
	})
	var errs []error
	for {
		t.mu.Lock()
		var idle []*tenantEntry
		for el := t.lru.Back(); el != nil; {
			e := el.Value.(*tenantEntry)
			el = el.Prev()
			if e.refs == 0 {
				t.detach(e)
				t.orphans++
				idle = append(idle, e)
			}
		}
		finished := len(idle) == 0 && len(t.entries) == 0 && len(t.busy) == 0
		ch := t.changed
		if finished && !t.done {
			t.done = true
			errs = append(errs, t.back.close())
		}
		t.mu.Unlock()
		for _, e := range idle {
			errs = append(errs, t.closeDetached(e))
			t.mu.Lock()
			t.orphans--
			t.mu.Unlock()
		}
		if finished {
			return errors.Join(errs...)
		}
		if len(idle) > 0 {
			continue
		}
		if err := wait(ctx, ch); err != nil {
			return errors.Join(append(errs, err)...)
		}
	}
}

// CopyBundleRequest asks for a bundle of one tenant to be imported by another.
type CopyBundleRequest struct {
	// From is the tenant that holds the bundle. Required.
	From string
	// ShareToken names the bundle by the token its owner shared: it resolves only a
	// team or public bundle of From, and only while the token is current. Set exactly
	// one of ShareToken and Bundle.
	ShareToken string
	// Bundle names the bundle by its id in From. The bundle must be team or public
	// too: a private bundle never leaves its tenant.
	Bundle string
	// To is the tenant that imports the bundle. Required.
	To string
	// Branch receives the records in To. Empty means DefaultBranch.
	Branch string
	// CreateBranch creates Branch from Parent when To does not have it.
	CreateBranch bool
	// Parent is where a created Branch forks from. Empty means DefaultBranch.
	Parent string
	// Policy settles records To holds with other content. Empty means
	// BundleKeepTarget.
	Policy BundleConflictPolicy
}

// CopyBundle exports a shared bundle from one tenant and imports it into another, as
// that tenant's ImportBundle does: atomically, idempotently, seal checked. It is the
// one method that moves records between tenants, and it moves only what the source
// tenant shared. It holds one tenant at a time, so it works with MaxOpen 1. Errors:
// a *ValidationError naming the field for invalid tenant names, for setting both or
// neither of ShareToken and Bundle, and for a private Bundle; ErrNotFound for a token
// or id From does not share; the errors of Acquire and ImportBundle.
func (t *Tenants) CopyBundle(ctx context.Context, req CopyBundleRequest) (ImportBundleResult, error) {
	if err := checkTenantName("CopyBundleRequest.From", req.From); err != nil {
		return ImportBundleResult{}, err
	}
	if err := checkTenantName("CopyBundleRequest.To", req.To); err != nil {
		return ImportBundleResult{}, err
	}
	if (req.ShareToken == "") == (req.Bundle == "") {
		return ImportBundleResult{}, store.Invalid("CopyBundleRequest.ShareToken", "set exactly one of ShareToken and Bundle", nil)
	}
	var file bytes.Buffer
	err := t.Use(ctx, req.From, func(c *Client) error {
		var b Bundle
		var err error
		if req.ShareToken != "" {
			b, err = c.SharedBundle(ctx, req.ShareToken)
		} else {
			b, err = c.GetBundle(ctx, req.Bundle)
			if err == nil && b.Visibility == BundlePrivate {
				return store.Invalid("CopyBundleRequest.Bundle", "is a private bundle, which never leaves its tenant; its tenant can share it first (SetBundleVisibility team or public)", req.Bundle)
			}
		}
		if err != nil {
			return fmt.Errorf("day1: tenants: bundle of %q: %w", req.From, err)
		}
		_, err = c.ExportBundle(ctx, b.ID, &file, ExportBundleOptions{Compress: true})
		return err
	})
	if err != nil {
		return ImportBundleResult{}, err
	}
	var res ImportBundleResult
	err = t.Use(ctx, req.To, func(c *Client) error {
		res, err = c.ImportBundle(ctx, ImportBundleRequest{From: &file, Branch: req.Branch, CreateBranch: req.CreateBranch, Parent: req.Parent, Policy: req.Policy})
		return err
	})
	return res, err
}
