package matrixone

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/day1ai/day1/internal/textsearch"
	"github.com/day1ai/day1/store"
)

// never is the next_rev of a current version: no revision has replaced it.
const never = math.MaxInt64

// kindSpec describes the table of one record kind.
type kindSpec struct {
	kind   store.Kind
	prefix string   // table name prefix; the table is prefix + "_" + branch suffix
	cols   []string // data columns, after vid, id, rev, next_rev, deleted
	text   string   // the column keyword search reads tokens from, "" if none
}

var specs = map[store.Kind]*kindSpec{
	store.KindFact: {kind: store.KindFact, prefix: "facts", text: "tokens", cols: []string{
		"txt", "norm_key", "tokens", "doc_len", "dup_code", "embedding", "category", "confidence", "status",
		"source_type", "source_id", "parent_id", "session_id", "task_id", "agent_id", "metadata",
		"verification", "created_at", "updated_at"}},
	store.KindObservation: {kind: store.KindObservation, prefix: "observations", text: "tokens", cols: []string{
		"session_id", "task_id", "agent_id", "obs_type", "tool", "summary", "tokens", "doc_len",
		"embedding", "raw_input", "raw_output", "metadata", "created_at"}},
	store.KindRelation: {kind: store.KindRelation, prefix: "relations", cols: []string{
		"src", "dst", "rel_type", "properties", "confidence", "valid_from", "valid_to",
		"session_id", "task_id", "agent_id", "created_at"}},
	store.KindConversation: {kind: store.KindConversation, prefix: "conversations", cols: []string{
		"session_id", "agent_id", "task_id", "title", "verification", "metadata", "created_at", "updated_at"}},
	store.KindMessage: {kind: store.KindMessage, prefix: "messages", cols: []string{
		"conversation_id", "seq", "msg_role", "content", "tool", "picked_to", "session_id",
		"task_id", "agent_id", "metadata", "created_at"}},
}

// table returns the quoted table name of kind k for a branch suffix.
func table(k store.Kind, suffix string) string {
	return "`" + specs[k].prefix + "_" + suffix + "`"
}

// allCols returns every column of the kind's table, quoted, in table order.
func (k *kindSpec) allCols() []string {
	out := []string{"`vid`", "`id`", "`rev`", "`next_rev`", "`deleted`"}
	for _, c := range k.cols {
		out = append(out, "`"+c+"`")
	}
	return out
}

// selectCols is the column list reads scan: id, rev, deleted and the data columns.
func (k *kindSpec) selectCols() string {
	out := []string{"`id`", "`rev`", "`deleted`"}
	for _, c := range k.cols {
		if c == "tokens" || c == "norm_key" || c == "dup_code" {
			continue
		}
		out = append(out, "`"+c+"`")
	}
	return strings.Join(out, ", ")
}

// row is one version read from a table.
type row struct {
	id      string
	rev     int64
	deleted bool
	rec     store.Record // nil for a tombstone
	docLen  int
}

// normKey is a short hash of the normalised text, indexed for exact-text deduplication.
func normKey(s string) string {
	h := fnv.New64a()
	h.Write([]byte(store.NormText(s)))
	return fmt.Sprintf("%016x", h.Sum64())
}

// tokenColumn stores the search tokens of a text between single spaces, so that a token
// is matched exactly by looking for " token ".
func tokenColumn(text string) (string, int) {
	toks := textsearch.Tokenize(text)
	if len(toks) == 0 {
		return " ", 0
	}
	return " " + strings.Join(toks, " ") + " ", len(toks)
}

// vecLiteral formats an embedding the way MatrixOne parses a vecf32 value.
func vecLiteral(v []float32) any {
	if len(v) == 0 {
		return nil
	}
	var b strings.Builder
	b.Grow(len(v) * 10)
	b.WriteByte('[')
	for i, x := range v {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatFloat(float64(x), 'g', -1, 32))
	}
	b.WriteByte(']')
	return b.String()
}

// parseVec parses MatrixOne's text form of a vecf32 value, "[1, 2.5, 3]".
func parseVec(s string) ([]float32, error) {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "[")
	s = strings.TrimSuffix(s, "]")
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	parts := strings.Split(s, ",")
	out := make([]float32, len(parts))
	for i, p := range parts {
		f, err := strconv.ParseFloat(strings.TrimSpace(p), 32)
		if err != nil {
			return nil, fmt.Errorf("vector component %d: %w", i, err)
		}
		out[i] = float32(f)
	}
	return out, nil
}

func jsonText(v any, empty bool) string {
	if empty {
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		// Maps of strings, string slices and Verification always marshal.
		panic(err)
	}
	return string(b)
}

func metaText(m map[string]string) string { return jsonText(m, len(m) == 0) }

func verifyText(v store.Verification) string { return jsonText(v, v == (store.Verification{})) }

func decodeMeta(s string) (map[string]string, error) {
	if s == "" {
		return nil, nil
	}
	var m map[string]string
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return nil, err
	}
	return m, nil
}

func decodeVerify(s string) (store.Verification, error) {
	var v store.Verification
	if s == "" {
		return v, nil
	}
	err := json.Unmarshal([]byte(s), &v)
	v.At = v.At.UTC()
	return v, err
}

func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC()
}

// micro truncates t to the microsecond precision of DATETIME(6), in UTC. The zero time
// stays zero.
func micro(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC().Truncate(time.Microsecond)
}

// normalize brings every time of r to what the table keeps (UTC, microseconds), so
// that a record compares equal to itself read back.
func normalize(r store.Record) store.Record {
	switch v := r.(type) {
	case store.Fact:
		v.CreatedAt, v.UpdatedAt, v.Verify.At = micro(v.CreatedAt), micro(v.UpdatedAt), v.Verify.At.UTC()
		return v
	case store.Observation:
		v.CreatedAt = micro(v.CreatedAt)
		return v
	case store.Relation:
		v.CreatedAt, v.ValidFrom, v.ValidTo = micro(v.CreatedAt), micro(v.ValidFrom), micro(v.ValidTo)
		return v
	case store.Conversation:
		v.CreatedAt, v.UpdatedAt, v.Verify.At = micro(v.CreatedAt), micro(v.UpdatedAt), v.Verify.At.UTC()
		return v
	case store.Message:
		v.CreatedAt = micro(v.CreatedAt)
		return v
	}
	return r
}

// vidShift places a row's position in its commit below its revision in vid, the
// tables' primary key: vid = rev<<vidShift | position.
const vidShift = 24

// values returns the data column values of r (or of a tombstone of kind k when r is
// nil), in kindSpec.cols order. dup makes the near-duplicate codes of facts.
func values(k store.Kind, r store.Record, dup *dupCoder) []any {
	switch k {
	case store.KindFact:
		f, _ := r.(store.Fact)
		tokens, n := tokenColumn(f.Text)
		return []any{f.Text, normKey(f.Text), tokens, n, dup.column(f.Embedding), vecLiteral(f.Embedding), f.Category, f.Confidence,
			string(f.Status), f.SourceType, f.SourceID, f.ParentID, f.SessionID, f.TaskID, f.AgentID,
			metaText(f.Metadata), verifyText(f.Verify), nullTime(f.CreatedAt), nullTime(f.UpdatedAt)}
	case store.KindObservation:
		o, _ := r.(store.Observation)
		tokens, n := tokenColumn(o.Summary)
		return []any{o.SessionID, o.TaskID, o.AgentID, string(o.Type), o.Tool, o.Summary, tokens, n,
			vecLiteral(o.Embedding), o.RawInput, o.RawOutput, metaText(o.Metadata), nullTime(o.CreatedAt)}
	case store.KindRelation:
		x, _ := r.(store.Relation)
		return []any{x.Source, x.Target, x.Type, metaText(x.Properties), x.Confidence, nullTime(x.ValidFrom),
			nullTime(x.ValidTo), x.SessionID, x.TaskID, x.AgentID, nullTime(x.CreatedAt)}
	case store.KindConversation:
		c, _ := r.(store.Conversation)
		return []any{c.SessionID, c.AgentID, c.TaskID, c.Title, verifyText(c.Verify), metaText(c.Metadata),
			nullTime(c.CreatedAt), nullTime(c.UpdatedAt)}
	case store.KindMessage:
		m, _ := r.(store.Message)
		return []any{m.ConversationID, m.Seq, string(m.Role), m.Content, m.Tool, jsonText(m.PickedTo, len(m.PickedTo) == 0),
			m.SessionID, m.TaskID, m.AgentID, metaText(m.Metadata), nullTime(m.CreatedAt)}
	}
	panic("matrixone: unknown kind " + string(k))
}

// scanner is *sql.Rows or *sql.Row.
type scanner interface{ Scan(dest ...any) error }

// scanRow reads one row in selectCols order. extra receives trailing columns the query
// added (a score, say).
func scanRow(k store.Kind, sc scanner, extra ...any) (row, error) {
	var (
		r                                       row
		del                                     int
		s1, s2, s3, s4, s5, s6, s7, s8, s9, s10 string
		s11                                     string
		emb                                     sql.NullString
		f1                                      float64
		n1                                      int
		t1, t2, t3                              sql.NullTime
	)
	var dest []any
	switch k {
	case store.KindFact:
		// txt, doc_len, embedding, category, confidence, status, source_type, source_id,
		// parent_id, session_id, task_id, agent_id, metadata, verification, created_at, updated_at
		dest = []any{&s1, &n1, &emb, &s2, &f1, &s3, &s4, &s5, &s6, &s7, &s8, &s9, &s10, &s11, &t1, &t2}
	case store.KindObservation:
		// session_id, task_id, agent_id, obs_type, tool, summary, doc_len, embedding,
		// raw_input, raw_output, metadata, created_at
		dest = []any{&s1, &s2, &s3, &s4, &s5, &s6, &n1, &emb, &s7, &s8, &s9, &t1}
	case store.KindRelation:
		// src, dst, rel_type, properties, confidence, valid_from, valid_to, session_id,
		// task_id, agent_id, created_at
		dest = []any{&s1, &s2, &s3, &s4, &f1, &t1, &t2, &s5, &s6, &s7, &t3}
	case store.KindConversation:
		// session_id, agent_id, task_id, title, verification, metadata, created_at, updated_at
		dest = []any{&s1, &s2, &s3, &s4, &s5, &s6, &t1, &t2}
	case store.KindMessage:
		// conversation_id, seq, msg_role, content, tool, picked_to, session_id, task_id,
		// agent_id, metadata, created_at
		dest = []any{&s1, &n1, &s2, &s3, &s4, &s5, &s6, &s7, &s8, &s9, &t1}
	}
	all := append([]any{&r.id, &r.rev, &del}, dest...)
	if err := sc.Scan(append(all, extra...)...); err != nil {
		return r, err
	}
	r.deleted = del != 0
	if r.deleted {
		return r, nil
	}
	tm := func(t sql.NullTime) time.Time {
		if !t.Valid {
			return time.Time{}
		}
		return t.Time.UTC()
	}
	var err error
	vec := func() []float32 {
		if !emb.Valid || err != nil {
			return nil
		}
		var v []float32
		v, err = parseVec(emb.String)
		return v
	}
	meta := func(s string) map[string]string {
		if err != nil {
			return nil
		}
		var m map[string]string
		m, err = decodeMeta(s)
		return m
	}
	verify := func(s string) store.Verification {
		if err != nil {
			return store.Verification{}
		}
		var v store.Verification
		v, err = decodeVerify(s)
		return v
	}
	switch k {
	case store.KindFact:
		r.docLen = n1
		r.rec = store.Fact{ID: r.id, Text: s1, Embedding: vec(), Category: s2, Confidence: f1, Status: store.FactStatus(s3),
			SourceType: s4, SourceID: s5, ParentID: s6, SessionID: s7, TaskID: s8, AgentID: s9, Metadata: meta(s10),
			Verify: verify(s11), CreatedAt: tm(t1), UpdatedAt: tm(t2)}
	case store.KindObservation:
		r.docLen = n1
		r.rec = store.Observation{ID: r.id, SessionID: s1, TaskID: s2, AgentID: s3, Type: store.ObservationType(s4), Tool: s5,
			Summary: s6, Embedding: vec(), RawInput: s7, RawOutput: s8, Metadata: meta(s9), CreatedAt: tm(t1)}
	case store.KindRelation:
		r.rec = store.Relation{ID: r.id, Source: s1, Target: s2, Type: s3, Properties: meta(s4), Confidence: f1,
			ValidFrom: tm(t1), ValidTo: tm(t2), SessionID: s5, TaskID: s6, AgentID: s7, CreatedAt: tm(t3)}
	case store.KindConversation:
		r.rec = store.Conversation{ID: r.id, SessionID: s1, AgentID: s2, TaskID: s3, Title: s4, Verify: verify(s5),
			Metadata: meta(s6), CreatedAt: tm(t1), UpdatedAt: tm(t2)}
	case store.KindMessage:
		var picked []string
		if s5 != "" {
			err = json.Unmarshal([]byte(s5), &picked)
		}
		r.rec = store.Message{ID: r.id, ConversationID: s1, Seq: n1, Role: store.Role(s2), Content: s3, Tool: s4,
			PickedTo: picked, SessionID: s6, TaskID: s7, AgentID: s8, Metadata: meta(s9), CreatedAt: tm(t1)}
	}
	if err != nil {
		return r, fmt.Errorf("decoding %s %q: %w", k, r.id, err)
	}
	return r, nil
}
