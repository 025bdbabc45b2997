package handoff

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/day1ai/day1/store"
)

// DefaultMinScore is the minimum match score day1's design uses when looking for a
// capable agent. MatchOptions.MinScore defaults to 0 (every agent is ranked); pass
// DefaultMinScore to follow the design.
const DefaultMinScore = 0.5

// Capability is something an agent can do, with how well it does it.
type Capability struct {
	// Name identifies the capability, e.g. "oauth2" or "code_review". Required;
	// compared case-insensitively; no surrounding spaces.
	Name string `json:"name"`
	// Proficiency is how well the agent does it, from 0 to 1. Zero means unset and
	// counts as 1, fully proficient, as in the design; see Level.
	Proficiency float64 `json:"proficiency,omitempty"`
	// Description says what the capability covers. Optional.
	Description string `json:"description,omitempty"`
	// Tags group capabilities. Optional.
	Tags []string `json:"tags,omitempty"`
}

// Level returns the effective proficiency: Proficiency, or 1 when it is zero.
func (c Capability) Level() float64 {
	if c.Proficiency == 0 {
		return 1
	}
	return c.Proficiency
}

// Validate checks the name and that Proficiency is within 0..1. It returns a
// *store.ValidationError.
func (c Capability) Validate() error {
	if err := validCapabilityName("Capability.Name", c.Name); err != nil {
		return err
	}
	if !unit(c.Proficiency) {
		return store.Invalid("Capability.Proficiency", "must be between 0 and 1", c.Proficiency)
	}
	return nil
}

// AgentProfile is an agent as capability matching sees it.
type AgentProfile struct {
	// ID identifies the agent; see store.ValidateID. Required.
	ID string `json:"id"`
	// Name is a display name. Optional.
	Name string `json:"name,omitempty"`
	// Capabilities lists what the agent can do, each name once.
	Capabilities []Capability `json:"capabilities,omitempty"`
	// Availability says whether the agent can take work now. Default "" counts as
	// AvailabilityAvailable, so profiles registered before the field existed keep
	// receiving handoffs. A busy or offline agent is not offered handoffs nor chosen
	// as a receiver; an offline one cannot accept a handoff either. See Eligible.
	Availability Availability `json:"availability,omitempty"`
	// AcceptTypes lists the handoff types the agent may receive. Default empty: every
	// type.
	AcceptTypes []Type `json:"accept_types,omitempty"`
	// Permissions lists named permissions the agent holds, e.g. "deploy:prod",
	// compared exactly. A handoff whose HandoffRequest.Permissions the agent does not
	// all hold is neither offered to it nor accepted by it. Default none.
	Permissions []string `json:"permissions,omitempty"`
}

// Validate checks the ID, every capability, the availability, the accepted types and
// the permissions, and that no capability is listed twice
// (names compare case-insensitively). It returns a *store.ValidationError whose field
// is indexed, e.g. "AgentProfile.Capabilities[2].Capability.Proficiency".
func (a AgentProfile) Validate() error {
	if err := store.ValidateID("AgentProfile.ID", a.ID); err != nil {
		return err
	}
	seen := make(map[string]bool, len(a.Capabilities))
	for i, c := range a.Capabilities {
		if err := c.Validate(); err != nil {
			return store.AtIndex(err, "AgentProfile.Capabilities", i)
		}
		k := capabilityKey(c.Name)
		if seen[k] {
			return store.Invalid(fmt.Sprintf("AgentProfile.Capabilities[%d].Capability.Name", i), "is listed twice; list each capability once", c.Name)
		}
		seen[k] = true
	}
	if !a.Availability.Valid() {
		return store.Invalid("AgentProfile.Availability", oneOf(allAvailabilities)+" (empty means available)", string(a.Availability))
	}
	for i, t := range a.AcceptTypes {
		if !t.Valid() {
			return store.Invalid(fmt.Sprintf("AgentProfile.AcceptTypes[%d]", i), oneOf(allTypes), string(t))
		}
	}
	return validPermissions("AgentProfile.Permissions", a.Permissions)
}

// Proficiency returns the agent's effective proficiency in the named capability and
// whether it has it at all.
func (a AgentProfile) Proficiency(name string) (float64, bool) {
	k := capabilityKey(name)
	for _, c := range a.Capabilities {
		if capabilityKey(c.Name) == k {
			return c.Level(), true
		}
	}
	return 0, false
}

// CapabilityNames returns the names of the agent's capabilities, in order; handy for
// Signal.Capabilities.
func (a AgentProfile) CapabilityNames() []string {
	out := make([]string, len(a.Capabilities))
	for i, c := range a.Capabilities {
		out[i] = c.Name
	}
	return out
}

// Requirement is a capability a task needs.
type Requirement struct {
	// Name is the capability needed. Required; compared case-insensitively.
	Name string `json:"name"`
	// Weight is the requirement's share of the score. Zero means unset and counts as
	// 1; negative, NaN and infinite weights are invalid.
	Weight float64 `json:"weight,omitempty"`
	// MinProficiency is the least proficiency that counts, from 0 to 1. An agent
	// below it scores nothing for this requirement and has it listed as missing.
	// Default 0.
	MinProficiency float64 `json:"min_proficiency,omitempty"`
}

func (r Requirement) weight() float64 {
	if r.Weight == 0 {
		return 1
	}
	return r.Weight
}

// Validate checks the name, that Weight is finite and not negative, and that
// MinProficiency is within 0..1. It returns a *store.ValidationError.
func (r Requirement) Validate() error {
	if err := validCapabilityName("Requirement.Name", r.Name); err != nil {
		return err
	}
	if r.Weight < 0 || math.IsNaN(r.Weight) || math.IsInf(r.Weight, 0) {
		return store.Invalid("Requirement.Weight", "must be a finite number, 0 or more (0 counts as 1)", r.Weight)
	}
	if !unit(r.MinProficiency) {
		return store.Invalid("Requirement.MinProficiency", "must be between 0 and 1", r.MinProficiency)
	}
	return nil
}

// MatchOptions tunes Match. The zero value ranks every agent.
type MatchOptions struct {
	// MinScore drops candidates scoring below it, from 0 to 1. Default 0: every
	// agent, even one without a single required capability. DefaultMinScore is the
	// design's value.
	MinScore float64
	// Exclude lists agent IDs never to return, e.g. the source of the handoff.
	Exclude []string
	// RequireAll drops candidates missing any requirement. Default false.
	RequireAll bool
	// Limit caps the number of candidates returned; 0 means no limit. Must not be
	// negative.
	Limit int
}

// Validate checks MinScore is within 0..1 and Limit is not negative. It returns a
// *store.ValidationError.
func (o MatchOptions) Validate() error {
	if !unit(o.MinScore) {
		return store.Invalid("MatchOptions.MinScore", "must be between 0 and 1", o.MinScore)
	}
	if o.Limit < 0 {
		return store.Invalid("MatchOptions.Limit", "must not be negative (0 means no limit)", o.Limit)
	}
	return nil
}

// Candidate is an agent ranked by Match.
type Candidate struct {
	// AgentID is the AgentProfile's ID.
	AgentID string `json:"agent_id"`
	// Name is the AgentProfile's display name, if any.
	Name string `json:"name,omitempty"`
	// Score is the proficiency-weighted match, from 0 to 1; see Match.
	Score float64 `json:"score"`
	// Matched lists the requirements the agent meets, in requirement order.
	Matched []string `json:"matched,omitempty"`
	// Missing lists the requirements the agent does not meet, in requirement order:
	// those it lacks and those below their MinProficiency.
	Missing []string `json:"missing,omitempty"`
	// BelowMinimum lists the part of Missing the agent has, but below the required
	// MinProficiency.
	BelowMinimum []string `json:"below_minimum,omitempty"`
}

// Match ranks agents against the required capabilities.
//
// An agent's score is the weighted mean of its proficiency over the requirements:
//
//	score = Σ wᵢ·qᵢ / Σ wᵢ
//
// where wᵢ is requirement i's weight (1 when unset) and qᵢ the agent's effective
// proficiency in it (Capability.Level), or 0 when the agent lacks it or is below its
// MinProficiency. A score of 1 means every requirement met at full proficiency.
//
// Candidates are sorted by score, highest first, ties broken by agent ID ascending, so
// the result is deterministic. Agents in opts.Exclude, scoring below opts.MinScore,
// or (with opts.RequireAll) missing any requirement are left out; opts.Limit caps the
// count. No agents gives no candidates.
//
// Match returns a *store.ValidationError, naming the field with its index, when
// required is empty, a requirement is invalid or listed twice, an agent profile is
// invalid, two profiles share an ID, or opts is invalid.
func Match(required []Requirement, agents []AgentProfile, opts MatchOptions) ([]Candidate, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if len(required) == 0 {
		return nil, store.Invalid("required", "needs at least one requirement", nil)
	}
	seen := make(map[string]bool, len(required))
	keys := make([]string, len(required))
	total := 0.0
	for i, r := range required {
		if err := r.Validate(); err != nil {
			return nil, store.AtIndex(err, "required", i)
		}
		keys[i] = capabilityKey(r.Name)
		if seen[keys[i]] {
			return nil, store.Invalid(fmt.Sprintf("required[%d].Requirement.Name", i), "is listed twice; list each requirement once", r.Name)
		}
		seen[keys[i]] = true
		total += r.weight()
	}
	ids := make(map[string]bool, len(agents))
	for i, a := range agents {
		if err := a.Validate(); err != nil {
			return nil, store.AtIndex(err, "agents", i)
		}
		if ids[a.ID] {
			return nil, store.Invalid(fmt.Sprintf("agents[%d].AgentProfile.ID", i), "is used by an earlier profile; agent IDs must be unique", a.ID)
		}
		ids[a.ID] = true
	}
	excluded := make(map[string]bool, len(opts.Exclude))
	for _, id := range opts.Exclude {
		excluded[id] = true
	}

	var out []Candidate
	levels := make(map[string]float64)
	for _, a := range agents {
		if excluded[a.ID] {
			continue
		}
		clear(levels)
		for _, cp := range a.Capabilities {
			levels[capabilityKey(cp.Name)] = cp.Level()
		}
		c := Candidate{AgentID: a.ID, Name: a.Name}
		sum := 0.0
		for i, r := range required {
			q, has := levels[keys[i]]
			switch {
			case !has:
				c.Missing = append(c.Missing, r.Name)
			case q < r.MinProficiency:
				c.Missing = append(c.Missing, r.Name)
				c.BelowMinimum = append(c.BelowMinimum, r.Name)
			default:
				c.Matched = append(c.Matched, r.Name)
				sum += r.weight() * q
			}
		}
		c.Score = math.Min(sum/total, 1) // rounding can leave the mean a hair above 1
		if c.Score < opts.MinScore || opts.RequireAll && len(c.Missing) > 0 {
			continue
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return out[i].AgentID < out[j].AgentID
	})
	if opts.Limit > 0 && len(out) > opts.Limit {
		out = out[:opts.Limit]
	}
	return out, nil
}

// capabilityKey is the form capability names are compared in.
func capabilityKey(name string) string { return strings.ToLower(name) }

func validCapabilityName(field, name string) error {
	if strings.TrimSpace(name) == "" {
		return store.Invalid(field, "must not be empty: name a capability, e.g. oauth2", nil)
	}
	if strings.TrimSpace(name) != name {
		return store.Invalid(field, "must not start or end with spaces", name)
	}
	return nil
}

// unit reports whether x is within [0, 1] (NaN is not).
func unit(x float64) bool { return x >= 0 && x <= 1 }
