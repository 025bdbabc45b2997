package agenttool

import (
	"context"
	"fmt"

	"github.com/day1ai/day1"
)

// ConversationCreateIn is the input of memory_conversation_create.
type ConversationCreateIn struct {
	Title     string `json:"title" jsonschema:"what the conversation is about"`
	Branch    string `json:"branch,omitempty" jsonschema:"branch to write to (default: this session's current branch, else main)"`
	SessionID string `json:"session_id,omitempty"`
	TaskID    string `json:"task_id,omitempty"`
	AgentID   string `json:"agent_id,omitempty"`
}

// ConversationCreateOut is the output of memory_conversation_create.
type ConversationCreateOut struct {
	ConversationID string `json:"conversation_id"`
	Branch         string `json:"branch"`
	Outcome        string `json:"outcome"`
}

// MessageAppendIn is the input of memory_message_append.
type MessageAppendIn struct {
	ConversationID string `json:"conversation_id" jsonschema:"the conversation to append to"`
	Role           string `json:"role" jsonschema:"user, assistant, tool_call, tool_result or system"`
	Content        string `json:"content" jsonschema:"the message's text"`
	Tool           string `json:"tool,omitempty" jsonschema:"the tool of a tool_call or tool_result"`
	Branch         string `json:"branch,omitempty" jsonschema:"the conversation's branch (default: this session's current branch, else main)"`
}

// MessageAppendOut is the output of memory_message_append.
type MessageAppendOut struct {
	MessageID      string `json:"message_id"`
	ConversationID string `json:"conversation_id"`
	Seq            int    `json:"seq" jsonschema:"the message's sequence number in the conversation, from 1"`
	Branch         string `json:"branch"`
}

// CherryPickConversationIn is the input of memory_cherry_pick_conversation.
type CherryPickConversationIn struct {
	ConversationID string `json:"conversation_id" jsonschema:"the conversation to copy"`
	SourceBranch   string `json:"source_branch,omitempty" jsonschema:"the branch it is on (default: this session's current branch, else main)"`
	TargetBranch   string `json:"target_branch" jsonschema:"the branch to copy it to"`
	FromSequence   *int   `json:"from_sequence,omitempty" jsonschema:"first message to copy, by sequence number; with to_sequence copies only that range into a new conversation"`
	ToSequence     *int   `json:"to_sequence,omitempty" jsonschema:"last message to copy, by sequence number"`
	Verify         bool   `json:"verify,omitempty" jsonschema:"judge the conversation first and keep the verdict with the copy"`
}

// PickOut is the output of memory_cherry_pick_conversation and memory_cherry_pick_decisions.
type PickOut struct {
	ConversationID string        `json:"conversation_id" jsonschema:"the conversation on the target branch"`
	TargetBranch   string        `json:"target_branch"`
	Messages       int           `json:"messages" jsonschema:"messages written to the target"`
	Picked         []string      `json:"picked" jsonschema:"ids of the source messages picked"`
	Decisions      []DecisionOut `json:"decisions,omitempty"`
	By             string        `json:"by,omitempty" jsonschema:"who chose or judged: model:<name> or heuristic"`
	Verdict        *VerdictView  `json:"verdict,omitempty"`
}

// DecisionOut is a decision point a cherry-pick of decisions took.
type DecisionOut struct {
	Seq       int      `json:"seq"`
	MessageID string   `json:"message_id"`
	Reasons   []string `json:"reasons"`
}

// CherryPickDecisionsIn is the input of memory_cherry_pick_decisions.
type CherryPickDecisionsIn struct {
	ConversationID string `json:"conversation_id" jsonschema:"the conversation to take the decision points of"`
	SourceBranch   string `json:"source_branch,omitempty" jsonschema:"the branch it is on (default: this session's current branch, else main)"`
	TargetBranch   string `json:"target_branch" jsonschema:"the branch to copy them to"`
}

func conversationTools() []Tool {
	return []Tool{
		tool("memory_conversation_create",
			"Start a conversation record, the container of messages appended with memory_message_append.",
			(*caller).conversationCreate),
		tool("memory_message_append",
			"Append one message (user, assistant, tool_call, tool_result or system) to a conversation; it gets the next sequence number.",
			(*caller).messageAppend),
		tool("memory_cherry_pick_conversation",
			"Copy a conversation that went right (or a range of its messages) to another branch, e.g. from an agent's branch to the task branch.",
			(*caller).cherryPickConversation),
		tool("memory_cherry_pick_decisions",
			"Copy only the decision points of a conversation (stated intents, recoveries after errors) to another branch.",
			(*caller).cherryPickDecisions)}
}

func (m *caller) conversationCreate(ctx context.Context, in ConversationCreateIn) (ConversationCreateOut, string, error) {
	w, err := m.c.WriteConversation(ctx, day1.Conversation{
		Branch: m.branch(in.Branch), Title: in.Title, SessionID: in.SessionID, TaskID: in.TaskID, AgentID: in.AgentID,
	})
	if err != nil {
		return ConversationCreateOut{}, "", err
	}
	out := ConversationCreateOut{ConversationID: w.Record.ID, Branch: w.Record.Branch, Outcome: string(w.Outcome)}
	return out, fmt.Sprintf("conversation %s on %s", out.ConversationID, out.Branch), nil
}

func (m *caller) messageAppend(ctx context.Context, in MessageAppendIn) (MessageAppendOut, string, error) {
	w, err := m.c.AppendMessage(ctx, day1.Message{
		Branch: m.branch(in.Branch), ConversationID: in.ConversationID, Role: day1.Role(in.Role),
		Content: in.Content, Tool: in.Tool,
	})
	if err != nil {
		return MessageAppendOut{}, "", err
	}
	r := w.Record
	out := MessageAppendOut{MessageID: r.ID, ConversationID: r.ConversationID, Seq: r.Seq, Branch: r.Branch}
	return out, fmt.Sprintf("message %d of %s", r.Seq, r.ConversationID), nil
}

func (m *caller) cherryPickConversation(ctx context.Context, in CherryPickConversationIn) (PickOut, string, error) {
	src := m.branch(in.SourceBranch)
	var res day1.PickResult
	var err error
	if in.FromSequence != nil || in.ToSequence != nil {
		from := orDefault(in.FromSequence, 0)
		to := orDefault(in.ToSequence, 1<<30)
		res, err = m.c.CherryPickMessages(ctx, day1.MessagePick{
			Source: src, Target: in.TargetBranch, ConversationID: in.ConversationID,
			FromSeq: from, ToSeq: to, Verify: in.Verify,
		})
	} else {
		res, err = m.c.CherryPickConversation(ctx, day1.ConversationPick{
			Source: src, Target: in.TargetBranch, ConversationID: in.ConversationID, Verify: in.Verify,
		})
	}
	if err != nil {
		return PickOut{}, "", err
	}
	out := viewPick(res, in.TargetBranch)
	return out, fmt.Sprintf("picked %d messages of %s into %s on %s", len(out.Picked), in.ConversationID, out.ConversationID, in.TargetBranch), nil
}

func (m *caller) cherryPickDecisions(ctx context.Context, in CherryPickDecisionsIn) (PickOut, string, error) {
	res, err := m.c.CherryPickDecisions(ctx, day1.DecisionPick{
		Source: m.branch(in.SourceBranch), Target: in.TargetBranch, ConversationID: in.ConversationID,
	})
	if err != nil {
		return PickOut{}, "", err
	}
	out := viewPick(res, in.TargetBranch)
	return out, fmt.Sprintf("%d decision points of %s picked into %s", len(out.Decisions), in.ConversationID, in.TargetBranch), nil
}

func viewPick(res day1.PickResult, target string) PickOut {
	out := PickOut{
		ConversationID: res.Conversation.ID, TargetBranch: target, Messages: len(res.Messages),
		Picked: append([]string{}, res.Picked...), By: res.By,
	}
	for _, d := range res.Decisions {
		out.Decisions = append(out.Decisions, DecisionOut{Seq: d.Seq, MessageID: d.MessageID, Reasons: d.Reasons})
	}
	if res.Verdict != nil {
		v := viewVerdict(*res.Verdict)
		out.Verdict = &v
	}
	return out
}
