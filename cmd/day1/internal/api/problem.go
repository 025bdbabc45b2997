package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"unicode"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/internal/memview"
)

// Problem is an error as RFC 9457 problem details, with the library's error code and
// the data of typed errors as extension members.
type Problem struct {
	Type     string `json:"type"`
	Title    string `json:"title"`
	Status   int    `json:"status"`
	Detail   string `json:"detail,omitempty"`
	Instance string `json:"instance,omitempty"`
	// Code names the class of error: invalid_argument, not_found, exists, conflict,
	// merge_blocked, stale, archived, locked, closed, not_supported, too_old,
	// too_large, unsupported_media_type, unauthorized, forbidden, method_not_allowed,
	// timeout, internal.
	Code string `json:"code"`
	// Field is the input a validation error names.
	Field string `json:"field,omitempty"`
	// Conflicts lists the conflicts that stopped a merge.
	Conflicts []memview.Conflict `json:"conflicts,omitempty"`
	// Offenses lists the records a merge gate refused.
	Offenses []day1.Offense `json:"offenses,omitempty"`
}

// classes maps the library's sentinels to a code and a status, most specific first.
var classes = []struct {
	err    error
	code   string
	status int
}{
	{day1.ErrInvalidArgument, "invalid_argument", http.StatusBadRequest},
	{day1.ErrNotFound, "not_found", http.StatusNotFound},
	{day1.ErrExists, "exists", http.StatusConflict},
	{day1.ErrMergeBlocked, "merge_blocked", http.StatusConflict},
	{day1.ErrConflict, "conflict", http.StatusConflict},
	{day1.ErrStale, "stale", http.StatusConflict},
	{day1.ErrBranchArchived, "archived", http.StatusConflict},
	{day1.ErrLocked, "locked", http.StatusLocked},
	{day1.ErrClosed, "closed", http.StatusServiceUnavailable},
	{day1.ErrNotSupported, "not_supported", http.StatusNotImplemented},
	{day1.ErrTooOld, "too_old", http.StatusUnprocessableEntity},
	{context.DeadlineExceeded, "timeout", http.StatusGatewayTimeout},
}

// ProblemFor returns the problem details that describe err.
func ProblemFor(err error) Problem {
	p := Problem{Code: "internal", Status: http.StatusInternalServerError, Detail: memview.ErrorText(err)}
	var mbe *http.MaxBytesError
	var um *unsupportedMedia
	if errors.As(err, &mbe) {
		p.Code, p.Status = "too_large", http.StatusRequestEntityTooLarge
	} else if errors.As(err, &um) {
		p.Code, p.Status = "unsupported_media_type", http.StatusUnsupportedMediaType
	} else {
		for _, c := range classes {
			if errors.Is(err, c.err) {
				p.Code, p.Status = c.code, c.status
				break
			}
		}
	}
	p.Type = "urn:day1:problem:" + p.Code
	p.Title = http.StatusText(p.Status)
	var ve *day1.ValidationError
	if errors.As(err, &ve) && ve.Field != "" {
		p.Field = jsonField(ve.Field)
		p.Detail = strings.Replace(p.Detail, ve.Field, p.Field, 1)
	}
	var mce *day1.MergeConflictError
	if errors.As(err, &mce) {
		d := memview.DiffView(&day1.Diff{Conflicts: mce.Conflicts})
		p.Conflicts = d.Conflicts
	}
	var mbl *day1.MergeBlockedError
	if errors.As(err, &mbl) {
		p.Offenses = mbl.Offenses
	}
	return p
}

// writeProblem writes err as problem details.
func writeProblem(w http.ResponseWriter, r *http.Request, err error) {
	p := ProblemFor(err)
	p.Instance = r.URL.Path
	writeProblemDetails(w, p)
}

func writeProblemDetails(w http.ResponseWriter, p Problem) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(p.Status)
	json.NewEncoder(w).Encode(p)
}

// badRequest is an error in the request itself (its syntax rather than its meaning).
type badRequest struct {
	field, msg string
}

func (e *badRequest) Error() string { return "day1: " + e.field + ": " + e.msg }
func (e *badRequest) Is(target error) bool {
	return target == day1.ErrInvalidArgument
}

// bodyTypes are the library's types that request bodies hold, by the Go name a
// validation error starts its field with.
var bodyTypes = map[string]reflect.Type{
	"Fact":         reflect.TypeFor[day1.Fact](),
	"Observation":  reflect.TypeFor[day1.Observation](),
	"Relation":     reflect.TypeFor[day1.Relation](),
	"Conversation": reflect.TypeFor[day1.Conversation](),
	"Message":      reflect.TypeFor[day1.Message](),
	"SearchQuery":  reflect.TypeFor[day1.SearchQuery](),
}

// jsonField returns a validation error's field as a client of the API names it: the
// JSON names of a body's members ("Fact.ExpiresAt" is "expires_at",
// "Fact.Verify.At" is "verification.at"), a Go name the types do not hold in snake case,
// and a name already in lower case as it is.
func jsonField(field string) string {
	parts := strings.Split(field, ".")
	t := bodyTypes[parts[0]]
	if len(parts) > 1 && parts[0] != "" && unicode.IsUpper(rune(parts[0][0])) {
		parts = parts[1:]
	}
	for i, part := range parts {
		name, index, _ := strings.Cut(part, "[")
		if index != "" {
			index = "[" + index
		}
		json := snake(name)
		if t != nil {
			if f, ok := t.FieldByName(name); ok {
				if tag, _, _ := strings.Cut(f.Tag.Get("json"), ","); tag != "" && tag != "-" {
					json = tag
				}
				t = f.Type
				for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
					t = t.Elem()
				}
				if t.Kind() != reflect.Struct {
					t = nil
				}
			} else {
				t = nil
			}
		}
		parts[i] = json + index
	}
	return strings.Join(parts, ".")
}

// snake writes a Go name in snake case: ExpiresAt is expires_at, CorrelationID
// correlation_id, DSN dsn.
func snake(name string) string {
	rs := []rune(name)
	var b strings.Builder
	for i, r := range rs {
		if unicode.IsUpper(r) && i > 0 && (unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1]) ||
			i+1 < len(rs) && unicode.IsLower(rs[i+1])) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}
