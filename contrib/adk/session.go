package adk

import (
	"iter"
	"maps"
	"slices"
	"sync"
	"time"

	"google.golang.org/adk/v2/session"
)

// adkSession is the session.Session the SessionService returns: a copy of what the
// store held when it was read, which AppendEvent keeps up to date in this process.
type adkSession struct {
	appName, userID, id string

	mu      sync.RWMutex
	state   map[string]any
	events  []*session.Event
	updated time.Time
}

var _ session.Session = (*adkSession)(nil)

// ID returns the session's ID within its app and user.
func (s *adkSession) ID() string { return s.id }

// AppName returns the name of the session's app.
func (s *adkSession) AppName() string { return s.appName }

// UserID returns the ID of the session's user.
func (s *adkSession) UserID() string { return s.userID }

// State returns the session's state: its own keys and its app's and user's, with
// their prefixes. Set changes this copy only; state reaches the store through the
// state deltas of appended events.
func (s *adkSession) State() session.State { return sessionState{s} }

// Events returns the session's events, oldest first, as read (and appended since).
func (s *adkSession) Events() session.Events {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return eventList(slices.Clone(s.events))
}

// LastUpdateTime returns the time of the session's last event, or of its creation.
func (s *adkSession) LastUpdateTime() time.Time {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.updated
}

// appended records an event appended through the service: all of its state delta,
// temporary keys too, applies to this copy for the rest of the invocation; the event
// kept has no temporary keys, as the store's has not.
func (s *adkSession) appended(e, kept *session.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(e.Actions.StateDelta) > 0 {
		if s.state == nil {
			s.state = map[string]any{}
		}
		maps.Copy(s.state, e.Actions.StateDelta)
	}
	s.events = append(s.events, kept)
	s.updated = e.Timestamp
}

// sessionState is a session's state, guarded by the session's lock.
type sessionState struct{ s *adkSession }

// Get returns the value of key, or session.ErrStateKeyNotExist.
func (st sessionState) Get(key string) (any, error) {
	st.s.mu.RLock()
	defer st.s.mu.RUnlock()
	v, ok := st.s.state[key]
	if !ok {
		return nil, session.ErrStateKeyNotExist
	}
	return v, nil
}

// Set sets key in this copy of the session.
func (st sessionState) Set(key string, value any) error {
	st.s.mu.Lock()
	defer st.s.mu.Unlock()
	if st.s.state == nil {
		st.s.state = map[string]any{}
	}
	st.s.state[key] = value
	return nil
}

// All yields the pairs of the state as it was when called.
func (st sessionState) All() iter.Seq2[string, any] {
	st.s.mu.RLock()
	snapshot := maps.Clone(st.s.state)
	st.s.mu.RUnlock()
	return maps.All(snapshot)
}

// eventList is a list of events.
type eventList []*session.Event

// All yields the events in order.
func (l eventList) All() iter.Seq[*session.Event] {
	return func(yield func(*session.Event) bool) {
		for _, e := range l {
			if !yield(e) {
				return
			}
		}
	}
}

// Len returns the number of events.
func (l eventList) Len() int { return len(l) }

// At returns event i, or nil when i is out of range.
func (l eventList) At(i int) *session.Event {
	if i < 0 || i >= len(l) {
		return nil
	}
	return l[i]
}
