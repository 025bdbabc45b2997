package store

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/day1ai/day1/llm"
)

// Limits on input. They keep every backend's identifiers and rows within bounds.
const (
	// MaxIDLen bounds every record, session and snapshot id, in bytes (ids are ASCII).
	// The design's tables hold 36-character UUIDs; day1 ids are often chosen by the
	// caller and longer ("claude-code:session:<uuid>"), so the bound is wider.
	MaxIDLen         = 128
	MaxBranchNameLen = 100
	// MaxCategoryLen bounds a fact's category, in characters (not bytes), so that any
	// category the design's 50-character column holds, in any script, fits here too.
	MaxCategoryLen   = 100
	MaxTextLen       = 1 << 20 // bytes of Fact.Text, Observation.Summary, Message.Content
	MaxRawLen        = 64 << 10
	MaxMetadataPairs = 64
	MaxEmbeddingDims = llm.MaxDimensions
	MaxBatch         = 10000
)

var (
	branchPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)*$`)
)

// ValidateID checks a record, session or snapshot id: 1 to MaxIDLen characters of
// letters, digits and . _ : @ -, starting with a letter or digit.
func ValidateID(field, id string) error {
	if id == "" {
		return Invalid(field, "must not be empty", nil)
	}
	if len(id) > MaxIDLen || !validID(id) {
		return Invalid(field, fmt.Sprintf("must be 1 to %d characters of letters, digits and . _ : @ -, starting with a letter or digit", MaxIDLen), id)
	}
	return nil
}

// validID reports whether id is letters, digits and . _ : @ -, starting with a letter
// or a digit. Every write checks it, so it runs without a regular expression.
func validID(id string) bool {
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case i > 0 && (c == '.' || c == '_' || c == ':' || c == '@' || c == '-'):
		default:
			return false
		}
	}
	return id != ""
}

// ValidateBranchName checks a branch name: segments of letters, digits and . _ -
// separated by single slashes, like "task/fix-auth/agent-a", at most MaxBranchNameLen
// characters.
func ValidateBranchName(field, name string) error {
	if name == "" {
		return Invalid(field, "must not be empty", nil)
	}
	switch {
	case len(name) > MaxBranchNameLen:
		return Invalid(field, fmt.Sprintf("is %d characters long; at most %d are allowed", len(name), MaxBranchNameLen), name)
	case strings.Contains(name, ".."):
		return Invalid(field, "must not contain '..'", name)
	case !branchPattern.MatchString(name):
		return Invalid(field, "must be segments of letters, digits and . _ - separated by single '/', each starting with a letter or digit, e.g. task/fix-auth/agent-a", name)
	}
	return nil
}

// ValidateEmbedding checks that every component is finite and that the vector is not
// all zeros. dims, when positive, is the required length.
func ValidateEmbedding(field string, v []float32, dims int) error {
	if len(v) == 0 {
		return nil
	}
	if len(v) > MaxEmbeddingDims {
		return Invalid(field, fmt.Sprintf("has %d dimensions; at most %d are allowed", len(v), MaxEmbeddingDims), nil)
	}
	if dims > 0 && len(v) != dims {
		return Invalid(field, fmt.Sprintf("has %d dimensions; this store holds %d-dimension embeddings", len(v), dims), nil)
	}
	// A NaN or infinite component makes the sum of squares NaN or infinite (finite
	// float32 squares cannot overflow a float64), so one pass finds both the length and
	// whether a component needs reporting. Four running sums keep the additions
	// independent of each other.
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(v); i += 4 {
		s0 += float64(v[i]) * float64(v[i])
		s1 += float64(v[i+1]) * float64(v[i+1])
		s2 += float64(v[i+2]) * float64(v[i+2])
		s3 += float64(v[i+3]) * float64(v[i+3])
	}
	for ; i < len(v); i++ {
		s0 += float64(v[i]) * float64(v[i])
	}
	sum := (s0 + s1) + (s2 + s3)
	if math.IsNaN(sum) || math.IsInf(sum, 0) {
		for i, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return Invalid(field, fmt.Sprintf("component %d is %v; embeddings must be finite", i, x), nil)
			}
		}
	}
	if sum == 0 {
		return Invalid(field, "is all zeros; it has no direction to compare", nil)
	}
	return nil
}

func validateText(field, s string, max int, required bool) error {
	if required && strings.TrimSpace(s) == "" {
		return Invalid(field, "must not be empty", nil)
	}
	if len(s) > max {
		return Invalid(field, fmt.Sprintf("is %d bytes; at most %d are allowed", len(s), max), nil)
	}
	if !utf8.ValidString(s) {
		return Invalid(field, "must be valid UTF-8", nil)
	}
	return nil
}

// Provenance keys: the metadata keys (a relation's Properties) a bundle import
// writes on each record it lands, naming the bundle it came from. They are the
// system's, not the user's: MaxMetadataPairs counts the pairs besides them.
const (
	MetaBundleID     = "bundle_id"        // the bundle's id
	MetaBundleSource = "bundle_source"    // the bundle's source: task/<name> or the branch
	MetaOriginID     = "bundle_origin_id" // the record's id in the bundle
)

// Correction keys: the metadata keys a correction writes on the version it makes
// (day1's Client.CorrectFact): who corrected the fact, why, and how. Like the
// provenance keys, they are the system's and do not count against MaxMetadataPairs.
const (
	MetaCorrectedBy      = "corrected_by"      // who corrected the fact
	MetaCorrectionReason = "correction_reason" // why
	MetaCorrection       = "correction"        // update, invalidate or delete
)

// userPairs is the number of m's pairs that count against MaxMetadataPairs: all but
// the provenance and correction keys.
func userPairs(m map[string]string) int {
	n := len(m)
	for _, k := range []string{MetaBundleID, MetaBundleSource, MetaOriginID, MetaCorrectedBy, MetaCorrectionReason, MetaCorrection} {
		if _, ok := m[k]; ok {
			n--
		}
	}
	return n
}

func validateMeta(field string, m map[string]string) error {
	if n := userPairs(m); n > MaxMetadataPairs {
		return Invalid(field, fmt.Sprintf("has %d pairs; at most %d are allowed (the provenance and correction keys not counted)", n, MaxMetadataPairs), nil)
	}
	for k, v := range m {
		if k == "" || len(k) > 256 || !utf8.ValidString(k) {
			return Invalid(field, "keys must be 1 to 256 bytes of UTF-8", k)
		}
		if len(v) > 4096 || !utf8.ValidString(v) {
			return Invalid(field+"["+k+"]", "values must be at most 4096 bytes of UTF-8", nil)
		}
	}
	return nil
}

// finite reports whether x is neither NaN nor an infinity.
func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

func validateUnit(field string, x float64) error {
	if math.IsNaN(x) || x < 0 || x > 1 {
		return Invalid(field, "must be between 0 and 1", x)
	}
	return nil
}

func validateScores(field string, s Scores) error {
	vals := [...]float64{s.Accuracy, s.Relevance, s.Specificity, s.Tools, s.Reasoning, s.Outcome, s.Errors}
	for i, x := range vals {
		// The field name is built only for an error: validation runs on every write.
		if math.IsNaN(x) || x < 0 || x > 1 {
			names := [...]string{"Accuracy", "Relevance", "Specificity", "Tools", "Reasoning", "Outcome", "Errors"}
			return validateUnit(field+"."+names[i], x)
		}
	}
	return nil
}

func optionalID(field, id string) error {
	if id == "" {
		return nil
	}
	return ValidateID(field, id)
}

// ValidateRecord checks a record before it is written. dims, when positive, is the
// embedding length the store requires.
func ValidateRecord(r Record, dims int) error {
	switch r := r.(type) {
	case Fact:
		return firstErr(
			ValidateID("Fact.ID", r.ID),
			validateText("Fact.Text", r.Text, MaxTextLen, true),
			ValidateEmbedding("Fact.Embedding", r.Embedding, dims),
			validateUnit("Fact.Confidence", r.Confidence),
			validStatus(r.Status),
			optionalID("Fact.ParentID", r.ParentID),
			optionalID("Fact.SessionID", r.SessionID),
			validateMeta("Fact.Metadata", r.Metadata),
			validateCategory(r.Category),
			validateUnit("Fact.Verify.Score", r.Verify.Score),
			validateScores("Fact.Verify.Scores", r.Verify.Scores),
			validateExpiry(r),
		)
	case Observation:
		var typeErr error
		if !r.Type.Valid() {
			typeErr = Invalid("Observation.Type", "must be one of tool_use, discovery, decision, error, insight", r.Type)
		}
		return firstErr(
			ValidateID("Observation.ID", r.ID),
			validateText("Observation.Summary", r.Summary, MaxTextLen, true),
			typeErr,
			ValidateEmbedding("Observation.Embedding", r.Embedding, dims),
			validateText("Observation.RawInput", r.RawInput, MaxRawLen, false),
			validateText("Observation.RawOutput", r.RawOutput, MaxRawLen, false),
			optionalID("Observation.SessionID", r.SessionID),
			validateMeta("Observation.Metadata", r.Metadata),
		)
	case Relation:
		var rangeErr error
		if !r.ValidTo.IsZero() && !r.ValidFrom.IsZero() && !r.ValidTo.After(r.ValidFrom) {
			rangeErr = Invalid("Relation.ValidTo", "must be after ValidFrom (or zero for open-ended)", r.ValidTo.Format(time.RFC3339))
		}
		return firstErr(
			ValidateID("Relation.ID", r.ID),
			validateText("Relation.Source", r.Source, 200, true),
			validateText("Relation.Target", r.Target, 200, true),
			validateText("Relation.Type", r.Type, 100, true),
			validateUnit("Relation.Confidence", r.Confidence),
			rangeErr,
			validateMeta("Relation.Properties", r.Properties),
		)
	case Conversation:
		return firstErr(
			ValidateID("Conversation.ID", r.ID),
			validateText("Conversation.Title", r.Title, 1000, false),
			optionalID("Conversation.SessionID", r.SessionID),
			validateMeta("Conversation.Metadata", r.Metadata),
			validateUnit("Conversation.Verify.Score", r.Verify.Score),
			validateScores("Conversation.Verify.Scores", r.Verify.Scores),
		)
	case Message:
		var roleErr, seqErr error
		if !r.Role.Valid() {
			roleErr = Invalid("Message.Role", "must be one of user, assistant, tool_call, tool_result, system", r.Role)
		}
		if r.Seq < 0 {
			seqErr = Invalid("Message.Seq", "must be 0 or more", r.Seq)
		}
		return firstErr(
			ValidateID("Message.ID", r.ID),
			ValidateID("Message.ConversationID", r.ConversationID),
			roleErr, seqErr,
			validateText("Message.Content", r.Content, MaxTextLen, false),
			ValidateEmbedding("Message.Embedding", r.Embedding, dims),
			validateMeta("Message.Metadata", r.Metadata),
		)
	case Alias:
		var selfErr error
		if r.Target == r.ID && r.ID != "" {
			selfErr = Invalid("Alias.Target", "must name another fact than the alias's own ID", r.Target)
		}
		return firstErr(
			ValidateID("Alias.ID", r.ID),
			ValidateID("Alias.Target", r.Target),
			selfErr,
		)
	case nil:
		return Invalid("Record", "must not be nil", nil)
	}
	return Invalid("Record", "must be a Fact, Observation, Relation, Conversation, Message or Alias value", fmt.Sprintf("%T", r))
}

// validateCategory checks a fact's category: at most MaxCategoryLen characters of
// UTF-8.
func validateCategory(c string) error {
	if !utf8.ValidString(c) {
		return Invalid("Fact.Category", "must be valid UTF-8", nil)
	}
	if n := utf8.RuneCountInString(c); n > MaxCategoryLen {
		return Invalid("Fact.Category", fmt.Sprintf("is %d characters; at most %d are allowed", n, MaxCategoryLen), nil)
	}
	return nil
}

func validStatus(s FactStatus) error {
	if s == "" || s.Valid() {
		return nil
	}
	return Invalid("Fact.Status", "must be one of active, superseded, invalidated, verified, promoted", s)
}

// ValidateRef checks a record reference.
func ValidateRef(field string, r Ref) error {
	if !r.Kind.Valid() {
		return Invalid(field+".Kind", "must be one of fact, observation, relation, conversation, message, alias", r.Kind)
	}
	return ValidateID(field+".ID", r.ID)
}

// ValidateFilter checks a filter.
func ValidateFilter(f Filter) error {
	if f.Status != "" && !f.Status.Valid() {
		return validStatus(f.Status)
	}
	for _, s := range f.Statuses {
		if !s.Valid() {
			return Invalid("Filter.Statuses", "must hold only active, superseded, invalidated, verified, promoted", s)
		}
	}
	if f.ObsType != "" && !f.ObsType.Valid() {
		return Invalid("Filter.ObsType", "must be one of tool_use, discovery, decision, error, insight", f.ObsType)
	}
	if f.Role != "" && !f.Role.Valid() {
		return Invalid("Filter.Role", "must be one of user, assistant, tool_call, tool_result, system", f.Role)
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && !f.Until.After(f.Since) {
		return Invalid("Filter.Until", "must be after Since", f.Until.Format(time.RFC3339Nano))
	}
	return nil
}

// ValidateListQuery checks a list query.
func ValidateListQuery(q ListQuery) error {
	if !q.Kind.Valid() {
		return Invalid("ListQuery.Kind", "must be one of fact, observation, relation, conversation, message, alias", q.Kind)
	}
	if q.Limit < 0 || q.Limit > MaxLimit {
		return Invalid("ListQuery.Limit", fmt.Sprintf("must be between 0 (no limit) and %d", MaxLimit), q.Limit)
	}
	if q.Offset < 0 {
		return Invalid("ListQuery.Offset", "must be 0 or more", q.Offset)
	}
	switch q.Order {
	case "", OrderCreated, OrderID, OrderSeq, OrderUpdated:
	default:
		return Invalid("ListQuery.Order", "must be created, updated, id or seq", q.Order)
	}
	return ValidateFilter(q.Filter)
}

// NormalizeSearch fills a search query's defaults and checks it. dims, when positive,
// is the embedding length the store holds.
func NormalizeSearch(q SearchQuery, dims int) (SearchQuery, error) {
	if q.Mode == "" {
		q.Mode = Hybrid
	}
	if !q.Mode.Valid() {
		return q, Invalid("SearchQuery.Mode", "must be keyword, vector or hybrid", q.Mode)
	}
	if q.Limit == 0 {
		q.Limit = DefaultSearchLimit
	}
	if q.Limit < 1 || q.Limit > MaxLimit {
		return q, Invalid("SearchQuery.Limit", fmt.Sprintf("must be between 1 and %d", MaxLimit), q.Limit)
	}
	if len(q.Kinds) == 0 {
		q.Kinds = SearchKinds
	}
	for i, k := range q.Kinds {
		if !slices.Contains(SearchKinds, k) {
			return q, Invalid("SearchQuery.Kinds", "may hold fact, observation, conversation and message", k)
		}
		if slices.Contains(q.Kinds[:i], k) {
			return q, Invalid("SearchQuery.Kinds", "must name each kind once", k)
		}
	}
	if q.Window < 0 || q.Window > MaxWindow {
		return q, Invalid("SearchQuery.Window", fmt.Sprintf("must be between 0 (no window) and %d messages", MaxWindow), q.Window)
	}
	if q.WindowWeight == 0 {
		q.WindowWeight = DefaultWindowWeight
	}
	if q.WindowWeight < 0 {
		q.WindowWeight = -1
	} else if err := validateUnit("SearchQuery.WindowWeight", q.WindowWeight); err != nil {
		return q, err
	}
	if err := validateText("SearchQuery.Text", q.Text, MaxTextLen, false); err != nil {
		return q, err
	}
	switch q.Mode {
	case Keyword:
		if strings.TrimSpace(q.Text) == "" {
			return q, Invalid("SearchQuery.Text", "must not be empty for a keyword search", nil)
		}
	case Vector:
		if len(q.Vector) == 0 {
			return q, Invalid("SearchQuery.Vector", "must be set for a vector search (the client embeds SearchQuery.Text for you)", nil)
		}
	case Hybrid:
		if strings.TrimSpace(q.Text) == "" && len(q.Vector) == 0 {
			return q, Invalid("SearchQuery.Text", "must not be empty", nil)
		}
	}
	if err := ValidateEmbedding("SearchQuery.Vector", q.Vector, dims); err != nil {
		return q, err
	}
	if q.Fusion == "" {
		q.Fusion = RRF
	}
	if q.Fusion != RRF && q.Fusion != Weighted && q.Fusion != Fill {
		return q, Invalid("SearchQuery.Fusion", "must be rrf, weighted or fill", q.Fusion)
	}
	if q.RRFK == 0 {
		q.RRFK = DefaultRRFK
	}
	if q.RRFK < 0 || !finite(q.RRFK) {
		return q, Invalid("SearchQuery.RRFK", "must be a positive, finite number", q.RRFK)
	}
	if q.Alpha == 0 {
		q.Alpha = DefaultAlpha
	}
	if err := validateUnit("SearchQuery.Alpha", q.Alpha); err != nil {
		return q, err
	}
	if !q.IncludeHistory && q.Filter.Status == "" && len(q.Filter.Statuses) == 0 {
		q.Filter.ExcludeStatuses = append(slices.Clip(q.Filter.ExcludeStatuses), HistoryStatuses...)
	}
	if q.VectorWeight == 0 {
		q.VectorWeight = 1
	}
	if err := validateUnit("SearchQuery.VectorWeight", q.VectorWeight); err != nil {
		return q, err
	}
	if !finite(q.MinScore) {
		return q, Invalid("SearchQuery.MinScore", "must be a finite number (0 keeps every hit)", q.MinScore)
	}
	if !(q.MinRelevance >= 0 && q.MinRelevance <= 1) {
		return q, Invalid("SearchQuery.MinRelevance", "must be between 0 (every hit) and 1", q.MinRelevance)
	}
	return q, ValidateFilter(q.Filter)
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// NormalizeSession fills a session's defaults (Branch DefaultBranch, Status active) and
// checks it. Every store calls it before writing a session.
func NormalizeSession(s Session) (Session, error) {
	if err := ValidateID("Session.ID", s.ID); err != nil {
		return s, err
	}
	if s.Branch == "" {
		s.Branch = DefaultBranch
	}
	if err := ValidateBranchName("Session.Branch", s.Branch); err != nil {
		return s, err
	}
	if s.Status == "" {
		s.Status = SessionActive
	}
	if !s.Status.Valid() {
		return s, Invalid("Session.Status", "must be active, completed or abandoned", s.Status)
	}
	return s, nil
}

// ValidateBranchStatus checks a change of a branch's status: a valid status, and the
// default branch only ever active (every default write goes to it, so it can be
// neither archived nor marked merged).
func ValidateBranchStatus(name string, status BranchStatus) error {
	if !status.Valid() {
		return Invalid("status", "must be active, merged or archived", status)
	}
	if name == DefaultBranch && status != BranchActive {
		return Invalid("status", "must be active for the default branch, which can be neither archived nor marked merged", status)
	}
	return nil
}

// CheckInstant checks a read of branch b at instant t: a branch's history begins at
// its fork (ForkedAt; for the default branch, when the store was made), and an
// instant before it is ErrTooOld rather than the parent's past or an empty memory.
func CheckInstant(b Branch, t time.Time) error {
	if t.Before(b.ForkedAt) {
		return fmt.Errorf("%w: branch %q begins at %s; %s is before it",
			ErrTooOld, b.Name, b.ForkedAt.UTC().Format(time.RFC3339Nano), t.UTC().Format(time.RFC3339Nano))
	}
	return nil
}

// ValidateBranchSpec checks the names a BranchSpec gives: Name, and From when set.
func ValidateBranchSpec(spec BranchSpec) error {
	if err := ValidateBranchName("BranchSpec.Name", spec.Name); err != nil {
		return err
	}
	if spec.From != "" {
		return ValidateBranchName("BranchSpec.From", spec.From)
	}
	return nil
}

// ValidateDeletes checks the refs of a Delete: at most MaxBatch, each a valid ref.
func ValidateDeletes(refs []Ref) error {
	if len(refs) > MaxBatch {
		return Invalid("refs", fmt.Sprintf("a batch holds at most %d refs", MaxBatch), len(refs))
	}
	for i, r := range refs {
		if err := ValidateRef(fmt.Sprintf("refs[%d]", i), r); err != nil {
			return err
		}
	}
	return nil
}

// ValidateMergePlan checks what a merge plan says beside its records: the strategy,
// two different valid branch names, valid delete refs, and no record named twice
// among the puts and deletes. The puts themselves are checked by the store
// (ValidateRecord), which may skip the versions it holds already.
func ValidateMergePlan(plan MergePlan) error {
	if !plan.Record.Strategy.Valid() {
		return Invalid("MergePlan.Record.Strategy", "must be native, cherry_pick, squash or auto", plan.Record.Strategy)
	}
	if err := ValidateBranchName("MergePlan.Source", plan.Source); err != nil {
		return err
	}
	if err := ValidateBranchName("MergePlan.Target", plan.Target); err != nil {
		return err
	}
	if plan.Source == plan.Target {
		return Invalid("MergePlan.Target", "must differ from the source", plan.Target)
	}
	seen := make(map[Ref]bool, len(plan.Puts)+len(plan.Deletes))
	for i, r := range plan.Puts {
		if r == nil {
			continue // ValidateRecord reports it
		}
		ref := RefOf(r)
		if seen[ref] {
			return Invalid("MergePlan.Puts", "repeats "+ref.String(), i)
		}
		seen[ref] = true
	}
	for i, ref := range plan.Deletes {
		if err := ValidateRef(fmt.Sprintf("MergePlan.Deletes[%d]", i), ref); err != nil {
			return err
		}
		if seen[ref] {
			return Invalid("MergePlan.Deletes", "repeats "+ref.String(), i)
		}
		seen[ref] = true
	}
	return nil
}

// ValidatePutBatch checks what a Put's batch and options may hold before any record
// is read: at most MaxBatch records, and a DedupeThreshold from 0 (off) to 1.
func ValidatePutBatch(recs []Record, opts PutOptions) error {
	if len(recs) > MaxBatch {
		return Invalid("records", fmt.Sprintf("a batch holds at most %d records", MaxBatch), len(recs))
	}
	if opts.DedupeThreshold < 0 || opts.DedupeThreshold > 1 {
		return Invalid("PutOptions.DedupeThreshold", "must be between 0 (off) and 1", opts.DedupeThreshold)
	}
	return nil
}

// ValidateMergeFilter checks a MergeFilter's limit.
func ValidateMergeFilter(f MergeFilter) error {
	if f.Limit < 0 || f.Limit > MaxLimit {
		return Invalid("MergeFilter.Limit", fmt.Sprintf("must be between 0 (no limit) and %d", MaxLimit), f.Limit)
	}
	return nil
}

// Match reports whether the filter keeps a merge record (its limit aside).
func (f MergeFilter) Match(m MergeRecord) bool {
	return (f.Source == "" || m.Source == f.Source) && (f.Target == "" || m.Target == f.Target) &&
		(f.Branch == "" || m.Source == f.Branch || m.Target == f.Branch)
}

// validateExpiry checks a fact's TTL and ExpiresAt: a TTL not negative and not given
// with ExpiresAt, and an ExpiresAt after CreatedAt when both are known.
func validateExpiry(f Fact) error {
	switch {
	case f.TTL < 0:
		return Invalid("Fact.TTL", "must not be negative (0 sets no expiry)", f.TTL.String())
	case f.TTL > 0 && !f.ExpiresAt.IsZero():
		return Invalid("Fact.TTL", "is given with ExpiresAt; give one of them", f.TTL.String())
	case !f.ExpiresAt.IsZero() && !f.CreatedAt.IsZero() && !f.ExpiresAt.After(f.CreatedAt):
		return Invalid("Fact.ExpiresAt", "must be after the fact's CreatedAt (the time of the write unless given): an expiry in the past",
			f.ExpiresAt.Format(time.RFC3339Nano))
	}
	return nil
}
