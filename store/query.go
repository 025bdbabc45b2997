package store

import (
	"slices"
	"time"
)

// Point is a point in a branch's history: a named snapshot, or an instant. The zero
// Point is the branch's head.
type Point struct {
	Snapshot string    // a snapshot name; its branch must be the one read
	Time     time.Time // an instant; ignored when Snapshot is set
}

// IsHead reports whether p is the head (no snapshot, no time).
func (p Point) IsHead() bool { return p.Snapshot == "" && p.Time.IsZero() }

// View selects what a read sees: a branch, at its head or at a point in its past.
type View struct {
	Branch string // empty means DefaultBranch
	At     Point
}

// Filter narrows reads. Zero fields match everything. A field that does not apply to a
// record kind (Category on a message, say) excludes records of that kind when set.
type Filter struct {
	Category string       // facts
	Status   FactStatus   // facts
	Statuses []FactStatus // facts: any of these
	// ExcludeStatuses drops the facts whose status is one of these. Unlike the other
	// fact fields it keeps records of other kinds.
	ExcludeStatuses []FactStatus
	SessionID       string // every kind but relation-less ones
	TaskID          string
	AgentID         string
	ConversationID  string          // messages
	Role            Role            // messages: the speaker's role
	ObsType         ObservationType // observations
	Entity          string          // relations: Source or Target equals it
	RelationType    string          // relations
	// Since and Until bound CreatedAt: Since <= CreatedAt < Until. A message's
	// CreatedAt is when it was said; a client that writes a past session stamps its
	// messages with the session's time.
	Since    time.Time
	Until    time.Time
	Metadata map[string]string // every pair equal (Properties for relations)
	IDs      []string          // id is one of these
	// LiveAt leaves out the facts that have expired by it (Fact.Expired); records of
	// other kinds are kept. Zero applies no expiry. day1's reads in the past set it to
	// the point they read, unless asked for expired facts.
	LiveAt time.Time
	// NotExpired leaves out the facts that have expired by now, by the store's clock,
	// unless LiveAt names another instant: day1's reads at the head set it. A store
	// turns it into LiveAt (ResolveExpiry) as a read starts, and reads no clock when it
	// holds no fact with an expiry.
	NotExpired bool
}

// ResolveExpiry returns f with NotExpired turned into LiveAt, as a store does when a
// read starts: now() when the store may hold a fact with an expiry (holds) and LiveAt
// is not set, nothing otherwise.
func (f Filter) ResolveExpiry(holds bool, now func() time.Time) Filter {
	if f.NotExpired {
		f.NotExpired = false
		if holds && f.LiveAt.IsZero() {
			f.LiveAt = now()
		}
	}
	return f
}

// Order is the order of List results.
type Order string

// List orders.
const (
	// OrderCreated sorts by CreatedAt, then (for messages) Seq, then id. The default.
	OrderCreated Order = "created"
	// OrderID sorts by id.
	OrderID Order = "id"
	// OrderSeq sorts messages by conversation then Seq.
	OrderSeq Order = "seq"
	// OrderUpdated sorts by the time each record's current version was written
	// (UpdateTime: a fact's or conversation's UpdatedAt, another kind's CreatedAt),
	// then (for messages) Seq, then id. A record updated after others were created
	// comes after them, as a new commit does in git log.
	OrderUpdated Order = "updated"
)

// MaxLimit is the largest Limit a List or Search accepts.
const MaxLimit = 10000

// ListQuery asks for records of one kind.
type ListQuery struct {
	Kind   Kind
	Filter Filter
	Order  Order
	Desc   bool
	Limit  int // 0 means no limit is applied for List; else 1..MaxLimit
	Offset int
}

// SearchMode picks the retrievers of a search.
type SearchMode string

// Search modes.
const (
	// Keyword ranks by BM25 over the record's text.
	Keyword SearchMode = "keyword"
	// Vector ranks by cosine similarity to the query embedding.
	Vector SearchMode = "vector"
	// Hybrid runs both and fuses the two rankings.
	Hybrid SearchMode = "hybrid"
)

// Valid reports whether m is a known mode.
func (m SearchMode) Valid() bool { return m == Keyword || m == Vector || m == Hybrid }

// Fusion says how a hybrid search combines its rankings.
type Fusion string

// Fusion methods.
const (
	// RRF is reciprocal-rank fusion: score = sum over retrievers of 1/(RRFK + rank),
	// rank counted from 1. Scale-free and robust. The default of a store search.
	RRF Fusion = "rrf"
	// Weighted is a convex combination of min-max normalised scores:
	// Alpha*vector + (1-Alpha)*keyword.
	Weighted Fusion = "weighted"
	// Fill ranks every hit the keyword retriever found first, in keyword order, and
	// fills the rest of the results with the vector retriever's other hits, in vector
	// order: the vector ranking re-ranks nothing and only adds what keyword search
	// missed. Score is 1 plus the min-max normalised keyword score for a keyword hit,
	// the min-max normalised cosine (below 1) for a vector-only one. It suits an
	// embedder that sees the same words as keyword search (llm.QualityLexical), whose
	// votes would only add noise to BM25's: a hybrid search then ranks exactly as a
	// keyword search where keyword search finds enough. Since the vector ranking then
	// changes nothing, stores run the vector retriever only when keyword search finds
	// fewer than Limit hits (see NeedVector): a keyword hit carries a vector score and
	// rank only when it did.
	Fill Fusion = "fill"
)

// DefaultMinRelevance is the relevance floor (SearchQuery.MinRelevance) of the
// searches that put memory into an agent's context: the MCP server's search, the
// Claude Code hooks' context, the command line. On the LoCoMo benchmark (ten long
// dialogues; each question asked of its own dialogue and of the next one's memory,
// which holds nothing about it), with the turns written as facts of their sessions,
// it leaves recall@10 on the own dialogue at 68.6% (69.9% with no floor) and returns
// nothing for 87.1% of the questions asked of another dialogue; as messages, 68.3%
// (69.5%) and 87.1%; with the facts written without sessions, 68.7% (70.0%) and
// 87.3%.
const DefaultMinRelevance = 0.3

// Default search parameters.
const (
	DefaultRRFK        = 60
	DefaultAlpha       = 0.5
	DefaultSearchLimit = 10
	// DefaultWindowWeight is the share of their keyword scores that the messages of
	// one conversation lend each other in a search (see SearchQuery.WindowWeight). An
	// answer often shares no word with the question it answers ("what did you
	// research?" – "adoption agencies"), while the turns around it do. On the LoCoMo
	// conversational benchmark, with the turns written as messages, context at 0.3
	// raised keyword search's recall@10 from 60.6% to 69.5%; 0.5 gave 70.7% but
	// lifted neighbours above the matches themselves, and recall@1 fell from 32.2%
	// to 29.5%.
	DefaultWindowWeight = 0.3
	// MaxWindow is the largest SearchQuery.Window.
	MaxWindow = 20
)

// SearchKinds are the kinds a search can rank, in the order of Kinds: facts,
// observations and messages by their text (Text, Summary, Content) and embedding,
// conversations by their Title, keyword only (a conversation has no embedding).
// An empty SearchQuery.Kinds searches all of them.
var SearchKinds = []Kind{KindFact, KindObservation, KindConversation, KindMessage}

// SearchQuery asks for the records most relevant to a text or a vector.
type SearchQuery struct {
	// Kinds to search, of SearchKinds; empty means all of them, so a memory kept as
	// facts and one kept as the messages of conversations are both found by a
	// default search.
	Kinds  []Kind
	Text   string    // keyword query; required for Keyword and Hybrid
	Vector []float32 // query embedding; required for Vector and used by Hybrid when set
	Mode   SearchMode
	Filter Filter
	Limit  int // 1..MaxLimit; 0 means DefaultSearchLimit
	Fusion Fusion
	RRFK   float64 // 0 means DefaultRRFK
	Alpha  float64 // Weighted only; 0 means DefaultAlpha
	// VectorWeight weighs the vector ranking against the keyword ranking, whose weight
	// is 1, in RRF fusion: score = 1/(RRFK + keyword rank) + VectorWeight/(RRFK +
	// vector rank). 0 to 1; 0 means 1, equal weights.
	VectorWeight float64
	// MinScore drops hits whose final score is below it; 0 keeps every hit.
	MinScore float64
	// MinRelevance asks for relevant hits only, so that a search of a memory that
	// holds nothing about the query can answer with nothing: when no hit's Relevance
	// reaches it, the search returns no hit; otherwise it leaves out the hits below
	// half of it, which are noise beside the hits that match. The hits kept below it
	// are mostly the records around a match that lend it context (WindowScore), which
	// often hold the answer itself. 0 to 1; 0, the default, keeps every hit. See
	// DefaultMinRelevance.
	MinRelevance float64
	// IncludeHistory also searches superseded and invalidated facts. By default a
	// search leaves them out (NormalizeSearch adds them to Filter.ExcludeStatuses),
	// unless Filter.Status or Filter.Statuses names the statuses wanted.
	IncludeHistory bool
	// Window, 0 to MaxWindow, returns each message hit with the messages of its
	// conversation whose Seq is within Window of its own (Hit.Before, Hit.After), and
	// widens the context a message gains its score from to Window (see WindowWeight).
	// 0, the default, attaches no neighbours.
	Window int
	// WindowWeight is the share of their keyword scores that the messages of one
	// conversation lend each other: a message's keyword score gains WindowWeight
	// times the sum of the keyword scores of the other messages within
	// ContextSpan(q) of it (DefaultContextSpan, or Window when larger), in
	// Hit.WindowScore. A store adds to the keyword candidates the neighbours of the
	// best message candidates (NeighbourRanges), so a turn with no word of the query
	// next to turns that match is found with KeywordScore 0. A turn next to other
	// matching turns rises over a lone match, and an answer that follows a question
	// is found through the question. The facts of one session (SessionID) lend each
	// other the same way, by their places in the session's creation order
	// (AddSessionNeighbours), and so do facts with no session written one after
	// another on the branch, with no pause longer than LooseGap between them, as if
	// each such stretch of work were a session (AddLooseNeighbours). 0 means
	// DefaultWindowWeight; a negative value turns context off; at most 1. Other kinds
	// neither lend nor gain, and a Vector search has no keyword scores to lend.
	WindowWeight float64
}

// HistoryStatuses are the statuses of facts that are history, not current
// knowledge: a search leaves them out unless SearchQuery.IncludeHistory is set.
var HistoryStatuses = []FactStatus{FactSuperseded, FactInvalidated}

// Retriever names the retriever that found a hit.
type Retriever string

// Retrievers.
const (
	RetrieverKeyword Retriever = "keyword"
	RetrieverVector  Retriever = "vector"
)

// Hit is one search result.
type Hit struct {
	Record Record
	// Score is the final score: BM25 for Keyword, cosine for Vector, the fused score for
	// Hybrid. Higher is better.
	Score        float64
	KeywordScore float64 // BM25, when the keyword retriever found it
	KeywordRank  int     // 1-based, 0 when not found by keyword
	VectorScore  float64 // cosine, when the vector retriever found it
	VectorRank   int     // 1-based, 0 when not found by vector
	FoundBy      []Retriever
	// Relevance, in [0, 1], says how much of the query the hit matches, the same way
	// on every store, whatever the fusion: by keyword, its keyword score (with the
	// context it gained, WindowScore) over that of a record of its kind holding every
	// term of the query once at the average length, capped at 1, so that a hit
	// matching the query's rarer words counts more than one matching its common
	// words, and words no record holds count against every hit: a name (a
	// capitalised word inside a sentence) twice, a time (a number, a month) not at
	// all, since records keep their time apart from their text; by vector, its
	// cosine, 0 when not positive; in a hybrid search, the larger of the two. See
	// SearchQuery.MinRelevance and DefaultMinRelevance.
	Relevance float64
	// RerankScore is the score a reranker gave the hit (day1.Config.Reranker), by
	// which the search ordered its hits; 0 when none ranked it.
	RerankScore float64
	// WindowScore is the keyword score a message hit gained from the messages around
	// it (see SearchQuery.WindowWeight); 0 for other kinds, a Vector search, or with
	// context off.
	WindowScore float64
	// ConversationTitle is the Title of a message hit's conversation, as the search
	// saw it; empty for other kinds, or when the conversation is not there.
	ConversationTitle string
	// Before and After are, in a search with a Window, the messages of a message
	// hit's conversation just before and just after it: up to Window each, by Seq,
	// the hit itself left out. Nil for other kinds and without a Window.
	Before, After []Message
}

// Fact returns the hit's record as a Fact, and whether it is one.
func (h Hit) Fact() (Fact, bool) {
	f, ok := h.Record.(Fact)
	return f, ok
}

// Observation returns the hit's record as an Observation, and whether it is one.
func (h Hit) Observation() (Observation, bool) {
	o, ok := h.Record.(Observation)
	return o, ok
}

// Message returns the hit's record as a Message, and whether it is one.
func (h Hit) Message() (Message, bool) {
	m, ok := h.Record.(Message)
	return m, ok
}

// Conversation returns the hit's record as a Conversation, and whether it is one.
func (h Hit) Conversation() (Conversation, bool) {
	c, ok := h.Record.(Conversation)
	return c, ok
}

// BatchTime is the time a write stamped now gives record i of its n records: now
// less a microsecond for each record after i. The last record gets now, none a time
// after it, and creation order is the order of the batch.
func BatchTime(now time.Time, i, n int) time.Time {
	return now.Add(-time.Duration(n-1-i) * time.Microsecond)
}

// Outcome says what a write did.
type Outcome string

// Write outcomes.
const (
	Created      Outcome = "created"      // a new record
	Deduplicated Outcome = "deduplicated" // nothing written: the same record, or the same fact text, was there
	Updated      Outcome = "updated"      // a record with this id existed and was replaced by a new version
	Superseded   Outcome = "superseded"   // a new fact replaced a near-duplicate, which is now superseded
	Deleted      Outcome = "deleted"      // the record was deleted
)

// PutOptions tune a write.
type PutOptions struct {
	// DedupeThreshold is the cosine similarity at or above which a new fact counts as a
	// near-duplicate of a live fact on the same branch and supersedes it instead of being
	// added beside it. 0 turns near-duplicate detection off (exact repeats of the same
	// text are still deduplicated).
	DedupeThreshold float64
	// Now stamps created and updated times that the records leave zero. Zero means the
	// store's clock. The records of one write are stamped a microsecond apart, in the
	// order given, the last with Now (BatchTime), so that creation order is the order
	// of the batch.
	Now time.Time
	// GeneratedIDs holds the ids of facts of the batch that were generated for the
	// write rather than chosen by its caller. A fact with one of these ids that is
	// Deduplicated against another fact's text leaves no Alias: nobody will read by
	// an id they never saw. A store may also take these ids to be new, held by no
	// record of any kind, and skip looking them up. Nil means every id is the
	// caller's.
	GeneratedIDs map[string]bool
}

// PutResult is what one record of a Put became.
type PutResult struct {
	Record  Record // the stored record, as a read would return it
	Outcome Outcome
	// Replaced is the id of the fact that a Superseded write replaced, or of the fact an
	// exact-text Deduplicated write matched.
	Replaced string
	// Similarity is the cosine similarity to Replaced, when a near-duplicate was found.
	Similarity float64
	// AliasOf is set when a Deduplicated fact's id is now an Alias of the fact it
	// matched: it is that fact's id (equal to Replaced), and a Get of the written id
	// returns that fact. Empty otherwise.
	AliasOf string
}

// Op is what one side of a diff did to a record.
type Op string

// Diff operations.
const (
	OpAdded   Op = "added"
	OpUpdated Op = "updated"
	OpDeleted Op = "deleted"
)

// Change is one record that changed on one side since the merge base.
type Change struct {
	Ref    Ref
	Op     Op
	Before Record // at the merge base; nil when added
	After  Record // now; nil when deleted
}

// ConflictReason says why two changes conflict.
type ConflictReason string

// Conflict reasons.
const (
	// BothChanged: both sides changed the same record differently. Versions that
	// Agree (the same content, verdicts of the same status) are not a conflict.
	BothChanged ConflictReason = "both_changed"
	// BothSuperseded: each side added a different fact superseding the same parent.
	BothSuperseded ConflictReason = "both_superseded"
	// Contradictory: each side added a live fact, under different ids, and the two
	// state different things about the same subject (a different value, or one
	// negates the other). Stores never report it: a merge engine given a way to tell
	// contradictions adds it to their diff (merge.AddContradictions).
	Contradictory ConflictReason = "contradictory"
	// Duplicate: each side added a live fact, under different ids and with other
	// texts, that say the same thing (near-duplicates, as a write would have found
	// them). Stores never report it: a merge engine given a way to tell
	// near-duplicates adds it to their diff (merge.AddDuplicates).
	Duplicate ConflictReason = "duplicate"
)

// Competing reports whether a conflict of this reason is between two facts the
// sides added (BothSuperseded, Contradictory, Duplicate) rather than two versions of
// one record: a side that wins makes the other's fact superseded, and keeping both
// keeps both facts as they are.
func (r ConflictReason) Competing() bool {
	return r == BothSuperseded || r == Contradictory || r == Duplicate
}

// Conflict pairs a source change with a target change that cannot both be kept as is.
// For BothChanged, Source and Target are the two sides' changes of the record Ref names.
// For BothSuperseded, Ref names the common parent fact and Source and Target are the two
// added facts; a parent superseded by several facts on one side yields one conflict per
// pair. For Contradictory and Duplicate, Ref names the target's fact and Source and
// Target are the two added facts.
type Conflict struct {
	Ref    Ref
	Reason ConflictReason
	Source Change
	Target Change
}

// Diff lists what changed on each side of two branches since their merge base.
// Changes whose results already agree on both sides (see Agree: equal content, and
// verdicts of the same status on the same content) are left out, so a merge neither
// writes them nor reports them as conflicts.
type Diff struct {
	Source string
	Target string
	// Base and BaseAt are the merge base: the branch and instant both sides descend
	// from, the fork point or, once the two were merged, the last merge between them
	// (see History). After criss-cross merges it is the newest of several bases.
	Base          string
	BaseAt        time.Time
	SourceChanges []Change // sorted by kind, then id
	TargetChanges []Change // sorted by kind, then id
	Conflicts     []Conflict
	TargetHead    uint64 // the target's Branch.Head when the diff was taken
	// SourceRev is the store's revision the source was read at. A merge planned from
	// the diff passes it on in MergePlan.SourceRev.
	SourceRev uint64
}

// Empty reports whether the diff holds no change at all.
func (d *Diff) Empty() bool {
	return len(d.SourceChanges) == 0 && len(d.TargetChanges) == 0 && len(d.Conflicts) == 0
}

// Filter returns a copy of d that keeps only what f matches (see Filter.Match): the
// changes whose record matches as it is now or as it was at the merge base (a fact
// moved out of a category, or deleted from it, still counts), and the conflicts with
// a matching change on either side. Filter{Category: "bug_fix"} is the diff of one
// category of facts. The zero Filter keeps everything. d is not changed.
//
// A filtered diff is for reading. A merge plans from the whole diff; to merge only
// some records, cherry-pick them.
func (d *Diff) Filter(f Filter) *Diff {
	out := *d
	if f.IsZero() {
		out.SourceChanges = slices.Clone(d.SourceChanges)
		out.TargetChanges = slices.Clone(d.TargetChanges)
		out.Conflicts = slices.Clone(d.Conflicts)
		return &out
	}
	keep := func(cs []Change) []Change {
		var kept []Change
		for _, c := range cs {
			if c.matches(f) {
				kept = append(kept, c)
			}
		}
		return kept
	}
	out.SourceChanges, out.TargetChanges = keep(d.SourceChanges), keep(d.TargetChanges)
	out.Conflicts = nil
	for _, c := range d.Conflicts {
		if c.Source.matches(f) || c.Target.matches(f) {
			out.Conflicts = append(out.Conflicts, c)
		}
	}
	return &out
}

// DropEmbeddings leaves the embeddings out of every record of d, in place: what a
// store's DiffLean returns (see LeanDiffer and DiffLean).
func (d *Diff) DropEmbeddings() {
	for i := range d.SourceChanges {
		d.SourceChanges[i].stripEmbeddings()
	}
	for i := range d.TargetChanges {
		d.TargetChanges[i].stripEmbeddings()
	}
	for i := range d.Conflicts {
		d.Conflicts[i].Source.stripEmbeddings()
		d.Conflicts[i].Target.stripEmbeddings()
	}
}

func (c *Change) stripEmbeddings() {
	if len(EmbeddingOf(c.Before)) > 0 {
		c.Before = WithEmbedding(c.Before, nil)
	}
	if len(EmbeddingOf(c.After)) > 0 {
		c.After = WithEmbedding(c.After, nil)
	}
}

// matches reports whether f matches the change's record now or at the merge base.
func (c Change) matches(f Filter) bool {
	return c.After != nil && f.Match(c.After) || c.Before != nil && f.Match(c.Before)
}

// MergePlan is a merge decided by the merge engine, for a store to apply atomically.
type MergePlan struct {
	Source string
	Target string
	// ExpectHead is the target's Branch.Head the plan was computed against. If the target
	// has changed since, ApplyMerge fails with ErrStale and changes nothing.
	ExpectHead uint64
	// Puts are written to the target verbatim (Branch set to the target). Facts are not
	// deduplicated.
	Puts    []Record
	Deletes []Ref
	// MarkMerged sets the source branch's status to merged.
	MarkMerged bool
	Record     MergeRecord
	// SourceRev is the Diff.SourceRev the plan was computed from: the source as the
	// merge took it in. Unless Record.Strategy is CherryPick, ApplyMerge records the
	// merge as a MergePoint at that revision, the new merge base of the two branches.
	// Zero records none.
	SourceRev uint64
}

// MergeFilter narrows ListMerges. Zero fields match everything.
type MergeFilter struct {
	Source string
	Target string
	Branch string // source or target
	Limit  int
}

// BranchFilter narrows ListBranches.
type BranchFilter struct {
	Status BranchStatus
	Parent string
	Prefix string // name prefix, e.g. "task/fix-auth/"
}

// SessionFilter narrows ListSessions.
type SessionFilter struct {
	Branch  string
	AgentID string
	TaskID  string
	Status  SessionStatus
}

// HistoryOnly reports whether a filter drops exactly the facts that are history (of
// HistoryStatuses) and nothing else, as a search's default filter does: a store that
// marks history in its index decides such a filter without reading the records.
// Filter.LiveAt and NotExpired are not looked at: a store that decides such a filter
// from its index keeps each fact's expiry there and checks LiveAt itself.
func HistoryOnly(f Filter) bool {
	f.LiveAt, f.NotExpired = time.Time{}, false
	if len(f.ExcludeStatuses) == 0 {
		return false
	}
	for _, st := range f.ExcludeStatuses {
		if !slices.Contains(HistoryStatuses, st) {
			return false
		}
	}
	for _, st := range HistoryStatuses {
		if !slices.Contains(f.ExcludeStatuses, st) {
			return false
		}
	}
	f.ExcludeStatuses = nil
	return f.IsZero()
}

// IsHistory reports whether r is a fact whose status is one of HistoryStatuses.
func IsHistory(r Record) bool {
	f, ok := r.(Fact)
	return ok && slices.Contains(HistoryStatuses, f.Status)
}
