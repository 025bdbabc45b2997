// Package adk connects day1 to Google's Agent Development Kit for Go
// (google.golang.org/adk/v2): a session.Service that keeps ADK sessions and their
// events in a day1 memory, durable on any day1 store, and a memory.Service whose
// memory is day1's, searched by day1's hybrid search with a relevance floor. A runner
// takes both:
//
//	client, err := day1.Open(ctx, day1.Config{Path: "/var/lib/app/memory"})
//	sessions, err := adk.NewSessionService(client, adk.SessionServiceConfig{})
//	mem, err := adk.NewMemoryService(client, adk.MemoryServiceConfig{})
//	r, err := runner.New(runner.Config{AppName: "travel", Agent: a, SessionService: sessions, MemoryService: mem})
//
// and agents reach the memory through ADK's loadmemorytool and preloadmemorytool.
//
// It is a module of its own, github.com/day1ai/day1/contrib/adk, so that the core
// module and its users pull none of ADK's dependencies, nor the newer Go that ADK
// needs (1.26.5).
//
// # Sessions
//
// SessionService keeps every app's and user's sessions on one day1 branch
// (SessionServiceConfig.Branch, DefaultSessionBranch by default). An ADK session is a
// day1 Session and a conversation, both of ID SessionKey(app, user, session), and each
// event a message of the conversation: its readable text (the text, and a line per
// function call or response) with a role (user, assistant, tool_call, tool_result),
// and the whole event as JSON in its metadata, so Get returns events as they were
// appended. App and user state are conversations of their own. The sessions of an
// app or a user are found by metadata equality (MetaApp, MetaUser), so listing them
// is one query on every store. A session and its state outlive the process on a
// durable store, and day1's timeline, inspector, time travel and command line show
// them.
//
// # Memory
//
// MemoryService gives each user of each app a memory of their own: a day1 branch
// (DefaultMemoryBranch(app, user) unless MemoryServiceConfig.Branch says otherwise).
// A branch per user, rather than a filter on one shared branch, keeps day1's rules
// within one user's memory: duplicates, near-duplicate facts, contradictions and
// extracted facts are judged against that user's records only, and a search never
// reads another user's branch. AddSessionToMemory writes a session's turns (the
// events with text) to the user's branch as a conversation, adding only new turns
// when a session is added again; with MemoryServiceConfig.ExtractFacts, day1 also
// extracts facts from them. SearchMemory searches the messages and facts of the
// user's branch, at most Limit, at the relevance floor MinRelevance
// (day1.DefaultMinRelevance by default; see day1.SearchQuery.MinRelevance), so a
// question about something never said finds nothing.
//
// The session log and memory stay apart: a session's turns are memory once they are
// added, not while they are being said, so a search does not return the question
// being asked.
//
// # Errors
//
// Bad input is a *day1.ValidationError naming the field (CreateRequest.AppName,
// MemoryServiceConfig.Limit, ...) and saying what is allowed. A session that does not
// exist matches day1.ErrNotFound, creating one that exists day1.ErrExists. An event
// or a state whose JSON encoding is longer than MaxJSON is refused. day1's own errors
// pass through, wrapped, so errors.Is and errors.As reach them.
package adk
