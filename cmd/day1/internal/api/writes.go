package api

import (
	"net/http"
	"strconv"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/internal/memview"
	"github.com/day1ai/day1/store"
)

// TaskRequest is the body of POST /api/v1/tasks.
type TaskRequest struct {
	Name        string            `json:"name"`
	Objectives  []string          `json:"objectives"`
	Description string            `json:"description,omitempty"`
	Type        string            `json:"type,omitempty"`
	Parent      string            `json:"parent,omitempty"`
	CreatedBy   string            `json:"created_by,omitempty"`
	Metadata    map[string]string `json:"metadata,omitempty"`
}

func (s *Server) createTask(w http.ResponseWriter, r *http.Request) (any, error) {
	var tr TaskRequest
	if err := decode(r, &tr); err != nil {
		return nil, err
	}
	if tr.Objectives == nil {
		return nil, &badRequest{"objectives", "is required: the list of the task's goals, numbered from 1 in its order ([] for none yet)"}
	}
	t, err := s.c.CreateTask(r.Context(), day1.TaskSpec{Name: tr.Name, Objectives: tr.Objectives, Description: tr.Description,
		Type: tr.Type, Parent: tr.Parent, CreatedBy: tr.CreatedBy, Metadata: tr.Metadata})
	if err != nil {
		return nil, err
	}
	return created{t}, nil
}

// JoinRequest is the body of POST /api/v1/tasks/{name}/members.
type JoinRequest struct {
	Agent      string `json:"agent"`
	Role       string `json:"role,omitempty"`
	Objectives []int  `json:"objectives,omitempty"`
	Session    string `json:"session,omitempty"`
}

func (s *Server) joinTask(w http.ResponseWriter, r *http.Request) (any, error) {
	var jr JoinRequest
	if err := decode(r, &jr); err != nil {
		return nil, err
	}
	m, err := s.c.JoinTask(r.Context(), day1.JoinRequest{Task: r.PathValue("name"), Agent: jr.Agent, Role: jr.Role, Objectives: jr.Objectives, Session: jr.Session})
	if err != nil {
		return nil, err
	}
	return created{m}, nil
}

// ObjectiveRequest is the body of PATCH /api/v1/tasks/{name}/objectives/{id}.
type ObjectiveRequest struct {
	Status string `json:"status"`
	By     string `json:"by,omitempty"`
	Note   string `json:"note,omitempty"`
}

func (s *Server) updateObjective(w http.ResponseWriter, r *http.Request) (any, error) {
	id, err := strconv.Atoi(r.PathValue("id"))
	if err != nil {
		return nil, store.Invalid("id", "must be an objective's number", r.PathValue("id"))
	}
	var or ObjectiveRequest
	if err := decode(r, &or); err != nil {
		return nil, err
	}
	return s.c.UpdateObjective(r.Context(), day1.ObjectiveUpdate{Task: r.PathValue("name"), Objective: id,
		Status: day1.ObjectiveStatus(or.Status), By: or.By, Note: or.Note})
}

// CompleteRequest is the body of POST /api/v1/tasks/{name}/complete.
type CompleteRequest struct {
	ResultSummary string `json:"result_summary"`
	By            string `json:"by,omitempty"`
	// Merge promotes the task's verified knowledge to its parent; default true.
	Merge   *bool `json:"merge,omitempty"`
	Archive bool  `json:"archive,omitempty"`
}

// Completion is what completing a task returns.
type Completion struct {
	Task     day1.Task      `json:"task"`
	Merge    *memview.Merge `json:"merge,omitempty"`
	Promoted []string       `json:"promoted"`
	Kept     []string       `json:"kept"`
}

func (s *Server) completeTask(w http.ResponseWriter, r *http.Request) (any, error) {
	var cr CompleteRequest
	if err := decode(r, &cr); err != nil {
		return nil, err
	}
	merge := cr.Merge == nil || *cr.Merge
	done, err := s.c.CompleteTask(r.Context(), day1.CompleteRequest{Task: r.PathValue("name"), ResultSummary: cr.ResultSummary,
		By: cr.By, Merge: merge, Archive: cr.Archive})
	if err != nil {
		return nil, err
	}
	out := Completion{Task: done.Task, Promoted: refStrings(done.Promoted), Kept: refStrings(done.Kept)}
	if done.Merge != nil {
		m := memview.MergeView(*done.Merge)
		out.Merge = &m
	}
	return out, nil
}

func refStrings(refs []day1.Ref) []string {
	out := make([]string, len(refs))
	for i, r := range refs {
		out[i] = r.String()
	}
	return out
}

// HandoffRequest is the body of POST /api/v1/handoffs.
type HandoffRequest struct {
	Task               string   `json:"task"`
	Type               string   `json:"type,omitempty"`
	FromAgent          string   `json:"from_agent,omitempty"`
	ToAgent            string   `json:"to_agent,omitempty"`
	Instructions       string   `json:"instructions,omitempty"`
	PriorityObjectives []int    `json:"priority_objectives,omitempty"`
	Blockers           []string `json:"blockers,omitempty"`
	Reason             string   `json:"reason,omitempty"`
	IncludeUnverified  bool     `json:"include_unverified,omitempty"`
}

func (s *Server) createHandoff(w http.ResponseWriter, r *http.Request) (any, error) {
	var hr HandoffRequest
	if err := decode(r, &hr); err != nil {
		return nil, err
	}
	h, err := s.c.Handoff(r.Context(), day1.HandoffRequest{Task: hr.Task, Type: day1.HandoffType(hr.Type), FromAgent: hr.FromAgent,
		ToAgent: hr.ToAgent, Instructions: hr.Instructions, PriorityObjectives: hr.PriorityObjectives, Blockers: hr.Blockers,
		Reason: hr.Reason, IncludeUnverified: hr.IncludeUnverified})
	if err != nil {
		return nil, err
	}
	return created{memview.Handoff(h)}, nil
}

// HandoffAnswer is the body of POST /api/v1/handoffs/{id}/accept and /reject.
type HandoffAnswer struct {
	Agent   string `json:"agent"`
	Session string `json:"session,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

// Acceptance is what accepting a handoff returns.
type Acceptance struct {
	Handoff       day1.HandoffRecord `json:"handoff"`
	Member        day1.TaskMember    `json:"member"`
	Branch        string             `json:"branch"`
	BranchCreated bool               `json:"branch_created"`
}

func (s *Server) acceptHandoff(w http.ResponseWriter, r *http.Request) (any, error) {
	var ha HandoffAnswer
	if err := decode(r, &ha); err != nil {
		return nil, err
	}
	if ha.Reason != "" {
		return nil, &badRequest{"reason", "an accept takes no reason"}
	}
	a, err := s.c.AcceptHandoff(r.Context(), day1.AcceptRequest{Handoff: r.PathValue("id"), Agent: ha.Agent, Session: ha.Session})
	if err != nil {
		return nil, err
	}
	return Acceptance{Handoff: memview.Handoff(a.Handoff), Member: a.Member, Branch: a.Branch, BranchCreated: a.BranchCreated}, nil
}

func (s *Server) rejectHandoff(w http.ResponseWriter, r *http.Request) (any, error) {
	var ha HandoffAnswer
	if err := decode(r, &ha); err != nil {
		return nil, err
	}
	if ha.Session != "" {
		return nil, &badRequest{"session", "a reject takes no session"}
	}
	h, err := s.c.RejectHandoff(r.Context(), day1.RejectRequest{Handoff: r.PathValue("id"), Agent: ha.Agent, Reason: ha.Reason})
	if err != nil {
		return nil, err
	}
	return memview.Handoff(h), nil
}

func (s *Server) createConversation(w http.ResponseWriter, r *http.Request) (any, error) {
	var c day1.Conversation
	if err := decode(r, &c); err != nil {
		return nil, err
	}
	res, err := s.c.WriteConversation(r.Context(), c)
	if err != nil {
		return nil, err
	}
	return written(res), nil
}

func (s *Server) appendMessage(w http.ResponseWriter, r *http.Request) (any, error) {
	var m day1.Message
	if err := decode(r, &m); err != nil {
		return nil, err
	}
	if m.ConversationID != "" && m.ConversationID != r.PathValue("id") {
		return nil, &badRequest{"conversation_id", "differs from the conversation in the path"}
	}
	m.ConversationID = r.PathValue("id")
	res, err := s.c.AppendMessage(r.Context(), m)
	if err != nil {
		return nil, err
	}
	return written(res), nil
}
