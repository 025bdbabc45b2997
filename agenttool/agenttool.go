// Package agenttool describes day1's memory operations as tools an agent calls: each
// Tool has a name, a description for the model, the JSON schemas of its input and
// output, and a function that runs it for a Session. It is the one description of
// the tools: the MCP server (package mcpserver) serves this list, and the framework
// adapters turn the same list into their own tools (contrib/adk as ADK function
// tools, contrib/eino as Eino invokable tools), so agents on every framework and over
// MCP get one set of tools, with the same names, descriptions, schemas and answers.
//
// The tools, by what they do:
//
//   - write: memory_write_fact, memory_fact_correct, memory_extract,
//     memory_write_observation, memory_write_relation;
//   - read: memory_search, memory_graph_query, memory_timeline, memory_record_get;
//   - branches: memory_branch_create, memory_branch_list, memory_branch_switch,
//     memory_branch_diff, memory_branch_merge;
//   - the past: memory_snapshot, memory_snapshot_list, memory_time_travel;
//   - tasks: memory_task_create, memory_task_join, memory_task_objective_update,
//     memory_task_complete, memory_task_list, memory_task_replay,
//     memory_compare_tasks;
//   - handoffs: memory_handoff_create, memory_handoff_accept, memory_handoff_list;
//   - conversations: memory_conversation_create, memory_message_append,
//     memory_cherry_pick_conversation, memory_cherry_pick_decisions;
//   - curation and bundles: memory_verify_fact, memory_verify_branch,
//     memory_bundle_create, memory_bundle_import;
//   - sessions: memory_session_start, memory_session_end, memory_session_list.
//
// Inputs and outputs are JSON objects with snake_case fields; each output is one of
// this package's types (WriteFactOut, SearchOut, ...). A call that names no branch
// works on its Session's current branch (memory_branch_switch sets it), else main.
// Bad input is an error that wraps day1.ErrInvalidArgument and names the field; the
// Client's errors are returned as they are.
package agenttool

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/store"
)

// Tool is one memory operation an agent can call.
type Tool struct {
	// Name is the tool's name, as the model calls it.
	Name string
	// Description tells the model what the tool does and when to call it.
	Description string
	// InputSchema is the JSON schema of the tool's input, an object.
	InputSchema *jsonschema.Schema
	// OutputSchema is the JSON schema of the tool's output, an object.
	OutputSchema *jsonschema.Schema
	// Run runs the tool for s with its input as a JSON object (empty means {}).
	Run func(ctx context.Context, s *Session, input json.RawMessage) (Result, error)
}

// Result is what a tool returns.
type Result struct {
	// Output is the tool's answer, one of this package's output types; it encodes
	// as a JSON object that OutputSchema describes.
	Output any
	// Text says in one line what the call did, for a transcript or a model that
	// reads text only.
	Text string
}

// Session is what the calls of one agent share: the memory they act on, the agent's
// name, and its current branch. It is safe for concurrent use.
type Session struct {
	client *day1.Client
	caller string

	mu     sync.Mutex
	branch string
}

// NewSession returns a session of the agent named caller (recorded as who corrects
// a fact, merges, or consolidates a session when the call names nobody; "agent" when
// empty) on the memory c, whose current branch is main.
func NewSession(c *day1.Client, caller string) *Session {
	if caller == "" {
		caller = "agent"
	}
	return &Session{client: c, caller: caller}
}

// Client returns the memory the session acts on.
func (s *Session) Client() *day1.Client { return s.client }

// Caller returns the name of the session's agent.
func (s *Session) Caller() string { return s.caller }

// Branch returns the session's current branch: "" until memory_branch_switch (or
// SetBranch) chose one, which calls read as main.
func (s *Session) Branch() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.branch
}

// SetBranch makes name the session's current branch and returns the previous one.
// It does not check that the branch exists; memory_branch_switch does.
func (s *Session) SetBranch(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	prev := s.branch
	s.branch = name
	return prev
}

// Tools returns every tool, in a stable order. Each call returns a new list.
func Tools() []Tool {
	return slices.Concat(writeTools(), readTools(), branchTools(), snapshotTools(), taskTools(),
		handoffTools(), conversationTools(), curationTools(), bundleTools(), replayTools(), sessionTools())
}

// Find returns the tool of a name.
func Find(name string) (Tool, bool) {
	for _, t := range Tools() {
		if t.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}

// caller is a session as the tools' functions use it.
type caller struct {
	c *day1.Client
	s *Session
}

// branch returns the branch a call works on: the one it names, else the session's
// current branch, else "" (the library's default branch).
func (m *caller) branch(named string) string {
	if named != "" {
		return named
	}
	return m.s.Branch()
}

// setBranch makes name the session's current branch and returns the previous one.
func (m *caller) setBranch(name string) string { return m.s.SetBranch(name) }

// currentBranch returns the session's current branch, day1.DefaultBranch when it has
// not switched.
func (m *caller) currentBranch() string {
	if b := m.s.Branch(); b != "" {
		return b
	}
	return day1.DefaultBranch
}

// name returns who calls.
func (m *caller) name() string { return m.s.caller }

// tool makes a Tool of a typed function: the schemas are inferred from In and Out,
// and the input is decoded into In, refusing unknown fields.
func tool[In, Out any](name, description string, run func(*caller, context.Context, In) (Out, string, error)) Tool {
	in, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("agenttool: the input schema of %s: %v", name, err)) // a bug in this package's types
	}
	out, err := jsonschema.For[Out](nil)
	if err != nil {
		panic(fmt.Sprintf("agenttool: the output schema of %s: %v", name, err))
	}
	return Tool{Name: name, Description: description, InputSchema: in, OutputSchema: out,
		Run: func(ctx context.Context, s *Session, input json.RawMessage) (Result, error) {
			if s == nil || s.client == nil {
				return Result{}, store.Invalid("session", "must be a Session of a Client (NewSession)", nil)
			}
			var v In
			if len(bytes.TrimSpace(input)) > 0 {
				dec := json.NewDecoder(bytes.NewReader(input))
				dec.DisallowUnknownFields()
				if err := dec.Decode(&v); err != nil {
					return Result{}, store.Invalid("input", "must be a JSON object of the tool's fields: "+err.Error(), nil)
				}
			}
			o, text, err := run(&caller{c: s.client, s: s}, ctx, v)
			if err != nil {
				return Result{}, err
			}
			return Result{Output: o, Text: text}, nil
		}}
}
