package api

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/day1ai/day1/store"
)

// pageOf names a next page exactly when one follows, the largest page size
// included, where it cannot ask for one more and probes for the next page's first.
func TestPageOf(t *testing.T) {
	for _, c := range []struct {
		name               string
		total, offset, lim int
		want               int
		next               string
	}{
		{"a page of more", 25, 0, 10, 10, "offset=10"},
		{"the last page", 25, 20, 10, 5, ""},
		{"a page that ends the list", 20, 10, 10, 10, ""},
		{"the largest page, more follow", store.MaxLimit + 1, 0, store.MaxLimit, store.MaxLimit, "offset=10000"},
		{"the largest page, none follow", store.MaxLimit, 0, store.MaxLimit, store.MaxLimit, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var asked [][2]int
			fetch := func(offset, limit int) ([]int, error) {
				asked = append(asked, [2]int{offset, limit})
				var out []int
				for i := offset; i < c.total && len(out) < limit; i++ {
					out = append(out, i)
				}
				return out, nil
			}
			w := httptest.NewRecorder()
			r := httptest.NewRequest("GET", "/api/v1/facts?limit=10", nil)
			got, err := pageOf(w, r, c.offset, c.lim, fetch)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != c.want || len(got) > 0 && got[0] != c.offset {
				t.Errorf("%d items from %v; want %d from %d", len(got), got[:min(1, len(got))], c.want, c.offset)
			}
			link := w.Header().Get("Link")
			if c.next == "" && link != "" || c.next != "" && !strings.Contains(link, c.next) {
				t.Errorf("Link %q; want one naming %q", link, c.next)
			}
			if len(asked) > 2 {
				t.Errorf("fetched %v; want at most a page and a probe", asked)
			}
		})
	}
}
