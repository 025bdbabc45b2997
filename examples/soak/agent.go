package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/day1ai/day1"
)

// soak is one run: the client, the model, the figures.
type soak struct {
	c         *day1.Client
	m         *model
	st        *stats
	agents    int
	deadline  time.Time
	opTimeout time.Duration
	// churnEvery is the least time between two task changes of one agent.
	churnEvery time.Duration
	// mainMu makes merges into main, and forks from it, run one at a time in a known
	// order. The merge engine queues merges into one target anyway; holding this
	// across the call also orders the model's updates of main.
	mainMu sync.Mutex

	faultMu   sync.Mutex
	faultErrs []string
	tasksMu   sync.Mutex
	taskBorn  map[string]time.Time // task -> when it was created
}

// born records when a task was created.
func (s *soak) born(task string) {
	s.tasksMu.Lock()
	defer s.tasksMu.Unlock()
	if s.taskBorn == nil {
		s.taskBorn = map[string]time.Time{}
	}
	s.taskBorn[task] = time.Now()
}

// age returns how long ago a task was created.
func (s *soak) age(task string) time.Duration {
	s.tasksMu.Lock()
	defer s.tasksMu.Unlock()
	return time.Since(s.taskBorn[task])
}

// agent is one worker. Its branches are its own: no other agent writes them while it
// holds them, so the model of each is exact.
type agent struct {
	s     *soak
	id    string
	n     int
	rng   *rand.Rand
	work  []string          // the branches it works on
	tasks map[string]string // branch -> task
	last  map[string]day1.Fact
	ntask int
	seq   int
	// lastChurn is when the agent last created, handed off or completed a task: it
	// does so at most once per soak.churnEvery, so that a long run keeps a bounded
	// number of branches.
	lastChurn time.Time
}

// churn reports whether the agent may create, hand off or complete a task now, and if
// so starts the wait for the next time.
func (a *agent) churn() bool {
	if time.Since(a.lastChurn) < a.s.churnEvery {
		return false
	}
	a.lastChurn = time.Now()
	return true
}

func newAgent(s *soak, n int, seed uint64) *agent {
	return &agent{s: s, id: fmt.Sprintf("a%d", n), n: n, rng: rand.New(rand.NewPCG(seed, uint64(n))),
		tasks: map[string]string{}, last: map[string]day1.Fact{}}
}

// run does every operation once, waits until every agent has, works at random until
// the deadline or until ctx ends, and finally accepts the handoffs offered to it.
func (a *agent) run(ctx context.Context, ready *sync.WaitGroup) {
	a.prologue(ctx)
	ready.Done()
	ready.Wait()
	for step := 0; time.Now().Before(a.s.deadline) && ctx.Err() == nil; step++ {
		a.step(ctx, step)
	}
	a.acceptPending(ctx)
}

// prologue does every operation once, whatever the deadline, so that a short run
// covers them all: a task with one record of each kind, an update, a repeat, a search,
// a diff and a merge, a second task that the agent completes, and a third that it
// hands on (with two agents or more; the handoffs are accepted after every agent's
// prologue).
func (a *agent) prologue(ctx context.Context) {
	a.lastChurn = time.Now()
	if a.newTask(ctx); len(a.work) == 0 {
		return
	}
	b := a.work[0]
	a.writeFact(ctx, b, nil)
	a.writeObservation(ctx, b, nil)
	a.writeRelation(ctx, b)
	a.writeConversation(ctx, b)
	a.appendMessage(ctx, b)
	a.updateFact(ctx, b)
	a.repeatWrite(ctx, b)
	a.search(ctx, b)
	a.diff(ctx, b)
	a.merge(ctx, b, day1.DefaultBranch, true)
	if a.newTask(ctx); len(a.work) > 1 {
		a.completeTask(ctx, a.work[0])
	}
	if a.s.agents > 1 {
		if a.newTask(ctx); len(a.work) > 1 {
			a.handoff(ctx, a.work[len(a.work)-1])
		}
	}
}

// step does one operation, chosen at random with fixed weights.
func (a *agent) step(ctx context.Context, step int) {
	if len(a.work) == 0 {
		a.newTask(ctx)
		return
	}
	if step%8 == 7 {
		a.acceptPending(ctx)
	}
	b := a.work[a.rng.IntN(len(a.work))]
	switch r := a.rng.IntN(100); {
	case r < 18:
		a.writeFact(ctx, b, nil)
	case r < 30:
		a.writeObservation(ctx, b, nil)
	case r < 38:
		a.writeRelation(ctx, b)
	case r < 42:
		a.writeConversation(ctx, b)
	case r < 54:
		a.appendMessage(ctx, b)
	case r < 62:
		a.updateFact(ctx, b)
	case r < 65:
		a.repeatWrite(ctx, b)
	case r < 76:
		a.search(ctx, b)
	case r < 82:
		a.diff(ctx, b)
	case r < 89:
		a.merge(ctx, b, day1.DefaultBranch, true)
	case r < 91 && a.s.agents > 1 && a.churn():
		// A task lives for a few task changes; then its holder completes it.
		if a.s.age(a.tasks[b]) < 8*a.s.churnEvery {
			a.handoff(ctx, b)
		} else {
			a.completeTask(ctx, b)
		}
	case r < 93 && len(a.work) < 3 && a.churn():
		a.newTask(ctx)
	case r < 95 && len(a.work) > 1 && a.churn():
		a.completeTask(ctx, a.work[0])
	default:
		a.writeFact(ctx, b, nil)
	}
	if len(a.work) > 3 {
		a.completeTask(ctx, a.work[0])
	}
}

// do runs one operation with the soak's time limit and records it; a fault's message
// is kept for the report.
func (a *agent) do(ctx context.Context, op string, f func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, a.s.opTimeout)
	defer cancel()
	err := a.s.st.time(op, func() error { return f(ctx) })
	if err != nil && !expectedKinds[errorKind(err)] {
		a.s.faultMu.Lock()
		a.s.faultErrs = keepFirst(a.s.faultErrs, 20, fmt.Sprintf("%s by %s: %v", op, a.id, err))
		a.s.faultMu.Unlock()
	}
	return err
}

func (a *agent) next() int {
	a.seq++
	return a.seq
}

// word returns a word no other record's text holds: letters only, so that every
// tokenizer keeps it whole.
func (a *agent) word(k int) string {
	n := uint64(a.n)<<32 | uint64(k)
	b := []byte("zq")
	for {
		b = append(b, byte('a'+n%26))
		n /= 26
		if n == 0 {
			break
		}
	}
	return string(b)
}

var topics = []string{
	"token refresh retries with backoff", "cache invalidation after deploy", "database connection pool limits",
	"flaky integration test timing", "rate limiter configuration", "schema migration ordering",
	"memory growth in the worker", "retry budget for the payment call", "log sampling in production",
}

// checkWritten reports a write whose outcome or stored content is not what was sent.
func (a *agent) checkWritten(op, branch string, sent day1.Record, got day1.Record, outcome, want day1.Outcome) {
	if outcome != want {
		a.s.m.mismatch("%s on %s: %s %s was %s, want %s", op, branch, sent.RecordKind(), sent.RecordID(), outcome, want)
	}
	if content(got) != content(sent) {
		a.s.m.mismatch("%s on %s: %s %s stored as %q, sent %q", op, branch, sent.RecordKind(), sent.RecordID(), content(got), content(sent))
	}
}

// writeFact writes a new fact; with raced set, it is a write racing a merge and its
// content goes there.
func (a *agent) writeFact(ctx context.Context, branch string, raced map[day1.Ref]string) {
	k := a.next()
	w := a.word(k)
	f := day1.Fact{ID: fmt.Sprintf("%s-f%d", a.id, k), Branch: branch, Category: "soak", Confidence: 0.8, Status: day1.FactActive,
		AgentID: a.id, Metadata: map[string]string{"v": "1"},
		Text: fmt.Sprintf("%s found %s: %s", a.id, topics[k%len(topics)], w)}
	var res day1.Written[day1.Fact]
	if err := a.do(ctx, "write fact", func(ctx context.Context) (err error) {
		res, err = a.s.c.WriteFact(ctx, f)
		return err
	}); err != nil {
		a.s.m.failed(branch, f)
		return
	}
	a.checkWritten("write fact", branch, f, res.Record, res.Outcome, day1.Created)
	a.s.m.wrote(branch, res.Record)
	if raced != nil {
		raced[day1.Ref{Kind: day1.KindFact, ID: f.ID}] = content(res.Record)
	}
	a.last[branch] = f
}

// updateFact writes a new version of a fact the branch holds: one of the agent's or
// one of the facts every agent shares from main.
func (a *agent) updateFact(ctx context.Context, branch string) {
	id, ok := a.s.m.pickFact(branch, a.rng.IntN(1<<30))
	if !ok {
		a.writeFact(ctx, branch, nil)
		return
	}
	k := a.next()
	w := a.word(k)
	f := day1.Fact{ID: id, Branch: branch, Category: "soak", Confidence: 0.9, Status: day1.FactActive, AgentID: a.id,
		Metadata: map[string]string{"v": strconv.Itoa(k)},
		Text:     fmt.Sprintf("%s revised %s on %s: %s", a.id, id, topics[k%len(topics)], w)}
	var res day1.Written[day1.Fact]
	if err := a.do(ctx, "update fact", func(ctx context.Context) (err error) {
		res, err = a.s.c.WriteFact(ctx, f)
		return err
	}); err != nil {
		a.s.m.failed(branch, f)
		return
	}
	a.checkWritten("update fact", branch, f, res.Record, res.Outcome, day1.Updated)
	a.s.m.wrote(branch, res.Record)
	a.last[branch] = f
}

// repeatWrite writes the branch's last fact again, unchanged: deduplicated, and
// nothing changes.
func (a *agent) repeatWrite(ctx context.Context, branch string) {
	f, ok := a.last[branch]
	if !ok {
		a.writeFact(ctx, branch, nil)
		return
	}
	var res day1.Written[day1.Fact]
	if err := a.do(ctx, "repeat write", func(ctx context.Context) (err error) {
		res, err = a.s.c.WriteFact(ctx, f)
		return err
	}); err == nil {
		a.checkWritten("repeat write", branch, f, res.Record, res.Outcome, day1.Deduplicated)
	}
}

var obsTypes = []day1.ObservationType{day1.ObsToolUse, day1.ObsDiscovery, day1.ObsDecision, day1.ObsError, day1.ObsInsight}

func (a *agent) writeObservation(ctx context.Context, branch string, raced map[day1.Ref]string) {
	k := a.next()
	o := day1.Observation{ID: fmt.Sprintf("%s-o%d", a.id, k), Branch: branch, AgentID: a.id, Type: obsTypes[k%len(obsTypes)],
		Tool: "bash", Metadata: map[string]string{"v": "1"},
		Summary: fmt.Sprintf("%s ran the checks for %s: %s", a.id, topics[k%len(topics)], a.word(k))}
	var res day1.Written[day1.Observation]
	if err := a.do(ctx, "write observation", func(ctx context.Context) (err error) {
		res, err = a.s.c.WriteObservation(ctx, o)
		return err
	}); err != nil {
		a.s.m.failed(branch, o)
		return
	}
	a.checkWritten("write observation", branch, o, res.Record, res.Outcome, day1.Created)
	a.s.m.wrote(branch, res.Record)
	if raced != nil {
		raced[day1.Ref{Kind: day1.KindObservation, ID: o.ID}] = content(res.Record)
	}
}

func (a *agent) writeRelation(ctx context.Context, branch string) {
	k := a.next()
	r := day1.Relation{ID: fmt.Sprintf("%s-r%d", a.id, k), Branch: branch, AgentID: a.id, Confidence: 0.7,
		Source: fmt.Sprintf("service-%d", k%7), Target: fmt.Sprintf("service-%d", (k+3)%7), Type: "calls",
		Properties: map[string]string{"by": a.id, "k": strconv.Itoa(k)}}
	var res day1.Written[day1.Relation]
	if err := a.do(ctx, "write relation", func(ctx context.Context) (err error) {
		res, err = a.s.c.WriteRelation(ctx, r)
		return err
	}); err != nil {
		a.s.m.failed(branch, r)
		return
	}
	a.checkWritten("write relation", branch, r, res.Record, res.Outcome, day1.Created)
	a.s.m.wrote(branch, res.Record)
}

func (a *agent) writeConversation(ctx context.Context, branch string) {
	k := a.next()
	cv := day1.Conversation{ID: fmt.Sprintf("%s-c%d", a.id, k), Branch: branch, AgentID: a.id,
		Title: fmt.Sprintf("%s on %s", a.id, topics[k%len(topics)]), Metadata: map[string]string{"v": "1"}}
	var res day1.Written[day1.Conversation]
	if err := a.do(ctx, "write conversation", func(ctx context.Context) (err error) {
		res, err = a.s.c.WriteConversation(ctx, cv)
		return err
	}); err != nil {
		a.s.m.failed(branch, cv)
		return
	}
	a.checkWritten("write conversation", branch, cv, res.Record, res.Outcome, day1.Created)
	a.s.m.wrote(branch, res.Record)
}

var roles = []day1.Role{day1.RoleUser, day1.RoleAssistant}

// appendMessage appends to a conversation of the branch; the Client numbers it, one
// after the conversation's last message.
func (a *agent) appendMessage(ctx context.Context, branch string) {
	conv, last, ok := a.s.m.pickConv(branch, a.rng.IntN(1<<30))
	if !ok {
		a.writeConversation(ctx, branch)
		return
	}
	k := a.next()
	msg := day1.Message{ID: fmt.Sprintf("%s-m%d", a.id, k), Branch: branch, ConversationID: conv, Role: roles[k%2], AgentID: a.id,
		Content: fmt.Sprintf("%s says: look at %s (%s)", a.id, topics[k%len(topics)], a.word(k))}
	var res day1.Written[day1.Message]
	if err := a.do(ctx, "append message", func(ctx context.Context) (err error) {
		res, err = a.s.c.AppendMessage(ctx, msg)
		return err
	}); err != nil {
		a.s.m.failed(branch, msg)
		return
	}
	sent := msg
	sent.Seq = last + 1
	a.checkWritten("append message", branch, sent, res.Record, res.Outcome, day1.Created)
	a.s.m.wrote(branch, res.Record)
}

// search runs a keyword search for the word only one of the agent's facts holds, which
// must find it, or a hybrid search on a topic; every hit must be on the branch as the
// model has it.
func (a *agent) search(ctx context.Context, branch string) {
	q := day1.SearchQuery{Branch: branch, Limit: 10}
	var want string
	if f, ok := a.last[branch]; ok && a.rng.IntN(2) == 0 {
		// The fact's text ends with its word.
		q.Text, q.Mode, want = f.Text[strings.LastIndexByte(f.Text, ' ')+1:], day1.Keyword, f.ID
		if c := a.s.m.content(branch, day1.Ref{Kind: day1.KindFact, ID: f.ID}); c != content(f) {
			want = "" // changed since; the model does not know its word
		}
	} else {
		q.Text = topics[a.rng.IntN(len(topics))]
	}
	var hits []day1.Hit
	if err := a.do(ctx, "search", func(ctx context.Context) (err error) {
		hits, err = a.s.c.Search(ctx, q)
		return err
	}); err != nil {
		return
	}
	a.s.m.checkHits(branch, q.Text, hits)
	if want != "" && !slices.ContainsFunc(hits, func(h day1.Hit) bool { return h.Record.RecordID() == want }) {
		a.s.m.mismatch("keyword search %q on %s did not find fact %s, the only one holding that word", q.Text, branch, want)
	}
}

// diff compares the branch with main: its side must list exactly what the branch
// changed since the last merge and main does not hold yet.
func (a *agent) diff(ctx context.Context, branch string) {
	want := a.s.m.expectedChanges(branch, day1.DefaultBranch, false)
	var d *day1.Diff
	if err := a.do(ctx, "diff", func(ctx context.Context) (err error) {
		d, err = a.s.c.Diff(ctx, branch, day1.DefaultBranch)
		return err
	}); err == nil {
		a.s.m.checkDiff(branch, day1.DefaultBranch, want, d)
	}
}

// merge merges src into dst with the accept-source policy. With race set, the agent
// keeps writing to src while the merge runs.
func (a *agent) merge(ctx context.Context, src, dst string, race bool) error {
	if dst == day1.DefaultBranch {
		a.s.mainMu.Lock()
		defer a.s.mainMu.Unlock()
	}
	want := a.s.m.expectedChanges(src, dst, true)
	var (
		res  day1.MergeResult
		err  error
		done = make(chan struct{})
	)
	go func() {
		defer close(done)
		err = a.do(ctx, "merge", func(ctx context.Context) error {
			var err error
			res, err = a.s.c.Merge(ctx, day1.MergeRequest{Source: src, Target: dst, Policy: day1.ConflictAccept, MergedBy: a.id,
				Message: "soak"})
			return err
		})
	}()
	raced := map[day1.Ref]string{}
	if race {
		for i := a.rng.IntN(3); i >= 0; i-- {
			if a.rng.IntN(2) == 0 {
				a.writeFact(ctx, src, raced)
			} else {
				a.writeObservation(ctx, src, raced)
			}
		}
	}
	<-done
	if err != nil {
		return err
	}
	a.s.m.merged(src, dst, want, raced, res)
	a.s.st.mu.Lock()
	a.s.st.conflicts += int64(len(res.Diff.Conflicts))
	a.s.st.mu.Unlock()
	return nil
}

// newTask creates a task, forked from main, and joins it. Main does not change
// meanwhile, so the model knows what the fork holds.
func (a *agent) newTask(ctx context.Context) {
	a.ntask++
	name := fmt.Sprintf("%s-t%d", a.id, a.ntask)
	var task day1.Task
	a.s.mainMu.Lock()
	err := a.do(ctx, "create task", func(ctx context.Context) (err error) {
		task, err = a.s.c.CreateTask(ctx, day1.TaskSpec{Name: name, CreatedBy: a.id, Objectives: []string{"find the cause", "fix it"}})
		return err
	})
	if err == nil {
		a.s.m.fork(task.Branch, day1.DefaultBranch)
	}
	a.s.mainMu.Unlock()
	if err != nil {
		return
	}
	a.s.born(name)
	var member day1.TaskMember
	if err := a.do(ctx, "join task", func(ctx context.Context) error {
		var err error
		member, err = a.s.c.JoinTask(ctx, day1.JoinRequest{Task: name, Agent: a.id, Role: "worker", Objectives: []int{1}})
		return err
	}); err != nil {
		return
	}
	a.s.m.fork(member.Branch, task.Branch)
	a.work = append(a.work, member.Branch)
	a.tasks[member.Branch] = name
}

// handoff brings the branch's work to its task's branch and hands the task to the next
// agent; the branch is not written again.
func (a *agent) handoff(ctx context.Context, branch string) {
	task := a.tasks[branch]
	if err := a.merge(ctx, branch, "task/"+task, false); err != nil {
		return
	}
	to := fmt.Sprintf("a%d", (a.n+1)%a.s.agents)
	var h day1.HandoffRecord
	if err := a.do(ctx, "handoff", func(ctx context.Context) error {
		var err error
		h, err = a.s.c.Handoff(ctx, day1.HandoffRequest{Task: task, Type: day1.HandoffFull, FromAgent: a.id, ToAgent: to,
			IncludeUnverified: true, Instructions: "carry on from the task branch", Blockers: []string{"none known"}})
		return err
	}); err != nil {
		return
	}
	a.s.m.checkPacket(task, h.Packet)
	a.drop(branch)
}

// acceptPending accepts the handoffs offered to the agent, two at most.
func (a *agent) acceptPending(ctx context.Context) {
	var pending []day1.HandoffRecord
	if err := a.do(ctx, "pending handoffs", func(ctx context.Context) error {
		var err error
		pending, err = a.s.c.PendingHandoffs(ctx, day1.PendingFilter{Receiver: a.id})
		return err
	}); err != nil {
		return
	}
	for _, h := range pending[:min(len(pending), 2)] {
		var acc day1.Acceptance
		if err := a.do(ctx, "accept handoff", func(ctx context.Context) error {
			var err error
			acc, err = a.s.c.AcceptHandoff(ctx, day1.AcceptRequest{Handoff: h.ID, Agent: a.id, Role: "worker"})
			return err
		}); err != nil {
			continue
		}
		existed := a.s.m.has(acc.Branch)
		switch {
		case acc.BranchCreated && existed:
			a.s.m.mismatch("accepting %s created %s, which existed", h.ID, acc.Branch)
		case !acc.BranchCreated && !existed:
			a.s.m.mismatch("accepting %s reused %s, which the soak never created", h.ID, acc.Branch)
		case acc.BranchCreated:
			a.s.m.fork(acc.Branch, "task/"+h.Task)
		}
		a.work = append(a.work, acc.Branch)
		a.tasks[acc.Branch] = h.Task
	}
}

// completeTask merges the branch into main one last time and completes its task.
func (a *agent) completeTask(ctx context.Context, branch string) {
	if err := a.merge(ctx, branch, day1.DefaultBranch, false); err != nil {
		return
	}
	err := a.do(ctx, "complete task", func(ctx context.Context) error {
		_, err := a.s.c.CompleteTask(ctx, day1.CompleteRequest{Task: a.tasks[branch], By: a.id, ResultSummary: "merged into main"})
		return err
	})
	if err != nil && !errors.Is(err, day1.ErrTaskClosed) {
		return
	}
	a.drop(branch)
}

func (a *agent) drop(branch string) {
	a.work = slices.DeleteFunc(a.work, func(b string) bool { return b == branch })
	delete(a.tasks, branch)
	delete(a.last, branch)
}
