package handoff

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/day1ai/day1/llm"
	"github.com/day1ai/day1/store"
)

// PacketFormat is the version of the Packet layout. It grows when a field changes
// meaning; added fields do not change it.
const PacketFormat = 1

// Default limits of a packet; see Limits.
const (
	DefaultMaxFacts         = 100
	DefaultMaxRelations     = 50
	DefaultMaxConversations = 10
	DefaultMaxMessages      = 20
	DefaultMaxErrors        = 10
	DefaultMaxTextBytes     = 2000
	DefaultMaxPacketBytes   = 512 << 10
	// MaxPacketBytes is the largest Limits.Bytes allowed, so that a handoff record
	// with its packet fits in one store document.
	MaxPacketBytes = 3 << 20
)

// MetaObjective is the fact metadata key naming the objective (its number) a fact
// belongs to. A partial handoff leaves out facts of objectives that are not done.
const MetaObjective = "objective"

// Limits bound the size of a packet. Zero fields take their defaults; negative ones
// are invalid. When a list is longer than its limit the most relevant items are kept
// and Packet.Truncated records the cut; a text longer than TextBytes is cut at a rune
// boundary and counted in Packet.TruncatedTexts. If the packet's JSON is still larger
// than Bytes, its lists are halved in turn (messages of every conversation,
// conversations, facts, relations, errors) until it fits.
type Limits struct {
	// Facts kept: verified first, then by confidence, newest first. Default
	// DefaultMaxFacts (100).
	Facts int
	// Relations kept: by confidence, newest first. Default DefaultMaxRelations (50).
	Relations int
	// Conversations kept: verified, then cherry-picked, then with decision points,
	// newest first. Default DefaultMaxConversations (10).
	Conversations int
	// Messages kept per conversation: decision points first, then the latest; shown
	// in sequence order. Default DefaultMaxMessages (20).
	Messages int
	// Errors is how many recent error observations are kept, newest first. Default
	// DefaultMaxErrors (10).
	Errors int
	// TextBytes bounds each fact text, message content and observation summary.
	// Default DefaultMaxTextBytes (2000).
	TextBytes int
	// Bytes bounds the packet's JSON. Default DefaultMaxPacketBytes (512 KiB); at
	// most MaxPacketBytes.
	Bytes int
}

// WithDefaults returns l with its zero fields set to the defaults.
func (l Limits) WithDefaults() Limits {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&l.Facts, DefaultMaxFacts)
	def(&l.Relations, DefaultMaxRelations)
	def(&l.Conversations, DefaultMaxConversations)
	def(&l.Messages, DefaultMaxMessages)
	def(&l.Errors, DefaultMaxErrors)
	def(&l.TextBytes, DefaultMaxTextBytes)
	def(&l.Bytes, DefaultMaxPacketBytes)
	return l
}

// Validate checks that no limit is negative and Bytes is at most MaxPacketBytes. It
// returns a *store.ValidationError naming the field.
func (l Limits) Validate(field string) error {
	for _, f := range []struct {
		name string
		v    int
	}{{"Facts", l.Facts}, {"Relations", l.Relations}, {"Conversations", l.Conversations},
		{"Messages", l.Messages}, {"Errors", l.Errors}, {"TextBytes", l.TextBytes}, {"Bytes", l.Bytes}} {
		if f.v < 0 {
			return store.Invalid(field+"."+f.name, "must not be negative (0 means the default)", f.v)
		}
	}
	if l.Bytes > MaxPacketBytes {
		return store.Invalid(field+".Bytes", fmt.Sprintf("must be at most %d", MaxPacketBytes), l.Bytes)
	}
	return nil
}

// Packet is the context a handoff carries, frozen when the handoff is made: what the
// receiver needs to continue. Its JSON form is stable: fields in the order below,
// lists in a deterministic order, so equal contents encode to equal bytes.
type Packet struct {
	// Format is PacketFormat.
	Format int `json:"format"`
	// Handoff is the handoff's ID; empty for a task context view or a checkpoint.
	Handoff string `json:"handoff,omitempty"`
	// Type is the handoff's type and Scope what that type carries.
	Type  Type  `json:"type,omitempty"`
	Scope Scope `json:"scope"`
	// FromAgent is the agent handing over, if any.
	FromAgent string `json:"from_agent,omitempty"`
	// Task is the task's state: its objectives with their status history, and its
	// members (who did what, their roles and summaries).
	Task Task `json:"task"`
	// Done and Total count the objectives done and all of them.
	Done  int `json:"done"`
	Total int `json:"total"`
	// ActiveAgents are the members still working on the task, sorted.
	ActiveAgents []string `json:"active_agents,omitempty"`
	// Facts are the live facts the task's branches added: verified ones only unless
	// IncludesUnverified. Embeddings are left out.
	Facts              []store.Fact `json:"facts,omitempty"`
	IncludesUnverified bool         `json:"includes_unverified,omitempty"`
	// Relations are the relations still valid that the task's branches added.
	Relations []store.Relation `json:"relations,omitempty"`
	// Conversations are the task's conversations (all of them for types whose Scope
	// has AllConversations, otherwise only verified, cherry-picked or decision-bearing
	// ones), with their verification status and key messages.
	Conversations []ConversationContext `json:"conversations,omitempty"`
	// PendingObjectives are the objectives not done, in number order.
	PendingObjectives []Objective `json:"pending_objectives,omitempty"`
	// Blockers are the handoff's blockers, then one line per blocked objective.
	Blockers []string `json:"blockers,omitempty"`
	// RecentErrors are the newest error observations (for types whose Scope has
	// FailedAttempts), without raw input and output.
	RecentErrors []store.Observation `json:"recent_errors,omitempty"`
	// Instructions and PriorityObjectives are the handoff's guidance.
	Instructions       string `json:"instructions,omitempty"`
	PriorityObjectives []int  `json:"priority_objectives,omitempty"`
	// Branch is where to continue: the task's branch, which a receiver's branch forks
	// from. ParentBranch is the task's parent; SourceBranch the source agent's branch.
	Branch       string `json:"branch"`
	ParentBranch string `json:"parent_branch"`
	SourceBranch string `json:"source_branch,omitempty"`
	// Summary is a short account of the context; SummaryBy says who wrote it
	// ("model:<name>" or "heuristic") and SummaryError why the model could not.
	Summary      string `json:"summary"`
	SummaryBy    string `json:"summary_by"`
	SummaryError string `json:"summary_error,omitempty"`
	// Truncated lists the lists that were cut to the Limits, by field name;
	// TruncatedTexts counts the texts that were shortened.
	Truncated      []Truncation `json:"truncated,omitempty"`
	TruncatedTexts int          `json:"truncated_texts,omitempty"`
	// CreatedAt is when the packet was frozen.
	CreatedAt time.Time `json:"created_at"`
}

// ConversationContext is one conversation in a packet.
type ConversationContext struct {
	ID           string             `json:"id"`
	Branch       string             `json:"branch"`
	Title        string             `json:"title,omitempty"`
	AgentID      string             `json:"agent_id,omitempty"`
	Verification store.Verification `json:"verification,omitzero"`
	// Picked reports whether any of its messages was cherry-picked.
	Picked bool `json:"picked,omitempty"`
	// MessageCount is how many messages the conversation has on its branch; Messages
	// holds the key ones, in sequence order.
	MessageCount int          `json:"message_count"`
	Messages     []KeyMessage `json:"messages,omitempty"`
	// Summary is a short account of the conversation: written by Engine.Model when
	// set, or from its messages (who asked what, the tools used, the decisions, the
	// last answer). SummaryBy is "model:<name>" or "heuristic"; a failing model
	// leaves the heuristic summary.
	Summary   string    `json:"summary,omitempty"`
	SummaryBy string    `json:"summary_by,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// KeyMessage is one message of a conversation in a packet.
type KeyMessage struct {
	ID      string     `json:"id"`
	Seq     int        `json:"seq"`
	Role    store.Role `json:"role"`
	Content string     `json:"content"`
	Tool    string     `json:"tool,omitempty"`
	AgentID string     `json:"agent_id,omitempty"`
	// Decision reports whether the message is a decision point (Engine.Decisions).
	Decision bool `json:"decision,omitempty"`
	// Picked reports whether the message was cherry-picked.
	Picked bool `json:"picked,omitempty"`
}

// Truncation records that a list of a packet was cut.
type Truncation struct {
	// Field names the list: "facts", "relations", "conversations", "recent_errors",
	// or "conversations/<id>/messages".
	Field string `json:"field"`
	Kept  int    `json:"kept"`
	Total int    `json:"total"`
}

// packetSpec says what a packet carries.
type packetSpec struct {
	handoff, from     string
	typ               Type
	scope             Scope
	includeUnverified bool
	instructions      string
	blockers          []string
	priority          []int
	limits            Limits
}

// gathered holds what the task's branches added, one version per record.
type gathered struct {
	facts  map[string]store.Fact
	rels   map[string]store.Relation
	obs    map[string]store.Observation
	convs  map[string]store.Conversation
	msgs   map[string]store.Message
	branch map[store.Ref]string
}

// gather collects what the task branch added since its fork and what every member's
// branch added since its own, keeping for each record the most recently updated
// version.
func (e *Engine) gather(ctx context.Context, t Task) (*gathered, error) {
	g := &gathered{
		facts: map[string]store.Fact{}, rels: map[string]store.Relation{}, obs: map[string]store.Observation{},
		convs: map[string]store.Conversation{}, msgs: map[string]store.Message{}, branch: map[store.Ref]string{},
	}
	pairs := [][2]string{{t.Branch, t.Parent}}
	for _, m := range t.Members {
		pairs = append(pairs, [2]string{m.Branch, t.Branch})
	}
	for _, p := range pairs {
		d, err := store.DiffLean(ctx, e.Store, p[0], p[1])
		if errors.Is(err, store.ErrBranchNotFound) && p[0] != t.Branch {
			continue // a member's branch removed by hand
		}
		if err != nil {
			return nil, fmt.Errorf("day1: listing what branch %s added: %w", p[0], err)
		}
		for _, ch := range d.SourceChanges {
			if ch.After == nil {
				continue
			}
			g.add(p[0], ch.After)
		}
	}
	// Messages appended to a conversation the task inherited from its parent: read
	// the conversation where its messages are.
	for _, m := range g.msgs {
		if _, ok := g.convs[m.ConversationID]; ok {
			continue
		}
		br := g.branch[store.Ref{Kind: store.KindMessage, ID: m.ID}]
		rec, err := e.Store.Get(ctx, store.View{Branch: br}, store.Ref{Kind: store.KindConversation, ID: m.ConversationID})
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if c, ok := rec.(store.Conversation); ok {
			g.convs[c.ID] = c
			g.branch[store.RefOf(c)] = br
		}
	}
	return g, nil
}

func (g *gathered) add(branch string, r store.Record) {
	ref := store.RefOf(r)
	newer := func(prev, cur time.Time) bool { return cur.After(prev) }
	switch v := r.(type) {
	case store.Fact:
		if p, ok := g.facts[v.ID]; ok && !newer(p.UpdatedAt, v.UpdatedAt) {
			return
		}
		g.facts[v.ID] = v
	case store.Relation:
		if p, ok := g.rels[v.ID]; ok && !newer(p.CreatedAt, v.CreatedAt) {
			return
		}
		g.rels[v.ID] = v
	case store.Observation:
		if _, ok := g.obs[v.ID]; ok {
			return
		}
		g.obs[v.ID] = v
	case store.Conversation:
		if p, ok := g.convs[v.ID]; ok && !newer(p.UpdatedAt, v.UpdatedAt) {
			return
		}
		g.convs[v.ID] = v
	case store.Message:
		if p, ok := g.msgs[v.ID]; ok && len(v.PickedTo) <= len(p.PickedTo) {
			return
		}
		g.msgs[v.ID] = v
	default:
		return
	}
	g.branch[ref] = branch
}

// truncText cuts s to at most n bytes at a rune boundary, counting cuts in *cut.
func truncText(s string, n int, cut *int) string {
	if len(s) <= n {
		return s
	}
	*cut++
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i]
}

// buildPacket freezes the context of a task (filled with objectives and members).
func (e *Engine) buildPacket(ctx context.Context, t Task, s packetSpec) (Packet, error) {
	g, err := e.gather(ctx, t)
	if err != nil {
		return Packet{}, err
	}
	b := &packetBuilder{e: e, s: s, l: s.limits.WithDefaults(), now: e.now(), cuts: map[string]Truncation{}}
	b.state(t)
	b.facts(g)
	b.relations(g)
	b.conversations(ctx, g)
	if s.scope.FailedAttempts {
		b.recentErrors(g)
	}
	e.summarize(ctx, &b.p)
	if err := fitPacket(&b.p, b.l.Bytes, b.cuts); err != nil {
		return Packet{}, err
	}
	return b.p, nil
}

// packetBuilder assembles a packet one section at a time, noting what each section
// had to leave out.
type packetBuilder struct {
	e    *Engine
	s    packetSpec
	l    Limits
	now  time.Time
	p    Packet
	done map[int]bool // the objectives done
	cuts map[string]Truncation
}

// keep returns how many of total items a section of the given limit keeps, and notes
// a cut.
func (b *packetBuilder) keep(field string, total, limit int) int {
	if total > limit {
		b.cuts[field] = Truncation{Field: field, Kept: limit, Total: total}
		return limit
	}
	return total
}

// state fills the handoff's fields and the task's state: progress, active agents,
// pending objectives and blockers.
func (b *packetBuilder) state(t Task) {
	s := b.s
	b.p = Packet{
		Format: PacketFormat, Handoff: s.handoff, Type: s.typ, Scope: s.scope, FromAgent: s.from,
		Task: t, IncludesUnverified: s.includeUnverified, Instructions: s.instructions,
		PriorityObjectives: s.priority, Branch: t.Branch, ParentBranch: t.Parent, CreatedAt: b.now,
	}
	p := &b.p
	if s.from != "" {
		p.SourceBranch = AgentBranch(t.Name, s.from)
	}
	p.Done, p.Total = t.Progress()
	for _, m := range t.Members {
		if m.Status == MemberActive {
			p.ActiveAgents = append(p.ActiveAgents, m.Agent)
		}
	}
	sort.Strings(p.ActiveAgents)
	b.done = map[int]bool{}
	for _, o := range t.Objectives {
		if o.Status == ObjectiveDone {
			b.done[o.ID] = true
		} else {
			p.PendingObjectives = append(p.PendingObjectives, o)
		}
	}
	p.Blockers = append(p.Blockers, s.blockers...)
	for _, o := range t.Objectives {
		if o.Status == ObjectiveBlocked {
			line := fmt.Sprintf("objective %d (%s) is blocked", o.ID, o.Description)
			if n := len(o.History); n > 0 && o.History[n-1].Note != "" {
				line += ": " + o.History[n-1].Note
			}
			p.Blockers = append(p.Blockers, line)
		}
	}
}

// facts keeps the live facts the scope allows, verified and confident ones first.
// A fact that has expired by the time the packet is made (Fact.ExpiresAt) is left
// out: the receiver would act on what is no longer true.
func (b *packetBuilder) facts(g *gathered) {
	var facts []store.Fact
	for _, f := range g.facts {
		if !f.Status.Live() || f.Verify.Status == store.Invalidated || f.Expired(b.now) {
			continue
		}
		if !b.s.includeUnverified && !f.IsVerified() {
			continue
		}
		if b.s.scope.CompletedObjectivesOnly {
			if n, err := strconv.Atoi(f.Metadata[MetaObjective]); err == nil && !b.done[n] {
				continue
			}
		}
		facts = append(facts, f)
	}
	sort.Slice(facts, func(i, j int) bool {
		a, c := facts[i], facts[j]
		if va, vc := a.IsVerified(), c.IsVerified(); va != vc {
			return va
		}
		if a.Confidence != c.Confidence {
			return a.Confidence > c.Confidence
		}
		if !a.CreatedAt.Equal(c.CreatedAt) {
			return a.CreatedAt.After(c.CreatedAt)
		}
		return a.ID < c.ID
	})
	facts = facts[:b.keep("facts", len(facts), b.l.Facts)]
	for i := range facts {
		facts[i].Embedding = nil
		facts[i].Text = truncText(facts[i].Text, b.l.TextBytes, &b.p.TruncatedTexts)
	}
	b.p.Facts = facts
}

// relations keeps the relations still valid, confident ones first.
func (b *packetBuilder) relations(g *gathered) {
	var rels []store.Relation
	for _, r := range g.rels {
		if r.ValidTo.IsZero() || r.ValidTo.After(b.now) {
			rels = append(rels, r)
		}
	}
	sort.Slice(rels, func(i, j int) bool {
		a, c := rels[i], rels[j]
		if a.Confidence != c.Confidence {
			return a.Confidence > c.Confidence
		}
		if !a.CreatedAt.Equal(c.CreatedAt) {
			return a.CreatedAt.After(c.CreatedAt)
		}
		return a.ID < c.ID
	})
	b.p.Relations = rels[:b.keep("relations", len(rels), b.l.Relations)]
}

// conversationCandidate is a conversation the packet may carry, with what ranks it.
type conversationCandidate struct {
	c         ConversationContext
	decisions int
	at        time.Time
}

// conversations keeps the key conversations (verified, cherry-picked or with decision
// points; all for scopes with AllConversations), each with its key messages.
func (b *packetBuilder) conversations(ctx context.Context, g *gathered) {
	byConv := map[string][]store.Message{}
	for _, m := range g.msgs {
		byConv[m.ConversationID] = append(byConv[m.ConversationID], m)
	}
	var cands []conversationCandidate
	for id, c := range g.convs {
		if cd, ok := b.candidate(g, c, byConv[id]); ok {
			cands = append(cands, cd)
		}
	}
	sort.Slice(cands, func(i, j int) bool {
		a, c := cands[i], cands[j]
		if va, vc := a.c.Verification.Status == store.Verified, c.c.Verification.Status == store.Verified; va != vc {
			return va
		}
		if a.c.Picked != c.c.Picked {
			return a.c.Picked
		}
		if (a.decisions > 0) != (c.decisions > 0) {
			return a.decisions > 0
		}
		if !a.at.Equal(c.at) {
			return a.at.After(c.at)
		}
		return a.c.ID < c.c.ID
	})
	cands = cands[:b.keep("conversations", len(cands), b.l.Conversations)]
	for _, cd := range cands {
		cc := cd.c
		cc.Summary, cc.SummaryBy = b.e.summarizeConversation(ctx, cc, byConv[cc.ID])
		cc.Messages = keyMessages(cc.Messages, b.keep("conversations/"+cc.ID+"/messages", len(cc.Messages), b.l.Messages))
		for i := range cc.Messages {
			cc.Messages[i].Content = truncText(cc.Messages[i].Content, b.l.TextBytes, &b.p.TruncatedTexts)
		}
		b.p.Conversations = append(b.p.Conversations, cc)
	}
}

// candidate describes one conversation and its messages for the packet, or reports
// false when the scope leaves it out.
func (b *packetBuilder) candidate(g *gathered, c store.Conversation, msgs []store.Message) (conversationCandidate, bool) {
	sort.Slice(msgs, func(i, j int) bool {
		if msgs[i].Seq != msgs[j].Seq {
			return msgs[i].Seq < msgs[j].Seq
		}
		return msgs[i].ID < msgs[j].ID
	})
	var decided map[string]bool
	if b.e.Decisions != nil && len(msgs) > 0 {
		decided = map[string]bool{}
		for _, id := range b.e.Decisions(slices.Clone(msgs)) {
			decided[id] = true
		}
	}
	cc := ConversationContext{
		ID: c.ID, Branch: g.branch[store.RefOf(c)], Title: c.Title, AgentID: c.AgentID,
		Verification: c.Verify, Picked: anyPicked(msgs), MessageCount: len(msgs), CreatedAt: c.CreatedAt,
	}
	key := c.Verify.Status == store.Verified || cc.Picked || len(decided) > 0
	if !b.s.scope.AllConversations && (!key || c.Verify.Status == store.Invalidated) {
		return conversationCandidate{}, false
	}
	cc.Messages = make([]KeyMessage, len(msgs))
	for i, m := range msgs {
		cc.Messages[i] = KeyMessage{ID: m.ID, Seq: m.Seq, Role: m.Role, Content: m.Content, Tool: m.Tool, AgentID: m.AgentID,
			Decision: decided[m.ID], Picked: m.Picked()}
	}
	at := c.UpdatedAt
	if at.IsZero() {
		at = c.CreatedAt
	}
	return conversationCandidate{c: cc, decisions: len(decided), at: at}, true
}

// recentErrors keeps the newest error observations, without their raw input and
// output.
func (b *packetBuilder) recentErrors(g *gathered) {
	var errs []store.Observation
	for _, o := range g.obs {
		if o.Type == store.ObsError {
			errs = append(errs, o)
		}
	}
	sort.Slice(errs, func(i, j int) bool {
		if !errs[i].CreatedAt.Equal(errs[j].CreatedAt) {
			return errs[i].CreatedAt.After(errs[j].CreatedAt)
		}
		return errs[i].ID < errs[j].ID
	})
	errs = errs[:b.keep("recent_errors", len(errs), b.l.Errors)]
	for i := range errs {
		errs[i].Embedding, errs[i].RawInput, errs[i].RawOutput = nil, "", ""
		errs[i].Summary = truncText(errs[i].Summary, b.l.TextBytes, &b.p.TruncatedTexts)
	}
	b.p.RecentErrors = errs
}

// keyMessages keeps n of msgs (in Seq order): decision points first, then the latest
// messages, returned in Seq order.
func keyMessages(msgs []KeyMessage, n int) []KeyMessage {
	if len(msgs) <= n {
		return msgs
	}
	chosen := make([]bool, len(msgs))
	left := n
	for i := range msgs {
		if left > 0 && msgs[i].Decision {
			chosen[i] = true
			left--
		}
	}
	for i := len(msgs) - 1; i >= 0 && left > 0; i-- {
		if !chosen[i] {
			chosen[i] = true
			left--
		}
	}
	out := make([]KeyMessage, 0, n)
	for i, m := range msgs {
		if chosen[i] {
			out = append(out, m)
		}
	}
	return out
}

// fitPacket halves the packet's lists until its JSON fits in max bytes, records every
// cut, and sorts the truncation records. It fails with a *store.ValidationError when
// even empty lists do not fit.
func fitPacket(p *Packet, max int, cuts map[string]Truncation) error {
	cut := func(field string, total, kept int) {
		c, ok := cuts[field]
		if !ok {
			c = Truncation{Field: field, Total: total}
		}
		c.Kept = kept
		cuts[field] = c
	}
	trimmers := []func() bool{
		func() bool {
			trimmed := false
			for i := range p.Conversations {
				c := &p.Conversations[i]
				if n := len(c.Messages); n > 1 {
					c.Messages = keyMessages(c.Messages, n/2)
					cut("conversations/"+c.ID+"/messages", c.MessageCount, len(c.Messages))
					trimmed = true
				}
			}
			return trimmed
		},
		func() bool {
			n := len(p.Conversations)
			if n == 0 {
				return false
			}
			total := n
			if c, ok := cuts["conversations"]; ok {
				total = c.Total
			}
			p.Conversations = p.Conversations[:n/2]
			cut("conversations", total, n/2)
			return true
		},
		func() bool { return halve(&p.Facts, "facts", cuts, cut) },
		func() bool { return halve(&p.Relations, "relations", cuts, cut) },
		func() bool { return halve(&p.RecentErrors, "recent_errors", cuts, cut) },
	}
	for {
		p.Truncated = p.Truncated[:0]
		for _, c := range cuts {
			p.Truncated = append(p.Truncated, c)
		}
		sort.Slice(p.Truncated, func(i, j int) bool { return p.Truncated[i].Field < p.Truncated[j].Field })
		if len(p.Truncated) == 0 {
			p.Truncated = nil
		}
		b, err := json.Marshal(p)
		if err != nil {
			return fmt.Errorf("day1: encoding a packet: %w", err)
		}
		if len(b) <= max {
			return nil
		}
		trimmed := false
		for _, tr := range trimmers {
			if tr() {
				trimmed = true
				break
			}
		}
		if !trimmed {
			return store.Invalid("Limits.Bytes", fmt.Sprintf("the packet is %d bytes without any fact, relation, conversation or error; raise the limit (at most %d) or shorten the task's texts and instructions", len(b), MaxPacketBytes), max)
		}
	}
}

func halve[T any](list *[]T, field string, cuts map[string]Truncation, cut func(string, int, int)) bool {
	n := len(*list)
	if n == 0 {
		return false
	}
	total := n
	if c, ok := cuts[field]; ok {
		total = c.Total
	}
	*list = (*list)[:n/2]
	cut(field, total, n/2)
	return true
}

// summarize writes p.Summary with the model, or from the packet's contents.
func (e *Engine) summarize(ctx context.Context, p *Packet) {
	p.Summary, p.SummaryBy = heuristicSummary(p), "heuristic"
	if e.Model == nil {
		return
	}
	body, err := json.Marshal(p)
	if err != nil {
		p.SummaryError = err.Error()
		return
	}
	const maxPrompt = 64 << 10
	if len(body) > maxPrompt {
		body = body[:maxPrompt]
	}
	resp, err := e.Model.Complete(ctx, llm.Request{
		System: "You summarise the context of a task that one agent hands to another. In at most five sentences say " +
			"what the task is, what has been established (verified facts first), what was tried and failed, what is " +
			"blocked and what to do next. Answer with the summary only.",
		Messages: []llm.Message{{Role: llm.RoleUser, Content: string(body)}},
	})
	if err != nil {
		p.SummaryError = err.Error()
		return
	}
	s := strings.TrimSpace(resp.Content)
	if s == "" {
		p.SummaryError = "the model returned an empty summary"
		return
	}
	var cut int
	p.Summary, p.SummaryBy = truncText(s, 4000, &cut), "model:"+e.Model.Name()
}

// summarizeConversation writes the summary of one conversation of a packet, with
// the model when there is one, and otherwise (or when it fails) from the messages.
func (e *Engine) summarizeConversation(ctx context.Context, cc ConversationContext, msgs []store.Message) (string, string) {
	h := heuristicConversationSummary(cc, msgs)
	if e.Model == nil || len(msgs) == 0 {
		return h, "heuristic"
	}
	var tr strings.Builder
	for _, m := range msgs {
		line := fmt.Sprintf("%d %s", m.Seq, m.Role)
		if m.Tool != "" {
			line += " (" + m.Tool + ")"
		}
		var cut int
		fmt.Fprintf(&tr, "%s: %s\n", line, truncText(m.Content, 2000, &cut))
		if tr.Len() > 32<<10 {
			break
		}
	}
	resp, err := e.Model.Complete(ctx, llm.Request{
		System: "You summarise one conversation of an AI agent for another agent taking over its task. In at most " +
			"three sentences say what was asked, what was decided or found, and how it ended. Answer with the summary only.",
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "Conversation " + strconv.Quote(cc.Title) + "\n\n" + tr.String()}},
	})
	if err != nil || strings.TrimSpace(resp.Content) == "" {
		return h, "heuristic"
	}
	var cut int
	return truncText(strings.TrimSpace(resp.Content), 1000, &cut), "model:" + e.Model.Name()
}

// heuristicConversationSummary describes a conversation from its messages: the first
// request, the tools used, the decision points, and the last answer.
func heuristicConversationSummary(cc ConversationContext, msgs []store.Message) string {
	var cut int
	short := func(s string) string {
		s = strings.Join(strings.Fields(s), " ")
		if t := truncText(s, 160, &cut); t != s {
			return t + "..."
		}
		return s
	}
	var ask, last string
	var tools []string
	for _, m := range msgs {
		switch {
		case m.Role == store.RoleUser && ask == "":
			ask = m.Content
		case m.Role == store.RoleAssistant:
			last = m.Content
		}
		if m.Tool != "" && !slices.Contains(tools, m.Tool) {
			tools = append(tools, m.Tool)
		}
	}
	decisions := 0
	for _, k := range cc.Messages {
		if k.Decision {
			decisions++
		}
	}
	parts := []string{fmt.Sprintf("%d messages", len(msgs))}
	if ask != "" {
		parts = append(parts, "asked: "+short(ask))
	}
	if len(tools) > 0 {
		parts = append(parts, "tools: "+strings.Join(tools, ", "))
	}
	if decisions > 0 {
		parts = append(parts, fmt.Sprintf("%d decision points", decisions))
	}
	if last != "" {
		parts = append(parts, "last: "+short(last))
	}
	return strings.Join(parts, "; ")
}

// heuristicSummary describes a packet in a few deterministic sentences.
func heuristicSummary(p *Packet) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Task %s", p.Task.Name)
	if p.Task.Type != "" {
		fmt.Fprintf(&b, " (%s)", p.Task.Type)
	}
	fmt.Fprintf(&b, ": %d of %d objectives done.", p.Done, p.Total)
	verified := 0
	for _, f := range p.Facts {
		if f.IsVerified() {
			verified++
		}
	}
	fmt.Fprintf(&b, " %d facts (%d verified), %d conversations, %d relations.", len(p.Facts), verified, len(p.Conversations), len(p.Relations))
	if len(p.PendingObjectives) > 0 {
		ns := make([]string, len(p.PendingObjectives))
		for i, o := range p.PendingObjectives {
			ns[i] = strconv.Itoa(o.ID)
		}
		fmt.Fprintf(&b, " Pending objectives: %s.", strings.Join(ns, ", "))
	}
	if len(p.Blockers) > 0 {
		fmt.Fprintf(&b, " %d blocker(s): %s.", len(p.Blockers), strings.TrimSuffix(p.Blockers[0], "."))
	}
	if len(p.RecentErrors) > 0 {
		fmt.Fprintf(&b, " %d recent error(s).", len(p.RecentErrors))
	}
	if p.FromAgent != "" && p.Type != "" {
		fmt.Fprintf(&b, " Handed over by %s as %s.", p.FromAgent, p.Type)
	}
	return b.String()
}

// ContextOptions tune TaskContext.
type ContextOptions struct {
	// IncludeUnverified adds the facts that are not verified. Default false.
	IncludeUnverified bool
	// Limits bound the view's size; the zero value means the defaults.
	Limits Limits
}

// TaskContext returns a view of a task's context, built as a full handoff packet would
// be (every conversation, blockers and recent errors) but not stored: objectives with
// progress, members, facts, relations, conversations and errors.
//
// Errors: a *store.ValidationError for a bad name or limits; an error matching
// store.ErrNotFound for an unknown task; the store's and ctx's errors.
func (e *Engine) TaskContext(ctx context.Context, task string, o ContextOptions) (Packet, error) {
	if err := e.check(); err != nil {
		return Packet{}, err
	}
	if err := validTaskName("task", task); err != nil {
		return Packet{}, err
	}
	if err := o.Limits.Validate("ContextOptions.Limits"); err != nil {
		return Packet{}, err
	}
	t, err := e.GetTask(ctx, task)
	if err != nil {
		return Packet{}, err
	}
	scope := Scope{AllConversations: true, FailedAttempts: true}
	return e.buildPacket(ctx, t, packetSpec{scope: scope, includeUnverified: o.IncludeUnverified, limits: o.Limits})
}
