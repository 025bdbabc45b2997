package agenttool

import (
	"context"
	"fmt"
	"time"

	"github.com/day1ai/day1"
)

// TaskCreateIn is the input of memory_task_create.
type TaskCreateIn struct {
	Name        string   `json:"name" jsonschema:"the task's id, 1 to 40 letters, digits and . _ -; it gets the branch task/<name>"`
	Objectives  []string `json:"objectives" jsonschema:"the task's goals, numbered from 1 in this order"`
	Description string   `json:"description,omitempty" jsonschema:"what the task is about"`
	Type        string   `json:"type,omitempty" jsonschema:"a classification such as bug_fix or feature"`
}

// ObjectiveView is the output of memory_task_objective_update.
type ObjectiveView struct {
	ID          int      `json:"id"`
	Description string   `json:"description"`
	Status      string   `json:"status" jsonschema:"pending, in_progress, blocked or done"`
	Assignees   []string `json:"assignees,omitempty"`
}

// MemberView is the output of memory_task_join.
type MemberView struct {
	Agent      string `json:"agent_id"`
	Role       string `json:"role,omitempty"`
	Branch     string `json:"branch"`
	Status     string `json:"status"`
	Objectives []int  `json:"objectives,omitempty"`
}

// TaskView is the output of memory_task_create.
type TaskView struct {
	TaskID        string          `json:"task_id"`
	Description   string          `json:"description,omitempty"`
	Type          string          `json:"type,omitempty"`
	Status        string          `json:"status"`
	Branch        string          `json:"branch"`
	Parent        string          `json:"parent_branch"`
	Owner         string          `json:"owner,omitempty"`
	ResultSummary string          `json:"result_summary,omitempty"`
	Objectives    []ObjectiveView `json:"objectives"`
	Members       []MemberView    `json:"members"`
	CreatedAt     time.Time       `json:"created_at"`
	// ObjectiveCount and LastActivity are what a list of tasks shows.
	ObjectiveCount int       `json:"objective_count"`
	LastActivity   time.Time `json:"last_activity,omitzero"`
}

// TaskListIn is the input of memory_task_list.
type TaskListIn struct {
	TaskID  string `json:"task_id,omitempty" jsonschema:"return this task only, with its objectives and members"`
	Status  string `json:"status,omitempty" jsonschema:"keep tasks in this status: active or completed"`
	AgentID string `json:"agent_id,omitempty" jsonschema:"keep the tasks this agent joined"`
}

// TaskListOut is the output of memory_task_list.
type TaskListOut struct {
	Tasks []TaskView `json:"tasks"`
}

// TaskJoinIn is the input of memory_task_join.
type TaskJoinIn struct {
	TaskID     string `json:"task_id" jsonschema:"the task's name"`
	AgentID    string `json:"agent_id" jsonschema:"the joining agent's id; its branch is task/<task>/<agent>"`
	Role       string `json:"role,omitempty" jsonschema:"what the agent does, e.g. investigator"`
	Objectives []int  `json:"objectives,omitempty" jsonschema:"the numbers of the objectives assigned to the agent"`
}

// ObjectiveUpdateIn is the input of memory_task_objective_update.
type ObjectiveUpdateIn struct {
	TaskID    string `json:"task_id" jsonschema:"the task's name"`
	Objective int    `json:"objective" jsonschema:"the objective's number, from 1"`
	Status    string `json:"status" jsonschema:"pending, in_progress, blocked or done"`
	Note      string `json:"note,omitempty" jsonschema:"why, e.g. what blocks it"`
	AgentID   string `json:"agent_id,omitempty" jsonschema:"who made the change"`
}

// TaskCompleteIn is the input of memory_task_complete.
type TaskCompleteIn struct {
	TaskID        string `json:"task_id" jsonschema:"the task's name"`
	ResultSummary string `json:"result_summary" jsonschema:"what the task achieved"`
	Merge         *bool  `json:"merge,omitempty" jsonschema:"promote the task's verified facts and conversations to its parent branch (default true)"`
	AgentID       string `json:"agent_id,omitempty" jsonschema:"who completed it"`
}

// TaskCompleteOut is the output of memory_task_complete.
type TaskCompleteOut struct {
	Task     TaskView `json:"task"`
	MergeID  string   `json:"merge_id,omitempty"`
	Promoted []string `json:"promoted" jsonschema:"records merged into the parent branch, as kind/id"`
	Kept     []string `json:"kept" jsonschema:"records left on the task branch (not verified), as kind/id"`
}

func taskTools() []Tool {
	return []Tool{
		tool("memory_task_list",
			"List tasks with their status, owner and objective count, or read one task with its objectives and members.",
			(*caller).taskList),
		tool("memory_task_create",
			"Create a task with numbered objectives that several agents share, on its own branch task/<name>.",
			(*caller).taskCreate),
		tool("memory_task_join",
			"Join a task as an agent, with a role and assigned objectives; the agent works on its own branch task/<task>/<agent>.",
			(*caller).taskJoin),
		tool("memory_task_objective_update",
			"Change the status of a task's objective (pending, in_progress, blocked, done), recording who and why.",
			(*caller).objectiveUpdate),
		tool("memory_task_complete",
			"Complete a task with a result summary and, by default, promote its verified knowledge to the parent branch.",
			(*caller).taskComplete)}
}

func viewTask(t day1.Task) TaskView {
	v := TaskView{
		TaskID: t.Name, Description: t.Description, Type: t.Type, Status: string(t.Status),
		Branch: t.Branch, Parent: t.Parent, Owner: t.Owner, ResultSummary: t.ResultSummary,
		Objectives: make([]ObjectiveView, len(t.Objectives)), Members: make([]MemberView, len(t.Members)),
		CreatedAt: t.CreatedAt, ObjectiveCount: t.ObjectiveCount, LastActivity: t.LastActivity,
	}
	for i, o := range t.Objectives {
		v.Objectives[i] = viewObjective(o)
	}
	for i, mb := range t.Members {
		v.Members[i] = viewMember(mb)
	}
	return v
}

func viewObjective(o day1.Objective) ObjectiveView {
	return ObjectiveView{ID: o.ID, Description: o.Description, Status: string(o.Status), Assignees: o.Assignees}
}

func viewMember(mb day1.TaskMember) MemberView {
	return MemberView{Agent: mb.Agent, Role: mb.Role, Branch: mb.Branch, Status: string(mb.Status), Objectives: mb.Objectives}
}

func (m *caller) taskCreate(ctx context.Context, in TaskCreateIn) (TaskView, string, error) {
	t, err := m.c.CreateTask(ctx, day1.TaskSpec{Name: in.Name, Objectives: in.Objectives, Description: in.Description, Type: in.Type})
	if err != nil {
		return TaskView{}, "", err
	}
	return viewTask(t), fmt.Sprintf("task %s created on %s with %d objectives", t.Name, t.Branch, len(t.Objectives)), nil
}

func (m *caller) taskJoin(ctx context.Context, in TaskJoinIn) (MemberView, string, error) {
	mb, err := m.c.JoinTask(ctx, day1.JoinRequest{Task: in.TaskID, Agent: in.AgentID, Role: in.Role, Objectives: in.Objectives})
	if err != nil {
		return MemberView{}, "", err
	}
	return viewMember(mb), fmt.Sprintf("%s joined %s; work on branch %s", mb.Agent, mb.Task, mb.Branch), nil
}

func (m *caller) objectiveUpdate(ctx context.Context, in ObjectiveUpdateIn) (ObjectiveView, string, error) {
	o, err := m.c.UpdateObjective(ctx, day1.ObjectiveUpdate{
		Task: in.TaskID, Objective: in.Objective, Status: day1.ObjectiveStatus(in.Status), By: in.AgentID, Note: in.Note,
	})
	if err != nil {
		return ObjectiveView{}, "", err
	}
	return viewObjective(o), fmt.Sprintf("objective %d of %s is %s", o.ID, in.TaskID, o.Status), nil
}

func (m *caller) taskComplete(ctx context.Context, in TaskCompleteIn) (TaskCompleteOut, string, error) {
	done, err := m.c.CompleteTask(ctx, day1.CompleteRequest{
		Task: in.TaskID, ResultSummary: in.ResultSummary, Merge: orDefault(in.Merge, true), By: in.AgentID,
	})
	if err != nil {
		return TaskCompleteOut{}, "", err
	}
	out := TaskCompleteOut{Task: viewTask(done.Task), Promoted: refStrings(done.Promoted), Kept: refStrings(done.Kept)}
	if done.Merge != nil {
		out.MergeID = done.Merge.Record.ID
	}
	return out, fmt.Sprintf("task %s completed; %d records promoted to %s, %d kept on %s",
		done.Task.Name, len(out.Promoted), done.Task.Parent, len(out.Kept), done.Task.Branch), nil
}

func (m *caller) taskList(ctx context.Context, in TaskListIn) (TaskListOut, string, error) {
	if in.TaskID != "" {
		t, err := m.c.GetTask(ctx, in.TaskID)
		if err != nil {
			return TaskListOut{}, "", err
		}
		return TaskListOut{Tasks: []TaskView{viewTask(t)}}, fmt.Sprintf("task %s: %s", t.Name, t.Status), nil
	}
	ts, err := m.c.Tasks(ctx, day1.TaskFilter{Status: day1.TaskStatus(in.Status), Agent: in.AgentID})
	if err != nil {
		return TaskListOut{}, "", err
	}
	out := TaskListOut{Tasks: make([]TaskView, len(ts))}
	for i, t := range ts {
		out.Tasks[i] = viewTask(t)
	}
	return out, fmt.Sprintf("%d tasks", len(ts)), nil
}
