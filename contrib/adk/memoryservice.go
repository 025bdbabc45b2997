package adk

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/adk/v2/memory"
	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/store"
)

// MemoryServiceConfig configures a MemoryService. The zero value keeps each user's
// memory on DefaultMemoryBranch, forked from the default branch, and searches it with
// day1's defaults and DefaultMinRelevance.
type MemoryServiceConfig struct {
	// Branch names the day1 branch that holds the memory of one user of one app.
	// It must return a valid branch name, and a different one for every pair that
	// must not read the other's memory. Default DefaultMemoryBranch.
	Branch func(appName, userID string) string
	// Parent is the branch a user's memory branch forks from when the user's first
	// session is added: the branch sees what Parent held then (knowledge shared by
	// every user, say) and nothing Parent gains later. Keep other users' data off
	// it. Default day1.DefaultBranch.
	Parent string
	// Limit is the most memories a search returns, 1 to store.MaxLimit. Default 10.
	Limit int
	// MinRelevance is the relevance floor of a search (day1.SearchQuery.MinRelevance):
	// memories less relevant to the query are left out, so that a question about
	// something never said finds nothing. 0 means day1.DefaultMinRelevance; a
	// negative value keeps every hit.
	MinRelevance float64
	// ExtractFacts runs day1's fact extraction (Client.ExtractFacts) on a session's
	// conversation each time AddSessionToMemory adds turns to it: with the Client's
	// Model the model keeps the facts the turns hold, and updates or invalidates the
	// facts memory held; without one, heuristics keep the assistant's findings and
	// decisions as unverified facts. Searches find facts beside the turns. Default
	// false: memory holds the turns only.
	ExtractFacts bool
}

// MemoryService is an ADK memory.Service over a day1 memory.
//
// Each user of each app has a memory of their own: a day1 branch
// (MemoryServiceConfig.Branch; DefaultMemoryBranch by default). A branch, rather
// than metadata on one shared branch, is what makes day1's rules act within one
// user's memory: an exact repeat or near-duplicate fact is matched against that
// user's facts only, contradictions and extracted facts are judged against what that
// user said, keyword statistics are that user's, and a search cannot return
// another user's record because it never reads their branch. The branch is also a
// unit day1 can diff, snapshot, read in the past, or merge (a user's verified facts
// into a shared branch, say). A branch costs nothing on the embedded stores (a fork
// is copy-on-write, in constant time); on MatrixOne it is a set of tables, created by
// DATA BRANCH CREATE on a 3.x server and by copying Parent's rows otherwise, so keep
// Parent small there. For isolation by database, open a day1.Tenants manager and a
// MemoryService over each tenant's Client.
//
// AddSessionToMemory writes a session as a conversation of that branch (its ID is
// SessionKey of the app, user and session), one message per event that holds text:
// the user's turns and the agents' answers, not tool calls, tool results or
// thoughts. SearchMemory is day1's search of the branch's messages and facts.
//
// A MemoryService is safe for concurrent use.
type MemoryService struct {
	c   *day1.Client
	cfg MemoryServiceConfig
}

var _ memory.Service = (*MemoryService)(nil)

// NewMemoryService returns a MemoryService over c. An invalid config is a
// *day1.ValidationError naming the field.
func NewMemoryService(c *day1.Client, cfg MemoryServiceConfig) (*MemoryService, error) {
	if c == nil {
		return nil, store.Invalid("NewMemoryService: client", "must be an open *day1.Client, not nil", nil)
	}
	if cfg.Branch == nil {
		cfg.Branch = DefaultMemoryBranch
	}
	if cfg.Parent != "" {
		if err := store.ValidateBranchName("MemoryServiceConfig.Parent", cfg.Parent); err != nil {
			return nil, err
		}
	}
	if cfg.Limit != 0 && (cfg.Limit < 1 || cfg.Limit > store.MaxLimit) {
		return nil, store.Invalid("MemoryServiceConfig.Limit", fmt.Sprintf("must be 0 (the default, 10) or 1 to %d", store.MaxLimit), cfg.Limit)
	}
	switch {
	case cfg.MinRelevance > 1:
		return nil, store.Invalid("MemoryServiceConfig.MinRelevance", "must be at most 1: it is the floor of day1's Relevance, in [0, 1] (0 means day1.DefaultMinRelevance, a negative value no floor)", cfg.MinRelevance)
	case cfg.MinRelevance == 0:
		cfg.MinRelevance = day1.DefaultMinRelevance
	case cfg.MinRelevance < 0:
		cfg.MinRelevance = 0
	}
	return &MemoryService{c: c, cfg: cfg}, nil
}

// Branch returns the branch that holds the memory of a user of an app, or a
// *day1.ValidationError when MemoryServiceConfig.Branch names no valid branch.
func (m *MemoryService) Branch(appName, userID string) (string, error) {
	b := m.cfg.Branch(appName, userID)
	if err := store.ValidateBranchName("MemoryServiceConfig.Branch(appName, userID)", b); err != nil {
		return "", err
	}
	return b, nil
}

// AddSessionToMemory adds a session's turns to the memory of its user: the
// conversation of the session on the user's branch (created with the branch on first
// use), and a message for each event with text that it does not hold yet, in order.
// Adding a session again adds only its new turns, so it may be added as often as it
// grows. With MemoryServiceConfig.ExtractFacts, facts are extracted when turns were
// added.
//
// Errors: a *day1.ValidationError for a nil session or an empty AppName or UserID;
// day1's errors, the extraction's included (the turns are kept then, and a later add
// with new turns extracts again).
func (m *MemoryService) AddSessionToMemory(ctx context.Context, s session.Session) error {
	if s == nil {
		return store.Invalid("AddSessionToMemory: session", "must not be nil", nil)
	}
	appName, userID, id := s.AppName(), s.UserID(), s.ID()
	if err := required("session", appName, userID, id); err != nil {
		return err
	}
	branch, err := m.Branch(appName, userID)
	if err != nil {
		return err
	}
	if err := ensureBranch(ctx, m.c, branch, m.cfg.Parent, fmt.Sprintf("ADK memory of user %s in app %s", userID, appName)); err != nil {
		return err
	}
	key := SessionKey(appName, userID, id)
	var events []*session.Event
	if evs := s.Events(); evs != nil {
		for e := range evs.All() {
			if e != nil && !e.Partial && contentText(e.Content, false) != "" {
				events = append(events, e)
			}
		}
	}
	held, err := m.conversation(ctx, branch, key, appName, userID, id, events)
	if err != nil {
		return err
	}
	var turns []day1.Message
	for i, e := range events {
		msg := memoryMessage(branch, key, appName, userID, id, i, e)
		if !held[msg.ID] {
			held[msg.ID] = true
			turns = append(turns, msg)
		}
	}
	for start := 0; start < len(turns); start += store.MaxBatch {
		if _, err := m.c.AppendMessages(ctx, turns[start:min(start+store.MaxBatch, len(turns))]); err != nil {
			return fmt.Errorf("day1: adding ADK session %q to the memory of user %q in app %q: %w", id, userID, appName, err)
		}
	}
	if m.cfg.ExtractFacts && len(turns) > 0 {
		if _, err := m.c.ExtractFacts(ctx, day1.Extraction{Branch: branch, ConversationID: key, By: "adk memory"}); err != nil {
			return fmt.Errorf("day1: extracting the facts of ADK session %q: %w", id, err)
		}
	}
	return nil
}

// conversation makes sure the session's conversation is on branch and returns the
// IDs of the messages it holds.
func (m *MemoryService) conversation(ctx context.Context, branch, key, appName, userID, id string, events []*session.Event) (map[string]bool, error) {
	held := map[string]bool{}
	msgs, err := m.c.Messages(ctx, branch, key)
	if err == nil {
		for _, msg := range msgs {
			held[msg.ID] = true
		}
		return held, nil
	}
	if !errors.Is(err, day1.ErrNotFound) || errors.Is(err, day1.ErrBranchNotFound) {
		return nil, err
	}
	conv := day1.Conversation{
		ID: key, Branch: branch, SessionID: key,
		Title:    fmt.Sprintf("ADK session %s", id),
		Metadata: map[string]string{MetaKind: KindMemory, MetaApp: appName, MetaUser: userID, MetaSession: id},
	}
	if len(events) > 0 {
		conv.CreatedAt = events[0].Timestamp
	}
	if _, err := m.c.WriteConversation(ctx, conv); err != nil {
		return nil, err
	}
	return held, nil
}

// memoryMessage is the message of event i of a session in memory: its text, said by
// the user or by the agent that wrote it.
func memoryMessage(branch, key, appName, userID, id string, i int, e *session.Event) day1.Message {
	role := day1.RoleAssistant
	if e.Author == authorUser {
		role = day1.RoleUser
	}
	eventID := e.ID
	if eventID == "" {
		eventID = fmt.Sprintf("#%d", i)
	}
	return day1.Message{
		ID:             messageID(key, eventID),
		Branch:         branch,
		ConversationID: key,
		Role:           role,
		Content:        contentText(e.Content, false),
		SessionID:      key,
		AgentID:        agentOf(e),
		Metadata:       eventMeta(appName, userID, id, e),
		CreatedAt:      e.Timestamp,
	}
}

// SearchMemory searches the memory of the request's user: day1's search (hybrid by
// default) of the messages and facts of the user's branch, best first, at most
// MemoryServiceConfig.Limit, at the relevance floor MinRelevance. A blank query, or
// a user with no memory yet, finds nothing.
//
// Each entry's ID is the day1 record's, its Content the text (role "user" for the
// user's turns, "model" otherwise), its Author the event's author (or the fact's
// agent), its Timestamp when it was said or written. CustomMetadata holds
// "day1_kind" (message or fact), "day1_relevance" (0 to 1), "day1_branch", and
// for a message "adk_session", the ADK session it was said in, for a fact its
// "day1_category" and its metadata.
//
// Errors: a *day1.ValidationError for a nil request or an empty AppName or UserID;
// day1's errors.
func (m *MemoryService) SearchMemory(ctx context.Context, req *memory.SearchRequest) (*memory.SearchResponse, error) {
	if req == nil {
		return nil, store.Invalid("SearchRequest", "must not be nil", nil)
	}
	if err := required("SearchRequest", req.AppName, req.UserID, "-"); err != nil {
		return nil, err
	}
	out := &memory.SearchResponse{Memories: []memory.Entry{}}
	if strings.TrimSpace(req.Query) == "" {
		return out, nil
	}
	branch, err := m.Branch(req.AppName, req.UserID)
	if err != nil {
		return nil, err
	}
	hits, err := m.c.Search(ctx, day1.SearchQuery{
		Branch:       branch,
		Text:         req.Query,
		Kinds:        []day1.Kind{day1.KindMessage, day1.KindFact},
		Limit:        m.cfg.Limit,
		MinRelevance: m.cfg.MinRelevance,
	})
	if errors.Is(err, day1.ErrBranchNotFound) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("day1: searching the memory of user %q in app %q: %w", req.UserID, req.AppName, err)
	}
	for _, h := range hits {
		if e, ok := entry(h, branch); ok {
			out.Memories = append(out.Memories, e)
		}
	}
	return out, nil
}

// entry is the memory entry of a hit; only messages and facts make one.
func entry(h day1.Hit, branch string) (memory.Entry, bool) {
	md := map[string]any{"day1_relevance": h.Relevance, "day1_branch": branch}
	if msg, ok := h.Message(); ok {
		md["day1_kind"] = "message"
		md["adk_session"] = msg.Metadata[MetaSession]
		role := genai.Role(genai.RoleModel)
		if msg.Role == day1.RoleUser {
			role = genai.RoleUser
		}
		author := cmp.Or(msg.Metadata[MetaAuthor], string(role))
		return memory.Entry{ID: msg.ID, Content: genai.NewContentFromText(msg.Content, role), Author: author, Timestamp: msg.CreatedAt, CustomMetadata: md}, true
	}
	if f, ok := h.Fact(); ok {
		for k, v := range f.Metadata {
			md[k] = v
		}
		md["day1_kind"] = "fact"
		if f.Category != "" {
			md["day1_category"] = f.Category
		}
		return memory.Entry{ID: f.ID, Content: genai.NewContentFromText(f.Text, genai.RoleModel), Author: cmp.Or(f.AgentID, "memory"), Timestamp: f.CreatedAt, CustomMetadata: md}, true
	}
	return memory.Entry{}, false
}
