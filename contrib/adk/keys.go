package adk

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/day1ai/day1/store"
)

// Metadata keys the services write on day1 records. The app, user and session keys
// hold ADK's own names, so that day1's tools (filters, the inspector, the command
// line) find an ADK session's records by them.
const (
	// MetaApp is the ADK app name.
	MetaApp = "adk.app"
	// MetaUser is the ADK user ID.
	MetaUser = "adk.user"
	// MetaSession is the ADK session ID.
	MetaSession = "adk.session"
	// MetaAuthor is the author of an event: "user" or an agent's name.
	MetaAuthor = "adk.author"
	// MetaEventID is the ID of the event a message holds.
	MetaEventID = "adk.event_id"
	// MetaInvocation is the invocation ID of the event a message holds.
	MetaInvocation = "adk.invocation"
	// MetaKind says what a conversation holds for the services: KindSession,
	// KindAppState, KindUserState or KindMemory.
	MetaKind = "adk.kind"
	// MetaEvent is the key of the event, encoded as JSON, on a message the
	// SessionService writes: the whole event, so that Get returns it as it was
	// appended. An encoding longer than one metadata value continues under
	// MetaEvent+".1", MetaEvent+".2", ...
	MetaEvent = "adk.event"
	// MetaState is the key of a state, encoded as JSON, on the conversations of
	// sessions and of app and user state; it continues like MetaEvent.
	MetaState = "adk.state"
)

// Values of MetaKind.
const (
	// KindSession marks the conversation of an ADK session, with its events as
	// messages and its own state.
	KindSession = "session"
	// KindAppState marks the conversation that holds an app's state (keys "app:...").
	KindAppState = "app_state"
	// KindUserState marks the conversation that holds a user's state (keys "user:...").
	KindUserState = "user_state"
	// KindMemory marks the conversation of a session added to memory.
	KindMemory = "memory"
)

// metaValueMax is the longest metadata value day1 keeps, in bytes.
const metaValueMax = 4096

// maxChunks bounds the metadata values one JSON document may take, leaving the other
// keys of a record room under day1's 64 pairs.
const maxChunks = store.MaxMetadataPairs - 8

// MaxJSON is the longest JSON encoding of an event or a state the SessionService
// keeps, in bytes: the metadata values a day1 record holds. A longer one is refused
// with a *day1.ValidationError.
const MaxJSON = maxChunks * metaValueMax

// hash returns the first n hex digits of the SHA-256 of parts joined by NUL bytes,
// which no part of an ADK name holds apart, so distinct names give distinct inputs.
func hash(n int, parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(sum[:])[:n]
}

// SessionKey is the day1 ID of an ADK session: of its day1 Session, of the
// conversation that holds its events and of the conversation it becomes in memory.
// ADK session IDs are unique within an app and a user only, and may hold any
// character; day1 IDs are global and restricted, so the key is a hash of the three
// names, "adk-" and 32 hex digits.
func SessionKey(appName, userID, sessionID string) string {
	return "adk-" + hash(32, appName, userID, sessionID)
}

// appStateKey and userStateKey are the IDs of the conversations holding app and user
// state.
func appStateKey(appName string) string { return "adk-app-" + hash(32, "app", appName) }

func userStateKey(appName, userID string) string {
	return "adk-user-" + hash(32, "user", appName, userID)
}

// messageID is the ID of the message of event eventID in conversation conv.
func messageID(conv, eventID string) string { return conv + "-" + hash(16, eventID) }

// DefaultMemoryBranch is the day1 branch that holds the memory of one user of one
// app: "adk-memory/<app>/<user>-<hash>", the names cut to 24 characters of letters,
// digits, '_' and '-' for reading, and a hash of both names that keeps every pair
// on a branch of its own.
func DefaultMemoryBranch(appName, userID string) string {
	return "adk-memory/" + segment(appName) + "/" + segment(userID) + "-" + hash(12, appName, userID)
}

// segment is a readable branch-name segment for a name: letters, digits, '_' and
// '-', starting with a letter or digit, at most 24 characters.
func segment(name string) string {
	var b strings.Builder
	for _, r := range name {
		if b.Len() >= 24 {
			break
		}
		switch {
		case r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'):
			b.WriteRune(r)
		case b.Len() > 0 && (r == '_' || r == '-'):
			b.WriteRune(r)
		case b.Len() > 0:
			b.WriteByte('-')
		}
	}
	if b.Len() == 0 {
		return "x"
	}
	return b.String()
}

// putJSON encodes v as JSON into md under key, continued under key.1, key.2, ...
// when longer than one metadata value. field names v in errors.
func putJSON(md map[string]string, key, field string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return store.Invalid(field, fmt.Sprintf("must encode as JSON (it failed: %v)", err), nil)
	}
	if len(b) > MaxJSON {
		return store.Invalid(field, fmt.Sprintf("encodes to %d bytes of JSON; a day1 record keeps at most %d (adk.MaxJSON)", len(b), MaxJSON), nil)
	}
	s := string(b)
	for i := 0; ; i++ {
		n := min(len(s), metaValueMax)
		// Cut at a rune boundary: every value must be valid UTF-8.
		for n < len(s) && !utf8.RuneStart(s[n]) {
			n--
		}
		md[chunkKey(key, i)] = s[:n]
		s = s[n:]
		if s == "" {
			return nil
		}
	}
}

// getJSON decodes into v the JSON that putJSON wrote under key. It reports false
// when md holds no such key.
func getJSON(md map[string]string, key string, v any) (bool, error) {
	first, ok := md[key]
	if !ok {
		return false, nil
	}
	var b strings.Builder
	b.WriteString(first)
	for i := 1; ; i++ {
		part, ok := md[chunkKey(key, i)]
		if !ok {
			break
		}
		b.WriteString(part)
	}
	if err := json.Unmarshal([]byte(b.String()), v); err != nil {
		return true, fmt.Errorf("day1: decoding %s: %w", key, err)
	}
	return true, nil
}

func chunkKey(key string, i int) string {
	if i == 0 {
		return key
	}
	return fmt.Sprintf("%s.%d", key, i)
}
