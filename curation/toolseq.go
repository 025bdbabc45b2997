package curation

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/day1ai/day1/store"
)

// ToolSequence is one run of tool work in a conversation: the assistant message that
// introduces it (when the message right before the first call is the assistant's),
// then the tool_call messages and their tool_result messages, in sequence order.
type ToolSequence struct {
	// FromSeq and ToSeq are the sequence numbers of its first and last message.
	FromSeq, ToSeq int
	// IntroSeq is the sequence number of the introducing assistant message; -1 when
	// the run has none.
	IntroSeq int
	// MessageIDs are the ids of its messages, in sequence order.
	MessageIDs []string
	// Tools names the tools it calls, each once, in the order first called.
	Tools []string
	// Calls and Results count its tool_call and tool_result messages.
	Calls, Results int
}

// FindToolSequences returns the tool sequences of msgs (sorted by sequence number):
// every maximal run of tool_call and tool_result messages, each with the assistant
// message right before it, when there is one, as its introduction. A run's results
// are the tool_result messages inside it; a result with no call before it in the run
// still belongs to the run it sits in. Any other message (user, system, another
// assistant message) ends a run; an assistant message followed by a call introduces
// the next one.
func FindToolSequences(msgs []store.Message) []ToolSequence {
	var out []ToolSequence
	for i := 0; i < len(msgs); i++ {
		if !isToolRole(msgs[i].Role) {
			continue
		}
		s := ToolSequence{IntroSeq: -1}
		start := i
		if i > 0 && msgs[i-1].Role == store.RoleAssistant {
			start = i - 1
			s.IntroSeq = msgs[i-1].Seq
		}
		end := i
		for end+1 < len(msgs) && isToolRole(msgs[end+1].Role) {
			end++
		}
		for _, m := range msgs[start : end+1] {
			s.MessageIDs = append(s.MessageIDs, m.ID)
			switch m.Role {
			case store.RoleToolCall:
				s.Calls++
			case store.RoleToolResult:
				s.Results++
			}
			if isToolRole(m.Role) && m.Tool != "" && !slices.Contains(s.Tools, m.Tool) {
				s.Tools = append(s.Tools, m.Tool)
			}
		}
		s.FromSeq, s.ToSeq = msgs[start].Seq, msgs[end].Seq
		out = append(out, s)
		i = end
	}
	return out
}

func isToolRole(r store.Role) bool { return r == store.RoleToolCall || r == store.RoleToolResult }

// ToolSequencePick asks CherryPickToolSequences to copy the tool sequences of a
// conversation (see FindToolSequences), each as one unit: the introducing assistant
// message, the calls and their results.
type ToolSequencePick struct {
	// Source is the branch the conversation is on. Empty means store.DefaultBranch.
	Source string
	// Target is the branch to copy to. Required.
	Target string
	// ConversationID names the source conversation. Required.
	ConversationID string
	// Tool keeps the sequences that call this tool (compared case-insensitively).
	// Empty means every sequence.
	Tool string
	// FromSeq and ToSeq, when ToSeq is above zero, keep the sequences that lie wholly
	// in [FromSeq, ToSeq]. Default: the whole conversation.
	FromSeq, ToSeq int
	// TargetConversationID and Title are as in MessagePick; the default title ends in
	// "(tool sequences)".
	TargetConversationID string
	Title                string
	// Verify judges the picked messages and writes the verdict on the target
	// conversation. Default false.
	Verify bool
}

// CherryPickToolSequences copies the tool sequences of a conversation into a
// conversation on the target branch, as CherryPickMessages copies a range: each
// sequence whole (its introducing assistant message, its tool calls and their
// results), in order, with new ids and metadata naming where each message came from.
// The result's Sequences lists the sequences copied. When the conversation has no
// sequence that the pick selects, nothing is written and the result's Conversation
// is zero.
//
// Errors: as CherryPickMessages; a *store.ValidationError for a negative FromSeq or a
// ToSeq before FromSeq.
func (e *Engine) CherryPickToolSequences(ctx context.Context, p ToolSequencePick) (PickResult, error) {
	if err := e.check(); err != nil {
		return PickResult{}, err
	}
	src, err := pickBranches("ToolSequencePick", &p.Source, p.Target, false)
	if err != nil {
		return PickResult{}, err
	}
	if err := store.ValidateID("ToolSequencePick.ConversationID", p.ConversationID); err != nil {
		return PickResult{}, err
	}
	if p.FromSeq < 0 {
		return PickResult{}, store.Invalid("ToolSequencePick.FromSeq", "must be 0 or more", p.FromSeq)
	}
	if p.ToSeq != 0 && p.ToSeq < p.FromSeq {
		return PickResult{}, store.Invalid("ToolSequencePick.ToSeq", fmt.Sprintf("must be at least FromSeq (%d), or 0 for the whole conversation", p.FromSeq), p.ToSeq)
	}
	conv, msgs, err := e.pickSource(ctx, "ToolSequencePick", src, p.Target, p.ConversationID, p.TargetConversationID)
	if err != nil {
		return PickResult{}, err
	}
	byID := make(map[string]store.Message, len(msgs))
	for _, m := range msgs {
		byID[m.ID] = m
	}
	res := PickResult{}
	var picked []store.Message
	for _, s := range FindToolSequences(msgs) {
		if p.Tool != "" && !slices.ContainsFunc(s.Tools, func(t string) bool { return strings.EqualFold(t, p.Tool) }) {
			continue
		}
		if p.ToSeq > 0 && (s.FromSeq < p.FromSeq || s.ToSeq > p.ToSeq) {
			continue
		}
		res.Sequences = append(res.Sequences, s)
		for _, id := range s.MessageIDs {
			picked = append(picked, byID[id])
		}
	}
	if len(picked) == 0 {
		return res, nil
	}
	title := p.Title
	if title == "" {
		title = titleOr(conv) + " (tool sequences)"
	}
	what := "tools"
	if p.Tool != "" {
		what += ":" + p.Tool
	}
	if p.ToSeq > 0 {
		what += ":" + strconv.Itoa(p.FromSeq) + "-" + strconv.Itoa(p.ToSeq)
	}
	return e.pickInto(ctx, src, p.Target, conv, picked, p.TargetConversationID, title, what, p.Verify, res)
}
