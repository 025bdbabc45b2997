package api

import (
	"net/http"
	"time"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/internal/memview"
)

func (s *Server) listTasks(w http.ResponseWriter, r *http.Request) (any, error) {
	qq := q(r)
	f := day1.TaskFilter{Status: day1.TaskStatus(qq.str("status")), Agent: qq.str("agent"), Type: qq.str("type")}
	ts, err := s.c.Tasks(r.Context(), f)
	if err != nil {
		return nil, err
	}
	return paged(w, r, ts)
}

func (s *Server) getTask(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.c.GetTask(r.Context(), r.PathValue("name"))
}

// Replay is a task's replay as the API returns it.
type Replay struct {
	Task     day1.Task           `json:"task"`
	AsOf     time.Time           `json:"as_of,omitzero"`
	Timeline []ReplayStep        `json:"timeline"`
	Agents   []day1.Contribution `json:"agents"`
	KeyFacts []*memview.Record   `json:"key_facts"`
	// Decisions are the decision points of the task's conversations, in order.
	Decisions []day1.RunDecision `json:"decisions"`
	Outcome   day1.TaskOutcome   `json:"outcome"`
}

// ReplayStep is one step of a replay.
type ReplayStep struct {
	Kind    day1.ReplayEventKind `json:"kind"`
	At      time.Time            `json:"at"`
	Branch  string               `json:"branch,omitempty"`
	Agent   string               `json:"agent,omitempty"`
	ID      string               `json:"id,omitempty"`
	Seq     int                  `json:"seq,omitempty"`
	Summary string               `json:"summary"`
}

// ReplayView returns the view of a replay.
func ReplayView(tr day1.TaskReplay) Replay {
	out := Replay{Task: tr.Task, AsOf: tr.AsOf, Agents: tr.Agents, Outcome: tr.Outcome, Decisions: append([]day1.RunDecision{}, tr.Decisions...),
		Timeline: make([]ReplayStep, len(tr.Timeline)), KeyFacts: make([]*memview.Record, len(tr.KeyFacts))}
	for i, e := range tr.Timeline {
		out.Timeline[i] = ReplayStep{Kind: e.Kind, At: e.At, Branch: e.Branch, Agent: e.Agent, ID: e.ID, Seq: e.Seq, Summary: e.Summary}
	}
	for i, f := range tr.KeyFacts {
		out.KeyFacts[i] = memview.View(f)
	}
	return out
}

func (s *Server) replay(w http.ResponseWriter, r *http.Request) (any, error) {
	qq := q(r)
	opts := day1.ReplayOptions{
		AsOf:                memview.ParseAt(qq.str("at")),
		IncludeObservations: qq.bool("observations"),
		VerifiedOnly:        qq.bool("verified_only"),
	}
	if qq.err != nil {
		return nil, qq.err
	}
	tr, err := s.c.TaskReplay(r.Context(), r.PathValue("name"), opts)
	if err != nil {
		return nil, err
	}
	return ReplayView(tr), nil
}

func (s *Server) listHandoffs(w http.ResponseWriter, r *http.Request) (any, error) {
	qq := q(r)
	f := day1.HandoffFilter{Task: qq.str("task"), Status: day1.HandoffStatus(qq.str("status")), Agent: qq.str("agent")}
	hs, err := s.c.Handoffs(r.Context(), f)
	if err != nil {
		return nil, err
	}
	return paged(w, r, memview.Handoffs(hs))
}

func (s *Server) getHandoff(w http.ResponseWriter, r *http.Request) (any, error) {
	h, err := s.c.GetHandoff(r.Context(), r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	return memview.Handoff(h), nil
}

func (s *Server) verificationSummary(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.c.VerificationSummary(r.Context(), q(r).str("branch"))
}

// VerifyRequest is the body of POST /api/v1/verification.
type VerifyRequest struct {
	Branch  string `json:"branch,omitempty"`
	Rejudge bool   `json:"rejudge,omitempty"`
}

func (s *Server) verifyBranch(w http.ResponseWriter, r *http.Request) (any, error) {
	var vr VerifyRequest
	if err := decode(r, &vr); err != nil {
		return nil, err
	}
	return s.c.VerifyBranch(r.Context(), day1.VerifyBranchRequest{Branch: vr.Branch, Rejudge: vr.Rejudge})
}

func (s *Server) listSessions(w http.ResponseWriter, r *http.Request) (any, error) {
	qq := q(r)
	f := day1.SessionFilter{Branch: qq.str("branch"), AgentID: qq.str("agent"), TaskID: qq.str("task"), Status: day1.SessionStatus(qq.str("status"))}
	ss, err := s.c.Sessions(r.Context(), f)
	if err != nil {
		return nil, err
	}
	return paged(w, r, ss)
}
