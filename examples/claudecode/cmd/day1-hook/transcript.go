package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
)

// turn is one text turn of a transcript.
type turn struct {
	Role string // user or assistant
	Text string
}

// transcriptLine is one line of a Claude Code transcript (JSONL): user and
// assistant lines carry an API message whose content is a string or a list of
// blocks; other lines (summaries, system notes) are skipped.
type transcriptLine struct {
	Type    string `json:"type"`
	Message struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

type contentBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// readTranscript returns the text turns of the transcript at path, in order. With
// tail > 0 only the last tail bytes of the file are read (the first, partial line
// is dropped), so a hook that needs the last turns stays fast on a long session.
// Tool calls and tool results are left out; lines that do not decode are skipped.
func readTranscript(path string, tail int64) ([]turn, error) {
	if path == "" {
		return nil, errors.New("the hook input names no transcript")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	skipFirst := false
	if tail > 0 {
		if st, err := f.Stat(); err == nil && st.Size() > tail {
			if _, err := f.Seek(st.Size()-tail, io.SeekStart); err != nil {
				return nil, err
			}
			skipFirst = true
		}
	}
	var turns []turn
	r := bufio.NewReaderSize(f, 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 && !skipFirst {
			if t, ok := parseTurn(line); ok {
				turns = append(turns, t)
			}
		}
		skipFirst = false
		if err == io.EOF {
			return turns, nil
		}
		if err != nil {
			return turns, err
		}
	}
}

func parseTurn(line []byte) (turn, bool) {
	var l transcriptLine
	if err := json.Unmarshal(line, &l); err != nil {
		return turn{}, false
	}
	role := l.Message.Role
	if role == "" {
		role = l.Type
	}
	if role != "user" && role != "assistant" {
		return turn{}, false
	}
	var text string
	if err := json.Unmarshal(l.Message.Content, &text); err != nil {
		var blocks []contentBlock
		if err := json.Unmarshal(l.Message.Content, &blocks); err != nil {
			return turn{}, false
		}
		var parts []string
		for _, b := range blocks {
			if b.Type == "text" && strings.TrimSpace(b.Text) != "" {
				parts = append(parts, strings.TrimSpace(b.Text))
			}
		}
		text = strings.Join(parts, "\n")
	}
	text = strings.TrimSpace(text)
	if text == "" {
		return turn{}, false
	}
	return turn{Role: role, Text: text}, true
}

// lastAssistantTurn joins the assistant text after the last user prompt.
func lastAssistantTurn(turns []turn) string {
	var parts []string
	for i := len(turns) - 1; i >= 0; i-- {
		if turns[i].Role == "user" {
			break
		}
		parts = append([]string{turns[i].Text}, parts...)
	}
	return strings.Join(parts, "\n")
}

// lastExchange returns the turns from the last user turn on: the last question and
// the answer to it.
func lastExchange(turns []turn) []turn {
	for i := len(turns) - 1; i >= 0; i-- {
		if turns[i].Role == "user" {
			return turns[i:]
		}
	}
	return turns
}

// firstUserPrompt is the first thing the user asked.
func firstUserPrompt(turns []turn) string {
	for _, t := range turns {
		if t.Role == "user" {
			return t.Text
		}
	}
	return ""
}
