package storetest

import (
	"testing"

	"github.com/day1ai/day1/store"
)

// testSessions checks PutSession, GetSession and ListSessions.
func testSessions(t *testing.T, h Harness) {
	const area = "sessions"

	subtest(t, h, area, "put, get, replace", func(e *env) {
		in := store.Session{ID: "s1", Branch: store.DefaultBranch, ParentSession: "s0", AgentID: "agent-a", TaskID: "t1",
			Project: "day1", Status: store.SessionActive, Summary: "started", Metadata: map[string]string{"model": "m"}, StartedAt: micro(1)}
		got, err := e.s.PutSession(e.ctx, in)
		if err != nil {
			e.t.Fatalf("PutSession: %v", err)
		}
		same(e.t, "PutSession result", in, got)
		same(e.t, "GetSession", in, e.getSession("s1"))
		in.Status, in.Summary, in.EndedAt = store.SessionCompleted, "done", micro(2)
		if _, err := e.s.PutSession(e.ctx, in); err != nil {
			e.t.Fatalf("PutSession (replace): %v", err)
		}
		same(e.t, "GetSession after replace", in, e.getSession("s1"))
		same(e.t, "ListSessions after replace", []store.Session{in}, e.listSessions(store.SessionFilter{}))
		_, err = e.s.GetSession(e.ctx, "nope")
		isErr(e.t, "GetSession(unknown)", err, store.ErrNotFound)
	})

	subtest(t, h, area, "list with filters, oldest first", func(e *env) {
		e.fork("b", store.DefaultBranch)
		sessions := []store.Session{
			{ID: "s3", Branch: store.DefaultBranch, AgentID: "a1", TaskID: "t1", Status: store.SessionActive, StartedAt: micro(3)},
			{ID: "s1", Branch: "b", AgentID: "a2", TaskID: "t1", Status: store.SessionCompleted, StartedAt: micro(1), EndedAt: micro(2)},
			{ID: "s2", Branch: store.DefaultBranch, AgentID: "a2", TaskID: "t2", Status: store.SessionAbandoned, StartedAt: micro(2)},
		}
		for _, s := range sessions {
			if _, err := e.s.PutSession(e.ctx, s); err != nil {
				e.t.Fatalf("PutSession(%s): %v", s.ID, err)
			}
		}
		for _, c := range []struct {
			name string
			f    store.SessionFilter
			want []string
		}{
			{"all", store.SessionFilter{}, []string{"s1", "s2", "s3"}},
			{"branch", store.SessionFilter{Branch: store.DefaultBranch}, []string{"s2", "s3"}},
			{"agent", store.SessionFilter{AgentID: "a2"}, []string{"s1", "s2"}},
			{"task", store.SessionFilter{TaskID: "t1"}, []string{"s1", "s3"}},
			{"status", store.SessionFilter{Status: store.SessionAbandoned}, []string{"s2"}},
			{"combined", store.SessionFilter{AgentID: "a2", TaskID: "t2"}, []string{"s2"}},
			{"no match", store.SessionFilter{AgentID: "a9"}, []string{}},
		} {
			var ids []string
			for _, s := range e.listSessions(c.f) {
				ids = append(ids, s.ID)
			}
			same(e.t, "ListSessions "+c.name, c.want, ids)
		}
	})

	subtest(t, h, area, "invalid sessions", func(e *env) {
		_, err := e.s.PutSession(e.ctx, store.Session{ID: "", Branch: store.DefaultBranch, Status: store.SessionActive, StartedAt: micro(1)})
		isInvalid(e.t, "empty id", err, "Session.ID")
		_, err = e.s.PutSession(e.ctx, store.Session{ID: "a b", Branch: store.DefaultBranch, Status: store.SessionActive, StartedAt: micro(1)})
		isInvalid(e.t, "bad id", err, "Session.ID")
		_, err = e.s.PutSession(e.ctx, store.Session{ID: "s1", Branch: store.DefaultBranch, Status: "sleeping", StartedAt: micro(1)})
		isInvalid(e.t, "bad status", err, "Session.Status")
		same(e.t, "sessions after the failed puts", []store.Session{}, e.listSessions(store.SessionFilter{}))
	})
}

// getSession reads a session and fails the test on error.
func (e *env) getSession(id string) store.Session {
	e.t.Helper()
	s, err := e.s.GetSession(e.ctx, id)
	if err != nil {
		e.t.Fatalf("GetSession(%q): %v", id, err)
	}
	return s
}

// listSessions lists sessions and fails the test on error.
func (e *env) listSessions(f store.SessionFilter) []store.Session {
	e.t.Helper()
	ss, err := e.s.ListSessions(e.ctx, f)
	if err != nil {
		e.t.Fatalf("ListSessions(%+v): %v", f, err)
	}
	return ss
}
