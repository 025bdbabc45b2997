package adk

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"google.golang.org/adk/v2/platform"
	"google.golang.org/adk/v2/session"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/store"
)

// DefaultSessionBranch is the branch a SessionService keeps its sessions on by
// default.
const DefaultSessionBranch = "adk-sessions"

// SessionServiceConfig configures a SessionService. The zero value keeps the
// sessions on DefaultSessionBranch, forked from the default branch when first used.
type SessionServiceConfig struct {
	// Branch is the day1 branch that holds the sessions of every app and user:
	// their conversations, and the conversations of app and user state. Default
	// DefaultSessionBranch. Keep it apart from the branches memory is read from (a
	// MemoryService's, and their parent): a session log is not memory.
	Branch string
	// Parent is the branch that Branch forks from when it does not exist yet.
	// Default day1.DefaultBranch.
	Parent string
	// BranchPerSession keeps each session's conversation and events on a branch of
	// its own, SessionBranch of the session, forked from Branch when the session is
	// created, so that one session's log can be diffed, snapshotted, merged or
	// cherry-picked as a whole. App and user state stay on Branch, shared by the
	// sessions. Default false: every session on Branch.
	BranchPerSession bool
}

// SessionService is an ADK session.Service that keeps sessions in a day1 memory,
// durable on whatever store the Client has (a folder, a SQLite file, MatrixOne).
//
// Each ADK session is a day1 Session (its ID is SessionKey of the app, user and
// session; Project is the app) and a conversation of the same ID on the service's
// branch, whose metadata holds the app, user and session names (MetaApp, MetaUser,
// MetaSession) and the session's own state (MetaState). Each appended event is a
// message of that conversation, in order: its readable text as Content, its role
// (user, assistant, tool_call or tool_result), its author as AgentID, and the whole
// event as JSON (MetaEvent), so that Get returns it as appended. App state ("app:"
// keys) and user state ("user:" keys) are conversations of their own on the branch.
// So the sessions show in day1's timeline, inspector and command line, and time
// travel shows them as they were.
//
// A SessionService is safe for concurrent use. It serialises its own changes of
// state; several processes that append to the sessions of one app or user at once
// may lose one another's app or user state changes (not events).
type SessionService struct {
	c          *day1.Client
	branch     string
	parent     string
	perSession bool // SessionServiceConfig.BranchPerSession

	mu       sync.Mutex // serialises creates, appends and their read-modify-writes of state
	branchOK bool       // the branch is known to exist
}

var _ session.Service = (*SessionService)(nil)

// NewSessionService returns a SessionService over c. An invalid config is a
// *day1.ValidationError naming the field.
func NewSessionService(c *day1.Client, cfg SessionServiceConfig) (*SessionService, error) {
	if c == nil {
		return nil, store.Invalid("NewSessionService: client", "must be an open *day1.Client, not nil", nil)
	}
	cfg.Branch = cmp.Or(cfg.Branch, DefaultSessionBranch)
	if err := store.ValidateBranchName("SessionServiceConfig.Branch", cfg.Branch); err != nil {
		return nil, err
	}
	if cfg.Parent != "" {
		if err := store.ValidateBranchName("SessionServiceConfig.Parent", cfg.Parent); err != nil {
			return nil, err
		}
	}
	return &SessionService{c: c, branch: cfg.Branch, parent: cfg.Parent, perSession: cfg.BranchPerSession}, nil
}

// Branch returns the branch that holds the sessions, or with BranchPerSession their
// app and user state, and from which each session's branch forks.
func (s *SessionService) Branch() string { return s.branch }

// SessionBranch returns the branch that holds a session's conversation and events:
// Branch, or with BranchPerSession Branch + "/" + SessionKey of the session.
func (s *SessionService) SessionBranch(appName, userID, sessionID string) string {
	return s.logBranch(SessionKey(appName, userID, sessionID))
}

// logBranch is the branch of the session whose key is key.
func (s *SessionService) logBranch(key string) string {
	if s.perSession {
		return s.branch + "/" + key
	}
	return s.branch
}

// Create creates a session with its initial state and returns it, with the app's
// and the user's state merged in. An empty SessionID gets a generated one.
// "app:" and "user:" keys of the state update the app's and the user's state,
// "temp:" keys are dropped, the others are the session's own.
//
// Errors: a *day1.ValidationError for an empty AppName or UserID or a state that
// does not encode as JSON within MaxJSON bytes; an error matching day1.ErrExists
// when the app and user already have a session of that ID; day1's errors.
func (s *SessionService) Create(ctx context.Context, req *session.CreateRequest) (*session.CreateResponse, error) {
	if req == nil {
		return nil, store.Invalid("CreateRequest", "must not be nil", nil)
	}
	if err := required("CreateRequest", req.AppName, req.UserID, "-"); err != nil {
		return nil, err
	}
	id := req.SessionID
	if id == "" {
		id = platform.NewUUID(ctx)
	}
	key := SessionKey(req.AppName, req.UserID, id)
	branch := s.logBranch(key)
	appDelta, userDelta, own := splitState(req.State)
	conv := day1.Conversation{
		ID:        key,
		Branch:    branch,
		SessionID: key,
		Title:     fmt.Sprintf("ADK session %s of %s in %s", id, req.UserID, req.AppName),
		Metadata:  map[string]string{MetaKind: KindSession, MetaApp: req.AppName, MetaUser: req.UserID, MetaSession: id},
		CreatedAt: platform.Now(ctx),
	}
	if err := putJSON(conv.Metadata, MetaState, "CreateRequest.State", own); err != nil {
		return nil, err
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.ensureBranch(ctx); err != nil {
		return nil, err
	}
	if s.perSession {
		if err := ensureBranch(ctx, s.c, branch, s.branch, fmt.Sprintf("ADK session %s of %s in %s", id, req.UserID, req.AppName)); err != nil {
			return nil, err
		}
	}
	if _, err := s.c.GetConversation(ctx, branch, key); err == nil {
		return nil, fmt.Errorf("day1: ADK session %q of user %q in app %q exists already; Get it, or Create another ID: %w", id, req.UserID, req.AppName, day1.ErrExists)
	} else if !errors.Is(err, day1.ErrNotFound) {
		return nil, err
	}
	appState, err := s.updateState(ctx, appStateKey(req.AppName), KindAppState, req.AppName, "", appDelta)
	if err != nil {
		return nil, err
	}
	userState, err := s.updateState(ctx, userStateKey(req.AppName, req.UserID), KindUserState, req.AppName, req.UserID, userDelta)
	if err != nil {
		return nil, err
	}
	if _, err := s.c.StartSession(ctx, day1.Session{
		ID: key, Branch: branch, Project: req.AppName, StartedAt: conv.CreatedAt,
		Metadata: map[string]string{MetaApp: req.AppName, MetaUser: req.UserID, MetaSession: id},
	}); err != nil {
		return nil, err
	}
	w, err := s.c.WriteConversation(ctx, conv)
	if err != nil {
		return nil, err
	}
	return &session.CreateResponse{Session: &adkSession{
		appName: req.AppName, userID: req.UserID, id: id,
		state:   joinState(appState, userState, own),
		updated: w.Record.CreatedAt,
	}}, nil
}

// Get returns a session with its events, oldest first, and its state (the app's
// and the user's merged in). GetRequest.After keeps the events at or after it, then
// NumRecentEvents keeps the last ones.
//
// Errors: a *day1.ValidationError for an empty AppName, UserID or SessionID; an
// error matching day1.ErrNotFound when the app and user have no such session;
// day1's errors.
func (s *SessionService) Get(ctx context.Context, req *session.GetRequest) (*session.GetResponse, error) {
	if req == nil {
		return nil, store.Invalid("GetRequest", "must not be nil", nil)
	}
	if err := required("GetRequest", req.AppName, req.UserID, req.SessionID); err != nil {
		return nil, err
	}
	if req.NumRecentEvents < 0 {
		return nil, store.Invalid("GetRequest.NumRecentEvents", "must be 0 (every event) or more", req.NumRecentEvents)
	}
	key := SessionKey(req.AppName, req.UserID, req.SessionID)
	conv, err := s.conversation(ctx, req.AppName, req.UserID, req.SessionID)
	if err != nil {
		return nil, err
	}
	msgs, err := s.c.Messages(ctx, s.logBranch(key), key)
	if err != nil {
		return nil, err
	}
	events := make([]*session.Event, 0, len(msgs))
	for _, m := range msgs {
		e, err := logEvent(m)
		if err != nil {
			return nil, err
		}
		events = append(events, e)
	}
	sess, err := s.session(ctx, conv, nil)
	if err != nil {
		return nil, err
	}
	if len(events) > 0 {
		sess.updated = events[len(events)-1].Timestamp
	}
	if !req.After.IsZero() {
		events = slices.DeleteFunc(events, func(e *session.Event) bool { return e.Timestamp.Before(req.After) })
	}
	if n := req.NumRecentEvents; n > 0 && len(events) > n {
		events = events[len(events)-n:]
	}
	sess.events = events
	return &session.GetResponse{Session: sess}, nil
}

// List returns the sessions of an app, of one user when UserID is set, of every user
// otherwise, oldest first, with their state but without their events (Get reads
// those). Their LastUpdateTime is when their conversation last changed: their
// creation or their last change of session state.
//
// Errors: a *day1.ValidationError for an empty AppName; day1's errors.
func (s *SessionService) List(ctx context.Context, req *session.ListRequest) (*session.ListResponse, error) {
	if req == nil {
		return nil, store.Invalid("ListRequest", "must not be nil", nil)
	}
	if req.AppName == "" {
		return nil, store.Invalid("ListRequest.AppName", "must not be empty", nil)
	}
	md := map[string]string{MetaKind: KindSession, MetaApp: req.AppName}
	if req.UserID != "" {
		md[MetaUser] = req.UserID
	}
	convs, err := s.sessionConversations(ctx, md)
	if errors.Is(err, day1.ErrBranchNotFound) {
		return &session.ListResponse{Sessions: []session.Session{}}, nil
	}
	if err != nil {
		return nil, err
	}
	users := map[string]map[string]any{}
	out := make([]session.Session, 0, len(convs))
	for _, conv := range convs {
		sess, err := s.session(ctx, conv, users)
		if err != nil {
			return nil, err
		}
		out = append(out, sess)
	}
	return &session.ListResponse{Sessions: out}, nil
}

// Delete deletes a session: its conversation and messages leave the branch in one
// atomic step (time travel and snapshots still show them) and its day1 Session is
// ended as abandoned, since day1 keeps session records. Deleting a session that does
// not exist, or that belongs to another user, does nothing.
//
// Errors: a *day1.ValidationError for an empty AppName, UserID or SessionID; day1's
// errors.
func (s *SessionService) Delete(ctx context.Context, req *session.DeleteRequest) error {
	if req == nil {
		return store.Invalid("DeleteRequest", "must not be nil", nil)
	}
	if err := required("DeleteRequest", req.AppName, req.UserID, req.SessionID); err != nil {
		return err
	}
	key := SessionKey(req.AppName, req.UserID, req.SessionID)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.conversation(ctx, req.AppName, req.UserID, req.SessionID); errors.Is(err, day1.ErrNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	branch := s.logBranch(key)
	msgs, err := s.c.Messages(ctx, branch, key)
	if err != nil {
		return err
	}
	refs := []day1.Ref{{Kind: day1.KindConversation, ID: key}}
	for _, m := range msgs {
		refs = append(refs, day1.Ref{Kind: day1.KindMessage, ID: m.ID})
	}
	if err := s.c.Delete(ctx, branch, refs...); err != nil {
		return err
	}
	if _, err := s.c.EndSession(ctx, key, day1.SessionAbandoned, "deleted through the ADK session service"); err != nil && !errors.Is(err, day1.ErrNotFound) {
		return err
	}
	return nil
}

// AppendEvent appends an event to a session: a message of its conversation, and
// the changes of its state delta to the session's, the app's and the user's state.
// Partial events are not kept. An event without an ID or a Timestamp gets one (the
// event's documentation leaves them to storage). Temporary ("temp:") keys of the
// delta are not kept; they apply to cur, the caller's copy of the session, for the
// rest of the invocation when cur came from this service. Appending an event whose
// ID the session already holds changes nothing, so a retried append is harmless.
//
// Errors: a *day1.ValidationError for a nil session or event, or an event or state
// that does not encode as JSON within MaxJSON bytes; an error matching
// day1.ErrNotFound when the session does not exist; day1's errors.
func (s *SessionService) AppendEvent(ctx context.Context, cur session.Session, e *session.Event) error {
	if cur == nil {
		return store.Invalid("AppendEvent: session", "must not be nil", nil)
	}
	if e == nil {
		return store.Invalid("AppendEvent: event", "must not be nil", nil)
	}
	if e.Partial {
		return nil
	}
	if e.ID == "" {
		e.ID = platform.NewUUID(ctx)
	}
	if e.Timestamp.IsZero() {
		e.Timestamp = platform.Now(ctx)
	}
	appName, userID, id := cur.AppName(), cur.UserID(), cur.ID()
	key := SessionKey(appName, userID, id)
	kept := withoutTemp(e)
	msg, err := logMessage(s.logBranch(key), key, appName, userID, id, kept)
	if err != nil {
		return err
	}
	appDelta, userDelta, own := splitState(kept.Actions.StateDelta)

	s.mu.Lock()
	defer s.mu.Unlock()
	conv, err := s.conversation(ctx, appName, userID, id)
	if err != nil {
		return fmt.Errorf("day1: appending event %s: %w", e.ID, err)
	}
	if _, err := s.c.GetMessage(ctx, msg.Branch, msg.ID); err == nil {
		return nil
	} else if !errors.Is(err, day1.ErrNotFound) {
		return err
	}
	// State first, the message last: a retry after a failure in between applies the
	// delta again (its keys are set, not added to) and then appends the event, where
	// the other order would find the event kept and skip the delta.
	if len(own) > 0 {
		state := map[string]any{}
		if _, err := getJSON(conv.Metadata, MetaState, &state); err != nil {
			return err
		}
		for k, v := range own {
			state[k] = v
		}
		conv.Metadata = withoutKey(conv.Metadata, MetaState)
		if err := putJSON(conv.Metadata, MetaState, "session state", state); err != nil {
			return err
		}
		conv.UpdatedAt = e.Timestamp
	}
	if _, err := s.updateState(ctx, appStateKey(appName), KindAppState, appName, "", appDelta); err != nil {
		return err
	}
	if _, err := s.updateState(ctx, userStateKey(appName, userID), KindUserState, appName, userID, userDelta); err != nil {
		return err
	}
	if len(own) > 0 {
		if _, err := s.c.WriteConversation(ctx, conv); err != nil {
			return err
		}
	}
	if _, err := s.c.AppendMessage(ctx, msg); err != nil {
		return err
	}
	if mine, ok := cur.(*adkSession); ok {
		mine.appended(e, kept)
	}
	return nil
}

// conversation returns the conversation of a session, or an error matching
// day1.ErrNotFound.
func (s *SessionService) conversation(ctx context.Context, appName, userID, id string) (day1.Conversation, error) {
	key := SessionKey(appName, userID, id)
	conv, err := s.c.GetConversation(ctx, s.logBranch(key), key)
	if errors.Is(err, day1.ErrBranchNotFound) && s.perSession {
		err = day1.ErrNotFound
	}
	if err == nil && (conv.Metadata[MetaKind] != KindSession || conv.Metadata[MetaApp] != appName ||
		conv.Metadata[MetaUser] != userID || conv.Metadata[MetaSession] != id) {
		err = day1.ErrNotFound
	}
	if errors.Is(err, day1.ErrNotFound) {
		return day1.Conversation{}, fmt.Errorf("day1: ADK session %q of user %q in app %q not found on branch %q: %w", id, userID, appName, s.logBranch(key), day1.ErrNotFound)
	}
	return conv, err
}

// sessionConversations returns the conversations of the sessions whose metadata
// holds md, oldest first: those on Branch, or with BranchPerSession those of the
// session branches under it.
func (s *SessionService) sessionConversations(ctx context.Context, md map[string]string) ([]day1.Conversation, error) {
	if !s.perSession {
		return s.c.ListConversations(ctx, day1.ListOptions{Branch: s.branch, Filter: day1.Filter{Metadata: md}})
	}
	bs, err := s.c.Branches(ctx, day1.BranchFilter{})
	if err != nil {
		return nil, err
	}
	var out []day1.Conversation
	prefix := s.branch + "/"
	for _, b := range bs {
		key, ok := strings.CutPrefix(b.Name, prefix)
		if !ok || strings.Contains(key, "/") {
			continue
		}
		conv, err := s.c.GetConversation(ctx, b.Name, key)
		if errors.Is(err, day1.ErrNotFound) {
			continue // deleted, or not a session's branch
		}
		if err != nil {
			return nil, err
		}
		match := true
		for k, v := range md {
			match = match && conv.Metadata[k] == v
		}
		if match {
			out = append(out, conv)
		}
	}
	slices.SortFunc(out, func(a, b day1.Conversation) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.ID, b.ID))
	})
	return out, nil
}

// session is the session of a conversation, with its app's and user's state; users
// caches the user states a List has read.
func (s *SessionService) session(ctx context.Context, conv day1.Conversation, users map[string]map[string]any) (*adkSession, error) {
	appName, userID := conv.Metadata[MetaApp], conv.Metadata[MetaUser]
	own := map[string]any{}
	if _, err := getJSON(conv.Metadata, MetaState, &own); err != nil {
		return nil, err
	}
	appState, err := s.readState(ctx, appStateKey(appName))
	if err != nil {
		return nil, err
	}
	userState, ok := users[userID]
	if !ok {
		if userState, err = s.readState(ctx, userStateKey(appName, userID)); err != nil {
			return nil, err
		}
		if users != nil {
			users[userID] = userState
		}
	}
	return &adkSession{
		appName: appName, userID: userID, id: conv.Metadata[MetaSession],
		state:   joinState(appState, userState, own),
		updated: cmp.Or(conv.UpdatedAt, conv.CreatedAt),
	}, nil
}

// readState returns the state held by conversation key, empty when there is none.
func (s *SessionService) readState(ctx context.Context, key string) (map[string]any, error) {
	state := map[string]any{}
	conv, err := s.c.GetConversation(ctx, s.branch, key)
	if errors.Is(err, day1.ErrNotFound) {
		return state, nil
	}
	if err != nil {
		return nil, err
	}
	if _, err := getJSON(conv.Metadata, MetaState, &state); err != nil {
		return nil, err
	}
	return state, nil
}

// updateState applies delta to the state held by conversation key and returns the
// state. The caller holds s.mu.
func (s *SessionService) updateState(ctx context.Context, key, kind, appName, userID string, delta map[string]any) (map[string]any, error) {
	state, err := s.readState(ctx, key)
	if err != nil || len(delta) == 0 {
		return state, err
	}
	for k, v := range delta {
		state[k] = v
	}
	md := map[string]string{MetaKind: kind, MetaApp: appName}
	title := "ADK state of app " + appName
	if userID != "" {
		md[MetaUser] = userID
		title = fmt.Sprintf("ADK state of user %s in app %s", userID, appName)
	}
	if err := putJSON(md, MetaState, kind, state); err != nil {
		return nil, err
	}
	if _, err := s.c.WriteConversation(ctx, day1.Conversation{ID: key, Branch: s.branch, Title: title, Metadata: md}); err != nil {
		return nil, err
	}
	return state, nil
}

// ensureBranch creates the service's branch when it does not exist. The caller holds
// s.mu.
func (s *SessionService) ensureBranch(ctx context.Context) error {
	if s.branchOK {
		return nil
	}
	if err := ensureBranch(ctx, s.c, s.branch, s.parent, "ADK sessions"); err != nil {
		return err
	}
	s.branchOK = true
	return nil
}

// ensureBranch creates branch name from parent when it does not exist.
func ensureBranch(ctx context.Context, c *day1.Client, name, parent, what string) error {
	_, err := c.GetBranch(ctx, name)
	if !errors.Is(err, day1.ErrBranchNotFound) {
		return err
	}
	_, err = c.Branch(ctx, name, day1.BranchOptions{From: parent, Description: what})
	if errors.Is(err, day1.ErrBranchExists) {
		return nil
	}
	return err
}

// required checks the names of a request: AppName and UserID, and SessionID unless
// it is "-".
func required(req, appName, userID, sessionID string) error {
	switch {
	case appName == "":
		return store.Invalid(req+".AppName", "must not be empty", nil)
	case userID == "":
		return store.Invalid(req+".UserID", "must not be empty", nil)
	case sessionID == "":
		return store.Invalid(req+".SessionID", "must not be empty", nil)
	}
	return nil
}

// withoutKey returns a copy of md without key and its continuations.
func withoutKey(md map[string]string, key string) map[string]string {
	out := make(map[string]string, len(md))
	for k, v := range md {
		out[k] = v
	}
	for i := 0; ; i++ {
		if _, ok := out[chunkKey(key, i)]; !ok {
			return out
		}
		delete(out, chunkKey(key, i))
	}
}
