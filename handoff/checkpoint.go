package handoff

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sort"
	"time"

	"github.com/day1ai/day1/store"
)

// Checkpoint is a frozen context of a task saved by one of its agents, without any
// change of ownership: the point an agent resumes from after a crash, and a sign of
// life for stall detection.
type Checkpoint struct {
	ID      string `json:"id"`
	Task    string `json:"task"`
	Agent   string `json:"agent"`
	Session string `json:"session,omitempty"`
	Note    string `json:"note,omitempty"`
	// Branch is the agent's branch, where it resumes.
	Branch string `json:"branch"`
	// Packet is the context when the checkpoint was taken: every conversation,
	// unverified facts included, recent errors and blockers.
	Packet    Packet            `json:"packet"`
	Metadata  map[string]string `json:"metadata,omitempty"`
	CreatedAt time.Time         `json:"created_at"`
}

// CheckpointRequest asks for a checkpoint.
type CheckpointRequest struct {
	// Task is the task's name. Required; the task must be active.
	Task string
	// Agent is the agent saving its progress, an active member of the task.
	// Required.
	Agent string
	// Session is the agent's session. Optional.
	Session string
	// Note says where the agent stands.
	Note string
	// Blockers the agent knows of, carried in the packet.
	Blockers []string
	// Limits bound the packet; the zero value means the defaults.
	Limits   Limits
	Metadata map[string]string
}

// CheckpointFilter selects checkpoints. Zero fields match everything.
type CheckpointFilter struct {
	Task  string
	Agent string
	// Limit keeps the newest Limit checkpoints; 0 means all.
	Limit int
}

// ResumeRequest asks to resume a task from its latest checkpoint.
type ResumeRequest struct {
	// Task is the task's name. Required; the task must be active.
	Task string
	// Agent selects the agent's latest checkpoint. Empty: the task's latest, and the
	// agent that saved it resumes.
	Agent string
	// Session is the resuming session. Optional.
	Session string
}

// Resumption is what ResumeFromCheckpoint returns.
type Resumption struct {
	// Checkpoint is the checkpoint resumed from; its Packet is the context.
	Checkpoint Checkpoint
	// Member is the agent's membership, active again.
	Member Member
}

// StallQuery asks which tasks and agents have gone quiet.
type StallQuery struct {
	// Idle is how long without activity, checkpoint or write makes a stall. Required;
	// must be positive.
	Idle time.Duration
	// Task limits the search to one task. Default: every active task.
	Task string
}

// Stall is a task, or an agent of a task, that has shown no sign of life for longer
// than StallQuery.Idle.
type Stall struct {
	Task string `json:"task"`
	// Agent is empty for the task as a whole.
	Agent string `json:"agent,omitempty"`
	// LastActivity is the last recorded change (join, objective, handoff...),
	// LastCheckpoint the last checkpoint (zero if none) and LastWrite the newest record
	// written to the branch (zero if none).
	LastActivity   time.Time `json:"last_activity"`
	LastCheckpoint time.Time `json:"last_checkpoint,omitzero"`
	LastWrite      time.Time `json:"last_write,omitzero"`
	// Idle is how long since the latest of the three.
	Idle time.Duration `json:"idle"`
}

func checkpointWrite(c Checkpoint) (store.DocWrite, error) {
	return docWrite(CheckpointCollection, c.ID, c, map[string]string{"task": c.Task, "agent": c.Agent}, store.DocCreate, 0)
}

// Checkpoint saves an agent's progress on a task: it freezes the task's context (every
// conversation, unverified facts, recent errors) in a checkpoint document, and
// records the checkpoint on the task and the member, with an audit event, in one
// atomic batch. Ownership does not change.
//
// Errors: a *store.ValidationError for bad input; an error matching
// store.ErrNotFound for an unknown task; ErrTaskClosed; ErrNotMember; the store's and
// ctx's errors.
func (e *Engine) Checkpoint(ctx context.Context, r CheckpointRequest) (Checkpoint, error) {
	if err := e.check(); err != nil {
		return Checkpoint{}, err
	}
	if err := validTaskName("CheckpointRequest.Task", r.Task); err != nil {
		return Checkpoint{}, err
	}
	if err := validAgent("CheckpointRequest.Agent", r.Agent); err != nil {
		return Checkpoint{}, err
	}
	if err := validOptionalID("CheckpointRequest.Session", r.Session); err != nil {
		return Checkpoint{}, err
	}
	if err := validGuidance("CheckpointRequest", r.Note, "", r.Blockers); err != nil {
		return Checkpoint{}, err
	}
	if err := r.Limits.Validate("CheckpointRequest.Limits"); err != nil {
		return Checkpoint{}, err
	}
	if len(r.Metadata) > store.MaxMetadataPairs {
		return Checkpoint{}, store.Invalid("CheckpointRequest.Metadata", fmt.Sprintf("holds %d pairs; at most %d are allowed", len(r.Metadata), store.MaxMetadataPairs), nil)
	}
	t, err := e.GetTask(ctx, r.Task)
	if err != nil {
		return Checkpoint{}, err
	}
	if t.Status != TaskActive {
		return Checkpoint{}, fmt.Errorf("%w: task %q", ErrTaskClosed, r.Task)
	}
	if _, err := e.activeMember(ctx, r.Task, r.Agent); err != nil {
		return Checkpoint{}, err
	}
	c := Checkpoint{
		ID: e.newID(), Task: r.Task, Agent: r.Agent, Session: r.Session, Note: r.Note,
		Branch: AgentBranch(r.Task, r.Agent), Metadata: maps.Clone(r.Metadata),
	}
	c.Packet, err = e.buildPacket(ctx, t, packetSpec{
		from: r.Agent, typ: TypeCheckpoint,
		scope:             Scope{Core: TypeCheckpoint, AllConversations: true, FailedAttempts: true, Receiver: ReceiverNone},
		includeUnverified: true, instructions: r.Note, blockers: r.Blockers, limits: r.Limits,
	})
	if err != nil {
		return Checkpoint{}, err
	}
	_, err = e.update(ctx, func(b *batch) error {
		t, err := e.activeTask(ctx, r.Task)
		if err != nil {
			return err
		}
		m, err := e.activeMember(ctx, r.Task, r.Agent)
		if err != nil {
			return err
		}
		now := e.now()
		c.CreatedAt = now
		touch(&t, now)
		t.LastCheckpoint = now
		m.LastActivity, m.LastCheckpoint = now, now
		if r.Session != "" {
			m.Session = r.Session
		}
		b.put(checkpointWrite(c))
		b.put(taskWrite(t, store.DocMatch))
		b.put(memberWrite(m, store.DocMatch))
		b.put(e.event(Event{Kind: EventCheckpoint, Task: r.Task, Actor: r.Agent, To: c.ID, Note: r.Note}))
		return nil
	})
	if err != nil {
		return Checkpoint{}, err
	}
	return c, nil
}

// ListCheckpoints returns the checkpoints the filter selects, newest first. Errors: a
// *store.ValidationError for a negative Limit; the store's and ctx's errors.
func (e *Engine) ListCheckpoints(ctx context.Context, f CheckpointFilter) ([]Checkpoint, error) {
	if err := e.check(); err != nil {
		return nil, err
	}
	if f.Limit < 0 {
		return nil, store.Invalid("CheckpointFilter.Limit", "must not be negative (0 means all)", f.Limit)
	}
	where := map[string]string{}
	if f.Task != "" {
		where["task"] = f.Task
	}
	if f.Agent != "" {
		where["agent"] = f.Agent
	}
	// The store orders by commit time and limits, so the latest checkpoint costs one
	// document, not the task's whole history.
	return listDocs[Checkpoint](ctx, e.Store, store.DocQuery{Collection: CheckpointCollection, Where: where, Desc: true, Limit: f.Limit}, nil)
}

// ResumeFromCheckpoint picks up a task after a crash: it returns the latest
// checkpoint (of r.Agent, or of the task), makes the agent an active member again
// with r.Session, recreates its branch from the task's branch if it is gone, and
// records the resumption, in one atomic batch.
//
// Errors: a *store.ValidationError for bad input; an error matching
// store.ErrNotFound for an unknown task or when no checkpoint exists; ErrTaskClosed;
// the store's and ctx's errors.
func (e *Engine) ResumeFromCheckpoint(ctx context.Context, r ResumeRequest) (Resumption, error) {
	if err := e.check(); err != nil {
		return Resumption{}, err
	}
	if err := validTaskName("ResumeRequest.Task", r.Task); err != nil {
		return Resumption{}, err
	}
	if r.Agent != "" {
		if err := validAgent("ResumeRequest.Agent", r.Agent); err != nil {
			return Resumption{}, err
		}
	}
	if err := validOptionalID("ResumeRequest.Session", r.Session); err != nil {
		return Resumption{}, err
	}
	if _, err := e.activeTask(ctx, r.Task); err != nil {
		return Resumption{}, err
	}
	cs, err := e.ListCheckpoints(ctx, CheckpointFilter{Task: r.Task, Agent: r.Agent, Limit: 1})
	if err != nil {
		return Resumption{}, err
	}
	if len(cs) == 0 {
		who := ""
		if r.Agent != "" {
			who = " by agent " + r.Agent
		}
		return Resumption{}, fmt.Errorf("day1: task %q has no checkpoint%s; take one with Checkpoint: %w", r.Task, who, store.ErrNotFound)
	}
	res := Resumption{Checkpoint: cs[0]}
	agent := res.Checkpoint.Agent
	docs, err := e.update(ctx, func(b *batch) error {
		t, err := e.activeTask(ctx, r.Task)
		if err != nil {
			return err
		}
		m, found, err := e.readMember(ctx, r.Task, agent)
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("day1: agent %q of the checkpoint has no membership of task %q: %w", agent, r.Task, store.ErrNotFound)
		}
		created, err := e.ensureBranch(ctx, m.Branch, t.Branch, "agent "+agent+" on task "+r.Task,
			map[string]string{"task": r.Task, "agent": agent})
		if err != nil {
			return err
		}
		b.undoing(m.Branch, created)
		now := e.now()
		from := m.Status
		m.Status, m.LeftAt, m.LastActivity = MemberActive, time.Time{}, now
		if r.Session != "" {
			m.Session = r.Session
		}
		touch(&t, now)
		b.put(memberWrite(m, store.DocMatch))
		b.put(taskWrite(t, store.DocMatch))
		b.put(e.event(Event{Kind: EventCheckpointUsed, Task: r.Task, Actor: agent, From: string(from), To: string(MemberActive), Note: res.Checkpoint.ID}))
		res.Member = m
		return nil
	})
	if err != nil {
		return Resumption{}, err
	}
	res.Member.Version = docs[0].Version
	return res, nil
}

// lastWrite returns the creation time of the newest record a branch shows.
func (e *Engine) lastWrite(ctx context.Context, branch string) (time.Time, error) {
	var last time.Time
	for _, k := range store.Kinds {
		rs, err := e.Store.List(ctx, store.View{Branch: branch}, store.ListQuery{Kind: k, Order: store.OrderCreated, Desc: true, Limit: 1})
		if errors.Is(err, store.ErrBranchNotFound) {
			return time.Time{}, nil
		}
		if err != nil {
			return time.Time{}, err
		}
		if len(rs) > 0 && rs[0].RecordTime().After(last) {
			last = rs[0].RecordTime()
		}
	}
	return last, nil
}

func latest(ts ...time.Time) time.Time {
	var l time.Time
	for _, t := range ts {
		if t.After(l) {
			l = t
		}
	}
	return l
}

// StalledTasks lists the active tasks, and the active agents of active tasks, that
// have shown no sign of life for at least q.Idle at the Engine's clock: no recorded
// activity (join, objective change, handoff, checkpoint...) and no record written to
// their branch. A task's signs of life include its agents'. The result is sorted by
// task, the task itself before its agents, then by agent.
//
// Errors: a *store.ValidationError for a non-positive Idle or a bad task name; an
// error matching store.ErrNotFound for an unknown task; the store's and ctx's errors.
func (e *Engine) StalledTasks(ctx context.Context, q StallQuery) ([]Stall, error) {
	if err := e.check(); err != nil {
		return nil, err
	}
	if q.Idle <= 0 {
		return nil, store.Invalid("StallQuery.Idle", "must be a positive duration", q.Idle)
	}
	// Only members are read: a stall does not depend on a task's objectives.
	var tasks []Task
	if q.Task != "" {
		if err := validTaskName("name", q.Task); err != nil {
			return nil, err
		}
		t, err := e.readTask(ctx, q.Task)
		if err != nil {
			return nil, err
		}
		if t.Status == TaskActive {
			tasks = []Task{t}
		}
	} else {
		var err error
		if tasks, err = e.listTasks(ctx, TaskFilter{Status: TaskActive}); err != nil {
			return nil, err
		}
	}
	now := e.now()
	var out []Stall
	for _, t := range tasks {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		members, err := e.members(ctx, t.Name)
		if err != nil {
			return nil, err
		}
		tw, err := e.lastWrite(ctx, t.Branch)
		if err != nil {
			return nil, err
		}
		ts := Stall{Task: t.Name, LastActivity: t.LastActivity, LastCheckpoint: t.LastCheckpoint, LastWrite: tw}
		var agents []Stall
		for _, m := range members {
			if m.Status != MemberActive {
				continue
			}
			mw, err := e.lastWrite(ctx, m.Branch)
			if err != nil {
				return nil, err
			}
			s := Stall{Task: t.Name, Agent: m.Agent, LastActivity: m.LastActivity, LastCheckpoint: m.LastCheckpoint, LastWrite: mw}
			s.Idle = now.Sub(latest(s.LastActivity, s.LastCheckpoint, s.LastWrite))
			ts.LastActivity = latest(ts.LastActivity, m.LastActivity)
			ts.LastWrite = latest(ts.LastWrite, mw)
			if s.Idle >= q.Idle {
				agents = append(agents, s)
			}
		}
		ts.Idle = now.Sub(latest(ts.LastActivity, ts.LastCheckpoint, ts.LastWrite))
		if ts.Idle >= q.Idle {
			out = append(out, ts)
		}
		out = append(out, agents...)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Task != out[j].Task {
			return out[i].Task < out[j].Task
		}
		return out[i].Agent < out[j].Agent
	})
	return out, nil
}
