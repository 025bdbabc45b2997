package handoff

import (
	"context"
	"fmt"

	"github.com/day1ai/day1/store"
)

// RegisterAgent records an agent's profile (its capabilities and proficiency), for
// FindAgents and for choosing the receiver of a handoff that names none. Registering
// an agent again replaces its profile. The ID must also be a valid agent ID (see
// JoinRequest.Agent), since a receiver gets a branch named after it.
//
// Errors: a *store.ValidationError naming the bad field; the store's and ctx's errors.
func (e *Engine) RegisterAgent(ctx context.Context, a AgentProfile) (AgentProfile, error) {
	if err := e.check(); err != nil {
		return AgentProfile{}, err
	}
	if err := a.Validate(); err != nil {
		return AgentProfile{}, err
	}
	if err := validAgent("AgentProfile.ID", a.ID); err != nil {
		return AgentProfile{}, err
	}
	w, err := docWrite(AgentCollection, a.ID, a, nil, store.DocUpsert, 0)
	if err != nil {
		return AgentProfile{}, err
	}
	ev, err := e.event(Event{Kind: EventAgentRegistered, Actor: a.ID, Note: fmt.Sprintf("%d capabilities", len(a.Capabilities))})
	if err != nil {
		return AgentProfile{}, err
	}
	if _, err := e.writeDocs(ctx, []store.DocWrite{w, ev}); err != nil {
		return AgentProfile{}, err
	}
	return a, nil
}

// GetAgent returns a registered agent's profile. Errors: an error matching
// store.ErrNotFound for an agent never registered; the store's and ctx's errors.
func (e *Engine) GetAgent(ctx context.Context, id string) (AgentProfile, error) {
	if err := e.check(); err != nil {
		return AgentProfile{}, err
	}
	if err := store.ValidateID("id", id); err != nil {
		return AgentProfile{}, err
	}
	var a AgentProfile
	if _, err := readDoc(ctx, e.Store, AgentCollection, id, fmt.Sprintf("agent %q is not registered", id), &a); err != nil {
		return AgentProfile{}, err
	}
	return a, nil
}

// UnregisterAgent removes an agent's profile. Errors: an error matching
// store.ErrNotFound for an agent not registered; the store's and ctx's errors.
func (e *Engine) UnregisterAgent(ctx context.Context, id string) error {
	if err := e.check(); err != nil {
		return err
	}
	if err := store.ValidateID("id", id); err != nil {
		return err
	}
	_, err := e.writeDocs(ctx, []store.DocWrite{{Doc: store.Doc{Collection: AgentCollection, ID: id}, Cond: store.DocDelete}})
	return err
}

// ListAgents returns every registered profile, in registration order.
func (e *Engine) ListAgents(ctx context.Context) ([]AgentProfile, error) {
	if err := e.check(); err != nil {
		return nil, err
	}
	return listDocs[AgentProfile](ctx, e.Store, store.DocQuery{Collection: AgentCollection}, nil)
}

// FindAgents ranks the registered agents against required capabilities with Match:
// a proficiency-weighted score, best first, ties by agent ID, with opts' minimum
// score, exclusions, RequireAll and limit. Errors: Match's *store.ValidationError;
// the store's and ctx's errors.
func (e *Engine) FindAgents(ctx context.Context, required []Requirement, opts MatchOptions) ([]Candidate, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if len(required) == 0 {
		return nil, store.Invalid("required", "needs at least one requirement", nil)
	}
	agents, err := e.ListAgents(ctx)
	if err != nil {
		return nil, err
	}
	return Match(required, agents, opts)
}
