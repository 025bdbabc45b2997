package agenttool

import (
	"context"
	"fmt"
	"time"

	"github.com/day1ai/day1"
)

// HandoffCreateIn is the input of memory_handoff_create.
type HandoffCreateIn struct {
	TaskID             string   `json:"task_id" jsonschema:"the task's name"`
	FromAgentID        string   `json:"from_agent_id" jsonschema:"the agent handing over, an active member of the task"`
	ToAgentID          string   `json:"to_agent_id,omitempty" jsonschema:"the receiver; empty lets any agent accept"`
	HandoffType        string   `json:"handoff_type" jsonschema:"full (everything), partial (the rest of the work), escalation (stuck: full context with blockers and failed attempts), checkpoint (save progress, no receiver), or task_continuation, agent_switch, session_handoff"`
	Instructions       string   `json:"instructions,omitempty" jsonschema:"guidance for the receiver"`
	PriorityObjectives []int    `json:"priority_objectives,omitempty" jsonschema:"numbers of the objectives to tackle first"`
	Blockers           []string `json:"blockers,omitempty" jsonschema:"known obstacles"`
}

// PacketView is a handoff's context packet as the tools return it.
type PacketView struct {
	Summary            string          `json:"summary"`
	Branch             string          `json:"branch" jsonschema:"the task branch to continue from"`
	Done               int             `json:"objectives_done"`
	Total              int             `json:"objectives_total"`
	Facts              []FactView      `json:"facts"`
	PendingObjectives  []ObjectiveView `json:"pending_objectives"`
	Blockers           []string        `json:"blockers"`
	RecentErrors       []string        `json:"recent_errors"`
	Conversations      []string        `json:"conversations" jsonschema:"ids of the key conversations"`
	Instructions       string          `json:"instructions,omitempty"`
	PriorityObjectives []int           `json:"priority_objectives,omitempty"`
}

// HandoffView is a handoff as the tools return it.
type HandoffView struct {
	HandoffID      string    `json:"handoff_id"`
	TaskID         string    `json:"task_id"`
	Type           string    `json:"handoff_type"`
	Status         string    `json:"status"`
	Priority       string    `json:"priority,omitempty"`
	FromAgent      string    `json:"from_agent_id,omitempty"`
	ToAgent        string    `json:"to_agent_id,omitempty"`
	Instructions   string    `json:"instructions,omitempty"`
	ReceiverBranch string    `json:"receiver_branch,omitempty"`
	CreatedAt      time.Time `json:"created_at"`
}

// HandoffCreateOut is the output of memory_handoff_create.
type HandoffCreateOut struct {
	Handoff HandoffView `json:"handoff"`
	Packet  PacketView  `json:"packet"`
}

// HandoffAcceptIn is the input of memory_handoff_accept.
type HandoffAcceptIn struct {
	HandoffID string `json:"handoff_id" jsonschema:"the handoff to accept"`
	AgentID   string `json:"agent_id" jsonschema:"the accepting agent"`
}

// HandoffAcceptOut is the output of memory_handoff_accept.
type HandoffAcceptOut struct {
	Handoff       HandoffView `json:"handoff"`
	Branch        string      `json:"branch" jsonschema:"the receiver's branch, where to work now"`
	BranchCreated bool        `json:"branch_created"`
	Packet        PacketView  `json:"packet"`
}

// HandoffListIn is the input of memory_handoff_list.
type HandoffListIn struct {
	TaskID string `json:"task_id,omitempty" jsonschema:"keep the handoffs of this task"`
	Status string `json:"status,omitempty" jsonschema:"keep handoffs with this status, e.g. pending, accepted, rejected, expired"`
}

// HandoffListOut is the output of memory_handoff_list.
type HandoffListOut struct {
	Handoffs []HandoffView `json:"handoffs"`
}

func handoffTools() []Tool {
	return []Tool{
		tool("memory_handoff_create",
			"Hand a task's work to another agent with its context (verified facts, key conversations, pending objectives, blockers, recent errors) frozen in a packet; handoff_type checkpoint saves your progress instead.",
			(*caller).handoffCreate),
		tool("memory_handoff_accept",
			"Accept a pending handoff: you join the task on a branch of your own and receive the context packet.",
			(*caller).handoffAccept),
		tool("memory_handoff_list",
			"List handoffs, of a task or with a status (pending ones to find work to accept).",
			(*caller).handoffList)}
}

func viewHandoff(h day1.HandoffRecord) HandoffView {
	return HandoffView{
		HandoffID: h.ID, TaskID: h.Task, Type: string(h.Type), Status: string(h.Status), Priority: h.Priority.String(),
		FromAgent: h.FromAgent, ToAgent: h.ToAgent, Instructions: h.Instructions,
		ReceiverBranch: h.ReceiverBranch, CreatedAt: h.CreatedAt,
	}
}

func viewPacket(p day1.ContextPacket) PacketView {
	v := PacketView{
		Summary: p.Summary, Branch: p.Branch, Done: p.Done, Total: p.Total, Facts: viewFacts(p.Facts),
		PendingObjectives: make([]ObjectiveView, len(p.PendingObjectives)),
		Blockers:          append([]string{}, p.Blockers...), RecentErrors: []string{}, Conversations: []string{},
		Instructions: p.Instructions, PriorityObjectives: p.PriorityObjectives,
	}
	for i, o := range p.PendingObjectives {
		v.PendingObjectives[i] = viewObjective(o)
	}
	for _, o := range p.RecentErrors {
		v.RecentErrors = append(v.RecentErrors, o.Summary)
	}
	for _, c := range p.Conversations {
		v.Conversations = append(v.Conversations, c.ID)
	}
	return v
}

func (m *caller) handoffCreate(ctx context.Context, in HandoffCreateIn) (HandoffCreateOut, string, error) {
	if day1.HandoffType(in.HandoffType) == day1.HandoffCheckpoint {
		cp, err := m.c.Checkpoint(ctx, day1.CheckpointRequest{Task: in.TaskID, Agent: in.FromAgentID, Note: in.Instructions, Blockers: in.Blockers})
		if err != nil {
			return HandoffCreateOut{}, "", err
		}
		out := HandoffCreateOut{
			Handoff: HandoffView{HandoffID: cp.ID, TaskID: cp.Task, Type: string(day1.HandoffCheckpoint), Status: "saved", FromAgent: cp.Agent, Instructions: cp.Note, ReceiverBranch: cp.Branch, CreatedAt: cp.CreatedAt},
			Packet:  viewPacket(cp.Packet),
		}
		return out, fmt.Sprintf("checkpoint %s of %s saved for %s", cp.ID, cp.Task, cp.Agent), nil
	}
	h, err := m.c.Handoff(ctx, day1.HandoffRequest{
		Task: in.TaskID, Type: day1.HandoffType(in.HandoffType), FromAgent: in.FromAgentID, ToAgent: in.ToAgentID,
		Instructions: in.Instructions, PriorityObjectives: in.PriorityObjectives, Blockers: in.Blockers,
	})
	if err != nil {
		return HandoffCreateOut{}, "", err
	}
	to := h.ToAgent
	if to == "" {
		to = "any agent"
	}
	return HandoffCreateOut{Handoff: viewHandoff(h), Packet: viewPacket(h.Packet)},
		fmt.Sprintf("handoff %s (%s) of %s offered to %s", h.ID, h.Type, h.Task, to), nil
}

func (m *caller) handoffAccept(ctx context.Context, in HandoffAcceptIn) (HandoffAcceptOut, string, error) {
	a, err := m.c.AcceptHandoff(ctx, day1.AcceptRequest{Handoff: in.HandoffID, Agent: in.AgentID})
	if err != nil {
		return HandoffAcceptOut{}, "", err
	}
	out := HandoffAcceptOut{Handoff: viewHandoff(a.Handoff), Branch: a.Branch, BranchCreated: a.BranchCreated, Packet: viewPacket(a.Packet)}
	return out, fmt.Sprintf("handoff %s accepted by %s; work on branch %s", a.Handoff.ID, in.AgentID, a.Branch), nil
}

func (m *caller) handoffList(ctx context.Context, in HandoffListIn) (HandoffListOut, string, error) {
	hs, err := m.c.Handoffs(ctx, day1.HandoffFilter{Task: in.TaskID, Status: day1.HandoffStatus(in.Status)})
	if err != nil {
		return HandoffListOut{}, "", err
	}
	out := HandoffListOut{Handoffs: make([]HandoffView, len(hs))}
	for i, h := range hs {
		out.Handoffs[i] = viewHandoff(h)
	}
	return out, fmt.Sprintf("%d handoffs", len(hs)), nil
}
