package merge

import (
	"context"

	"github.com/day1ai/day1/store"
)

// Gate decides whether a merge plan may be applied.
//
// Check is called once per planning attempt, after the plan is complete and before
// anything is written (also for a dry run). It returns the records it objects to; any
// offense blocks the merge with a *store.MergeBlockedError and nothing changes. An
// error aborts the merge too. Check receives a copy of the plan, so replacing or
// dropping its entries has no effect; it must not modify the records' maps. It must
// honour ctx.
type Gate interface {
	// Name identifies the gate in a *store.MergeBlockedError.
	Name() string
	// Check returns the offenses of plan; none means the merge may go ahead.
	Check(ctx context.Context, plan *store.MergePlan) ([]store.Offense, error)
}

// GateFunc returns a Gate named name that calls check. A nil check allows every plan.
func GateFunc(name string, check func(ctx context.Context, plan *store.MergePlan) ([]store.Offense, error)) Gate {
	return gateFunc{name: name, fn: check}
}

type gateFunc struct {
	name string
	fn   func(context.Context, *store.MergePlan) ([]store.Offense, error)
}

func (g gateFunc) Name() string { return g.name }

func (g gateFunc) Check(ctx context.Context, plan *store.MergePlan) ([]store.Offense, error) {
	if g.fn == nil {
		return nil, nil
	}
	return g.fn(ctx, plan)
}
