package curation

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/day1ai/day1/llm"
	"github.com/day1ai/day1/store"
)

// Metadata keys the engine sets on the records it copies or derives, so that their
// origin can be traced.
const (
	MetaPickedFromBranch       = "picked_from_branch"
	MetaPickedFromConversation = "picked_from_conversation"
	MetaPickedFromMessage      = store.MetaPickedFromMessage
	MetaPickedFromSeq          = "picked_from_seq"
	MetaPickedRange            = "picked_range"
)

// ConversationPick asks CherryPickConversation to copy a whole conversation.
type ConversationPick struct {
	// Source is the branch the conversation is on. Empty means store.DefaultBranch.
	Source string
	// Target is the branch to copy it to. Required; it must differ from Source.
	Target string
	// ConversationID names the conversation. Required.
	ConversationID string
	// WithoutMessages copies the conversation record only. Default false: its
	// messages too.
	WithoutMessages bool
	// Verify judges the conversation (VerifyConversation's judge) and writes the
	// verdict with the copy. Default false.
	Verify bool
}

// MessagePick asks CherryPickMessages to copy a range of messages.
type MessagePick struct {
	// Source is the branch the conversation is on. Empty means store.DefaultBranch.
	Source string
	// Target is the branch to copy to. Required; it may equal Source when
	// TargetConversationID names another conversation, or is empty.
	Target string
	// ConversationID names the source conversation. Required.
	ConversationID string
	// FromSeq and ToSeq bound the range of sequence numbers, both included. FromSeq
	// must be 0 or more and ToSeq at least FromSeq; the range must hold a message.
	FromSeq, ToSeq int
	// TargetConversationID is the conversation on Target that receives the messages,
	// after its last one. Empty means a new conversation with a generated id; an id
	// Target does not have creates the conversation with that id.
	TargetConversationID string
	// Title of a new conversation. Default: the source's title and the range.
	Title string
	// Verify judges the picked messages and writes the verdict on the target
	// conversation. Default false.
	Verify bool
}

// DecisionPick asks CherryPickDecisions to copy the decision points of a
// conversation.
type DecisionPick struct {
	// Source is the branch the conversation is on. Empty means store.DefaultBranch.
	Source string
	// Target is the branch to copy to. Required.
	Target string
	// ConversationID names the source conversation. Required.
	ConversationID string
	// TargetConversationID and Title are as in MessagePick; the default title ends in
	// "(decisions)".
	TargetConversationID string
	Title                string
	// Verify judges the picked messages and writes the verdict on the target
	// conversation. Default false.
	Verify bool
}

// PickResult is what a conversation cherry-pick wrote.
type PickResult struct {
	// Conversation is the conversation on the target, as stored. Zero when nothing
	// was picked.
	Conversation store.Conversation
	// Messages are the messages written to the target, in sequence order.
	Messages []store.Message
	// Picked are the ids of the source messages that were picked; their PickedTo now
	// names the target branch, and their Picks the branch, the conversation that
	// received them and the time.
	Picked []string
	// Decisions are the decision points found (CherryPickDecisions only).
	Decisions []DecisionPoint
	// Sequences are the tool sequences picked (CherryPickToolSequences only).
	Sequences []ToolSequence
	// By says who chose or judged: "model:<name>" or "heuristic". Empty when nothing
	// was chosen or judged.
	By string
	// Verdict is the judge's verdict, when the pick asked for verification.
	Verdict *Verdict
}

// CherryPickConversation copies a whole conversation, and unless WithoutMessages its
// messages, from one branch to another.
//
// The copies keep their ids, so the two branches hold the same records: every
// source message's PickedTo gains the target branch, and the target receives exactly
// these new versions (with Verify, the conversation carries the verdict on both
// branches), so that a later merge of the two branches finds nothing to reconcile. The
// target writes are one atomic batch; the source's PickedTo updates follow in a second
// batch. Picking the same conversation again changes nothing.
//
// Errors: a *store.ValidationError for bad input (an empty Target, Target equal to
// Source, a bad id); an error matching store.ErrNotFound for a conversation the source
// does not have; store.ErrBranchNotFound; store.ErrBranchArchived for an archived
// target; the judge's errors with Verify (see VerifyConversation); ctx's error. When
// the target was written but the source's update failed, the error says so and
// picking again completes it.
func (e *Engine) CherryPickConversation(ctx context.Context, p ConversationPick) (PickResult, error) {
	if err := e.check(); err != nil {
		return PickResult{}, err
	}
	src, err := pickBranches("ConversationPick", &p.Source, p.Target, true)
	if err != nil {
		return PickResult{}, err
	}
	if err := store.ValidateID("ConversationPick.ConversationID", p.ConversationID); err != nil {
		return PickResult{}, err
	}
	conv, err := e.getConversation(ctx, src, p.ConversationID)
	if err != nil {
		return PickResult{}, err
	}
	// The judge reads every message, even those not copied.
	var msgs []store.Message
	if !p.WithoutMessages || p.Verify {
		if msgs, err = e.messages(ctx, src, conv.ID); err != nil {
			return PickResult{}, err
		}
	}
	res := PickResult{}
	var srcWrites []store.Record
	if p.Verify {
		v, err := e.judgeConversation(ctx, conv, msgs, e.Policy)
		if err != nil {
			return PickResult{}, err
		}
		now := e.now()
		conv.Verify = v.verification(store.Verification{At: now})
		conv.UpdatedAt = now
		res.Verdict, res.By = &v, v.By
		srcWrites = append(srcWrites, conv)
	}
	if p.WithoutMessages {
		msgs = nil
	}
	// The copies carry the new PickedTo too, so both branches hold the same versions.
	srcWrites = append(srcWrites, markPicked(msgs, p.Target, conv.ID, e.now())...)
	tgtWrites := []store.Record{conv}
	for _, m := range msgs {
		tgtWrites = append(tgtWrites, m)
		res.Picked = append(res.Picked, m.ID)
	}
	written, err := e.put(ctx, p.Target, tgtWrites, false)
	if err != nil {
		return PickResult{}, err
	}
	res.Conversation, res.Messages = collect(written)
	if err := e.putSource(ctx, src, p.Target, srcWrites); err != nil {
		return PickResult{}, err
	}
	return res, nil
}

// CherryPickMessages copies the messages of a conversation whose sequence numbers lie
// in [FromSeq, ToSeq] into a conversation on the target branch: a new one (with a
// generated id, or TargetConversationID), or an existing one after its last message.
//
// The copies are new records: new ids, sequence numbers continuing the target
// conversation, and metadata naming the source branch, conversation, message and
// sequence number (MetaPickedFrom...). The source messages' PickedTo gains the target
// branch. The target writes are one atomic batch, the source's updates a second.
//
// Errors: a *store.ValidationError for bad input: an empty Target, a negative
// FromSeq, ToSeq before FromSeq (an inverted range), a range that holds no message
// (an empty range), a TargetConversationID equal to the source conversation on the
// same branch; otherwise as CherryPickConversation.
func (e *Engine) CherryPickMessages(ctx context.Context, p MessagePick) (PickResult, error) {
	if err := e.check(); err != nil {
		return PickResult{}, err
	}
	src, err := pickBranches("MessagePick", &p.Source, p.Target, false)
	if err != nil {
		return PickResult{}, err
	}
	if err := store.ValidateID("MessagePick.ConversationID", p.ConversationID); err != nil {
		return PickResult{}, err
	}
	if p.FromSeq < 0 {
		return PickResult{}, store.Invalid("MessagePick.FromSeq", "must be 0 or more", p.FromSeq)
	}
	if p.ToSeq < p.FromSeq {
		return PickResult{}, store.Invalid("MessagePick.ToSeq", fmt.Sprintf("must be at least FromSeq (%d); the range is inverted", p.FromSeq), p.ToSeq)
	}
	conv, msgs, err := e.pickSource(ctx, "MessagePick", src, p.Target, p.ConversationID, p.TargetConversationID)
	if err != nil {
		return PickResult{}, err
	}
	var picked []store.Message
	for _, m := range msgs {
		if m.Seq >= p.FromSeq && m.Seq <= p.ToSeq {
			picked = append(picked, m)
		}
	}
	if len(picked) == 0 {
		have := "no messages"
		if len(msgs) > 0 {
			have = fmt.Sprintf("messages %d to %d", msgs[0].Seq, msgs[len(msgs)-1].Seq)
		}
		return PickResult{}, store.Invalid("MessagePick.FromSeq",
			fmt.Sprintf("the range %d to %d holds no message of conversation %s, which has %s; the range is empty", p.FromSeq, p.ToSeq, conv.ID, have), p.FromSeq)
	}
	title := p.Title
	if title == "" {
		title = fmt.Sprintf("%s (messages %d to %d)", titleOr(conv), p.FromSeq, p.ToSeq)
	}
	return e.pickInto(ctx, src, p.Target, conv, picked, p.TargetConversationID, title,
		strconv.Itoa(p.FromSeq)+"-"+strconv.Itoa(p.ToSeq), p.Verify, PickResult{})
}

// CherryPickDecisions copies the decision points of a conversation into a
// conversation on the target branch, like CherryPickMessages copies a range.
//
// With a Model, the model names the decision points (messages with an unknown
// sequence number are ignored). Without one, FindDecisions's heuristics do: intent
// phrases, recovery after a tool error, the step before a successful tool call. When
// there is no decision point, nothing is written and the result's Conversation is
// zero.
//
// Errors: as CherryPickMessages; the model's error, or a *llm.MalformedOutputError for
// a reply that is not the JSON asked for.
func (e *Engine) CherryPickDecisions(ctx context.Context, p DecisionPick) (PickResult, error) {
	if err := e.check(); err != nil {
		return PickResult{}, err
	}
	src, err := pickBranches("DecisionPick", &p.Source, p.Target, false)
	if err != nil {
		return PickResult{}, err
	}
	if err := store.ValidateID("DecisionPick.ConversationID", p.ConversationID); err != nil {
		return PickResult{}, err
	}
	conv, msgs, err := e.pickSource(ctx, "DecisionPick", src, p.Target, p.ConversationID, p.TargetConversationID)
	if err != nil {
		return PickResult{}, err
	}
	bySeq := make(map[int]store.Message, len(msgs))
	for _, m := range msgs {
		bySeq[m.Seq] = m
	}
	res := PickResult{By: byHeuristic}
	if e.Model == nil {
		res.Decisions = FindDecisions(msgs)
	} else {
		res.By = modelName(e.Model)
		if res.Decisions, err = e.modelDecisions(ctx, conv, msgs, bySeq); err != nil {
			return PickResult{}, err
		}
	}
	if len(res.Decisions) == 0 {
		return res, nil
	}
	var picked []store.Message
	for _, d := range res.Decisions {
		picked = append(picked, bySeq[d.Seq])
	}
	title := p.Title
	if title == "" {
		title = titleOr(conv) + " (decisions)"
	}
	return e.pickInto(ctx, src, p.Target, conv, picked, p.TargetConversationID, title, "decisions", p.Verify, res)
}

const decisionSystem = `You curate the conversations of AI coding agents.
Name the messages that carry the key decisions: what to do and why, recoveries from errors, strategies that worked.
Reply with one JSON object and nothing else:
{"decisions": [{"seq": 5, "reason": "chose to patch the refresh handler"}]}`

// modelDecisions asks the model for the decision points of msgs; bySeq indexes msgs by
// sequence number.
func (e *Engine) modelDecisions(ctx context.Context, conv store.Conversation, msgs []store.Message, bySeq map[int]store.Message) ([]DecisionPoint, error) {
	var reply struct {
		Decisions []struct {
			Seq    *int   `json:"seq"`
			Reason string `json:"reason"`
		} `json:"decisions"`
	}
	prompt := "Conversation " + quoteTitle(conv.Title) + "\n\n" + transcript(msgs, maxPromptBytes)
	req := llm.Request{System: decisionSystem, Messages: []llm.Message{{Role: llm.RoleUser, Content: prompt}}}
	err := askJSON(ctx, e.Model, req, &reply, func() error {
		for i, d := range reply.Decisions {
			if d.Seq == nil {
				return fmt.Errorf("decision %d has no seq", i)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("day1: finding the decisions of conversation %s: %w", conv.ID, err)
	}
	reasons := map[int][]string{}
	var seqs []int
	for _, d := range reply.Decisions {
		if _, ok := bySeq[*d.Seq]; !ok {
			continue
		}
		if _, dup := reasons[*d.Seq]; !dup {
			seqs = append(seqs, *d.Seq)
		}
		reason := d.Reason
		if reason == "" {
			reason = "named by " + e.Model.Name()
		}
		reasons[*d.Seq] = append(reasons[*d.Seq], reason)
	}
	slices.Sort(seqs)
	out := make([]DecisionPoint, len(seqs))
	for i, s := range seqs {
		out[i] = DecisionPoint{Seq: s, MessageID: bySeq[s].ID, Reasons: reasons[s]}
	}
	return out, nil
}

// pickInto copies picked source messages into a conversation on target, marks them
// picked on the source and optionally judges them. what describes the pick in the
// conversation's metadata.
func (e *Engine) pickInto(ctx context.Context, src, target string, conv store.Conversation, picked []store.Message,
	targetConvID, title, what string, verify bool, res PickResult) (PickResult, error) {
	now := e.now()
	dest := store.Conversation{
		ID:        targetConvID,
		SessionID: conv.SessionID,
		AgentID:   conv.AgentID,
		TaskID:    conv.TaskID,
		Title:     title,
		Metadata: map[string]string{
			MetaPickedFromBranch:       src,
			MetaPickedFromConversation: conv.ID,
			MetaPickedRange:            what,
		},
	}
	next := 1
	if targetConvID == "" {
		dest.ID = e.newID()
	} else {
		existing, err := e.getConversation(ctx, target, targetConvID)
		switch {
		case err == nil:
			dest = existing
			dest.UpdatedAt = now
			last, err := e.lastSeq(ctx, target, targetConvID)
			if err != nil {
				return PickResult{}, err
			}
			next = last + 1
		case isNotFound(err):
		default:
			return PickResult{}, err
		}
	}
	copies := make([]store.Message, len(picked))
	for i, m := range picked {
		meta := maps.Clone(m.Metadata)
		if meta == nil {
			meta = map[string]string{}
		}
		meta[MetaPickedFromBranch] = src
		meta[MetaPickedFromConversation] = conv.ID
		meta[MetaPickedFromMessage] = m.ID
		meta[MetaPickedFromSeq] = strconv.Itoa(m.Seq)
		copies[i] = store.Message{
			ID:             e.newID(),
			ConversationID: dest.ID,
			Seq:            next + i,
			Role:           m.Role,
			Content:        m.Content,
			Tool:           m.Tool,
			SessionID:      m.SessionID,
			TaskID:         m.TaskID,
			AgentID:        m.AgentID,
			Metadata:       meta,
			CreatedAt:      m.CreatedAt,
		}
	}
	if verify {
		v, err := e.judgeConversation(ctx, dest, copies, e.Policy)
		if err != nil {
			return PickResult{}, err
		}
		dest.Verify = v.verification(store.Verification{At: now})
		dest.UpdatedAt = now
		res.Verdict, res.By = &v, v.By
	}
	tgtWrites := make([]store.Record, 0, len(copies)+1)
	tgtWrites = append(tgtWrites, dest)
	for _, m := range copies {
		tgtWrites = append(tgtWrites, m)
	}
	written, err := e.put(ctx, target, tgtWrites, false)
	if err != nil {
		return PickResult{}, err
	}
	res.Conversation, res.Messages = collect(written)
	for _, m := range picked {
		res.Picked = append(res.Picked, m.ID)
	}
	if err := e.putSource(ctx, src, target, markPicked(picked, target, dest.ID, now)); err != nil {
		return PickResult{}, err
	}
	return res, nil
}

// markPicked records a pick into conversation conv on target, at, on each message
// of msgs that lacks it (PickedTo gains target, Picks the pick), in place, and
// returns those messages: the source versions a pick writes.
func markPicked(msgs []store.Message, target, conv string, at time.Time) []store.Record {
	var changed []store.Record
	for i, m := range msgs {
		if m.PickedAt(target, conv) {
			continue
		}
		m.Picks = append(slices.Clone(m.Picks), store.Pick{Branch: target, ConversationID: conv, At: at})
		if !slices.Contains(m.PickedTo, target) {
			m.PickedTo = append(slices.Clone(m.PickedTo), target)
		}
		msgs[i] = store.SyncPicks(m)
		changed = append(changed, msgs[i])
	}
	return changed
}

// putSource writes a pick's source records, once the target holds the pick; a failure
// says so, as picking again completes it.
func (e *Engine) putSource(ctx context.Context, src, target string, recs []store.Record) error {
	if len(recs) == 0 {
		return nil
	}
	if _, err := e.put(ctx, src, recs, false); err != nil {
		return sourceFailed(target, src, err)
	}
	return nil
}

// pickBranches checks a pick's branches, filling an empty source, and returns it.
func pickBranches(what string, source *string, target string, distinct bool) (string, error) {
	src, err := validBranch(what+".Source", *source)
	if err != nil {
		return "", err
	}
	*source = src
	if target == "" {
		return "", store.Invalid(what+".Target", "must name the branch to pick to", nil)
	}
	if err := store.ValidateBranchName(what+".Target", target); err != nil {
		return "", err
	}
	if distinct && target == src {
		return "", store.Invalid(what+".Target", "must differ from Source; a conversation is already on its own branch", target)
	}
	return src, nil
}

// pickSource checks a pick's target conversation, then reads the source conversation
// and its messages in order.
func (e *Engine) pickSource(ctx context.Context, what, src, target, convID, targetConvID string) (store.Conversation, []store.Message, error) {
	if err := e.checkTargetConv(what, src, target, convID, targetConvID); err != nil {
		return store.Conversation{}, nil, err
	}
	conv, err := e.getConversation(ctx, src, convID)
	if err != nil {
		return store.Conversation{}, nil, err
	}
	msgs, err := e.messages(ctx, src, conv.ID)
	if err != nil {
		return store.Conversation{}, nil, err
	}
	return conv, msgs, nil
}

// checkTargetConv refuses to pick a conversation's messages into itself.
func (e *Engine) checkTargetConv(what, src, target, convID, targetConvID string) error {
	if targetConvID == "" {
		return nil
	}
	if err := store.ValidateID(what+".TargetConversationID", targetConvID); err != nil {
		return err
	}
	if src == target && targetConvID == convID {
		return store.Invalid(what+".TargetConversationID", "must differ from the source conversation when picking within one branch", targetConvID)
	}
	return nil
}

func isNotFound(err error) bool {
	return err != nil && errors.Is(err, store.ErrNotFound) && !errors.Is(err, store.ErrBranchNotFound)
}

func titleOr(c store.Conversation) string {
	if c.Title != "" {
		return c.Title
	}
	return "conversation " + c.ID
}

// collect splits a pick's written records into its conversation and messages.
func collect(res []store.PutResult) (store.Conversation, []store.Message) {
	var conv store.Conversation
	var msgs []store.Message
	for _, r := range res {
		switch v := r.Record.(type) {
		case store.Conversation:
			conv = v
		case store.Message:
			msgs = append(msgs, v)
		}
	}
	return conv, msgs
}

func sourceFailed(target, src string, err error) error {
	return fmt.Errorf("day1: the pick was written to %s, but recording it on %s failed; pick again to complete it: %w", target, src, err)
}
