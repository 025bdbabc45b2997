package day1

import (
	"context"
	"errors"

	"github.com/day1ai/day1/store"
)

// StartSession records the start of an agent session and returns it as stored.
//
// An empty ID gets a generated one, an empty Branch means DefaultBranch (the branch
// must exist), a zero StartedAt is now, and the status is SessionActive. Starting a
// session whose ID exists already returns the stored session unchanged, so a retried
// start is harmless.
func (c *Client) StartSession(ctx context.Context, s Session) (Session, error) {
	if err := c.use(ctx); err != nil {
		return Session{}, err
	}
	if s.ID == "" {
		s.ID = c.newID()
	} else if err := store.ValidateID("Session.ID", s.ID); err != nil {
		return Session{}, err
	}
	if s.Status != "" && s.Status != SessionActive {
		return Session{}, store.Invalid("Session.Status", "must be empty or active when a session starts; end it with EndSession", s.Status)
	}
	if !s.EndedAt.IsZero() {
		return Session{}, store.Invalid("Session.EndedAt", "must be zero when a session starts; end it with EndSession", nil)
	}
	s.Branch = branchOrMain(s.Branch)
	s.Status = SessionActive
	if got, err := c.st.GetSession(ctx, s.ID); err == nil {
		return got, nil
	} else if !errors.Is(err, ErrNotFound) {
		return Session{}, err
	}
	if _, err := c.st.GetBranch(ctx, s.Branch); err != nil {
		return Session{}, err
	}
	return c.st.PutSession(ctx, s)
}

// EndSession ends a session with a status, SessionCompleted (the default, for an empty
// status) or SessionAbandoned, and an optional summary (empty keeps the stored one).
// Ending an ended session again updates its status and summary and keeps its first
// end time. A session that does not exist is an error matching ErrNotFound.
func (c *Client) EndSession(ctx context.Context, id string, status SessionStatus, summary string) (Session, error) {
	if err := c.use(ctx); err != nil {
		return Session{}, err
	}
	if status == "" {
		status = SessionCompleted
	}
	if status != SessionCompleted && status != SessionAbandoned {
		return Session{}, store.Invalid("status", "must be completed or abandoned", status)
	}
	s, err := c.st.GetSession(ctx, id)
	if err != nil {
		return Session{}, err
	}
	s.Status = status
	if summary != "" {
		s.Summary = summary
	}
	if s.EndedAt.IsZero() {
		s.EndedAt = c.now()
	}
	return c.st.PutSession(ctx, s)
}

// GetSession returns a session, or an error matching ErrNotFound.
func (c *Client) GetSession(ctx context.Context, id string) (Session, error) {
	if err := c.use(ctx); err != nil {
		return Session{}, err
	}
	return c.st.GetSession(ctx, id)
}

// Sessions returns the sessions the filter matches, oldest first.
func (c *Client) Sessions(ctx context.Context, f SessionFilter) ([]Session, error) {
	if err := c.use(ctx); err != nil {
		return nil, err
	}
	return c.st.ListSessions(ctx, f)
}
