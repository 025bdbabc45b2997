package merge

import (
	"context"
	"fmt"
	"sync"

	"github.com/day1ai/day1/store"
)

// fakeStore is a scriptable store.Store for the merge engine's tests. Diff returns
// the scripted diffs in order (the last one repeats), Get reads scripted records per
// branch, and ApplyMerge records every plan it is given and fails with the scripted
// errors in order. Every other method returns store.ErrNotSupported.
type fakeStore struct {
	mu sync.Mutex

	diffs   []*store.Diff                         // returned by successive Diff calls; the last repeats
	diffErr error                                 // returned by Diff when set
	records map[string]map[store.Ref]store.Record // branch -> what Get returns
	getErr  map[store.Ref]error                   // returned by Get for a ref, on any branch
	apply   []error                               // returned by successive ApplyMerge calls; missing entries succeed

	diffCalls  int
	getCalls   int
	applyCalls int
	plans      []store.MergePlan // every plan ApplyMerge was given, in order
	applied    []store.MergePlan // the plans it accepted
}

var _ store.Store = (*fakeStore)(nil)

func newFake(diffs ...*store.Diff) *fakeStore {
	return &fakeStore{diffs: diffs, records: map[string]map[store.Ref]store.Record{}}
}

// with adds records that Get returns on branch.
func (s *fakeStore) with(branch string, recs ...store.Record) *fakeStore {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.records[branch] == nil {
		s.records[branch] = map[store.Ref]store.Record{}
	}
	for _, r := range recs {
		s.records[branch][store.RefOf(r)] = r
	}
	return s
}

func (s *fakeStore) Diff(ctx context.Context, source, target string) (*store.Diff, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.diffCalls++
	if s.diffErr != nil {
		return nil, s.diffErr
	}
	if len(s.diffs) == 0 {
		return &store.Diff{Source: source, Target: target}, nil
	}
	i := min(s.diffCalls, len(s.diffs)) - 1
	return s.diffs[i], nil
}

func (s *fakeStore) Get(ctx context.Context, v store.View, ref store.Ref) (store.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.getCalls++
	if err := s.getErr[ref]; err != nil {
		return nil, err
	}
	r, ok := s.records[v.Branch][ref]
	if !ok {
		return nil, fmt.Errorf("%w: %s on %s", store.ErrNotFound, ref, v.Branch)
	}
	return store.WithBranch(store.Clone(r), v.Branch), nil
}

func (s *fakeStore) ApplyMerge(ctx context.Context, plan store.MergePlan) (store.MergeRecord, error) {
	if err := ctx.Err(); err != nil {
		return store.MergeRecord{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.applyCalls++
	s.plans = append(s.plans, plan)
	if i := s.applyCalls - 1; i < len(s.apply) && s.apply[i] != nil {
		return store.MergeRecord{}, s.apply[i]
	}
	s.applied = append(s.applied, plan)
	return plan.Record, nil
}

func (s *fakeStore) Put(context.Context, string, []store.Record, store.PutOptions) ([]store.PutResult, error) {
	return nil, store.ErrNotSupported
}

func (s *fakeStore) Delete(context.Context, string, []store.Ref) error {
	return store.ErrNotSupported
}

func (s *fakeStore) List(context.Context, store.View, store.ListQuery) ([]store.Record, error) {
	return nil, store.ErrNotSupported
}

func (s *fakeStore) Search(context.Context, store.View, store.SearchQuery) ([]store.Hit, error) {
	return nil, store.ErrNotSupported
}

func (s *fakeStore) CreateBranch(context.Context, store.BranchSpec) (store.Branch, error) {
	return store.Branch{}, store.ErrNotSupported
}

func (s *fakeStore) GetBranch(context.Context, string) (store.Branch, error) {
	return store.Branch{}, store.ErrNotSupported
}

func (s *fakeStore) ListBranches(context.Context, store.BranchFilter) ([]store.Branch, error) {
	return nil, store.ErrNotSupported
}

func (s *fakeStore) SetBranchStatus(context.Context, string, store.BranchStatus) (store.Branch, error) {
	return store.Branch{}, store.ErrNotSupported
}

func (s *fakeStore) DeleteBranch(context.Context, string) error { return store.ErrNotSupported }

func (s *fakeStore) ListMerges(context.Context, store.MergeFilter) ([]store.MergeRecord, error) {
	return nil, store.ErrNotSupported
}

func (s *fakeStore) CreateSnapshot(context.Context, string, string, string) (store.Snapshot, error) {
	return store.Snapshot{}, store.ErrNotSupported
}

func (s *fakeStore) GetSnapshot(context.Context, string) (store.Snapshot, error) {
	return store.Snapshot{}, store.ErrNotSupported
}

func (s *fakeStore) ListSnapshots(context.Context, string) ([]store.Snapshot, error) {
	return nil, store.ErrNotSupported
}

func (s *fakeStore) DeleteSnapshot(context.Context, string) error { return store.ErrNotSupported }

func (s *fakeStore) PutSession(context.Context, store.Session) (store.Session, error) {
	return store.Session{}, store.ErrNotSupported
}

func (s *fakeStore) GetSession(context.Context, string) (store.Session, error) {
	return store.Session{}, store.ErrNotSupported
}

func (s *fakeStore) ListSessions(context.Context, store.SessionFilter) ([]store.Session, error) {
	return nil, store.ErrNotSupported
}

func (s *fakeStore) Close() error { return nil }

func (s *fakeStore) WriteDocs(context.Context, []store.DocWrite) ([]store.Doc, error) {
	return nil, store.ErrNotSupported
}
func (s *fakeStore) GetDoc(context.Context, string, string) (store.Doc, error) {
	return store.Doc{}, store.ErrNotSupported
}
func (s *fakeStore) ListDocs(context.Context, store.DocQuery) ([]store.Doc, error) {
	return nil, store.ErrNotSupported
}
