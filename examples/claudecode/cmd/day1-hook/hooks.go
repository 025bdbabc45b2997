package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/day1ai/day1/llm"
)

// Bounds of the context SessionStart injects, from the design: about 20 facts
// searched, 15 shown, the last 3 session summaries, each line cut to 200 characters.
const (
	factsSearched = 20
	factsShown    = 15
	sessionsShown = 3
	maxLine       = 200
	stopTail      = 256 << 10 // bytes of the transcript Stop reads
	maxStage      = 1000      // characters of a stage summary
	maxSummary    = 1200      // characters of a session summary
)

// handler runs one hook event against the memory and returns the output to print.
type handler func(ctx context.Context, mem *memory, in hookInput, model llm.Model) (hookOutput, error)

var handlers = map[string]handler{
	eventSessionStart: sessionStartHook,
	eventPostToolUse:  postToolUseHook,
	eventPreCompact:   preCompactHook,
	eventStop:         stopHook,
	eventSessionEnd:   sessionEndHook,
}

// sessionStartHook starts the session and injects what memory holds about the
// project: key facts, the last sessions' summaries, the active branches.
func sessionStartHook(ctx context.Context, mem *memory, in hookInput, _ llm.Model) (hookOutput, error) {
	if err := mem.StartSession(ctx, sessionStart{ID: in.SessionID, AgentID: agentID}); err != nil {
		return hookOutput{}, err
	}
	var sections []string
	if s, err := factsSection(ctx, mem, projectName(in.Cwd)); err != nil {
		return hookOutput{}, err
	} else if s != "" {
		sections = append(sections, s)
	}
	if s, err := sessionsSection(ctx, mem, in.SessionID); err != nil {
		return hookOutput{}, err
	} else if s != "" {
		sections = append(sections, s)
	}
	if s, err := branchesSection(ctx, mem); err != nil {
		return hookOutput{}, err
	} else if s != "" {
		sections = append(sections, s)
	}
	out := hookOutput{HookSpecificOutput: &specificOutput{HookEventName: eventSessionStart}}
	if len(sections) > 0 {
		out.HookSpecificOutput.AdditionalContext = "# Memory from day1\n\n" + strings.Join(sections, "\n\n")
	}
	return out, nil
}

// projectName is the name of the project folder, the query for its facts.
func projectName(cwd string) string {
	if cwd == "" {
		return ""
	}
	return filepath.Base(filepath.Clean(cwd))
}

func factsSection(ctx context.Context, mem *memory, project string) (string, error) {
	facts, err := mem.Facts(ctx, project, factsSearched)
	if err != nil || len(facts) == 0 {
		return "", err
	}
	lines := []string{"## Key facts"}
	for _, f := range facts[:min(factsShown, len(facts))] {
		line := "- " + f.Text
		if f.Category != "" {
			line += " [" + f.Category + "]"
		}
		lines = append(lines, clip(line, maxLine))
	}
	return strings.Join(lines, "\n"), nil
}

func sessionsSection(ctx context.Context, mem *memory, current string) (string, error) {
	sessions, err := mem.RecentSessions(ctx, sessionsShown+1)
	if err != nil {
		return "", err
	}
	var lines []string
	for _, s := range sessions {
		if s.ID == current || len(lines) == sessionsShown {
			continue
		}
		summary := s.Summary
		if summary == "" {
			summary = "(no summary)"
		}
		lines = append(lines, clip("- "+strings.TrimSpace(s.StartedAt+" "+summary), maxLine))
	}
	if len(lines) == 0 {
		return "", nil
	}
	return "## Recent sessions\n" + strings.Join(lines, "\n"), nil
}

func branchesSection(ctx context.Context, mem *memory) (string, error) {
	branches, err := mem.Branches(ctx)
	if err != nil {
		return "", err
	}
	var lines []string
	for _, b := range branches {
		if b.Name == "main" {
			continue
		}
		line := "- " + b.Name
		if b.Description != "" {
			line += ": " + b.Description
		}
		lines = append(lines, clip(line, maxLine))
	}
	if len(lines) == 0 {
		return "", nil
	}
	return "## Active memory branches\n" + strings.Join(lines, "\n"), nil
}

// postToolUseHook records the tool call as an observation.
func postToolUseHook(ctx context.Context, mem *memory, in hookInput, _ llm.Model) (hookOutput, error) {
	if in.ToolName == "" {
		return hookOutput{}, fmt.Errorf("the PostToolUse input has no tool_name")
	}
	if _, err := mem.WriteObservation(ctx, toolObservation(in)); err != nil {
		return hookOutput{}, err
	}
	return hookOutput{SuppressOutput: true}, nil
}

// preCompactHook keeps the facts and relations of the transcript before it is
// compacted.
func preCompactHook(ctx context.Context, mem *memory, in hookInput, model llm.Model) (hookOutput, error) {
	turns, err := readTranscript(in.TranscriptPath, 0)
	if err != nil {
		return hookOutput{}, err
	}
	kept, rels, by, err := keepTurns(ctx, mem, in, turns, model)
	if err != nil {
		return hookOutput{}, err
	}
	return hookOutput{SystemMessage: fmt.Sprintf("day1: kept %d new facts and %d relations from the context before compaction (%s).", kept, rels, by)}, nil
}

// keepTurns keeps the facts and relations of a transcript's turns: the facts by the
// memory's model when there is one, falling back to the heuristics when the model
// fails. It returns how many facts memory gained or changed and how many relations
// were written.
func keepTurns(ctx context.Context, mem *memory, in hookInput, turns []turn, model llm.Model) (kept, rels int, by string, err error) {
	if len(turns) > maxTurns {
		turns = turns[len(turns)-maxTurns:]
	}
	kept, by, err = mem.Extract(ctx, turns, in.SessionID, false)
	if err != nil && model != nil {
		// A failed model is not a reason to lose what the heuristics find.
		kept, by, err = mem.Extract(ctx, turns, in.SessionID, true)
	}
	if err != nil {
		return 0, 0, "", err
	}
	for _, r := range relations(turns, in.SessionID) {
		if _, err := mem.WriteRelation(ctx, r); err != nil {
			return kept, rels, by, err
		}
		rels++
	}
	return kept, rels, by, nil
}

// stopHook records a stage summary, the last assistant turn, as an insight, and
// keeps the facts of the last exchange by heuristics: the hook must stay short, so
// the model reads the transcript at PreCompact and SessionEnd instead.
func stopHook(ctx context.Context, mem *memory, in hookInput, _ llm.Model) (hookOutput, error) {
	turns, err := readTranscript(in.TranscriptPath, stopTail)
	if err != nil {
		return hookOutput{}, err
	}
	last := lastAssistantTurn(turns)
	if last == "" {
		return hookOutput{SuppressOutput: true}, nil
	}
	_, err = mem.WriteObservation(ctx, observation{
		SessionID: in.SessionID,
		Type:      obsInsight,
		Summary:   "Stage summary: " + clip(last, maxStage),
		RawOutput: cut(last, maxRaw),
	})
	if err != nil {
		return hookOutput{}, err
	}
	if _, _, err := mem.Extract(ctx, lastExchange(turns), in.SessionID, true); err != nil {
		return hookOutput{}, err
	}
	return hookOutput{SuppressOutput: true}, nil
}

// sessionEndHook keeps the transcript's last facts, then ends the session with a
// summary and consolidates its observations.
func sessionEndHook(ctx context.Context, mem *memory, in hookInput, model llm.Model) (hookOutput, error) {
	turns, err := readTranscript(in.TranscriptPath, 0)
	if err != nil {
		// Without a transcript the session still ends.
		turns = nil
	} else if _, _, _, err := keepTurns(ctx, mem, in, turns, model); err != nil {
		return hookOutput{}, err
	}
	n, err := mem.EndSession(ctx, sessionEnd{ID: in.SessionID, Summary: sessionSummary(turns), Status: "completed"})
	if err != nil {
		return hookOutput{}, err
	}
	return hookOutput{SuppressOutput: true, SystemMessage: fmt.Sprintf("day1: session saved; %d candidate facts consolidated.", n)}, nil
}

// sessionSummary says what the session was asked and where it ended.
func sessionSummary(turns []turn) string {
	ask, last := firstUserPrompt(turns), lastAssistantTurn(turns)
	var parts []string
	if ask != "" {
		parts = append(parts, "Asked: "+clip(ask, 300))
	}
	if last != "" {
		parts = append(parts, "Ended with: "+clip(last, maxSummary-320))
	}
	return strings.Join(parts, " ")
}
