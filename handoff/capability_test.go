package handoff

import (
	"errors"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/day1ai/day1/store"
)

func testAgents() []AgentProfile {
	return []AgentProfile{
		{ID: "agent-b", Name: "Bea", Capabilities: []Capability{{Name: "oauth2", Proficiency: 0.9}, {Name: "go", Proficiency: 0.6}}},
		{ID: "agent-a", Name: "Al", Capabilities: []Capability{{Name: "OAuth2", Proficiency: 0.9}, {Name: "Go", Proficiency: 0.6}}},
		{ID: "agent-c", Capabilities: []Capability{{Name: "go"}}}, // proficiency unset: 1
		{ID: "agent-d", Capabilities: []Capability{{Name: "oauth2", Proficiency: 0.3}, {Name: "go", Proficiency: 0.2}}},
		{ID: "agent-e"},
	}
}

func TestMatch(t *testing.T) {
	t.Parallel()
	required := []Requirement{{Name: "oauth2", Weight: 2}, {Name: "go"}}
	approx := cmpopts.EquateApprox(0, 1e-12)
	tests := []struct {
		name string
		req  []Requirement
		opts MatchOptions
		want []Candidate
	}{
		{
			// score = (2·q_oauth2 + 1·q_go) / 3; a and b tie at (1.8+0.6)/3 = 0.8, broken by ID.
			name: "ranked by weighted proficiency, ties by id",
			req:  required,
			want: []Candidate{
				{AgentID: "agent-a", Name: "Al", Score: 0.8, Matched: []string{"oauth2", "go"}},
				{AgentID: "agent-b", Name: "Bea", Score: 0.8, Matched: []string{"oauth2", "go"}},
				{AgentID: "agent-c", Score: 1.0 / 3, Matched: []string{"go"}, Missing: []string{"oauth2"}},
				{AgentID: "agent-d", Score: 0.8 / 3, Matched: []string{"oauth2", "go"}},
				{AgentID: "agent-e", Score: 0, Missing: []string{"oauth2", "go"}},
			},
		},
		{
			name: "minimum score, exclusions and limit",
			req:  required,
			opts: MatchOptions{MinScore: 0.3, Exclude: []string{"agent-a", "nobody"}, Limit: 2},
			want: []Candidate{
				{AgentID: "agent-b", Name: "Bea", Score: 0.8, Matched: []string{"oauth2", "go"}},
				{AgentID: "agent-c", Score: 1.0 / 3, Matched: []string{"go"}, Missing: []string{"oauth2"}},
			},
		},
		{
			name: "the design's minimum score",
			req:  required,
			opts: MatchOptions{MinScore: DefaultMinScore},
			want: []Candidate{
				{AgentID: "agent-a", Name: "Al", Score: 0.8, Matched: []string{"oauth2", "go"}},
				{AgentID: "agent-b", Name: "Bea", Score: 0.8, Matched: []string{"oauth2", "go"}},
			},
		},
		{
			name: "minimum proficiency counts as missing",
			req:  []Requirement{{Name: "oauth2", MinProficiency: 0.5}, {Name: "go", MinProficiency: 0.7}},
			want: []Candidate{
				{AgentID: "agent-c", Score: 0.5, Matched: []string{"go"}, Missing: []string{"oauth2"}},
				{AgentID: "agent-a", Name: "Al", Score: 0.45, Matched: []string{"oauth2"}, Missing: []string{"go"}, BelowMinimum: []string{"go"}},
				{AgentID: "agent-b", Name: "Bea", Score: 0.45, Matched: []string{"oauth2"}, Missing: []string{"go"}, BelowMinimum: []string{"go"}},
				{AgentID: "agent-d", Score: 0, Missing: []string{"oauth2", "go"}, BelowMinimum: []string{"oauth2", "go"}},
				{AgentID: "agent-e", Score: 0, Missing: []string{"oauth2", "go"}},
			},
		},
		{
			name: "require all",
			req:  []Requirement{{Name: "go", MinProficiency: 0.5}},
			opts: MatchOptions{RequireAll: true},
			want: []Candidate{
				{AgentID: "agent-c", Score: 1, Matched: []string{"go"}},
				{AgentID: "agent-a", Name: "Al", Score: 0.6, Matched: []string{"go"}},
				{AgentID: "agent-b", Name: "Bea", Score: 0.6, Matched: []string{"go"}},
			},
		},
		{
			name: "nobody qualifies",
			req:  []Requirement{{Name: "rust"}},
			opts: MatchOptions{MinScore: 0.1},
			want: nil,
		},
	}
	for _, tc := range tests {
		got, err := Match(tc.req, testAgents(), tc.opts)
		if err != nil {
			t.Errorf("%s: Match error %v", tc.name, err)
			continue
		}
		// The sort order matters: compare scores approximately but in order.
		if diff := cmp.Diff(tc.want, got, approx); diff != "" {
			t.Errorf("%s: Match (-want +got)\n%s", tc.name, diff)
		}
	}
}

func TestMatchDeterministic(t *testing.T) {
	t.Parallel()
	req := []Requirement{{Name: "oauth2", Weight: 2}, {Name: "go"}}
	first, err := Match(req, testAgents(), MatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Reversing the input order changes nothing.
	agents := testAgents()
	for i, j := 0, len(agents)-1; i < j; i, j = i+1, j-1 {
		agents[i], agents[j] = agents[j], agents[i]
	}
	second, err := Match(req, agents, MatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(first, second); diff != "" {
		t.Errorf("order-dependent result (-first +second)\n%s", diff)
	}
	if got, err := Match(req, nil, MatchOptions{}); err != nil || len(got) != 0 {
		t.Errorf("Match with no agents = %v, %v; want none", got, err)
	}
}

func TestMatchScoreBounded(t *testing.T) {
	t.Parallel()
	// Weights that do not sum exactly in floating point still give a score of at most 1.
	req := []Requirement{{Name: "a", Weight: 0.1}, {Name: "b", Weight: 0.2}, {Name: "c", Weight: 0.7}}
	agents := []AgentProfile{{ID: "x", Capabilities: []Capability{{Name: "a"}, {Name: "b"}, {Name: "c"}}}}
	got, err := Match(req, agents, MatchOptions{MinScore: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Score != 1 {
		t.Errorf("Match = %+v, want one candidate scoring exactly 1", got)
	}
}

func TestMatchValidation(t *testing.T) {
	t.Parallel()
	ok := []Requirement{{Name: "go"}}
	agents := testAgents()
	tests := []struct {
		name   string
		req    []Requirement
		agents []AgentProfile
		opts   MatchOptions
		field  string
	}{
		{"no requirements", nil, agents, MatchOptions{}, "required"},
		{"empty requirement name", []Requirement{{Name: "go"}, {Name: ""}}, agents, MatchOptions{}, "required[1].Requirement.Name"},
		{"padded requirement name", []Requirement{{Name: "go "}}, agents, MatchOptions{}, "required[0].Requirement.Name"},
		{"negative weight", []Requirement{{Name: "go", Weight: -1}}, agents, MatchOptions{}, "required[0].Requirement.Weight"},
		{"NaN weight", []Requirement{{Name: "go", Weight: math.NaN()}}, agents, MatchOptions{}, "required[0].Requirement.Weight"},
		{"infinite weight", []Requirement{{Name: "go", Weight: math.Inf(1)}}, agents, MatchOptions{}, "required[0].Requirement.Weight"},
		{"minimum above 1", []Requirement{{Name: "go", MinProficiency: 1.5}}, agents, MatchOptions{}, "required[0].Requirement.MinProficiency"},
		{"duplicate requirement", []Requirement{{Name: "go"}, {Name: "GO"}}, agents, MatchOptions{}, "required[1].Requirement.Name"},
		{"proficiency above 1", ok, []AgentProfile{{ID: "a", Capabilities: []Capability{{Name: "go", Proficiency: 1.2}}}}, MatchOptions{}, "agents[0].AgentProfile.Capabilities[0].Capability.Proficiency"},
		{"negative proficiency", ok, []AgentProfile{{ID: "a", Capabilities: []Capability{{Name: "go", Proficiency: -0.1}}}}, MatchOptions{}, "agents[0].AgentProfile.Capabilities[0].Capability.Proficiency"},
		{"NaN proficiency", ok, []AgentProfile{{ID: "a", Capabilities: []Capability{{Name: "go", Proficiency: math.NaN()}}}}, MatchOptions{}, "agents[0].AgentProfile.Capabilities[0].Capability.Proficiency"},
		{"empty capability name", ok, []AgentProfile{{ID: "a"}, {ID: "b", Capabilities: []Capability{{Name: " "}}}}, MatchOptions{}, "agents[1].AgentProfile.Capabilities[0].Capability.Name"},
		{"duplicate capability", ok, []AgentProfile{{ID: "a", Capabilities: []Capability{{Name: "go"}, {Name: "Go"}}}}, MatchOptions{}, "agents[0].AgentProfile.Capabilities[1].Capability.Name"},
		{"empty agent id", ok, []AgentProfile{{}}, MatchOptions{}, "agents[0].AgentProfile.ID"},
		{"bad agent id", ok, []AgentProfile{{ID: "a b"}}, MatchOptions{}, "agents[0].AgentProfile.ID"},
		{"duplicate agent id", ok, []AgentProfile{{ID: "a"}, {ID: "a"}}, MatchOptions{}, "agents[1].AgentProfile.ID"},
		{"minimum score above 1", ok, agents, MatchOptions{MinScore: 2}, "MatchOptions.MinScore"},
		{"negative minimum score", ok, agents, MatchOptions{MinScore: -0.5}, "MatchOptions.MinScore"},
		{"negative limit", ok, agents, MatchOptions{Limit: -1}, "MatchOptions.Limit"},
	}
	for _, tc := range tests {
		got, err := Match(tc.req, tc.agents, tc.opts)
		var ve *store.ValidationError
		if !errors.As(err, &ve) || ve.Field != tc.field {
			t.Errorf("%s: Match error = %v, want a ValidationError on %s", tc.name, err, tc.field)
		}
		if !errors.Is(err, store.ErrInvalidArgument) || got != nil {
			t.Errorf("%s: Match = %v, %v; want nil and ErrInvalidArgument", tc.name, got, err)
		}
	}
}

func TestAgentProfileHelpers(t *testing.T) {
	t.Parallel()
	a := testAgents()[2] // agent-c: go with proficiency unset
	if p, ok := a.Proficiency("GO"); !ok || p != 1 {
		t.Errorf("Proficiency(GO) = %v, %v; want 1, true", p, ok)
	}
	if _, ok := a.Proficiency("rust"); ok {
		t.Error("Proficiency(rust) reported present")
	}
	if diff := cmp.Diff([]string{"oauth2", "go"}, testAgents()[0].CapabilityNames()); diff != "" {
		t.Errorf("CapabilityNames (-want +got)\n%s", diff)
	}
	if got := (Capability{Name: "x", Proficiency: 0.25}).Level(); got != 0.25 {
		t.Errorf("Level = %v, want 0.25", got)
	}
}

func BenchmarkMatch(b *testing.B) {
	names := []string{"go", "sql", "oauth2", "docker", "k8s", "python", "review", "testing"}
	agents := make([]AgentProfile, 200)
	for i := range agents {
		a := AgentProfile{ID: "agent-" + string(rune('a'+i%26)) + "-" + string(rune('a'+i/26))}
		for j, n := range names {
			if (i+j)%3 != 0 {
				a.Capabilities = append(a.Capabilities, Capability{Name: n, Proficiency: float64((i*j)%10+1) / 10})
			}
		}
		agents[i] = a
	}
	req := []Requirement{{Name: "go", Weight: 2}, {Name: "sql"}, {Name: "oauth2", MinProficiency: 0.5}}
	for b.Loop() {
		if _, err := Match(req, agents, MatchOptions{MinScore: DefaultMinScore, Limit: 5}); err != nil {
			b.Fatal(err)
		}
	}
}
