package handoff

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/day1ai/day1/merge"
	"github.com/day1ai/day1/store"
)

// Limits on tasks and their members.
const (
	// MaxTaskNameLen bounds a task's name, which becomes the branch task/<name>.
	MaxTaskNameLen = 40
	// MaxAgentIDLen bounds an agent's ID, which becomes the branch
	// task/<name>/<agent>.
	MaxAgentIDLen = 50
	// MaxObjectives bounds the objectives of one task.
	MaxObjectives = 100
	// MaxObjectiveHistory is how many status changes an objective keeps, the most
	// recent ones.
	MaxObjectiveHistory = 50
	// MaxTextLen bounds descriptions, summaries, notes and instructions, in bytes.
	MaxTextLen = 16 << 10
	// MaxTaskTypeLen bounds a task's type.
	MaxTaskTypeLen = 50
)

// undoTimeout bounds the compensation that undoes a failed call's branch, which runs
// even when the call's context was cancelled.
const undoTimeout = 30 * time.Second

// TaskBranchPrefix starts the name of every task branch: task/<name>, and
// task/<name>/<agent> for its agents.
const TaskBranchPrefix = "task/"

var segmentPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// TaskBranch returns the branch of a task: task/<name>.
func TaskBranch(name string) string { return TaskBranchPrefix + name }

// AgentBranch returns the branch of an agent on a task: task/<name>/<agent>.
func AgentBranch(task, agent string) string { return TaskBranchPrefix + task + "/" + agent }

// TaskStatus is the life-cycle state of a task.
type TaskStatus string

// Task statuses.
const (
	// TaskActive: work is going on. The initial status.
	TaskActive TaskStatus = "active"
	// TaskCompleted: done, with a result summary. Final.
	TaskCompleted TaskStatus = "completed"
)

// ObjectiveStatus is where an objective of a task stands.
type ObjectiveStatus string

// Objective statuses. Any status may change to any other; every change is recorded.
const (
	// ObjectivePending: not started. The initial status.
	ObjectivePending ObjectiveStatus = "pending"
	// ObjectiveInProgress: someone works on it.
	ObjectiveInProgress ObjectiveStatus = "in_progress"
	// ObjectiveBlocked: work cannot go on; a note says why.
	ObjectiveBlocked ObjectiveStatus = "blocked"
	// ObjectiveDone: achieved.
	ObjectiveDone ObjectiveStatus = "done"
)

var allObjectiveStatuses = []ObjectiveStatus{ObjectivePending, ObjectiveInProgress, ObjectiveBlocked, ObjectiveDone}

// Valid reports whether s is a known objective status.
func (s ObjectiveStatus) Valid() bool { return slices.Contains(allObjectiveStatuses, s) }

// MemberStatus says whether an agent still works on a task.
type MemberStatus string

// Member statuses.
const (
	// MemberActive: the agent works on the task.
	MemberActive MemberStatus = "active"
	// MemberLeft: the agent left, with a summary; it may join again.
	MemberLeft MemberStatus = "left"
)

// Task is a unit of work that agents share: objectives, the agents working on it, and
// a branch of its own, task/<name>, forked from a parent branch. The task's name is
// its identifier: the TaskID of the records written for it holds the name.
type Task struct {
	// Name identifies the task and names its branch. See TaskSpec.Name.
	Name        string     `json:"name"`
	Description string     `json:"description,omitempty"`
	Type        string     `json:"type,omitempty"`
	Status      TaskStatus `json:"status"`
	// Branch is task/<name>; Parent the branch it was forked from and is merged into.
	Branch string `json:"branch"`
	Parent string `json:"parent"`
	// Owner is the agent that holds the task: the first to join, then the receiver of
	// each accepted handoff that transfers ownership. Empty when nobody does.
	Owner     string `json:"owner,omitempty"`
	CreatedBy string `json:"created_by,omitempty"`
	// ObjectiveCount is how many objectives the task has; they are numbered from 1.
	ObjectiveCount int `json:"objective_count"`
	// ResultSummary, CompletedBy and CompletedAt are set by CompleteTask; MergeID
	// names the merge record when it merged into Parent.
	ResultSummary string            `json:"result_summary,omitempty"`
	CompletedBy   string            `json:"completed_by,omitempty"`
	CompletedAt   time.Time         `json:"completed_at,omitzero"`
	MergeID       string            `json:"merge_id,omitempty"`
	Metadata      map[string]string `json:"metadata,omitempty"`
	CreatedAt     time.Time         `json:"created_at"`
	UpdatedAt     time.Time         `json:"updated_at"`
	// LastActivity is the last change to the task, its objectives, members,
	// handoffs or checkpoints. LastCheckpoint is the last checkpoint's time.
	LastActivity   time.Time `json:"last_activity"`
	LastCheckpoint time.Time `json:"last_checkpoint,omitzero"`
	// Objectives, in number order, and Members, in the order they first joined, are
	// filled by reads; they are kept in documents of their own.
	Objectives []Objective `json:"objectives,omitempty"`
	Members    []Member    `json:"members,omitempty"`
	// Version is the task document's version, for optimistic concurrency.
	Version uint64 `json:"-"`
}

// Progress returns how many objectives are done, and how many there are.
func (t Task) Progress() (done, total int) {
	for _, o := range t.Objectives {
		if o.Status == ObjectiveDone {
			done++
		}
	}
	return done, len(t.Objectives)
}

// Objective is one goal of a task.
type Objective struct {
	Task string `json:"task"`
	// ID numbers the objective within its task, from 1.
	ID          int             `json:"id"`
	Description string          `json:"description"`
	Status      ObjectiveStatus `json:"status"`
	// Assignees are the active members assigned the objective, sorted; filled by
	// reads.
	Assignees []string  `json:"assignees,omitempty"`
	UpdatedBy string    `json:"updated_by,omitempty"`
	UpdatedAt time.Time `json:"updated_at"`
	// History lists the status changes, oldest first; at most MaxObjectiveHistory.
	History []ObjectiveChange `json:"history,omitempty"`
	Version uint64            `json:"-"`
}

// ObjectiveChange is one status change of an objective: who made it and when.
type ObjectiveChange struct {
	From ObjectiveStatus `json:"from"`
	To   ObjectiveStatus `json:"to"`
	By   string          `json:"by,omitempty"`
	At   time.Time       `json:"at"`
	Note string          `json:"note,omitempty"`
}

// Member is an agent working on a task, on its own branch task/<name>/<agent>.
type Member struct {
	Task  string `json:"task"`
	Agent string `json:"agent"`
	Role  string `json:"role,omitempty"`
	// Objectives are the numbers of the objectives assigned to the agent, sorted.
	Objectives []int        `json:"objectives,omitempty"`
	Branch     string       `json:"branch"`
	Status     MemberStatus `json:"status"`
	// Summary is what the agent said it did when it left.
	Summary string `json:"summary,omitempty"`
	// Session is the agent's current session, if it said.
	Session        string    `json:"session,omitempty"`
	JoinedAt       time.Time `json:"joined_at"`
	LeftAt         time.Time `json:"left_at,omitzero"`
	LastActivity   time.Time `json:"last_activity"`
	LastCheckpoint time.Time `json:"last_checkpoint,omitzero"`
	Version        uint64    `json:"-"`
}

// TaskSpec describes a task to create.
type TaskSpec struct {
	// Name identifies the task and becomes its branch task/<name>: 1 to
	// MaxTaskNameLen letters, digits and . _ -, starting with a letter or digit, no
	// "..". Required.
	Name string
	// Description says what the task is about. At most MaxTextLen bytes.
	Description string
	// Type classifies the task, like "bug_fix". Optional; at most MaxTaskTypeLen
	// bytes.
	Type string
	// Objectives are the descriptions of the task's goals, numbered from 1 in this
	// order. Each must be non-empty; at most MaxObjectives.
	Objectives []string
	// Parent is the branch the task forks from and merges into. Default
	// store.DefaultBranch.
	Parent string
	// CreatedBy names who created the task: an ID of at most MaxAgentIDLen bytes.
	// Optional.
	CreatedBy string
	// Metadata is kept with the task.
	Metadata map[string]string
}

// TaskFilter narrows ListTasks. Zero fields match everything.
type TaskFilter struct {
	Status TaskStatus
	Type   string
	Parent string
	// Agent keeps the tasks the agent has joined (and may have left).
	Agent string
	// Limit keeps the first Limit tasks; 0 means all.
	Limit int
}

// JoinRequest asks for an agent to join a task.
type JoinRequest struct {
	// Task is the task's name. Required.
	Task string
	// Agent is the agent's ID: 1 to MaxAgentIDLen letters, digits and . _ -. It
	// names the agent's branch task/<task>/<agent>. Required.
	Agent string
	// Role says what the agent does, like "investigator". Optional.
	Role string
	// Objectives are the numbers of the objectives assigned to the agent. Each must
	// exist.
	Objectives []int
	// Session is the agent's session ID. Optional.
	Session string
}

// ObjectiveUpdate asks for an objective's status to change.
type ObjectiveUpdate struct {
	Task      string          // the task's name; required
	Objective int             // the objective's number; required
	Status    ObjectiveStatus // the new status; required
	By        string          // who made the change: an ID of at most MaxAgentIDLen bytes; optional
	Note      string          // why; optional
}

// LeaveRequest asks for an agent to leave a task.
type LeaveRequest struct {
	Task    string // the task's name; required
	Agent   string // the agent; required, and an active member
	Summary string // what the agent did; optional
}

// CompleteRequest asks for a task to be completed.
type CompleteRequest struct {
	// Task is the task's name. Required.
	Task string
	// By names who completed it: an ID of at most MaxAgentIDLen bytes. Optional;
	// also the merge's MergedBy.
	By string
	// ResultSummary says what the task achieved.
	ResultSummary string
	// Merge promotes the task's verified knowledge to its parent branch: see
	// CompleteTask. Default false: nothing is merged.
	Merge bool
	// Archive archives the task's branch and its members' branches once the task is
	// completed, so they refuse further writes and stay readable. Default false.
	Archive bool
}

// Completion is what CompleteTask did.
type Completion struct {
	// Task is the completed task.
	Task Task
	// Merge is the merge into the parent; nil when none was asked for or nothing
	// was promotable.
	Merge *merge.Result
	// Promoted lists the records merged into the parent: verified facts,
	// conversations and their messages. Kept lists the facts and conversations the
	// task branch added that stay there (not verified, or invalidated).
	Promoted []store.Ref
	Kept     []store.Ref
}

// MetaPickedFromMessage is the metadata key the curation package's message
// cherry-picks set on the messages they copy. A message carrying it counts as
// cherry-picked when a completed task promotes its conversations.
const MetaPickedFromMessage = store.MetaPickedFromMessage

func validSegment(field, s string, max int, what string) error {
	if s == "" {
		return store.Invalid(field, "must not be empty", nil)
	}
	if len(s) > max || !segmentPattern.MatchString(s) || strings.Contains(s, "..") {
		return store.Invalid(field, fmt.Sprintf("must be 1 to %d letters, digits and . _ -, starting with a letter or digit, without \"..\": it names the branch %s", max, what), s)
	}
	return nil
}

func validTaskName(field, name string) error {
	return validSegment(field, name, MaxTaskNameLen, "task/<name>")
}

func validAgent(field, id string) error {
	return validSegment(field, id, MaxAgentIDLen, "task/<task>/<agent>")
}

func validText(field, s string) error {
	if len(s) > MaxTextLen {
		return store.Invalid(field, fmt.Sprintf("is %d bytes; at most %d are allowed", len(s), MaxTextLen), nil)
	}
	return nil
}

// validActor checks who made a change: empty, or an ID (see store.ValidateID) of at
// most MaxAgentIDLen bytes, so that the audit trail can index it.
func validActor(field, id string) error {
	if len(id) > MaxAgentIDLen {
		return store.Invalid(field, fmt.Sprintf("must be at most %d bytes", MaxAgentIDLen), id)
	}
	return validOptionalID(field, id)
}

func validOptionalID(field, id string) error {
	if id == "" {
		return nil
	}
	return store.ValidateID(field, id)
}

func (s TaskSpec) validate() error {
	if err := validTaskName("TaskSpec.Name", s.Name); err != nil {
		return err
	}
	if err := validText("TaskSpec.Description", s.Description); err != nil {
		return err
	}
	if len(s.Type) > MaxTaskTypeLen || strings.TrimSpace(s.Type) != s.Type {
		return store.Invalid("TaskSpec.Type", fmt.Sprintf("must be at most %d bytes without surrounding spaces", MaxTaskTypeLen), s.Type)
	}
	if len(s.Objectives) > MaxObjectives {
		return store.Invalid("TaskSpec.Objectives", fmt.Sprintf("holds %d objectives; at most %d are allowed", len(s.Objectives), MaxObjectives), nil)
	}
	for i, o := range s.Objectives {
		if strings.TrimSpace(o) == "" {
			return store.Invalid(fmt.Sprintf("TaskSpec.Objectives[%d]", i), "must describe the objective", nil)
		}
		if err := validText(fmt.Sprintf("TaskSpec.Objectives[%d]", i), o); err != nil {
			return err
		}
	}
	if s.Parent != "" {
		if err := store.ValidateBranchName("TaskSpec.Parent", s.Parent); err != nil {
			return err
		}
	}
	if len(s.Metadata) > store.MaxMetadataPairs {
		return store.Invalid("TaskSpec.Metadata", fmt.Sprintf("holds %d pairs; at most %d are allowed", len(s.Metadata), store.MaxMetadataPairs), nil)
	}
	return validActor("TaskSpec.CreatedBy", s.CreatedBy)
}

func taskNotFound(name string) string { return fmt.Sprintf("task %q", name) }

func objectiveDocID(task string, n int) string { return task + ":" + strconv.Itoa(n) }

func memberDocID(task, agent string) string { return task + ":" + agent }

// taskWrite encodes a task document; Objectives and Members live in their own.
func taskWrite(t Task, cond store.DocCond) (store.DocWrite, error) {
	t.Objectives, t.Members = nil, nil
	keys := map[string]string{"status": string(t.Status), "parent": t.Parent}
	if t.Type != "" {
		keys["type"] = t.Type
	}
	return docWrite(TaskCollection, t.Name, t, keys, cond, t.Version)
}

func objectiveWrite(o Objective, cond store.DocCond) (store.DocWrite, error) {
	o.Assignees = nil
	return docWrite(ObjectiveCollection, objectiveDocID(o.Task, o.ID), o,
		map[string]string{"task": o.Task, "status": string(o.Status)}, cond, o.Version)
}

func memberWrite(m Member, cond store.DocCond) (store.DocWrite, error) {
	return docWrite(MemberCollection, memberDocID(m.Task, m.Agent), m,
		map[string]string{"task": m.Task, "agent": m.Agent, "status": string(m.Status)}, cond, m.Version)
}

// readTask reads a task document alone.
func (e *Engine) readTask(ctx context.Context, name string) (Task, error) {
	var t Task
	v, err := readDoc(ctx, e.Store, TaskCollection, name, taskNotFound(name), &t)
	if err != nil {
		return Task{}, err
	}
	t.Version = v
	return t, nil
}

// activeTask reads a task that must be active.
func (e *Engine) activeTask(ctx context.Context, name string) (Task, error) {
	t, err := e.readTask(ctx, name)
	if err != nil {
		return Task{}, err
	}
	if t.Status != TaskActive {
		return Task{}, fmt.Errorf("%w: task %q was completed at %s; create another task", ErrTaskClosed, name, t.CompletedAt.Format(time.RFC3339))
	}
	return t, nil
}

// readMember reads one membership; found is false when the agent never joined.
func (e *Engine) readMember(ctx context.Context, task, agent string) (m Member, found bool, err error) {
	v, err := readDoc(ctx, e.Store, MemberCollection, memberDocID(task, agent), "member", &m)
	if errors.Is(err, store.ErrNotFound) {
		return Member{}, false, nil
	}
	if err != nil {
		return Member{}, false, err
	}
	m.Version = v
	return m, true, nil
}

// activeMember reads a membership that must be active.
func (e *Engine) activeMember(ctx context.Context, task, agent string) (Member, error) {
	m, found, err := e.readMember(ctx, task, agent)
	if err != nil {
		return Member{}, err
	}
	if !found || m.Status != MemberActive {
		return Member{}, fmt.Errorf("%w: agent %q on task %q; join the task first", ErrNotMember, agent, task)
	}
	return m, nil
}

func (e *Engine) readObjective(ctx context.Context, task string, n int) (Objective, error) {
	var o Objective
	v, err := readDoc(ctx, e.Store, ObjectiveCollection, objectiveDocID(task, n), fmt.Sprintf("objective %d of task %q", n, task), &o)
	if err != nil {
		return Objective{}, err
	}
	o.Version = v
	return o, nil
}

func (e *Engine) objectives(ctx context.Context, task string) ([]Objective, error) {
	os, err := listDocs(ctx, e.Store, store.DocQuery{Collection: ObjectiveCollection, Where: map[string]string{"task": task}},
		func(d store.Doc, o *Objective) { o.Version = d.Version })
	if err != nil {
		return nil, err
	}
	sort.Slice(os, func(i, j int) bool { return os[i].ID < os[j].ID })
	return os, nil
}

func (e *Engine) members(ctx context.Context, task string) ([]Member, error) {
	ms, err := listDocs(ctx, e.Store, store.DocQuery{Collection: MemberCollection, Where: map[string]string{"task": task}},
		func(d store.Doc, m *Member) { m.Version = d.Version })
	if err != nil {
		return nil, err
	}
	sort.SliceStable(ms, func(i, j int) bool {
		if !ms[i].JoinedAt.Equal(ms[j].JoinedAt) {
			return ms[i].JoinedAt.Before(ms[j].JoinedAt)
		}
		return ms[i].Agent < ms[j].Agent
	})
	return ms, nil
}

// fill reads a task's objectives and members into it and derives the assignees.
func (e *Engine) fill(ctx context.Context, t *Task) error {
	os, err := e.objectives(ctx, t.Name)
	if err != nil {
		return err
	}
	ms, err := e.members(ctx, t.Name)
	if err != nil {
		return err
	}
	for i := range os {
		for _, m := range ms {
			if m.Status == MemberActive && slices.Contains(m.Objectives, os[i].ID) {
				os[i].Assignees = append(os[i].Assignees, m.Agent)
			}
		}
		sort.Strings(os[i].Assignees)
	}
	t.Objectives, t.Members = os, ms
	return nil
}

// touch records activity on a task at now.
func touch(t *Task, now time.Time) {
	t.UpdatedAt, t.LastActivity = now, now
}

// CreateTask creates a task: its branch task/<name>, forked from spec.Parent's head,
// and its documents (the task, one per objective, the audit event) in one atomic
// batch. If the documents cannot be written, the branch is deleted again.
//
// Errors: a *store.ValidationError for a bad spec (a name that is not a valid branch
// segment, an empty objective...); ErrTaskExists when the task exists;
// store.ErrBranchExists when the branch task/<name> exists without a task;
// store.ErrBranchNotFound for an unknown parent; the store's and ctx's errors.
func (e *Engine) CreateTask(ctx context.Context, spec TaskSpec) (Task, error) {
	if err := e.check(); err != nil {
		return Task{}, err
	}
	if err := spec.validate(); err != nil {
		return Task{}, err
	}
	if spec.Parent == "" {
		spec.Parent = store.DefaultBranch
	}
	if _, err := e.readTask(ctx, spec.Name); err == nil {
		return Task{}, fmt.Errorf("%w: %q; pick another name", ErrTaskExists, spec.Name)
	} else if !errors.Is(err, store.ErrNotFound) {
		return Task{}, err
	}
	now := e.now()
	t := Task{
		Name: spec.Name, Description: spec.Description, Type: spec.Type, Status: TaskActive,
		Branch: TaskBranch(spec.Name), Parent: spec.Parent, CreatedBy: spec.CreatedBy,
		ObjectiveCount: len(spec.Objectives), Metadata: spec.Metadata,
		CreatedAt: now, UpdatedAt: now, LastActivity: now,
	}
	ws := make([]store.DocWrite, 0, len(spec.Objectives)+2)
	w, err := taskWrite(t, store.DocCreate)
	if err != nil {
		return Task{}, err
	}
	ws = append(ws, w)
	for i, d := range spec.Objectives {
		o := Objective{Task: t.Name, ID: i + 1, Description: d, Status: ObjectivePending, UpdatedAt: now}
		if w, err = objectiveWrite(o, store.DocCreate); err != nil {
			return Task{}, err
		}
		ws = append(ws, w)
		t.Objectives = append(t.Objectives, o)
	}
	if w, err = e.event(Event{Kind: EventTaskCreated, Task: t.Name, Actor: spec.CreatedBy, To: string(TaskActive), Note: spec.Description}); err != nil {
		return Task{}, err
	}
	ws = append(ws, w)
	if _, err := e.Store.CreateBranch(ctx, store.BranchSpec{
		Name: t.Branch, From: spec.Parent, Description: "task " + t.Name,
		Metadata: map[string]string{"task": t.Name},
	}); err != nil {
		return Task{}, fmt.Errorf("day1: creating the branch of task %q: %w", t.Name, err)
	}
	docs, err := e.writeDocs(ctx, ws)
	if err != nil {
		if errors.Is(err, store.ErrStale) {
			err = fmt.Errorf("%w: %q was created concurrently", ErrTaskExists, t.Name)
		}
		return Task{}, e.undoBranch(ctx, t.Branch, err)
	}
	t.Version = docs[0].Version
	for i := range t.Objectives {
		t.Objectives[i].Version = docs[i+1].Version
	}
	return t, nil
}

// undoBranch deletes a branch this call created, after cause made the call fail. It
// runs even when ctx is cancelled, so a cancelled call leaves nothing half done.
func (e *Engine) undoBranch(ctx context.Context, branch string, cause error) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), undoTimeout)
	defer cancel()
	if err := e.Store.DeleteBranch(ctx, branch); err != nil && !errors.Is(err, store.ErrBranchNotFound) {
		return fmt.Errorf("%w (deleting the branch %s it had created failed too: %v)", cause, branch, err)
	}
	return cause
}

// GetTask returns a task with its objectives and members. Errors: an error matching
// store.ErrNotFound for an unknown task; the store's and ctx's errors.
func (e *Engine) GetTask(ctx context.Context, name string) (Task, error) {
	if err := e.check(); err != nil {
		return Task{}, err
	}
	if err := validTaskName("name", name); err != nil {
		return Task{}, err
	}
	t, err := e.readTask(ctx, name)
	if err != nil {
		return Task{}, err
	}
	if err := e.fill(ctx, &t); err != nil {
		return Task{}, err
	}
	return t, nil
}

// ListTasks returns the tasks the filter selects, oldest first, each with its
// objectives and members. Errors: a *store.ValidationError for a bad filter; the
// store's and ctx's errors.
func (e *Engine) ListTasks(ctx context.Context, f TaskFilter) ([]Task, error) {
	if err := e.check(); err != nil {
		return nil, err
	}
	if f.Limit < 0 {
		return nil, store.Invalid("TaskFilter.Limit", "must not be negative (0 means every task)", f.Limit)
	}
	if f.Status != "" && f.Status != TaskActive && f.Status != TaskCompleted {
		return nil, store.Invalid("TaskFilter.Status", "must be empty, active or completed", f.Status)
	}
	ts, err := e.listTasks(ctx, f)
	if err != nil {
		return nil, err
	}
	for i := range ts {
		if err := e.fill(ctx, &ts[i]); err != nil {
			return nil, err
		}
	}
	return ts, nil
}

// listTasks returns the task documents a valid filter selects, oldest first, without
// their objectives and members.
func (e *Engine) listTasks(ctx context.Context, f TaskFilter) ([]Task, error) {
	where := map[string]string{}
	if f.Status != "" {
		where["status"] = string(f.Status)
	}
	if f.Type != "" {
		where["type"] = f.Type
	}
	if f.Parent != "" {
		where["parent"] = f.Parent
	}
	ts, err := listDocs(ctx, e.Store, store.DocQuery{Collection: TaskCollection, Where: where},
		func(d store.Doc, t *Task) { t.Version = d.Version })
	if err != nil {
		return nil, err
	}
	if f.Agent != "" {
		ms, err := listDocs[Member](ctx, e.Store, store.DocQuery{Collection: MemberCollection, Where: map[string]string{"agent": f.Agent}}, nil)
		if err != nil {
			return nil, err
		}
		joined := make(map[string]bool, len(ms))
		for _, m := range ms {
			joined[m.Task] = true
		}
		ts = slices.DeleteFunc(ts, func(t Task) bool { return !joined[t.Name] })
	}
	if f.Limit > 0 && len(ts) > f.Limit {
		ts = ts[:f.Limit]
	}
	return ts, nil
}

func (r JoinRequest) validate() error {
	if err := validTaskName("JoinRequest.Task", r.Task); err != nil {
		return err
	}
	if err := validAgent("JoinRequest.Agent", r.Agent); err != nil {
		return err
	}
	if err := validText("JoinRequest.Role", r.Role); err != nil {
		return err
	}
	return validOptionalID("JoinRequest.Session", r.Session)
}

// checkObjectives checks that every number names an objective of t and returns them
// sorted, each once.
func checkObjectives(field string, t Task, ns []int) ([]int, error) {
	out := make([]int, 0, len(ns))
	for i, n := range ns {
		if n < 1 || n > t.ObjectiveCount {
			reason := fmt.Sprintf("task %q has no objective %d; its objectives are numbered 1 to %d", t.Name, n, t.ObjectiveCount)
			if t.ObjectiveCount == 0 {
				reason = fmt.Sprintf("task %q has no objectives", t.Name)
			}
			return nil, store.Invalid(fmt.Sprintf("%s[%d]", field, i), reason, n)
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	sort.Ints(out)
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// ensureBranch creates branch from parent unless it exists; created reports whether
// this call created it.
func (e *Engine) ensureBranch(ctx context.Context, branch, parent, desc string, meta map[string]string) (created bool, err error) {
	if _, err := e.Store.GetBranch(ctx, branch); err == nil {
		return false, nil
	} else if !errors.Is(err, store.ErrBranchNotFound) {
		return false, err
	}
	_, err = e.Store.CreateBranch(ctx, store.BranchSpec{Name: branch, From: parent, Description: desc, Metadata: meta})
	if errors.Is(err, store.ErrBranchExists) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("day1: creating the branch %s: %w", branch, err)
	}
	return true, nil
}

// JoinTask adds an agent to an active task with a role and assigned objectives, on its
// own branch task/<task>/<agent> forked from the task's branch (kept if it exists
// already). The first agent to join becomes the task's Owner. An agent that left may
// join again; joining again while active with the same role and objectives returns the
// membership unchanged.
//
// Errors: a *store.ValidationError for bad input or an unknown objective; an error
// matching store.ErrNotFound for an unknown task; ErrTaskClosed for a completed task;
// an error matching store.ErrConflict when the agent is active with another role or
// other objectives; the store's and ctx's errors.
func (e *Engine) JoinTask(ctx context.Context, r JoinRequest) (Member, error) {
	if err := e.check(); err != nil {
		return Member{}, err
	}
	if err := r.validate(); err != nil {
		return Member{}, err
	}
	var out Member
	docs, err := e.update(ctx, func(b *batch) error {
		t, err := e.activeTask(ctx, r.Task)
		if err != nil {
			return err
		}
		objs, err := checkObjectives("JoinRequest.Objectives", t, r.Objectives)
		if err != nil {
			return err
		}
		m, found, err := e.readMember(ctx, r.Task, r.Agent)
		if err != nil {
			return err
		}
		if found && m.Status == MemberActive {
			if m.Role == r.Role && slices.Equal(m.Objectives, objs) {
				out = m
				return nil
			}
			return fmt.Errorf("day1: agent %q is already an active member of task %q as %q with objectives %v; leave the task first: %w",
				r.Agent, r.Task, m.Role, m.Objectives, store.ErrConflict)
		}
		now := e.now()
		cond := store.DocCreate
		if found {
			cond = store.DocMatch
		} else {
			m = Member{Task: r.Task, Agent: r.Agent, Branch: AgentBranch(r.Task, r.Agent), JoinedAt: now}
		}
		m.Role, m.Objectives, m.Status, m.Session = r.Role, objs, MemberActive, r.Session
		m.Summary, m.LeftAt, m.LastActivity = "", time.Time{}, now
		if t.Owner == "" {
			t.Owner = r.Agent
		}
		touch(&t, now)
		created, err := e.ensureBranch(ctx, m.Branch, t.Branch, "agent "+r.Agent+" on task "+r.Task,
			map[string]string{"task": r.Task, "agent": r.Agent})
		if err != nil {
			return err
		}
		b.undoing(m.Branch, created)
		b.put(memberWrite(m, cond))
		b.put(taskWrite(t, store.DocMatch))
		b.put(e.event(Event{Kind: EventAgentJoined, Task: r.Task, Actor: r.Agent, To: string(MemberActive), Note: r.Role}))
		out = m
		return nil
	})
	if err != nil {
		return Member{}, err
	}
	if len(docs) > 0 {
		out.Version = docs[0].Version
	}
	return out, nil
}

func (u ObjectiveUpdate) validate() error {
	if err := validTaskName("ObjectiveUpdate.Task", u.Task); err != nil {
		return err
	}
	if u.Objective < 1 {
		return store.Invalid("ObjectiveUpdate.Objective", "must be the objective's number, from 1", u.Objective)
	}
	if !u.Status.Valid() {
		return store.Invalid("ObjectiveUpdate.Status", oneOf(allObjectiveStatuses), string(u.Status))
	}
	if err := validActor("ObjectiveUpdate.By", u.By); err != nil {
		return err
	}
	return validText("ObjectiveUpdate.Note", u.Note)
}

// UpdateObjective changes the status of an objective of an active task, recording who
// changed it, when and why in its History and in the audit trail. Setting the status
// it has, without a note, changes nothing. When By is an active member, its activity
// is recorded too.
//
// Errors: a *store.ValidationError for bad input; an error matching store.ErrNotFound
// for an unknown task or objective; ErrTaskClosed for a completed task; the store's
// and ctx's errors.
func (e *Engine) UpdateObjective(ctx context.Context, u ObjectiveUpdate) (Objective, error) {
	if err := e.check(); err != nil {
		return Objective{}, err
	}
	if err := u.validate(); err != nil {
		return Objective{}, err
	}
	var out Objective
	docs, err := e.update(ctx, func(b *batch) error {
		t, err := e.activeTask(ctx, u.Task)
		if err != nil {
			return err
		}
		o, err := e.readObjective(ctx, u.Task, u.Objective)
		if err != nil {
			return err
		}
		if o.Status == u.Status && u.Note == "" {
			out = o
			return nil
		}
		now := e.now()
		o.History = append(o.History, ObjectiveChange{From: o.Status, To: u.Status, By: u.By, At: now, Note: u.Note})
		if len(o.History) > MaxObjectiveHistory {
			o.History = slices.Clone(o.History[len(o.History)-MaxObjectiveHistory:])
		}
		from := o.Status
		o.Status, o.UpdatedBy, o.UpdatedAt = u.Status, u.By, now
		touch(&t, now)
		b.put(objectiveWrite(o, store.DocMatch))
		b.put(taskWrite(t, store.DocMatch))
		b.put(e.event(Event{Kind: EventObjectiveUpdated, Task: u.Task, Actor: u.By, From: string(from), To: string(u.Status), Note: fmt.Sprintf("objective %d: %s", o.ID, u.Note)}))
		if u.By != "" {
			if m, found, err := e.readMember(ctx, u.Task, u.By); err != nil {
				return err
			} else if found && m.Status == MemberActive {
				m.LastActivity = now
				b.put(memberWrite(m, store.DocMatch))
			}
		}
		out = o
		return nil
	})
	if err != nil {
		return Objective{}, err
	}
	if len(docs) > 0 {
		out.Version = docs[0].Version
	}
	return out, nil
}

// LeaveTask records that an agent left a task, with a summary of what it did. Its
// branch is kept; it may join again. If it owned the task, the task has no owner
// until another agent joins or accepts a handoff.
//
// Errors: a *store.ValidationError for bad input; ErrNotMember (store.ErrNotFound)
// when the agent is not an active member; an error matching store.ErrNotFound for an
// unknown task; the store's and ctx's errors.
func (e *Engine) LeaveTask(ctx context.Context, r LeaveRequest) (Member, error) {
	if err := e.check(); err != nil {
		return Member{}, err
	}
	if err := validTaskName("LeaveRequest.Task", r.Task); err != nil {
		return Member{}, err
	}
	if err := validAgent("LeaveRequest.Agent", r.Agent); err != nil {
		return Member{}, err
	}
	if err := validText("LeaveRequest.Summary", r.Summary); err != nil {
		return Member{}, err
	}
	var out Member
	docs, err := e.update(ctx, func(b *batch) error {
		t, err := e.readTask(ctx, r.Task)
		if err != nil {
			return err
		}
		m, err := e.activeMember(ctx, r.Task, r.Agent)
		if err != nil {
			return err
		}
		now := e.now()
		m.Status, m.Summary, m.LeftAt, m.LastActivity = MemberLeft, r.Summary, now, now
		b.put(memberWrite(m, store.DocMatch))
		b.put(e.event(Event{Kind: EventAgentLeft, Task: r.Task, Actor: r.Agent, From: string(MemberActive), To: string(MemberLeft), Note: r.Summary}))
		if t.Status == TaskActive {
			if t.Owner == r.Agent {
				t.Owner = ""
			}
			touch(&t, now)
			b.put(taskWrite(t, store.DocMatch))
		}
		out = m
		return nil
	})
	if err != nil {
		return Member{}, err
	}
	out.Version = docs[0].Version
	return out, nil
}

// CompleteTask completes an active task with a result summary.
//
// With r.Merge, the task's verified knowledge is promoted to its parent branch by a
// cherry-pick merge (through Engine.Merger, so its gate applies) before the task is
// marked completed; the merge marks the task branch merged into its parent, and the
// facts it brings arrive with Status store.FactPromoted (merge.Request.Promote). What
// the task branch added since it was forked is sorted:
//
//   - a fact is promoted when it is live (not superseded or invalidated) and verified:
//     its Status is verified or promoted, or its Verification.Status is verified;
//   - a conversation is promoted, with its messages on the task branch, when it is
//     not invalidated and either verified or cherry-picked: one of its messages has a
//     non-empty PickedTo or carries MetaPickedFromMessage;
//   - everything else (unverified facts and conversations, observations, relations)
//     stays on the task branch, listed in Completion.Kept for facts and
//     conversations.
//
// Only the task branch is considered: an agent's work reaches it by a merge or a
// cherry-pick first. Nothing promotable means no merge. With r.Archive the branches of
// the task and its members are then archived.
//
// If the merge fails nothing changes and the task stays active. Two callers completing
// a task at once: one wins and the other gets ErrTaskClosed; the loser's merge, if it
// ran, copied the same records and changed no content.
//
// Errors: a *store.ValidationError for bad input; an error matching store.ErrNotFound
// for an unknown task; ErrTaskClosed for a completed task; the merge's errors
// (*store.MergeBlockedError when a gate refuses); the store's and ctx's errors. An
// archive failure after the task was completed is returned with the Completion.
func (e *Engine) CompleteTask(ctx context.Context, r CompleteRequest) (Completion, error) {
	if err := e.check(); err != nil {
		return Completion{}, err
	}
	if err := validTaskName("CompleteRequest.Task", r.Task); err != nil {
		return Completion{}, err
	}
	if err := validActor("CompleteRequest.By", r.By); err != nil {
		return Completion{}, err
	}
	if err := validText("CompleteRequest.ResultSummary", r.ResultSummary); err != nil {
		return Completion{}, err
	}
	t, err := e.activeTask(ctx, r.Task)
	if err != nil {
		return Completion{}, err
	}
	var res Completion
	if r.Merge {
		promoted, kept, err := e.promotable(ctx, t)
		if err != nil {
			return Completion{}, err
		}
		res.Promoted, res.Kept = promoted, kept
		if len(promoted) > 0 {
			mr, err := e.merger().Merge(ctx, merge.Request{
				Source: t.Branch, Target: t.Parent, Strategy: store.CherryPick, Pick: promoted, Promote: true,
				MarkMerged: t.Branch != store.DefaultBranch, MergedBy: r.By, Message: fmt.Sprintf("complete task %s: promote verified knowledge", t.Name),
			})
			if err != nil {
				return Completion{}, err
			}
			res.Merge = &mr
		}
	}
	docs, err := e.update(ctx, func(b *batch) error {
		cur, err := e.activeTask(ctx, r.Task)
		if err != nil {
			return err
		}
		now := e.now()
		cur.Status, cur.ResultSummary, cur.CompletedBy, cur.CompletedAt = TaskCompleted, r.ResultSummary, r.By, now
		if res.Merge != nil {
			cur.MergeID = res.Merge.Record.ID
		}
		touch(&cur, now)
		b.put(taskWrite(cur, store.DocMatch))
		b.put(e.event(Event{Kind: EventTaskCompleted, Task: r.Task, Actor: r.By, From: string(TaskActive), To: string(TaskCompleted), Note: r.ResultSummary}))
		res.Task = cur
		return nil
	})
	if err != nil {
		return Completion{}, err
	}
	res.Task.Version = docs[0].Version
	if err := e.fill(ctx, &res.Task); err != nil {
		return res, err
	}
	if r.Archive {
		branches := []string{res.Task.Branch}
		for _, m := range res.Task.Members {
			branches = append(branches, m.Branch)
		}
		for _, b := range branches {
			if _, err := e.Store.SetBranchStatus(ctx, b, store.BranchArchived); err != nil && !errors.Is(err, store.ErrBranchNotFound) {
				return res, fmt.Errorf("day1: task %q was completed, but archiving its branch %s failed: %w", r.Task, b, err)
			}
		}
	}
	return res, nil
}

// promotable sorts what the task branch added since its fork into what a completion
// promotes and what it keeps; see CompleteTask. Both lists are sorted by kind, then id.
func (e *Engine) promotable(ctx context.Context, t Task) (promoted, kept []store.Ref, err error) {
	d, err := store.DiffLean(ctx, e.Store, t.Branch, t.Parent)
	if err != nil {
		return nil, nil, fmt.Errorf("day1: listing what task %q added: %w", t.Name, err)
	}
	convs := map[string]store.Conversation{}
	msgs := map[string][]store.Message{}
	for _, ch := range d.SourceChanges {
		switch r := ch.After.(type) {
		case store.Fact:
			if r.IsVerified() {
				promoted = append(promoted, ch.Ref)
			} else {
				kept = append(kept, ch.Ref)
			}
		case store.Conversation:
			convs[r.ID] = r
		case store.Message:
			msgs[r.ConversationID] = append(msgs[r.ConversationID], r)
		}
	}
	for id, c := range convs {
		ref := store.Ref{Kind: store.KindConversation, ID: id}
		if c.Verify.Status == store.Invalidated || (c.Verify.Status != store.Verified && !anyPicked(msgs[id])) {
			kept = append(kept, ref)
			continue
		}
		promoted = append(promoted, ref)
		for _, m := range msgs[id] {
			promoted = append(promoted, store.Ref{Kind: store.KindMessage, ID: m.ID})
		}
	}
	sortRefs(promoted)
	sortRefs(kept)
	return promoted, kept, nil
}

// anyPicked reports whether a message was cherry-picked, to or from somewhere.
func anyPicked(ms []store.Message) bool {
	return slices.ContainsFunc(ms, store.Message.Picked)
}

func sortRefs(rs []store.Ref) {
	kind := func(k store.Kind) int { return slices.Index(store.Kinds, k) }
	sort.Slice(rs, func(i, j int) bool {
		if rs[i].Kind != rs[j].Kind {
			return kind(rs[i].Kind) < kind(rs[j].Kind)
		}
		return rs[i].ID < rs[j].ID
	})
}
