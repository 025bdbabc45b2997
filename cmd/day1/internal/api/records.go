package api

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/internal/memview"
	"github.com/day1ai/day1/store"
)

// Info is what GET /api/v1/info returns.
type Info struct {
	Capabilities day1.Capabilities `json:"capabilities"`
	// DefaultBranch is the branch reads use when none is named.
	DefaultBranch string `json:"default_branch"`
}

func (s *Server) info(w http.ResponseWriter, r *http.Request) (any, error) {
	return Info{Capabilities: s.c.Capabilities(), DefaultBranch: day1.DefaultBranch}, nil
}

// Written is the result of a write.
type Written struct {
	Outcome    day1.Outcome    `json:"outcome"`
	Record     *memview.Record `json:"record"`
	Replaced   string          `json:"replaced,omitempty"`
	Similarity float64         `json:"similarity,omitempty"`
	EmbedError string          `json:"embed_error,omitempty"`
}

func written[T day1.Record](w day1.Written[T]) any {
	out := Written{Outcome: w.Outcome, Record: memview.View(w.Record), Replaced: w.Replaced, Similarity: w.Similarity}
	if w.EmbedErr != nil {
		out.EmbedError = w.EmbedErr.Error()
	}
	if w.Outcome == day1.Created || w.Outcome == day1.Superseded {
		return created{out}
	}
	return out
}

// listOptions reads the options of a list.
func listOptions(q *query) day1.ListOptions {
	return day1.ListOptions{
		Branch: q.str("branch"), Filter: q.filter(), Desc: q.bool("desc"),
		Limit: q.int("limit"), Offset: q.int("offset"), IncludeExpired: q.bool("include_expired"),
	}
}

// defaultPage is the most records a list returns when the request sets no limit.
const defaultPage = 1000

// linkNext adds a Link header naming the next page of a list: the request with offset
// and limit set.
func linkNext(w http.ResponseWriter, r *http.Request, offset, limit int) {
	next := *r.URL
	v := next.Query()
	v.Set("offset", strconv.Itoa(offset))
	v.Set("limit", strconv.Itoa(limit))
	next.RawQuery = v.Encode()
	w.Header().Add("Link", "<"+next.RequestURI()+`>; rel="next"`)
}

// pageOf reads, with fetch, the page of page items from offset: it asks for one more
// to learn whether another page follows (at the largest size, which cannot take one
// more, for the first of the next page), and names the next page in a Link header
// when one does.
func pageOf[T any](w http.ResponseWriter, r *http.Request, offset, page int, fetch func(offset, limit int) ([]T, error)) ([]T, error) {
	limit := page
	if page > 0 && page < store.MaxLimit {
		limit++
	}
	items, err := fetch(offset, limit)
	if err != nil {
		return nil, err
	}
	more := page > 0 && len(items) > page
	if !more && page > 0 && len(items) == store.MaxLimit {
		rest, err := fetch(offset+page, 1)
		if err != nil {
			return nil, err
		}
		more = len(rest) > 0
	}
	if more {
		items = items[:page]
		linkNext(w, r, offset+page, page)
	}
	return items, nil
}

// paged returns the page of items the request's offset and limit ask for (every item
// when it sets no limit), with a Link header naming the next page when more follow.
func paged[T any](w http.ResponseWriter, r *http.Request, items []T) (any, error) {
	qq := q(r)
	offset, limit := qq.int("offset"), qq.int("limit")
	switch {
	case qq.err != nil:
		return nil, qq.err
	case offset < 0:
		return nil, &badRequest{"offset", "must be 0 or more"}
	case limit < 0 || limit > store.MaxLimit:
		return nil, &badRequest{"limit", fmt.Sprintf("must be between 1 and %d", store.MaxLimit)}
	}
	page := store.Page(items, offset, limit)
	if limit > 0 && len(items)-offset > limit {
		linkNext(w, r, offset+limit, limit)
	}
	if page == nil {
		page = []T{}
	}
	return page, nil
}

// list runs a Reader's list method and returns the views of its records, a page at a
// time: defaultPage records unless the request sets a limit, and a Link header naming
// the next page when more follow.
func list[T day1.Record](s *Server, w http.ResponseWriter, r *http.Request, fn func(day1.Reader, context.Context, day1.ListOptions) ([]T, error)) (any, error) {
	qq := q(r)
	o := listOptions(qq)
	if qq.err != nil {
		return nil, qq.err
	}
	if o.Limit == 0 {
		o.Limit = defaultPage
	}
	if o.Limit < 0 || o.Limit > store.MaxLimit {
		return nil, &badRequest{"limit", fmt.Sprintf("must be between 1 and %d", store.MaxLimit)}
	}
	recs, err := pageOf(w, r, o.Offset, o.Limit, func(offset, limit int) ([]T, error) {
		o.Offset, o.Limit = offset, limit
		return fn(s.reader(qq), r.Context(), o)
	})
	if err != nil {
		return nil, err
	}
	out := make([]*memview.Record, len(recs))
	for i, rec := range recs {
		out[i] = memview.View(rec)
	}
	return out, nil
}

// get runs a Reader's get method and returns the view of the record.
func get[T day1.Record](s *Server, r *http.Request, fn func(day1.Reader, context.Context, string, string) (T, error)) (any, error) {
	qq := q(r)
	rec, err := fn(s.reader(qq), r.Context(), qq.str("branch"), r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	return memview.View(rec), nil
}

func (s *Server) listFacts(w http.ResponseWriter, r *http.Request) (any, error) {
	return list(s, w, r, day1.Reader.ListFacts)
}

func (s *Server) getFact(w http.ResponseWriter, r *http.Request) (any, error) {
	return get(s, r, day1.Reader.GetFact)
}

func (s *Server) writeFact(w http.ResponseWriter, r *http.Request) (any, error) {
	var f day1.Fact
	if err := decode(r, &f); err != nil {
		return nil, err
	}
	res, err := s.c.WriteFact(r.Context(), f)
	if err != nil {
		return nil, err
	}
	return written(res), nil
}

// CorrectionRequest is the body of POST /api/v1/facts/{id}/corrections.
type CorrectionRequest struct {
	Branch     string            `json:"branch,omitempty"`
	Action     string            `json:"action"`
	Text       *string           `json:"text,omitempty"`
	Category   *string           `json:"category,omitempty"`
	Confidence *float64          `json:"confidence,omitempty"`
	Metadata   map[string]string `json:"metadata,omitempty"`
	By         string            `json:"by"`
	Why        string            `json:"why"`
}

func (s *Server) correctFact(w http.ResponseWriter, r *http.Request) (any, error) {
	var cr CorrectionRequest
	if err := decode(r, &cr); err != nil {
		return nil, err
	}
	return s.c.CorrectFact(r.Context(), day1.FactCorrection{
		Branch: cr.Branch, ID: r.PathValue("id"), Action: day1.CorrectionAction(cr.Action),
		Text: cr.Text, Category: cr.Category, Confidence: cr.Confidence, Metadata: cr.Metadata, By: cr.By, Why: cr.Why,
	})
}

func (s *Server) listObservations(w http.ResponseWriter, r *http.Request) (any, error) {
	return list(s, w, r, day1.Reader.ListObservations)
}

func (s *Server) getObservation(w http.ResponseWriter, r *http.Request) (any, error) {
	return get(s, r, day1.Reader.GetObservation)
}

func (s *Server) writeObservation(w http.ResponseWriter, r *http.Request) (any, error) {
	var o day1.Observation
	if err := decode(r, &o); err != nil {
		return nil, err
	}
	res, err := s.c.WriteObservation(r.Context(), o)
	if err != nil {
		return nil, err
	}
	return written(res), nil
}

func (s *Server) listRelations(w http.ResponseWriter, r *http.Request) (any, error) {
	return list(s, w, r, day1.Reader.ListRelations)
}

func (s *Server) getRelation(w http.ResponseWriter, r *http.Request) (any, error) {
	return get(s, r, day1.Reader.GetRelation)
}

func (s *Server) writeRelation(w http.ResponseWriter, r *http.Request) (any, error) {
	var rel day1.Relation
	if err := decode(r, &rel); err != nil {
		return nil, err
	}
	res, err := s.c.WriteRelation(r.Context(), rel)
	if err != nil {
		return nil, err
	}
	return written(res), nil
}

func (s *Server) graph(w http.ResponseWriter, r *http.Request) (any, error) {
	qq := q(r)
	gq := day1.GraphQuery{
		Branch: qq.str("branch"), Entity: qq.str("entity"), Depth: qq.int("depth"),
		Limit: qq.int("limit"), IncludeExpired: qq.bool("include_expired"),
	}
	if qq.err != nil {
		return nil, qq.err
	}
	return s.reader(qq).Graph(r.Context(), gq)
}

func (s *Server) search(w http.ResponseWriter, r *http.Request) (any, error) {
	qq := q(r)
	sq := day1.SearchQuery{
		Branch: qq.str("branch"), Text: qq.str("q"), Mode: day1.SearchMode(qq.str("mode")),
		Kinds: qq.kinds("kind"), Filter: qq.filter(), Limit: qq.int("limit"), Window: qq.int("window"),
		MinRelevance: qq.float("min_relevance"), IncludeExpired: qq.bool("include_expired"),
	}
	if qq.err != nil {
		return nil, qq.err
	}
	hits, err := s.reader(qq).Search(r.Context(), sq)
	if err != nil {
		return nil, err
	}
	return memview.Hits(hits), nil
}

func (s *Server) timeline(w http.ResponseWriter, r *http.Request) (any, error) {
	qq := q(r)
	tq := day1.TimelineQuery{
		Branch: qq.str("branch"), SessionID: qq.str("session"), TaskID: qq.str("task"),
		AgentID: qq.str("agent"), Since: qq.time("since"), Until: qq.time("until"),
		Kinds: qq.kinds("kind"), Limit: qq.int("limit"), Offset: qq.int("offset"), IncludeExpired: qq.bool("include_expired"),
		ByUpdate: qq.bool("by_update"),
	}
	switch order := qq.str("order"); order {
	case "", "oldest":
	case "newest":
		tq.Newest = true
	default:
		return nil, &badRequest{"order", fmt.Sprintf("must be oldest or newest, not %q", order)}
	}
	if qq.err != nil {
		return nil, qq.err
	}
	if tq.Limit == 0 {
		tq.Limit = day1.DefaultTimelineLimit
	}
	evs, err := pageOf(w, r, tq.Offset, tq.Limit, func(offset, limit int) ([]day1.Event, error) {
		tq.Offset, tq.Limit = offset, limit
		return s.reader(qq).Timeline(r.Context(), tq)
	})
	if err != nil {
		return nil, err
	}
	return memview.Events(evs), nil
}
