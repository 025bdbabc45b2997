package replay

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/day1ai/day1/store"
)

// Metadata keys ForkConversation sets on the conversation of the new branch.
const (
	// MetaForkedFrom names the branch the conversation was forked from.
	MetaForkedFrom = "forked_from_branch"
	// MetaForkedAtSeq is the Seq of the last message kept.
	MetaForkedAtSeq = "forked_at_seq"
)

// undoTimeout bounds the undo of a failed fork, which runs even when the call's
// context was cancelled.
const undoTimeout = 30 * time.Second

// ForkRequest asks for a conversation to be forked at one of its messages.
type ForkRequest struct {
	// Branch is the conversation's branch. Empty means store.DefaultBranch.
	Branch string
	// Conversation is the conversation's id. Required.
	Conversation string
	// AtSeq is the Seq of the last message kept: the new branch holds the messages
	// with Seq 1 to AtSeq and none after. 0 keeps no message, to run the
	// conversation again from its start. It must not be negative nor above the
	// conversation's last Seq.
	AtSeq int
	// NewBranch is the branch to create, forked from Branch's head. Required; it must
	// not exist.
	NewBranch string
	// Description describes the new branch. Default: says what was forked.
	Description string
}

// Fork is what ForkConversation made.
type Fork struct {
	// Branch is the new branch.
	Branch store.Branch
	// Conversation is the conversation on the new branch, its metadata naming the
	// fork (MetaForkedFrom, MetaForkedAtSeq).
	Conversation store.Conversation
	// Kept are the messages the new branch holds, in Seq order.
	Kept []store.Message
	// Removed are the later messages, deleted from the new branch only.
	Removed []store.Ref
}

// ForkConversation creates NewBranch from Branch and keeps on it the conversation's
// messages up to and including AtSeq, deleting the later ones there, so that the
// conversation can be run again from that point (with another model or prompt) while
// Branch keeps the original. The rest of memory is forked as it is. If a step fails
// after the branch was created, the branch is deleted again.
//
// Errors: a *store.ValidationError naming the field for bad input; an error matching
// store.ErrNotFound for an unknown conversation; store.ErrBranchNotFound;
// store.ErrBranchExists when NewBranch is taken; the store's and ctx's errors.
func (e *Engine) ForkConversation(ctx context.Context, r ForkRequest) (Fork, error) {
	if err := e.check(); err != nil {
		return Fork{}, err
	}
	if r.Branch == "" {
		r.Branch = store.DefaultBranch
	}
	if err := store.ValidateID("ForkRequest.Conversation", r.Conversation); err != nil {
		return Fork{}, err
	}
	if r.NewBranch == "" {
		return Fork{}, store.Invalid("ForkRequest.NewBranch", "must name the branch to create", nil)
	}
	if err := store.ValidateBranchName("ForkRequest.NewBranch", r.NewBranch); err != nil {
		return Fork{}, err
	}
	if r.AtSeq < 0 {
		return Fork{}, store.Invalid("ForkRequest.AtSeq", "must not be negative (0 keeps no message)", r.AtSeq)
	}
	conv, msgs, err := e.readConversation(ctx, ConversationRef{Branch: r.Branch, ID: r.Conversation})
	if err != nil {
		return Fork{}, err
	}
	if last := lastSeq(msgs); r.AtSeq > last {
		return Fork{}, store.Invalid("ForkRequest.AtSeq", fmt.Sprintf("must be at most the conversation's last Seq, %d", last), r.AtSeq)
	}
	desc := r.Description
	if desc == "" {
		desc = fmt.Sprintf("conversation %s of %s forked after message %d", r.Conversation, r.Branch, r.AtSeq)
	}
	b, err := e.Store.CreateBranch(ctx, store.BranchSpec{Name: r.NewBranch, From: r.Branch, Description: desc,
		Metadata: map[string]string{MetaForkedFrom: r.Branch, "conversation": r.Conversation, MetaForkedAtSeq: strconv.Itoa(r.AtSeq)}})
	if err != nil {
		return Fork{}, err
	}
	out := Fork{Branch: b}
	for _, m := range msgs {
		if m.Seq <= r.AtSeq {
			m.Branch = r.NewBranch
			out.Kept = append(out.Kept, m)
		} else {
			out.Removed = append(out.Removed, store.MessageRef(m.ID))
		}
	}
	if err := e.trim(ctx, r, conv, &out); err != nil {
		return Fork{}, e.undoFork(ctx, r.NewBranch, err)
	}
	if nb, err := e.Store.GetBranch(ctx, r.NewBranch); err == nil {
		out.Branch = nb
	}
	return out, nil
}

// trim deletes the messages after the fork point from the new branch and marks the
// conversation there.
func (e *Engine) trim(ctx context.Context, r ForkRequest, conv store.Conversation, out *Fork) error {
	for i := 0; i < len(out.Removed); i += store.MaxBatch {
		end := min(i+store.MaxBatch, len(out.Removed))
		if err := e.Store.Delete(ctx, r.NewBranch, out.Removed[i:end]); err != nil {
			return err
		}
	}
	meta := make(map[string]string, len(conv.Metadata)+2)
	for k, v := range conv.Metadata {
		meta[k] = v
	}
	meta[MetaForkedFrom], meta[MetaForkedAtSeq] = r.Branch, strconv.Itoa(r.AtSeq)
	conv.Metadata, conv.Branch = meta, ""
	res, err := e.Store.Put(ctx, r.NewBranch, []store.Record{conv}, store.PutOptions{Now: e.now()})
	if err != nil {
		return err
	}
	if len(res) != 1 {
		return fmt.Errorf("day1: the store returned %d results for 1 record", len(res))
	}
	c, ok := res[0].Record.(store.Conversation)
	if !ok {
		return fmt.Errorf("day1: the store returned a %T for a conversation", res[0].Record)
	}
	out.Conversation = c
	return nil
}

// undoFork deletes a fork's branch after a failure and returns the failure.
func (e *Engine) undoFork(ctx context.Context, branch string, cause error) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), undoTimeout)
	defer cancel()
	if err := e.Store.DeleteBranch(ctx, branch); err != nil && !errors.Is(err, store.ErrBranchNotFound) {
		return fmt.Errorf("day1: forking failed (%w), and deleting the branch %s failed too: %v", cause, branch, err)
	}
	return cause
}

// ConversationRef names a conversation on a branch.
type ConversationRef struct {
	// Branch is the conversation's branch. Empty means store.DefaultBranch.
	Branch string
	// ID is the conversation's id. Required.
	ID string
}

// MessagePair is one position of two aligned conversations. A or B is nil where
// that conversation has no message at the position.
type MessagePair struct {
	// Index is the position, from 0, in Seq order.
	Index int
	A, B  *store.Message
	// Same reports whether both messages exist and have the same role, tool and
	// content (white space folded).
	Same bool
}

// ConversationDiff is what two conversations have in common and where they part.
type ConversationDiff struct {
	// A and B are the two conversations.
	A, B store.Conversation
	// Aligned pairs the messages of A and B position by position, in Seq order, for
	// as many positions as the longer has.
	Aligned []MessagePair
	// Common counts the positions before the first difference.
	Common int
	// DivergeAt is the index into Aligned of the first pair that is not Same; -1
	// when the two conversations are equal message for message.
	DivergeAt int
	// ToolDiffs are the pairs, at or after DivergeAt, where a tool call or tool
	// result differs: either side has role tool_call or tool_result and the pair is
	// not Same.
	ToolDiffs []MessagePair
}

// Identical reports whether the two conversations have equal messages.
func (d ConversationDiff) Identical() bool { return d.DivergeAt < 0 }

// DiffConversations aligns the messages of two conversations (on the same branch or
// on two, such as an original and its fork) position by position in Seq order, and
// reports where they diverge and which tool calls differ.
//
// Errors: a *store.ValidationError naming the field for an empty id; an error
// matching store.ErrNotFound for an unknown conversation or branch; the store's and
// ctx's errors.
func (e *Engine) DiffConversations(ctx context.Context, a, b ConversationRef) (ConversationDiff, error) {
	if err := e.check(); err != nil {
		return ConversationDiff{}, err
	}
	if err := store.ValidateID("a.ID", a.ID); err != nil {
		return ConversationDiff{}, err
	}
	if err := store.ValidateID("b.ID", b.ID); err != nil {
		return ConversationDiff{}, err
	}
	ca, ma, err := e.readConversation(ctx, a)
	if err != nil {
		return ConversationDiff{}, err
	}
	cb, mb, err := e.readConversation(ctx, b)
	if err != nil {
		return ConversationDiff{}, err
	}
	d := ConversationDiff{A: ca, B: cb, DivergeAt: -1}
	for i := range max(len(ma), len(mb)) {
		p := MessagePair{Index: i}
		if i < len(ma) {
			p.A = &ma[i]
		}
		if i < len(mb) {
			p.B = &mb[i]
		}
		p.Same = p.A != nil && p.B != nil && sameMessage(*p.A, *p.B)
		if !p.Same && d.DivergeAt < 0 {
			d.DivergeAt = i
		}
		if d.DivergeAt < 0 {
			d.Common++
		}
		if !p.Same && (isTool(p.A) || isTool(p.B)) {
			d.ToolDiffs = append(d.ToolDiffs, p)
		}
		d.Aligned = append(d.Aligned, p)
	}
	return d, nil
}

// readConversation returns a conversation and its messages in Seq order.
func (e *Engine) readConversation(ctx context.Context, ref ConversationRef) (store.Conversation, []store.Message, error) {
	if ref.Branch == "" {
		ref.Branch = store.DefaultBranch
	}
	v := store.View{Branch: ref.Branch}
	rec, err := e.Store.Get(ctx, v, store.ConversationRef(ref.ID))
	if err != nil {
		if errors.Is(err, store.ErrNotFound) && !errors.Is(err, store.ErrBranchNotFound) {
			return store.Conversation{}, nil, fmt.Errorf("day1: conversation %q is not on branch %q: %w", ref.ID, ref.Branch, err)
		}
		return store.Conversation{}, nil, err
	}
	conv, ok := rec.(store.Conversation)
	if !ok {
		return store.Conversation{}, nil, fmt.Errorf("day1: the store returned a %T for a conversation", rec)
	}
	recs, err := e.Store.List(ctx, v, store.ListQuery{Kind: store.KindMessage,
		Filter: store.Filter{ConversationID: ref.ID}, Order: store.OrderSeq})
	if err != nil {
		return store.Conversation{}, nil, err
	}
	msgs := make([]store.Message, 0, len(recs))
	for _, r := range recs {
		m, ok := r.(store.Message)
		if !ok {
			return store.Conversation{}, nil, fmt.Errorf("day1: the store returned a %T for a message", r)
		}
		msgs = append(msgs, m)
	}
	return conv, msgs, nil
}

func lastSeq(msgs []store.Message) int {
	n := 0
	for _, m := range msgs {
		n = max(n, m.Seq)
	}
	return n
}

func sameMessage(a, b store.Message) bool {
	return a.Role == b.Role && a.Tool == b.Tool &&
		strings.Join(strings.Fields(a.Content), " ") == strings.Join(strings.Fields(b.Content), " ")
}

func isTool(m *store.Message) bool {
	return m != nil && (m.Role == store.RoleToolCall || m.Role == store.RoleToolResult)
}
