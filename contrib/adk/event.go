package adk

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"

	"github.com/day1ai/day1"
)

// authorUser is the author ADK gives the events of the end user.
const authorUser = "user"

// contentText is the readable text of a content: its text parts, then a line for
// each function call, function response, blob, file and piece of code, so that a
// day1 message shows what the event said. Thoughts are left out.
func contentText(c *genai.Content, withTools bool) string {
	if c == nil {
		return ""
	}
	var lines []string
	for _, p := range c.Parts {
		if p == nil || p.Thought {
			continue
		}
		if t := strings.TrimSpace(p.Text); t != "" {
			lines = append(lines, t)
		}
		if !withTools {
			continue
		}
		switch {
		case p.FunctionCall != nil:
			args, _ := json.Marshal(p.FunctionCall.Args)
			lines = append(lines, fmt.Sprintf("%s(%s)", p.FunctionCall.Name, args))
		case p.FunctionResponse != nil:
			resp, _ := json.Marshal(p.FunctionResponse.Response)
			lines = append(lines, fmt.Sprintf("%s returned %s", p.FunctionResponse.Name, resp))
		case p.InlineData != nil:
			lines = append(lines, fmt.Sprintf("[%s, %d bytes]", p.InlineData.MIMEType, len(p.InlineData.Data)))
		case p.FileData != nil:
			lines = append(lines, fmt.Sprintf("[%s %s]", p.FileData.MIMEType, p.FileData.FileURI))
		case p.ExecutableCode != nil:
			lines = append(lines, p.ExecutableCode.Code)
		case p.CodeExecutionResult != nil:
			lines = append(lines, p.CodeExecutionResult.Output)
		}
	}
	return strings.Join(lines, "\n")
}

// eventRole is the day1 role of an event: a tool call or a tool result when its
// content holds one (with the function's name), the user's turn when the user wrote
// it, the assistant's otherwise.
func eventRole(e *session.Event) (day1.Role, string) {
	if e.Content != nil {
		for _, p := range e.Content.Parts {
			switch {
			case p == nil:
			case p.FunctionCall != nil:
				return day1.RoleToolCall, p.FunctionCall.Name
			case p.FunctionResponse != nil:
				return day1.RoleToolResult, p.FunctionResponse.Name
			}
		}
	}
	if e.Author == authorUser {
		return day1.RoleUser, ""
	}
	return day1.RoleAssistant, ""
}

// eventMeta is the metadata every message of an event carries.
func eventMeta(appName, userID, sessionID string, e *session.Event) map[string]string {
	md := map[string]string{MetaApp: appName, MetaUser: userID, MetaSession: sessionID}
	if e.Author != "" {
		md[MetaAuthor] = e.Author
	}
	if e.ID != "" {
		md[MetaEventID] = e.ID
	}
	if e.InvocationID != "" {
		md[MetaInvocation] = e.InvocationID
	}
	return md
}

// logMessage is the message that keeps event e of a session's log: its readable
// text as Content, the whole event as JSON under MetaEvent.
func logMessage(branch, key, appName, userID, sessionID string, e *session.Event) (day1.Message, error) {
	role, tool := eventRole(e)
	md := eventMeta(appName, userID, sessionID, e)
	if err := putJSON(md, MetaEvent, "Event", e); err != nil {
		return day1.Message{}, err
	}
	return day1.Message{
		ID:             messageID(key, e.ID),
		Branch:         branch,
		ConversationID: key,
		Role:           role,
		Tool:           tool,
		Content:        contentText(e.Content, true),
		SessionID:      key,
		AgentID:        agentOf(e),
		Metadata:       md,
		CreatedAt:      e.Timestamp,
	}, nil
}

// agentOf is the day1 agent of an event: its author, unless the user wrote it.
func agentOf(e *session.Event) string {
	if e.Author == authorUser {
		return ""
	}
	return e.Author
}

// logEvent decodes the event a log message keeps.
func logEvent(m day1.Message) (*session.Event, error) {
	e := new(session.Event)
	ok, err := getJSON(m.Metadata, MetaEvent, e)
	if err != nil {
		return nil, fmt.Errorf("day1: message %s of conversation %s: %w", m.ID, m.ConversationID, err)
	}
	if !ok {
		return nil, fmt.Errorf("day1: message %s of conversation %s holds no ADK event (no %s metadata); was it written by another program?", m.ID, m.ConversationID, MetaEvent)
	}
	return e, nil
}

// withoutTemp returns e with the temporary ("temp:") keys of its state delta left
// out, copying it only when it has some.
func withoutTemp(e *session.Event) *session.Event {
	if !hasTemp(e.Actions.StateDelta) {
		return e
	}
	c := *e
	c.Actions.StateDelta = maps.Clone(e.Actions.StateDelta)
	maps.DeleteFunc(c.Actions.StateDelta, func(k string, _ any) bool { return strings.HasPrefix(k, session.KeyPrefixTemp) })
	return &c
}

func hasTemp(delta map[string]any) bool {
	for k := range delta {
		if strings.HasPrefix(k, session.KeyPrefixTemp) {
			return true
		}
	}
	return false
}

// splitState splits a state or a state delta by scope: the app's keys and the
// user's keys without their prefixes, the session's as they are; temporary keys are
// dropped.
func splitState(delta map[string]any) (app, user, sess map[string]any) {
	app, user, sess = map[string]any{}, map[string]any{}, map[string]any{}
	for k, v := range delta {
		if rest, ok := strings.CutPrefix(k, session.KeyPrefixApp); ok {
			app[rest] = v
		} else if rest, ok := strings.CutPrefix(k, session.KeyPrefixUser); ok {
			user[rest] = v
		} else if !strings.HasPrefix(k, session.KeyPrefixTemp) {
			sess[k] = v
		}
	}
	return app, user, sess
}

// joinState is the state a session sees: its own keys, and the app's and the user's
// with their prefixes.
func joinState(app, user, sess map[string]any) map[string]any {
	out := make(map[string]any, len(app)+len(user)+len(sess))
	maps.Copy(out, sess)
	for k, v := range app {
		out[session.KeyPrefixApp+k] = v
	}
	for k, v := range user {
		out[session.KeyPrefixUser+k] = v
	}
	return out
}
