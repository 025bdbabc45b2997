package day1

import (
	"context"

	"github.com/day1ai/day1/curation"
	"github.com/day1ai/day1/handoff"
	"github.com/day1ai/day1/store"
)

// Task types. They are the handoff package's.
type (
	// Task is a unit of work agents share: objectives, members and a branch of its
	// own, task/<name>, forked from a parent branch. Its name is its identifier.
	Task = handoff.Task
	// TaskSpec describes a task to create.
	TaskSpec = handoff.TaskSpec
	// TaskStatus is the life-cycle state of a task: active or completed.
	TaskStatus = handoff.TaskStatus
	// TaskFilter narrows Client.Tasks.
	TaskFilter = handoff.TaskFilter
	// Objective is one goal of a task, numbered from 1, with its status history.
	Objective = handoff.Objective
	// ObjectiveStatus is where an objective stands.
	ObjectiveStatus = handoff.ObjectiveStatus
	// ObjectiveChange is one status change of an objective: who, when, why.
	ObjectiveChange = handoff.ObjectiveChange
	// ObjectiveUpdate asks UpdateObjective for a status change.
	ObjectiveUpdate = handoff.ObjectiveUpdate
	// TaskMember is an agent working on a task, on its branch task/<name>/<agent>.
	TaskMember = handoff.Member
	// MemberStatus says whether a member is active or left.
	MemberStatus = handoff.MemberStatus
	// JoinRequest asks JoinTask to add an agent to a task.
	JoinRequest = handoff.JoinRequest
	// LeaveRequest asks LeaveTask to record that an agent left.
	LeaveRequest = handoff.LeaveRequest
	// CompleteRequest asks CompleteTask to complete a task, with an optional merge.
	CompleteRequest = handoff.CompleteRequest
	// TaskCompletion is what CompleteTask did: the task, the merge, and what was
	// promoted to the parent and what stayed.
	TaskCompletion = handoff.Completion
	// ContextPacket is a task's context as a handoff carries it: state, members,
	// verified facts, relations, key conversations, pending objectives, blockers,
	// recent errors, instructions and the branch pointer, in a stable JSON form.
	ContextPacket = handoff.Packet
	// ContextOptions tune TaskContext.
	ContextOptions = handoff.ContextOptions
	// PacketLimits bound the size of a context packet.
	PacketLimits = handoff.Limits
	// Truncation records that a list of a packet was cut to its limit.
	Truncation = handoff.Truncation
	// ConversationContext is one conversation in a packet, with its key messages.
	ConversationContext = handoff.ConversationContext
	// KeyMessage is one message of a conversation in a packet.
	KeyMessage = handoff.KeyMessage
)

// Task, objective and member statuses.
const (
	TaskActive          = handoff.TaskActive
	TaskCompleted       = handoff.TaskCompleted
	ObjectivePending    = handoff.ObjectivePending
	ObjectiveInProgress = handoff.ObjectiveInProgress
	ObjectiveBlocked    = handoff.ObjectiveBlocked
	ObjectiveDone       = handoff.ObjectiveDone
	MemberActive        = handoff.MemberActive
	MemberLeft          = handoff.MemberLeft
)

// Task errors. Test with errors.Is.
var (
	// ErrTaskExists: a task with that name exists already.
	ErrTaskExists = handoff.ErrTaskExists
	// ErrTaskClosed: the task is completed and accepts no more changes. It also
	// matches ErrConflict.
	ErrTaskClosed = handoff.ErrTaskClosed
	// ErrNotMember: the agent has not joined the task, or has left it. It also
	// matches ErrNotFound.
	ErrNotMember = handoff.ErrNotMember
)

// handoffs returns the handoff engine over the Client's store, model and merge
// engine; decision points of conversations are found by curation's heuristics.
func (c *Client) handoffs() *handoff.Engine {
	return &handoff.Engine{
		Store:     c.st,
		Model:     c.cfg.Model,
		Merger:    c.engine,
		Decisions: decisionIDs,
		Consolidate: func(ctx context.Context, branch, task, agent string) (int, error) {
			res, err := c.curator().Consolidate(ctx, curation.ConsolidateRequest{Branch: branch, TaskID: task, AgentID: agent})
			return len(res.Facts), err
		},
		NewID: c.cfg.Test.NewID,
		Now:   c.cfg.Test.Now,
	}
}

// decisionIDs returns the IDs of the decision points among a conversation's messages.
func decisionIDs(msgs []store.Message) []string {
	dps := curation.FindDecisions(msgs)
	out := make([]string, len(dps))
	for i, d := range dps {
		out[i] = d.MessageID
	}
	return out
}

// CreateTask creates a task on its own branch task/<name>, forked from spec.Parent
// (DefaultBranch when empty), with objectives numbered from 1, atomically: if its
// records cannot be written the branch is deleted again.
//
// Errors: *ValidationError for a bad spec (a name that is not a branch segment: 1 to
// 40 letters, digits and . _ -; an empty objective...); ErrTaskExists;
// ErrBranchExists when task/<name> exists without a task; ErrBranchNotFound for an
// unknown parent; ErrClosed; ctx's error.
func (c *Client) CreateTask(ctx context.Context, spec TaskSpec) (Task, error) {
	if err := c.use(ctx); err != nil {
		return Task{}, err
	}
	return c.handoffs().CreateTask(ctx, spec)
}

// GetTask returns a task with its objectives and members, or an error matching
// ErrNotFound.
func (c *Client) GetTask(ctx context.Context, name string) (Task, error) {
	if err := c.use(ctx); err != nil {
		return Task{}, err
	}
	return c.handoffs().GetTask(ctx, name)
}

// Tasks returns the tasks the filter selects (status, type, parent, an agent that
// joined), oldest first, with their objectives and members. The zero filter selects
// every task.
func (c *Client) Tasks(ctx context.Context, f TaskFilter) ([]Task, error) {
	if err := c.use(ctx); err != nil {
		return nil, err
	}
	return c.handoffs().ListTasks(ctx, f)
}

// JoinTask adds an agent to an active task with a role and assigned objectives, on its
// own branch task/<task>/<agent> forked from the task's branch. The first agent to
// join owns the task. An agent that left may join again; joining again unchanged
// returns the membership as it is.
//
// Errors: *ValidationError for bad input or an unknown objective; ErrNotFound for an
// unknown task; ErrTaskClosed; ErrConflict when the agent is active with another role
// or other objectives; ErrClosed; ctx's error.
func (c *Client) JoinTask(ctx context.Context, r JoinRequest) (TaskMember, error) {
	if err := c.use(ctx); err != nil {
		return TaskMember{}, err
	}
	return c.handoffs().JoinTask(ctx, r)
}

// UpdateObjective changes an objective's status, recording who, when and why.
// Errors: *ValidationError; ErrNotFound for an unknown task or objective;
// ErrTaskClosed; ErrClosed; ctx's error.
func (c *Client) UpdateObjective(ctx context.Context, u ObjectiveUpdate) (Objective, error) {
	if err := c.use(ctx); err != nil {
		return Objective{}, err
	}
	return c.handoffs().UpdateObjective(ctx, u)
}

// LeaveTask records that an agent left a task, with a summary of its work; its branch
// stays. Errors: *ValidationError; ErrNotMember; ErrNotFound for an unknown task;
// ErrClosed; ctx's error.
func (c *Client) LeaveTask(ctx context.Context, r LeaveRequest) (TaskMember, error) {
	if err := c.use(ctx); err != nil {
		return TaskMember{}, err
	}
	return c.handoffs().LeaveTask(ctx, r)
}

// CompleteTask completes a task with a result summary. With r.Merge, what the task
// branch holds that is verified is promoted to the parent branch by a cherry-pick
// merge (Config.MergeGate applies): live verified facts, and conversations that are
// verified or were cherry-picked, with their messages. Unverified and invalidated
// records, observations and relations stay on the task branch; TaskCompletion lists
// both sides. Agents' work reaches the task branch by merge or cherry-pick first. With
// r.Archive the task's and its members' branches are archived afterwards.
//
// Errors: *ValidationError; ErrNotFound; ErrTaskClosed (also when another caller
// completed it first); the merge's errors (*MergeBlockedError...); ErrClosed; ctx's
// error.
func (c *Client) CompleteTask(ctx context.Context, r CompleteRequest) (TaskCompletion, error) {
	if err := c.use(ctx); err != nil {
		return TaskCompletion{}, err
	}
	return c.handoffs().CompleteTask(ctx, r)
}

// TaskContext returns a view of a task's context, built like a full handoff's packet
// (every conversation, recent errors) but not stored. Verified facts only unless
// o.IncludeUnverified. Errors: *ValidationError; ErrNotFound; ErrClosed; ctx's error.
func (c *Client) TaskContext(ctx context.Context, task string, o ContextOptions) (ContextPacket, error) {
	if err := c.use(ctx); err != nil {
		return ContextPacket{}, err
	}
	return c.handoffs().TaskContext(ctx, task, o)
}
