package matrixone

import (
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

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
	// vectors: the kind's records have embeddings, kept in the kind's vectors table
	// (see vecTable), not in its branch tables.
	vectors bool
}

var specs = map[store.Kind]*kindSpec{
	store.KindFact: {kind: store.KindFact, prefix: "facts", text: "tokens", vectors: true, cols: []string{
		"txt", "norm_key", "tokens", "doc_len", "dup_code", "category", "confidence", "status",
		"source_type", "source_id", "parent_id", "session_id", "task_id", "agent_id", "metadata",
		"verification", "created_at", "updated_at", "expires_at"}},
	store.KindObservation: {kind: store.KindObservation, prefix: "observations", text: "tokens", vectors: true, cols: []string{
		"session_id", "task_id", "agent_id", "obs_type", "tool", "summary", "tokens", "doc_len",
		"raw_input", "raw_output", "metadata", "created_at"}},
	store.KindRelation: {kind: store.KindRelation, prefix: "relations", cols: []string{
		"src", "dst", "rel_type", "properties", "confidence", "valid_from", "valid_to",
		"session_id", "task_id", "agent_id", "created_at"}},
	// The search columns of conversations and messages (tokens, doc_len) come last:
	// migration 010 added them to tables made before it.
	store.KindConversation: {kind: store.KindConversation, prefix: "conversations", text: "tokens", cols: []string{
		"session_id", "agent_id", "task_id", "title", "verification", "metadata", "created_at", "updated_at",
		"tokens", "doc_len"}},
	store.KindMessage: {kind: store.KindMessage, prefix: "messages", text: "tokens", vectors: true, cols: []string{
		"conversation_id", "seq", "msg_role", "content", "tool", "picked_to", "session_id",
		"task_id", "agent_id", "metadata", "created_at", "tokens", "doc_len"}},
	store.KindAlias: {kind: store.KindAlias, prefix: "aliases", cols: []string{"target", "created_at"}},
}

// hasEmbedding reports whether records of the kind have embeddings.
func hasEmbedding(k store.Kind) bool { return specs[k].vectors }

// vecTable returns the quoted name of the vectors table of kind k: one table per kind
// for every branch, (vid, embedding), a row for each version that has an embedding.
// A version's vid is unique in the store and a version never changes, so a branch's
// tables, copied or forked from its parent's with the vids they hold, share the
// parent's rows here. Closing a version (an UPDATE of next_rev, which the server
// carries out as a rewrite of the whole row) then never rewrites an embedding, and a
// copy of a branch never copies one.
func vecTable(k store.Kind) string { return "`" + vecTableName(k) + "`" }

// vecTableName is vecTable unquoted.
func vecTableName(k store.Kind) string { return specs[k].prefix + "_vectors" }

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

// selectCols is the column list reads scan: id, rev, deleted, vid and the data
// columns (selected). Embeddings are not among them: they are read by vid from the
// kind's vectors table (loadVectors), for the reads that need them.
func (k *kindSpec) selectCols() string { return k.columns("") }

// columns is selectCols with every column qualified by the table alias t, when t is
// not "".
func (k *kindSpec) columns(t string) string {
	if t != "" {
		t += "."
	}
	out := []string{t + "`id`", t + "`rev`", t + "`deleted`", t + "`vid`"}
	for _, c := range k.selected() {
		out = append(out, t+"`"+c+"`")
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
	vid     int64 // the version's primary key
}

// normKey is a short hash of the normalised text, indexed for exact-text deduplication.
func normKey(s string) string {
	h := fnv.New64a()
	h.Write([]byte(store.NormText(s)))
	return fmt.Sprintf("%016x", h.Sum64())
}

// tokenColumn stores the search tokens of a text between single spaces, so that a token
// is matched exactly by looking for " token ". Each is in its column form
// (columnTerm).
func tokenColumn(text string) (string, int) {
	toks := textsearch.Terms(text)
	if len(toks) == 0 {
		return " ", 0
	}
	for i, t := range toks {
		toks[i] = columnTerm(t)
	}
	return " " + strings.Join(toks, " ") + " ", len(toks)
}

// ftCut is the byte length at which MatrixOne's full-text tokenizer cuts a long
// word. The 2024-11 build fails the whole statement ("slice bounds out of range")
// when the cut falls inside a character: any non-ASCII word of 24 bytes or more
// whose 24th byte continues a character, such as a Russian or Greek word of 12
// letters.
const ftCut = 23

// columnTerm returns the form in which the tokens column holds a search term: the
// term itself, or, for a term the server's tokenizer cannot take (ftCut), an
// underscore and its bytes as letters a to p, two a byte, which no term of
// textsearch.Terms looks like (none starts with an underscore).
func columnTerm(t string) string {
	if len(t) <= ftCut || utf8.RuneStart(t[ftCut]) {
		return t
	}
	b := make([]byte, 1, 1+2*len(t))
	b[0] = '_'
	for i := 0; i < len(t); i++ {
		b = append(b, 'a'+t[i]>>4, 'a'+t[i]&15)
	}
	return string(b)
}

// termOfColumn returns the search term of a token of the tokens column: columnTerm
// undone.
func termOfColumn(tok string) string {
	if len(tok) < 3 || tok[0] != '_' || len(tok)%2 != 1 {
		return tok
	}
	b := make([]byte, 0, len(tok)/2)
	for i := 1; i < len(tok); i += 2 {
		hi, lo := tok[i]-'a', tok[i+1]-'a'
		if hi > 15 || lo > 15 {
			return tok
		}
		b = append(b, hi<<4|lo)
	}
	return string(b)
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

// parseVec parses a vecf32 value read as selectCols reads it: the hexadecimal form of
// its little-endian float32s (MatrixOne's hex of a vector), or the text form
// "[1, 2.5, 3]".
func parseVec(s string) ([]float32, error) {
	if !strings.HasPrefix(s, "[") {
		return parseVecHex(s)
	}
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

// parseVecHex parses the hexadecimal form of little-endian float32s.
func parseVecHex(s string) ([]float32, error) {
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("vector: %w", err)
	}
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("vector of %d bytes: not whole float32s", len(b))
	}
	if len(b) == 0 {
		return nil, nil
	}
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
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

// picksText encodes a message's picks for the picked_to column, as the design's
// cherry_picked_to holds them: [{"branch_name", "conversation_id", "picked_at"}].
// The message went through store.SyncPicks, so Picks names every branch of PickedTo.
func picksText(m store.Message) string {
	m = store.SyncPicks(m)
	return jsonText(m.Picks, len(m.Picks) == 0)
}

// decodePicks reads the picked_to column: an array of picks, or, as rows written
// before picks were recorded hold it, an array of branch names.
func decodePicks(s string) ([]store.Pick, error) {
	if s == "" {
		return nil, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal([]byte(s), &items); err != nil {
		return nil, err
	}
	picks := make([]store.Pick, len(items))
	for i, it := range items {
		if len(it) > 0 && it[0] == '"' {
			if err := json.Unmarshal(it, &picks[i].Branch); err != nil {
				return nil, err
			}
			continue
		}
		if err := json.Unmarshal(it, &picks[i]); err != nil {
			return nil, err
		}
	}
	return picks, nil
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
		v.ExpiresAt = micro(v.ExpiresAt)
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
	case store.Alias:
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
		return []any{f.Text, normKey(f.Text), tokens, n, dup.column(f.Embedding), f.Category, f.Confidence,
			string(f.Status), f.SourceType, f.SourceID, f.ParentID, f.SessionID, f.TaskID, f.AgentID,
			metaText(f.Metadata), verifyText(f.Verify), nullTime(f.CreatedAt), nullTime(f.UpdatedAt), nullTime(f.ExpiresAt)}
	case store.KindObservation:
		o, _ := r.(store.Observation)
		tokens, n := tokenColumn(o.Summary)
		return []any{o.SessionID, o.TaskID, o.AgentID, string(o.Type), o.Tool, o.Summary, tokens, n,
			o.RawInput, o.RawOutput, metaText(o.Metadata), nullTime(o.CreatedAt)}
	case store.KindRelation:
		x, _ := r.(store.Relation)
		return []any{x.Source, x.Target, x.Type, metaText(x.Properties), x.Confidence, nullTime(x.ValidFrom),
			nullTime(x.ValidTo), x.SessionID, x.TaskID, x.AgentID, nullTime(x.CreatedAt)}
	case store.KindConversation:
		c, _ := r.(store.Conversation)
		tokens, n := tokenColumn(c.Title)
		return []any{c.SessionID, c.AgentID, c.TaskID, c.Title, verifyText(c.Verify), metaText(c.Metadata),
			nullTime(c.CreatedAt), nullTime(c.UpdatedAt), tokens, n}
	case store.KindMessage:
		m, _ := r.(store.Message)
		tokens, n := tokenColumn(m.Content)
		return []any{m.ConversationID, m.Seq, string(m.Role), m.Content, m.Tool, picksText(m),
			m.SessionID, m.TaskID, m.AgentID, metaText(m.Metadata), nullTime(m.CreatedAt), tokens, n}
	case store.KindAlias:
		a, _ := r.(store.Alias)
		return []any{a.Target, nullTime(a.CreatedAt)}
	}
	panic("matrixone: unknown kind " + string(k))
}

// scanner is *sql.Rows or *sql.Row.
type scanner interface{ Scan(dest ...any) error }

// selected returns the data columns reads scan, in selectCols order.
func (k *kindSpec) selected() []string {
	var out []string
	for _, c := range k.cols {
		if c != "tokens" && c != "norm_key" && c != "dup_code" {
			out = append(out, c)
		}
	}
	return out
}

// scanRow reads one row in selectCols order. extra receives trailing columns the query
// added after them.
func scanRow(k store.Kind, sc scanner, extra ...any) (row, error) {
	return scanners[k](sc, extra)
}

// scanners read a row of each kind, each column into a destination named for it.
var scanners = map[store.Kind]func(scanner, []any) (row, error){
	store.KindFact:         scanFact,
	store.KindObservation:  scanObservation,
	store.KindRelation:     scanRelation,
	store.KindConversation: scanConversation,
	store.KindMessage:      scanMessage,
	store.KindAlias:        scanAlias,
}

// rowScan is one row being scanned: the columns every kind has, and helpers that
// decode column values, keeping the first decoding error.
type rowScan struct {
	r   row
	del int
	err error
}

// scan scans sc into the kind's columns, each bound by name in dest, then extra.
// A selected column without a destination is an error, not a silent misplacement.
func (rs *rowScan) scan(k store.Kind, sc scanner, dest map[string]any, extra []any) error {
	cols := specs[k].selected()
	all := make([]any, 0, 4+len(cols)+len(extra))
	all = append(all, &rs.r.id, &rs.r.rev, &rs.del, &rs.r.vid)
	for _, c := range cols {
		d, ok := dest[c]
		if !ok {
			return fmt.Errorf("day1: matrixone: column %s of %s tables has no destination in its scan", c, k)
		}
		all = append(all, d)
	}
	if len(dest) != len(cols) {
		return fmt.Errorf("day1: matrixone: the scan of %s rows names %d columns; the table has %d", k, len(dest), len(cols))
	}
	if err := sc.Scan(append(all, extra...)...); err != nil {
		return err
	}
	rs.r.deleted = rs.del != 0
	return nil
}

// done returns the row, or the first error decoding its values.
func (rs *rowScan) done(k store.Kind) (row, error) {
	if rs.err != nil {
		return rs.r, fmt.Errorf("decoding %s %q: %w", k, rs.r.id, rs.err)
	}
	return rs.r, nil
}

func (rs *rowScan) time(t sql.NullTime) time.Time {
	if !t.Valid {
		return time.Time{}
	}
	return t.Time.UTC()
}

func (rs *rowScan) meta(s string) map[string]string {
	if rs.err != nil {
		return nil
	}
	var m map[string]string
	m, rs.err = decodeMeta(s)
	return m
}

func (rs *rowScan) verify(s string) store.Verification {
	if rs.err != nil {
		return store.Verification{}
	}
	var v store.Verification
	v, rs.err = decodeVerify(s)
	return v
}

func scanFact(sc scanner, extra []any) (row, error) {
	var (
		rs                                         rowScan
		text, category, status, srcType, srcID     string
		parent, session, task, agent, meta, verify string
		confidence                                 float64
		created, updated, expires                  sql.NullTime
	)
	err := rs.scan(store.KindFact, sc, map[string]any{
		"expires_at": &expires, "txt": &text, "doc_len": &rs.r.docLen, "category": &category, "confidence": &confidence,
		"status": &status, "source_type": &srcType, "source_id": &srcID, "parent_id": &parent, "session_id": &session,
		"task_id": &task, "agent_id": &agent, "metadata": &meta, "verification": &verify,
		"created_at": &created, "updated_at": &updated,
	}, extra)
	if err != nil || rs.r.deleted {
		return rs.r, err
	}
	rs.r.rec = store.Fact{ID: rs.r.id, Text: text, Category: category, Confidence: confidence,
		Status: store.FactStatus(status), SourceType: srcType, SourceID: srcID, ParentID: parent, SessionID: session,
		TaskID: task, AgentID: agent, Metadata: rs.meta(meta), Verify: rs.verify(verify),
		CreatedAt: rs.time(created), UpdatedAt: rs.time(updated), ExpiresAt: rs.time(expires)}
	return rs.done(store.KindFact)
}

func scanObservation(sc scanner, extra []any) (row, error) {
	var (
		rs                                    rowScan
		session, task, agent, typ, tool, summ string
		rawIn, rawOut, meta                   string
		created                               sql.NullTime
	)
	err := rs.scan(store.KindObservation, sc, map[string]any{
		"session_id": &session, "task_id": &task, "agent_id": &agent, "obs_type": &typ, "tool": &tool, "summary": &summ,
		"doc_len": &rs.r.docLen, "raw_input": &rawIn, "raw_output": &rawOut, "metadata": &meta,
		"created_at": &created,
	}, extra)
	if err != nil || rs.r.deleted {
		return rs.r, err
	}
	rs.r.rec = store.Observation{ID: rs.r.id, SessionID: session, TaskID: task, AgentID: agent, Type: store.ObservationType(typ),
		Tool: tool, Summary: summ, RawInput: rawIn, RawOutput: rawOut, Metadata: rs.meta(meta),
		CreatedAt: rs.time(created)}
	return rs.done(store.KindObservation)
}

func scanRelation(sc scanner, extra []any) (row, error) {
	var (
		rs                                         rowScan
		src, dst, typ, props, session, task, agent string
		confidence                                 float64
		from, to, created                          sql.NullTime
	)
	err := rs.scan(store.KindRelation, sc, map[string]any{
		"src": &src, "dst": &dst, "rel_type": &typ, "properties": &props, "confidence": &confidence,
		"valid_from": &from, "valid_to": &to, "session_id": &session, "task_id": &task, "agent_id": &agent,
		"created_at": &created,
	}, extra)
	if err != nil || rs.r.deleted {
		return rs.r, err
	}
	rs.r.rec = store.Relation{ID: rs.r.id, Source: src, Target: dst, Type: typ, Properties: rs.meta(props), Confidence: confidence,
		ValidFrom: rs.time(from), ValidTo: rs.time(to), SessionID: session, TaskID: task, AgentID: agent, CreatedAt: rs.time(created)}
	return rs.done(store.KindRelation)
}

func scanConversation(sc scanner, extra []any) (row, error) {
	var (
		rs                                        rowScan
		session, agent, task, title, verify, meta string
		created, updated                          sql.NullTime
	)
	err := rs.scan(store.KindConversation, sc, map[string]any{
		"session_id": &session, "agent_id": &agent, "task_id": &task, "title": &title, "verification": &verify,
		"metadata": &meta, "created_at": &created, "updated_at": &updated, "doc_len": &rs.r.docLen,
	}, extra)
	if err != nil || rs.r.deleted {
		return rs.r, err
	}
	rs.r.rec = store.Conversation{ID: rs.r.id, SessionID: session, AgentID: agent, TaskID: task, Title: title,
		Verify: rs.verify(verify), Metadata: rs.meta(meta), CreatedAt: rs.time(created), UpdatedAt: rs.time(updated)}
	return rs.done(store.KindConversation)
}

func scanMessage(sc scanner, extra []any) (row, error) {
	var (
		rs                                rowScan
		conv, role, content, tool, picked string
		session, task, agent, meta        string
		seq                               int
		created                           sql.NullTime
	)
	err := rs.scan(store.KindMessage, sc, map[string]any{
		"conversation_id": &conv, "seq": &seq, "msg_role": &role, "content": &content, "tool": &tool,
		"picked_to": &picked, "session_id": &session, "task_id": &task, "agent_id": &agent, "metadata": &meta,
		"created_at": &created, "doc_len": &rs.r.docLen,
	}, extra)
	if err != nil || rs.r.deleted {
		return rs.r, err
	}
	picks, err := decodePicks(picked)
	if err != nil {
		rs.err = err
	}
	rs.r.rec = store.SyncPicks(store.Message{ID: rs.r.id, ConversationID: conv, Seq: seq, Role: store.Role(role), Content: content, Tool: tool,
		Picks: picks, SessionID: session, TaskID: task, AgentID: agent, Metadata: rs.meta(meta), CreatedAt: rs.time(created)})
	return rs.done(store.KindMessage)
}

func scanAlias(sc scanner, extra []any) (row, error) {
	var (
		rs      rowScan
		target  string
		created sql.NullTime
	)
	err := rs.scan(store.KindAlias, sc, map[string]any{"target": &target, "created_at": &created}, extra)
	if err != nil || rs.r.deleted {
		return rs.r, err
	}
	rs.r.rec = store.Alias{ID: rs.r.id, Target: target, CreatedAt: rs.time(created)}
	return rs.done(store.KindAlias)
}
