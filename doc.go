// Package day1 gives AI agents git-like memory: write and search facts, observations,
// relations and conversations; branch, diff and merge whole memories; snapshot them and
// read the past.
//
// The Client is a thin, typed facade over a store.Store (the embedded memstore by
// default), an llm.Embedder and the merge engine. Engine packages work on the store
// directly (Client.Store); the data model types are aliases of the store package's.
//
// # Opening a client
//
// A zero Config opens the embedded store in memory with the deterministic, offline
// local embedder: no files, no network, no keys. Config.Path makes the embedded store
// durable: one SQLite file in that folder (package store/sqlite) that any number of
// processes open at once, each in constant time; Config.Store injects any store.Store (the caller keeps ownership of it);
// Config.Embedder, Config.Model and Config.Resolver inject the language-model side.
//
//	c, err := day1.Open(ctx, day1.Config{}) // in memory; Config{Path: "./.day1"} is durable
//	if err != nil {
//		return err
//	}
//	defer c.Close()
//
// Capabilities reports the store, embedder and features in use.
//
// # Writing
//
// WriteFact, WriteFacts, WriteObservation(s), WriteRelation, WriteConversation and
// AppendMessage write records to a branch; an empty Branch means "main" and an empty
// ID gets a generated one. Each write reports its Outcome: Created, Deduplicated (the
// same record or the same fact text was there), Updated, or Superseded (a near-duplicate
// fact, by embedding similarity, was replaced). Fact texts, observation summaries and
// message contents are embedded for you; an embedding failure never blocks a write:
// the record is kept without a vector, stays keyword-searchable, and Written.EmbedErr
// says why. A fact written under an ID of yours and deduplicated against another
// fact's text leaves your ID as an alias of that fact (Written.AliasOf): GetFact by it
// returns that fact. A fact that holds for a while says until when (Fact.ExpiresAt, or
// Fact.TTL at write): searches and lists leave it out from then on.
//
//	w, err := c.WriteFact(ctx, day1.Fact{Text: "The auth service signs JWTs with RS256", Category: "architecture"})
//	fmt.Println(w.Outcome, w.Record.ID)
//
// # Searching
//
// Search ranks facts, observations, messages and conversation titles by keyword
// (BM25), by vector (cosine) or by both fused (Hybrid, the default, with
// reciprocal-rank fusion). Each Hit carries its final score, the score and rank of
// every retriever that found it, and FoundBy; a message hit names its conversation
// and, with SearchQuery.Window, carries the turns around it. Every hit has a
// Relevance in [0, 1] that means the same on every store and fusion, and
// SearchQuery.MinRelevance (DefaultMinRelevance for what goes into an agent's
// context) lets a search answer "nothing relevant". Config.Reranker, off by default,
// reorders the best candidates of every search (package rerank; rerank.Recency
// prefers newer memories, rerank.Usage lets unused ones fade). Timeline
// lists what happened on a branch in time order; Graph walks the relation graph around
// an entity. All reads are in the Reader interface.
//
//	hits, err := c.Search(ctx, day1.SearchQuery{Text: "token signing", Limit: 5})
//
// # Branches and merges
//
// Branch forks a branch from a parent; the branch sees the parent as it was at the
// fork, and its own writes stay on it until merged. On the embedded store a fork is
// copy-on-write, in constant time; on MatrixOne it is a zero-copy DATA BRANCH CREATE
// from the head of a 3.x server, and a copy of the visible rows otherwise
// (Capabilities says which path the server takes). Diff lists what
// changed on each side since the merge base, with conflicts; its records carry no
// embeddings, which reads return. Merge applies a strategy
// atomically: Native (adopt every change; conflicts follow the ConflictPolicy),
// CherryPick (chosen records), Squash (net effect), Auto (a Resolver decides conflicts).
// A merge gate can refuse a merge with a *MergeBlockedError. Merges lists the history.
//
//	c.Branch(ctx, "task/fix-auth/agent-a", day1.BranchOptions{})
//	c.WriteFact(ctx, day1.Fact{Branch: "task/fix-auth/agent-a", Text: "..."})
//	d, err := c.Diff(ctx, "task/fix-auth/agent-a", "main")
//	res, err := c.Merge(ctx, day1.MergeRequest{Source: "task/fix-auth/agent-a", Target: "main"})
//
// # Snapshots and time travel
//
// Snapshot names the head of a branch. TimeTravel returns a View, a Reader that sees
// memory exactly as it was at a snapshot (AtSnapshot) or an instant (AtTime): the same
// Get, List, Search, Timeline and Graph methods, frozen in time. BranchOptions.At forks
// a branch from the past.
//
//	c.Snapshot(ctx, "main", "before-refactor", day1.SnapshotOptions{})
//	past := c.TimeTravel(day1.AtSnapshot("before-refactor"))
//	hits, err := past.Search(ctx, day1.SearchQuery{Text: "token signing"})
//
// # Curation
//
// Curation keeps only trusted knowledge on main. VerifyFact and VerifyConversation
// judge a record with Config.Model (or, without one, documented heuristics) and write
// the verdict, with its per-dimension Scores, as a new version; Config.Verification
// holds the thresholds (DefaultPolicy verifies at 0.6 and invalidates under 0.3,
// StrictPolicy verifies facts at 0.7 and conversations at 0.6, invalidating under 0.4;
// facts and conversations may have thresholds of their own). VerifyBranch judges every unverified record of a
// branch, a few at a time, reporting progress; VerificationSummary counts the states.
// VerificationGate{} as MergeRequest.Gate refuses a merge that would bring unverified
// or invalidated facts, with a *MergeBlockedError. With Config.Model, auto merges ask
// the model to decide conflicts.
//
// CherryPickConversation, CherryPickMessages (a range of sequence numbers),
// CherryPickDecisions and CherryPickFacts move the right parts of a conversation to
// another branch; picked messages record the target in PickedTo. ExtractFacts keeps
// what a conversation taught, stored or not: with Config.Model it adds new facts and
// updates or invalidates the facts memory held, in one atomic batch, each naming the
// turns it came from; without one, heuristics add candidates. Consolidate turns a
// session's observations into candidate facts. CreateTemplate, FindTemplate,
// InstantiateTemplate, UpdateTemplate and DeprecateTemplate keep versioned templates
// of good branches, instantiated as new branches (forks from a snapshot: constant time
// on the embedded store, a copy on MatrixOne).
//
//	res, err := c.VerifyBranch(ctx, day1.VerifyBranchRequest{Branch: "task/fix-auth"})
//	_, err = c.Merge(ctx, day1.MergeRequest{Source: "task/fix-auth", Target: "main", Gate: day1.VerificationGate{}})
//
// # Tasks and handoffs
//
// CreateTask puts a task with numbered objectives on its own branch task/<name>;
// JoinTask gives each agent a role, objectives and a branch task/<name>/<agent>;
// UpdateObjective records who changed what when; LeaveTask keeps the agent's summary.
// CompleteTask can promote the task's verified facts and verified or cherry-picked
// conversations to the parent branch, leaving the rest on the task branch.
//
// Handoff freezes the task's context in a ContextPacket (verified facts, key
// conversations with their decision points, pending objectives, blockers, recent
// errors, instructions, the branch to continue from) and offers it to a named
// receiver, to the best registered agent for the Required capabilities (RegisterAgent,
// FindAgents), or to anyone. AcceptHandoff creates the receiver's branch and returns the
// packet atomically: of two agents accepting at once exactly one wins, and a failure
// midway rolls everything back. TransferTask runs a policy-driven handoff (immediate,
// graceful, or conditional on a Trigger such as a CompileCondition expression).
// Checkpoint, ResumeFromCheckpoint and StalledTasks cover crashes and silent agents;
// Collab speaks the collaboration protocol; HandoffEvents is the audit trail.
//
//	_, err = c.CreateTask(ctx, day1.TaskSpec{Name: "fix-auth", Objectives: []string{"find the cause", "fix it"}})
//	_, err = c.JoinTask(ctx, day1.JoinRequest{Task: "fix-auth", Agent: "investigator", Objectives: []int{1}})
//	h, err := c.Handoff(ctx, day1.HandoffRequest{Task: "fix-auth", Type: day1.HandoffEscalation, FromAgent: "investigator"})
//	acc, err := c.AcceptHandoff(ctx, day1.AcceptRequest{Handoff: h.ID, Agent: "oauth-expert"})
//	fmt.Println(acc.Branch, len(acc.Packet.Facts))
//
// # Bundles
//
// CreateBundle packages the verified knowledge of a task (what its branch added), a
// branch or a template as a bundle, stored in the memory; a team or public bundle
// carries a share token that SharedBundle resolves and that SetBundleVisibility
// (private) or DeleteBundle revoke at once. VerifyBundle judges its content.
// ExportBundle and WriteBundle write the portable file (its format is specified in
// the bundle package); ImportBundle reads a file, a stored bundle or a shared one into
// a branch, checking the whole bundle and its SHA-256 seal before it writes anything,
// in one atomic step; importing it again changes nothing.
//
//	b, err := c.CreateBundle(ctx, day1.CreateBundleRequest{Name: "oauth fix", Task: "fix-auth", Visibility: day1.BundleTeam})
//	_, err = c.ExportBundle(ctx, b.ID, file, day1.ExportBundleOptions{Compress: true})
//	res, err := other.ImportBundle(ctx, day1.ImportBundleRequest{From: file, Branch: "main"})
//
// # Replay
//
// TaskReplay rebuilds a task's run from memory: a timeline of every step (joins,
// objective changes, facts, conversations, verifications, handoffs, checkpoints,
// merges, completion) in commit order, each agent's contribution, the verified facts
// and conversations, and the outcome. Each step's At is the instant at which
// TimeTravel shows memory as that step left it; ReplayOptions.AsOf replays a task as
// it stood at a snapshot or an instant. CompareTaskRuns sets two runs side by side
// (agents, decision points, facts matched as near-duplicates, scores, durations,
// errors). ForkConversation branches memory at one message of a conversation to run
// it again from there; DiffConversations says where two conversations part.
//
//	tr, err := c.TaskReplay(ctx, "fix-auth", day1.ReplayOptions{})
//	for _, ev := range tr.Timeline {
//		fmt.Println(ev.At, ev.Kind, ev.Agent, ev.Summary)
//	}
//
// # Tenants
//
// A service that keeps a memory per user or customer opens one Tenants manager
// (OpenTenants) instead of one Client per memory. Each tenant is a memory of its own by
// construction: a folder under TenantsConfig.Path, a database on the MatrixOne server
// of TenantsConfig.DSN, or a store from TenantsConfig.Stores, so no method of a
// tenant's Client can read or write another's. Use (or Acquire and Release) reaches a
// tenant's Client, opening it on first use; at most MaxOpen stay open, the least
// recently used idle one closing to make room, and idle ones close after IdleTimeout.
// A held Client is never closed under its holder. Create, Delete and List manage the
// tenants; names are strict (ValidateTenantName). CopyBundle is the one way knowledge
// moves between tenants: a bundle the source tenant shares, named by its share token
// (or its id), imported by the other.
//
//	tenants, err := day1.OpenTenants(ctx, day1.TenantsConfig{Path: "/var/lib/app/memories"})
//	err = tenants.Create(ctx, "acme")
//	err = tenants.Use(ctx, "acme", func(c *day1.Client) error {
//		_, err := c.WriteFact(ctx, day1.Fact{Text: "Acme deploys on Fridays"})
//		return err
//	})
//
// # Observing and agent tools
//
// Config.Logger receives what a Client does on its own (retries, lock waits,
// compactions); Config.Observer is told as each public operation starts and ends, the
// hook that the module github.com/day1ai/day1/contrib/day1otel turns into OpenTelemetry
// spans and metrics. Package agenttool gives the memory operations as tools a model
// calls: the one list that the MCP server (package mcpserver, also served by day1 mcp)
// serves and the ADK and Eino adapters offer their agents.
//
// # Errors
//
// Errors wrap the sentinels in errors.go (ErrNotFound, ErrBranchNotFound,
// ErrBranchExists, ErrConflict, ErrMergeBlocked, ErrClosed, ErrNotSupported, ...);
// test them with errors.Is. Errors that carry data are pointer types reached with
// errors.As: *ValidationError names the bad input field, *MergeConflictError lists the
// conflicts that stopped a merge, *MergeBlockedError the records a gate refused. After
// Close every method returns ErrClosed.
//
//	var ve *day1.ValidationError
//	if errors.As(err, &ve) {
//		fmt.Println("fix", ve.Field)
//	}
package day1
