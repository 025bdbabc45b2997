// Package memview turns day1 records into what people and scripts read (one-line
// summaries and JSON views without embeddings) and parses what they type: record
// references ("fact/ID"), points in time (a snapshot name or an RFC 3339 instant) and
// the names of strategies, policies and kinds. The day1 command line and its REST API
// share it so both speak the same words.
package memview

import (
	"fmt"
	"strings"
	"time"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/store"
)

// ParseRef reads a record reference: "kind/ID", or a bare ID meaning a fact. field
// names the input in the *day1.ValidationError returned for a bad kind.
func ParseRef(field, s string) (day1.Ref, error) {
	kind, id, ok := strings.Cut(s, "/")
	if !ok {
		kind, id = string(day1.KindFact), s
	}
	if id == "" {
		return day1.Ref{}, store.Invalid(field, "must be an id or kind/id", s)
	}
	k, err := ParseKind(field, kind)
	if err != nil {
		return day1.Ref{}, store.Invalid(field, "must be an id or kind/id, the kind one of fact, observation, relation, conversation, message", s)
	}
	return day1.Ref{Kind: k, ID: id}, nil
}

// Kinds lists the record kinds in the order the store names them.
var Kinds = []day1.Kind{day1.KindFact, day1.KindObservation, day1.KindRelation, day1.KindConversation, day1.KindMessage}

// ParseKind reads a record kind; the plural ("facts") is accepted too.
func ParseKind(field, s string) (day1.Kind, error) {
	low := strings.ToLower(s)
	for _, k := range Kinds {
		if low == string(k) || low == string(k)+"s" {
			return k, nil
		}
	}
	return "", store.Invalid(field, "must be fact, observation, relation, conversation or message", s)
}

// ParseAt reads a point in time: an RFC 3339 instant, or else a snapshot name. The
// empty string is the zero At (the head).
func ParseAt(s string) day1.At {
	if s == "" {
		return day1.At{}
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return day1.AtTime(t)
	}
	return day1.AtSnapshot(s)
}

// ParseStrategy reads a merge strategy name: native, cherry_pick (or cherry-pick),
// squash or auto. The empty string is native.
func ParseStrategy(field, s string) (day1.Strategy, error) {
	s = strings.ReplaceAll(s, "-", "_")
	switch st := day1.Strategy(s); st {
	case "":
		return day1.Native, nil
	case day1.Native, day1.CherryPick, day1.Squash, day1.Auto:
		return st, nil
	}
	return "", store.Invalid(field, "must be native, cherry_pick, squash or auto", s)
}

// ParsePolicy reads a conflict policy: fail, skip or accept. The empty string is the
// default of the strategy.
func ParsePolicy(field, s string) (day1.ConflictPolicy, error) {
	switch p := day1.ConflictPolicy(s); p {
	case "", day1.ConflictFail, day1.ConflictSkip, day1.ConflictAccept:
		return p, nil
	}
	return "", store.Invalid(field, "must be fail, skip or accept", s)
}

// Summary returns one line describing a record, cut to n bytes (n <= 0: no limit).
func Summary(r day1.Record, n int) string {
	var s string
	switch r := r.(type) {
	case day1.Fact:
		s = r.Text
	case day1.Observation:
		s = string(r.Type) + ": " + r.Summary
	case day1.Relation:
		s = fmt.Sprintf("%s -%s-> %s", r.Source, r.Type, r.Target)
	case day1.Conversation:
		s = r.Title
	case day1.Message:
		s = string(r.Role) + ": " + r.Content
	case day1.Alias:
		s = "alias of fact " + r.Target
	}
	s = strings.Join(strings.Fields(s), " ")
	if n > 0 {
		s = Shorten(s, n)
	}
	return s
}

// Shorten cuts s to at most n bytes on a rune boundary, marking the cut with "…".
func Shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// Agent returns the agent a record names, "" when none.
func Agent(r day1.Record) string {
	switch r := r.(type) {
	case day1.Fact:
		return r.AgentID
	case day1.Observation:
		return r.AgentID
	case day1.Relation:
		return r.AgentID
	case day1.Conversation:
		return r.AgentID
	case day1.Message:
		return r.AgentID
	}
	return ""
}

// Record is a record as scripts read it: its kind, id and branch, a summary, and the
// record itself without its embedding.
type Record struct {
	Kind      day1.Kind   `json:"kind"`
	ID        string      `json:"id"`
	Branch    string      `json:"branch,omitempty"`
	Agent     string      `json:"agent,omitempty"`
	Summary   string      `json:"summary"`
	CreatedAt time.Time   `json:"created_at"`
	Record    day1.Record `json:"record,omitempty"`
}

// View returns the Record view of r; nil for a nil record.
func View(r day1.Record) *Record {
	if r == nil {
		return nil
	}
	r = Strip(r)
	return &Record{
		Kind: r.RecordKind(), ID: r.RecordID(), Branch: r.RecordBranch(), Agent: Agent(r),
		Summary: Summary(r, 0), CreatedAt: r.RecordTime(), Record: r,
	}
}

// Strip returns r without its embedding, which no reader wants to see.
func Strip(r day1.Record) day1.Record {
	switch v := r.(type) {
	case day1.Fact:
		v.Embedding = nil
		return v
	case day1.Observation:
		v.Embedding = nil
		return v
	case day1.Message:
		v.Embedding = nil
		return v
	}
	return r
}

// Hit is a search hit with the score of each retriever. A retriever's score and rank
// are both present when it found the hit, a score of 0 included, and both absent when
// it did not.
type Hit struct {
	Record       *Record          `json:"record"`
	Score        float64          `json:"score"`
	Relevance    float64          `json:"relevance" jsonschema:"How much of the query the hit matches, 0 to 1, the same on every store and search mode."`
	KeywordScore *float64         `json:"keyword_score,omitempty"`
	KeywordRank  int              `json:"keyword_rank,omitempty"`
	VectorScore  *float64         `json:"vector_score,omitempty"`
	VectorRank   int              `json:"vector_rank,omitempty"`
	FoundBy      []day1.Retriever `json:"found_by"`
	// A message hit's conversation title and, with a window, the messages around it.
	ConversationTitle string    `json:"conversation_title,omitempty"`
	WindowScore       float64   `json:"window_score,omitempty"`
	Before            []*Record `json:"before,omitempty"`
	After             []*Record `json:"after,omitempty"`
}

// Hits returns the views of hits.
func Hits(hits []day1.Hit) []Hit {
	out := make([]Hit, len(hits))
	for i, h := range hits {
		out[i] = Hit{
			Record: View(h.Record), Score: h.Score, Relevance: h.Relevance,
			KeywordScore: ranked(h.KeywordRank, h.KeywordScore), KeywordRank: h.KeywordRank,
			VectorScore: ranked(h.VectorRank, h.VectorScore), VectorRank: h.VectorRank, FoundBy: h.FoundBy,
			ConversationTitle: h.ConversationTitle, WindowScore: h.WindowScore,
			Before: messageViews(h.Before), After: messageViews(h.After),
		}
	}
	return out
}

// ranked returns a retriever's score when it ranked the hit (rank above 0), else nil.
func ranked(rank int, score float64) *float64 {
	if rank == 0 {
		return nil
	}
	return &score
}

func messageViews(ms []day1.Message) []*Record {
	var out []*Record
	for _, m := range ms {
		out = append(out, View(m))
	}
	return out
}

// Event is one entry of a branch's timeline.
type Event struct {
	At      time.Time `json:"at"`
	Kind    day1.Kind `json:"kind"`
	ID      string    `json:"id"`
	Branch  string    `json:"branch,omitempty"`
	Agent   string    `json:"agent,omitempty"`
	Summary string    `json:"summary"`
}

// Events returns the views of timeline events.
func Events(evs []day1.Event) []Event {
	out := make([]Event, len(evs))
	for i, e := range evs {
		out[i] = Event{
			At: e.At, Kind: e.Ref.Kind, ID: e.Ref.ID, Branch: e.Record.RecordBranch(),
			Agent: Agent(e.Record), Summary: e.Summary,
		}
	}
	return out
}

// Change is one change of a diff.
type Change struct {
	Ref    string  `json:"ref" jsonschema:"kind/id"`
	Op     day1.Op `json:"op"`
	Before *Record `json:"before,omitempty"`
	After  *Record `json:"after,omitempty"`
}

// Conflict is one conflict of a diff: what each side did to the record.
type Conflict struct {
	Ref    string              `json:"ref"`
	Reason day1.ConflictReason `json:"reason"`
	Source Change              `json:"source"`
	Target Change              `json:"target"`
}

// Diff is a diff as scripts read it.
type Diff struct {
	Source        string     `json:"source"`
	Target        string     `json:"target"`
	Base          string     `json:"base"`
	BaseAt        time.Time  `json:"base_at"`
	SourceChanges []Change   `json:"source_changes"`
	TargetChanges []Change   `json:"target_changes"`
	Conflicts     []Conflict `json:"conflicts"`
}

// DiffView returns the view of d.
func DiffView(d *day1.Diff) Diff {
	out := Diff{
		Source: d.Source, Target: d.Target, Base: d.Base, BaseAt: d.BaseAt,
		SourceChanges: changes(d.SourceChanges), TargetChanges: changes(d.TargetChanges),
		Conflicts: make([]Conflict, len(d.Conflicts)),
	}
	for i, c := range d.Conflicts {
		out.Conflicts[i] = Conflict{Ref: c.Ref.String(), Reason: c.Reason, Source: change(c.Source), Target: change(c.Target)}
	}
	return out
}

func changes(cs []day1.Change) []Change {
	out := make([]Change, len(cs))
	for i, c := range cs {
		out[i] = change(c)
	}
	return out
}

func change(c day1.Change) Change {
	return Change{Ref: c.Ref.String(), Op: c.Op, Before: View(c.Before), After: View(c.After)}
}

// Merge is the result of a merge or of its dry run.
type Merge struct {
	Applied bool             `json:"applied"`
	Record  day1.MergeRecord `json:"record"`
	Diff    *Diff            `json:"diff,omitempty"`
}

// MergeView returns the view of a merge result.
func MergeView(r day1.MergeResult) Merge {
	m := Merge{Applied: r.Applied, Record: r.Record}
	if r.Diff != nil {
		d := DiffView(r.Diff)
		m.Diff = &d
	}
	return m
}

// Handoff returns h without the embeddings of its packet's facts and errors.
func Handoff(h day1.HandoffRecord) day1.HandoffRecord {
	h.Packet.Facts = stripAll(h.Packet.Facts)
	h.Packet.RecentErrors = stripAll(h.Packet.RecentErrors)
	return h
}

// Handoffs returns the handoffs without embeddings.
func Handoffs(hs []day1.HandoffRecord) []day1.HandoffRecord {
	out := make([]day1.HandoffRecord, len(hs))
	for i, h := range hs {
		out[i] = Handoff(h)
	}
	return out
}

func stripAll[T day1.Record](rs []T) []T {
	out := make([]T, len(rs))
	for i, r := range rs {
		out[i] = Strip(r).(T)
	}
	return out
}

// ErrorText returns the text of err as people read it: "day1: " once, at the front,
// although errors wrapped at several layers each begin with it.
func ErrorText(err error) string {
	return "day1: " + strings.ReplaceAll(strings.TrimPrefix(err.Error(), "day1: "), ": day1: ", ": ")
}
