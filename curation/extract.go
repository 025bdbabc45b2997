package curation

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/day1ai/day1/llm"
	"github.com/day1ai/day1/store"
)

// Actions a model's extraction proposes for each fact, after mem0's scheme: a new
// fact, a new version of a fact memory holds, or the end of one.
const (
	ExtractAdd        = "add"
	ExtractUpdate     = "update"
	ExtractInvalidate = "invalidate"
)

// DefaultRelatedFacts is how many of the branch's live facts an extraction shows the
// model, those keyword search relates to the conversation: the facts it may update or
// invalidate.
const DefaultRelatedFacts = 20

// MaxRelatedFacts bounds Extraction.Related.
const MaxRelatedFacts = 100

// MaxExtractionMessages bounds Extraction.Messages: a transcript longer than this is
// extracted in parts, or stored as a conversation first.
const MaxExtractionMessages = 10000

// MetaExtractedFromTurns is the metadata key of a fact extracted from messages that
// are not stored: the positions (1-based) of the turns it came from, comma-separated.
const MetaExtractedFromTurns = "extracted_from_turns"

// Extraction asks ExtractFacts for the facts a conversation holds.
type Extraction struct {
	// Branch is where the facts are written, and the memory the model compares them
	// with. Empty means store.DefaultBranch.
	Branch string
	// ConversationID names a stored conversation on Branch whose messages are read.
	// Exactly one of ConversationID and Messages is given.
	ConversationID string
	// Messages are the turns of a conversation that is not stored: Role and Content
	// of each (other fields are ignored). At most MaxExtractionMessages of them.
	Messages []store.Message
	// SessionID, TaskID and AgentID are the provenance of facts from Messages; facts
	// from a stored conversation take the conversation's.
	SessionID, TaskID, AgentID string
	// By names who asked, recorded on the facts an extraction updates or
	// invalidates beside the model's name. Default "extraction".
	By string
	// Heuristic uses the heuristics even when the Engine has a Model: cheaper, and
	// the fallback when the model fails.
	Heuristic bool
	// Related is how many live facts of Branch the model is shown, those keyword
	// search relates to the conversation. Default DefaultRelatedFacts; at most
	// MaxRelatedFacts.
	Related int
}

// ExtractionResult is what ExtractFacts wrote, in one atomic batch.
type ExtractionResult struct {
	// Added are the new facts, in the order they were found, with what the write did:
	// store.Created, store.Deduplicated (memory already held the text) or
	// store.Superseded (a near-duplicate was replaced).
	Added []WrittenFact
	// Updated are the new versions of facts memory held, whose old versions stay as
	// history.
	Updated []store.Fact
	// Invalidated are the facts the conversation showed were no longer true.
	Invalidated []store.Fact
	// By is "model:<name>" when a model read the conversation, "heuristic" otherwise.
	By string
}

// ExtractFacts reads a conversation and writes the facts it holds to a branch, in one
// atomic batch.
//
// With a Model, the model reads the transcript beside the branch's live facts that
// keyword search relates to it, and proposes for each fact worth keeping one of three
// actions: add a new fact, update a shown fact (a new version with the new text; the
// old one stays as history), or invalidate a shown fact the conversation proves
// wrong. New facts land verified by the extraction, with the model's category and
// confidence; every fact names the messages it came from (MetaPickedFromMessage for a
// stored conversation, MetaExtractedFromTurns for Messages). Updated and invalidated
// facts carry store.MetaCorrection, MetaCorrectedBy and MetaCorrectionReason, as a
// correction by hand does.
//
// Without a model, the heuristics the Claude Code hooks use pick the facts: sentences
// of assistant turns that report a finding or state a decision, as candidates with
// confidence CandidateConfidence, active and unverified; they only add.
//
// The store's deduplication applies to new facts: a text memory already holds is
// Deduplicated, and with DedupeThreshold and an Embedder a near-duplicate supersedes
// the old fact.
//
// Errors: a *store.ValidationError naming the field for bad input; store.ErrNotFound
// for an unknown conversation, store.ErrBranchNotFound; the model's error; a
// *llm.MalformedOutputError for a reply that is not the JSON asked for, or that
// proposes an unknown action, an update or invalidation of a fact it was not shown,
// a fact without text or a confidence outside 0..1; ctx's error. Nothing is written
// on error.
func (e *Engine) ExtractFacts(ctx context.Context, x Extraction) (ExtractionResult, error) {
	if err := e.check(); err != nil {
		return ExtractionResult{}, err
	}
	branch, err := validBranch("Extraction.Branch", x.Branch)
	if err != nil {
		return ExtractionResult{}, err
	}
	if err := x.validate(); err != nil {
		return ExtractionResult{}, err
	}
	if _, err := e.Store.GetBranch(ctx, branch); err != nil {
		return ExtractionResult{}, err
	}
	src, err := e.extractionSource(ctx, branch, x)
	if err != nil {
		return ExtractionResult{}, err
	}
	res := ExtractionResult{By: byHeuristic}
	var adds, changed []store.Fact
	if e.Model == nil || x.Heuristic {
		adds = src.heuristicFacts(e)
	} else {
		res.By = modelName(e.Model)
		adds, changed, err = e.modelExtraction(ctx, branch, x, src)
		if err != nil {
			return ExtractionResult{}, err
		}
	}
	added, written, err := e.writeFacts(ctx, branch, changed, adds)
	if err != nil {
		return ExtractionResult{}, err
	}
	res.Added = added
	for _, f := range written {
		if f.Status == store.FactInvalidated {
			res.Invalidated = append(res.Invalidated, f)
		} else {
			res.Updated = append(res.Updated, f)
		}
	}
	return res, nil
}

func (x Extraction) validate() error {
	switch {
	case x.ConversationID == "" && len(x.Messages) == 0:
		return store.Invalid("Extraction", "must give ConversationID or Messages", nil)
	case x.ConversationID != "" && len(x.Messages) > 0:
		return store.Invalid("Extraction", "must give ConversationID or Messages, not both", nil)
	case x.ConversationID != "":
		if err := store.ValidateID("Extraction.ConversationID", x.ConversationID); err != nil {
			return err
		}
	case len(x.Messages) > MaxExtractionMessages:
		return store.Invalid("Extraction.Messages", fmt.Sprintf("has %d messages; at most %d are allowed", len(x.Messages), MaxExtractionMessages), len(x.Messages))
	}
	for i, m := range x.Messages {
		field := fmt.Sprintf("Extraction.Messages[%d]", i)
		if !m.Role.Valid() {
			return store.Invalid(field+".Role", "must be user, assistant, tool_call, tool_result or system", string(m.Role))
		}
		if !utf8.ValidString(m.Content) {
			return store.Invalid(field+".Content", "must be valid UTF-8", nil)
		}
	}
	for _, f := range []struct{ name, v string }{{"SessionID", x.SessionID}, {"TaskID", x.TaskID}, {"AgentID", x.AgentID}} {
		if f.v == "" {
			continue
		}
		if x.ConversationID != "" {
			return store.Invalid("Extraction."+f.name, "applies to Messages; facts from a stored conversation take the conversation's", f.v)
		}
		if err := store.ValidateID("Extraction."+f.name, f.v); err != nil {
			return err
		}
	}
	if len(x.By) > 256 || !utf8.ValidString(x.By) {
		return store.Invalid("Extraction.By", "must be at most 256 bytes of UTF-8", x.By)
	}
	if x.Related < 0 || x.Related > MaxRelatedFacts {
		return store.Invalid("Extraction.Related", fmt.Sprintf("must be between 0 (the default, %d) and %d", DefaultRelatedFacts, MaxRelatedFacts), x.Related)
	}
	return nil
}

// extractionSource is the conversation an extraction reads, and the provenance its
// facts take.
type extractionSource struct {
	msgs   []store.Message
	refs   []string // how a fact names each message: its id, or its turn number
	base   store.Fact
	title  string
	stored bool
}

func (e *Engine) extractionSource(ctx context.Context, branch string, x Extraction) (extractionSource, error) {
	if x.ConversationID == "" {
		s := extractionSource{msgs: x.Messages, title: "(not stored)"}
		s.base = store.Fact{SourceType: "messages", SessionID: x.SessionID, TaskID: x.TaskID, AgentID: x.AgentID}
		for i := range x.Messages {
			s.refs = append(s.refs, strconv.Itoa(i+1))
		}
		return s, nil
	}
	conv, err := e.getConversation(ctx, branch, x.ConversationID)
	if err != nil {
		return extractionSource{}, err
	}
	msgs, err := e.messages(ctx, branch, conv.ID)
	if err != nil {
		return extractionSource{}, err
	}
	s := extractionSource{msgs: msgs, title: conv.Title, stored: true}
	s.base = store.Fact{SourceType: string(store.KindConversation), SourceID: conv.ID,
		SessionID: conv.SessionID, TaskID: conv.TaskID, AgentID: conv.AgentID}
	for _, m := range msgs {
		s.refs = append(s.refs, m.ID)
	}
	return s, nil
}

// fact returns a new fact of the source, with the id id, naming the messages it came
// from.
func (s extractionSource) fact(id string, from []int) store.Fact {
	f := s.base
	f.ID = id
	f.Metadata = map[string]string{}
	if s.stored {
		f.Metadata[MetaPickedFromConversation] = s.base.SourceID
	}
	if len(from) > 0 {
		refs := make([]string, len(from))
		for i, m := range from {
			refs[i] = s.refs[m]
		}
		key := MetaExtractedFromTurns
		if s.stored {
			key = MetaPickedFromMessage
		}
		f.Metadata[key] = strings.Join(refs, ",")
	}
	return f
}

// heuristicFacts are the findings and decisions of the assistant's turns, as
// candidates (candidateSentences).
func (s extractionSource) heuristicFacts(e *Engine) []store.Fact {
	var out []store.Fact
	for _, c := range candidateSentences(s.msgs, true) {
		f := s.fact(e.newID(), []int{c.msg})
		f.Text, f.Confidence, f.Status = shorten(c.text, maxHeuristicFact), CandidateConfidence, store.FactActive
		if c.decision {
			f.Category = "decision"
		}
		out = append(out, f)
	}
	return out
}

// maxHeuristicFact bounds the bytes of a fact the heuristics take from one sentence.
const maxHeuristicFact = 1000

// decisionMarkers mark a sentence that states a decision or how the project works.
var decisionMarkers = []string{
	"decided", "we'll use", "we will use", "i'll use", "chose ", "going with", "switched to",
	"the fix is", "fixed by", "settled on", "instead of",
}

// proseSentences splits text into sentences at '.', '!' or '?' followed by a space,
// and at line breaks, leaving out fenced code blocks and the list markers and
// headings that start a line.
func proseSentences(text string) []string {
	var out []string
	inFence := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		line = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), "-*#>0123456789) "))
		start := 0
		for i := 0; i < len(line); i++ {
			c := line[i]
			if (c == '.' || c == '!' || c == '?') && (i+1 == len(line) || line[i+1] == ' ') {
				if s := strings.TrimSpace(line[start : i+1]); s != "" {
					out = append(out, s)
				}
				start = i + 1
			}
		}
		if s := strings.TrimSpace(line[start:]); s != "" {
			out = append(out, s)
		}
	}
	return out
}

const extractActionsSystem = `You keep the long-term memory of AI agents up to date from a conversation.
You are shown the facts memory holds that relate to it, each with its id, and the conversation's turns, each with its number.
For every durable fact the conversation states (concrete, specific, true beyond this conversation), choose one action:
- "add": a fact memory does not hold yet;
- "update": a shown fact the conversation changes or makes more precise; give its id and the whole new text;
- "invalidate": a shown fact the conversation proves wrong or no longer true; give its id and the reason.
Leave out what memory already holds as it is. Give each added or updated fact a short category and a confidence from 0 to 1, and the numbers of the turns it comes from.
Reply with one JSON object and nothing else:
{"facts": [{"action": "add", "text": "...", "category": "...", "confidence": 0.9, "turns": [3]},
 {"action": "update", "id": "...", "text": "...", "turns": [5]},
 {"action": "invalidate", "id": "...", "reason": "...", "turns": [7]}]}`

// proposal is one action of a model's reply.
type proposal struct {
	Action     string   `json:"action"`
	ID         string   `json:"id"`
	Text       string   `json:"text"`
	Category   string   `json:"category"`
	Confidence *float64 `json:"confidence"`
	Reason     string   `json:"reason"`
	Turns      []int    `json:"turns"`
}

// modelExtraction asks the model for the actions of a conversation and returns the
// facts to add and the new versions of the facts it updates or invalidates.
func (e *Engine) modelExtraction(ctx context.Context, branch string, x Extraction, src extractionSource) (adds, changed []store.Fact, err error) {
	limit := x.Related
	if limit == 0 {
		limit = DefaultRelatedFacts
	}
	related, err := e.relatedToMessages(ctx, branch, src.msgs, limit)
	if err != nil {
		return nil, nil, err
	}
	shown := make(map[string]store.Fact, len(related))
	var b strings.Builder
	b.WriteString("Facts memory holds:\n")
	if len(related) == 0 {
		b.WriteString("(none)\n")
	}
	for _, f := range related {
		shown[f.ID] = f
		fmt.Fprintf(&b, "- [%s] %s\n", f.ID, shorten(f.Text, 500))
	}
	b.WriteString("\nConversation " + quoteTitle(src.title) + ":\n")
	b.WriteString(numberedTurns(src.msgs, maxPromptBytes-b.Len()))
	var reply struct {
		Facts []proposal `json:"facts"`
	}
	req := llm.Request{System: extractActionsSystem, Messages: []llm.Message{{Role: llm.RoleUser, Content: b.String()}}}
	err = askJSON(ctx, e.Model, req, &reply, func() error { return checkProposals(reply.Facts, shown) })
	if err != nil {
		return nil, nil, fmt.Errorf("day1: extracting facts on %s: %w", branch, err)
	}
	by := x.By
	if by == "" {
		by = "extraction"
	}
	by += " (" + modelName(e.Model) + ")"
	now := e.now()
	for _, p := range reply.Facts {
		if len(adds)+len(changed) == MaxExtractedFacts {
			break
		}
		turns := src.turns(p.Turns)
		conf := DefaultExtractedConfidence
		if p.Confidence != nil && *p.Confidence > 0 {
			conf = *p.Confidence
		}
		switch p.Action {
		case ExtractAdd:
			f := src.fact(e.newID(), turns)
			f.Text, f.Category, f.Confidence = strings.TrimSpace(p.Text), shorten(strings.TrimSpace(p.Category), 90), conf
			f.Status = store.FactVerified
			f.Verify = store.Verification{Status: store.Verified, Score: conf, By: modelName(e.Model), At: now,
				Notes: "extracted from a conversation on " + branch}
			adds = append(adds, f)
		default:
			old := shown[p.ID]
			f := old
			f.Metadata = maps.Clone(old.Metadata)
			if f.Metadata == nil {
				f.Metadata = map[string]string{}
			}
			reason := strings.TrimSpace(p.Reason)
			if p.Action == ExtractUpdate {
				if text := strings.TrimSpace(p.Text); text != old.Text {
					f.Text, f.Embedding = text, nil
				}
				if c := strings.TrimSpace(p.Category); c != "" {
					f.Category = shorten(c, 90)
				}
				if p.Confidence != nil && *p.Confidence > 0 {
					f.Confidence = *p.Confidence
				}
				if reason == "" {
					reason = "a conversation stated it anew"
				}
			} else {
				f.Status = store.FactInvalidated
				if reason == "" {
					reason = "a conversation showed it no longer holds"
				}
			}
			for k, v := range src.fact("", turns).Metadata {
				f.Metadata[k] = v
			}
			f.Metadata[store.MetaCorrection] = p.Action
			f.Metadata[store.MetaCorrectedBy] = by
			f.Metadata[store.MetaCorrectionReason] = shorten(reason, 4000)
			f.UpdatedAt = now
			changed = append(changed, f)
		}
	}
	return adds, changed, nil
}

// checkProposals checks a model's reply: known actions, shown ids, texts and
// confidences, and no fact changed twice.
func checkProposals(ps []proposal, shown map[string]store.Fact) error {
	touched := map[string]bool{}
	for i, p := range ps {
		switch p.Action {
		case ExtractAdd, ExtractUpdate:
			if strings.TrimSpace(p.Text) == "" {
				return fmt.Errorf("fact %d (%s) has no text", i, p.Action)
			}
			if len(p.Text) > store.MaxTextLen {
				return fmt.Errorf("fact %d is %d bytes long; at most %d are allowed", i, len(p.Text), store.MaxTextLen)
			}
		case ExtractInvalidate:
		default:
			return fmt.Errorf("fact %d has action %q; it must be add, update or invalidate", i, p.Action)
		}
		if p.Action != ExtractAdd {
			if _, ok := shown[p.ID]; !ok {
				return fmt.Errorf("fact %d would %s %q, which is not among the facts shown", i, p.Action, p.ID)
			}
			if touched[p.ID] {
				return fmt.Errorf("fact %d changes %q a second time", i, p.ID)
			}
			touched[p.ID] = true
		}
		if c := p.Confidence; c != nil && (math.IsNaN(*c) || *c < 0 || *c > 1) {
			return fmt.Errorf("fact %d has confidence %g; it must be between 0 and 1", i, *c)
		}
	}
	return nil
}

// turns returns the positions in s.msgs of the 1-based turn numbers a model gave,
// each once and in order; numbers out of range are dropped.
func (s extractionSource) turns(nums []int) []int {
	var out []int
	for _, n := range nums {
		if n >= 1 && n <= len(s.msgs) && !slices.Contains(out, n-1) {
			out = append(out, n-1)
		}
	}
	slices.Sort(out)
	return out
}

// numberedTurns writes the messages as numbered turns, the latest ones when they do
// not all fit in limit bytes.
func numberedTurns(msgs []store.Message, limit int) string {
	lines := make([]string, len(msgs))
	for i, m := range msgs {
		lines[i] = fmt.Sprintf("%d. %s: %s\n", i+1, m.Role, shorten(m.Content, maxQuote))
	}
	first, size := len(lines), 0
	for first > 0 && size+len(lines[first-1]) <= limit {
		first--
		size += len(lines[first])
	}
	var b strings.Builder
	if first > 0 {
		fmt.Fprintf(&b, "(the first %d turns are left out)\n", first)
	}
	for _, l := range lines[first:] {
		b.WriteString(l)
	}
	return b.String()
}

// relatedToMessages finds the live facts of the branch that keyword search relates
// to the conversation: searched with the text of its latest turns, at most limit.
func (e *Engine) relatedToMessages(ctx context.Context, branch string, msgs []store.Message, limit int) ([]store.Fact, error) {
	var q strings.Builder
	for i := len(msgs) - 1; i >= 0 && q.Len() < 4000; i-- {
		q.WriteString(shorten(msgs[i].Content, 1000))
		q.WriteByte('\n')
	}
	if strings.TrimSpace(q.String()) == "" {
		return nil, nil
	}
	return e.liveFactsLike(ctx, branch, q.String(), limit)
}
