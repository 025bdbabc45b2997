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

var _ Store = (*fakeStore)(nil)

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
