package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/day1ai/day1/store"
)

// testDocs checks WriteDocs, GetDoc and ListDocs: versions and preconditions, atomic
// batches, key queries, and one winner among concurrent conditional writers.
func testDocs(t *testing.T, h Harness) {
	const area = "docs"
	ignoreTimes := cmpopts.IgnoreFields(store.Doc{}, "CreatedAt", "UpdatedAt")

	subtest(t, h, area, "create, get, update, delete", func(e *env) {
		w := store.DocWrite{Doc: doc("task", "t1", `{"name":"fix auth"}`, "status", "open"), Cond: store.DocCreate}
		got := e.writeDocs(w)[0]
		want := doc("task", "t1", `{"name":"fix auth"}`, "status", "open")
		want.Version = 1
		same(e.t, "created", want, got, ignoreTimes)
		if got.CreatedAt.IsZero() || !got.UpdatedAt.Equal(got.CreatedAt) {
			e.t.Errorf("created doc times: created %v updated %v; want equal, non-zero", got.CreatedAt, got.UpdatedAt)
		}
		same(e.t, "GetDoc", got, e.getDoc("task", "t1"))

		_, err := e.s.WriteDocs(e.ctx, []store.DocWrite{w})
		isDocConflict(e.t, "create twice", err, 0, 1)

		upd := store.DocWrite{Doc: doc("task", "t1", `{"name":"fix auth","done":true}`, "status", "done"), Cond: store.DocMatch, Version: 1}
		got2 := e.writeDocs(upd)[0]
		if got2.Version != 2 || !got2.CreatedAt.Equal(got.CreatedAt) || got2.UpdatedAt.Before(got.UpdatedAt) {
			e.t.Errorf("updated doc: version %d created %v updated %v; want 2, %v, not before %v", got2.Version, got2.CreatedAt, got2.UpdatedAt, got.CreatedAt, got.UpdatedAt)
		}
		same(e.t, "GetDoc after update", got2, e.getDoc("task", "t1"))
		_, err = e.s.WriteDocs(e.ctx, []store.DocWrite{upd})
		isDocConflict(e.t, "update at a stale version", err, 1, 2)

		up := e.writeDocs(store.DocWrite{Doc: doc("task", "t1", `{"name":"again"}`)})[0]
		if up.Version != 3 {
			e.t.Errorf("upsert over version 2 gave version %d; want 3", up.Version)
		}
		_, err = e.s.WriteDocs(e.ctx, []store.DocWrite{{Doc: store.Doc{Collection: "task", ID: "t1"}, Cond: store.DocDelete, Version: 2}})
		isDocConflict(e.t, "delete at a stale version", err, 2, 3)
		del := e.writeDocs(store.DocWrite{Doc: store.Doc{Collection: "task", ID: "t1"}, Cond: store.DocDelete})[0]
		same(e.t, "deleted doc", up, del)
		_, err = e.s.GetDoc(e.ctx, "task", "t1")
		isErr(e.t, "GetDoc after delete", err, store.ErrNotFound)
		_, err = e.s.WriteDocs(e.ctx, []store.DocWrite{{Doc: store.Doc{Collection: "task", ID: "t1"}, Cond: store.DocDelete}})
		isErr(e.t, "delete a missing doc", err, store.ErrNotFound)
		_, err = e.s.WriteDocs(e.ctx, []store.DocWrite{{Doc: doc("task", "t9", `{}`), Cond: store.DocMatch, Version: 1}})
		isDocConflict(e.t, "match a missing doc", err, 1, 0)

		// Collections are separate name spaces.
		e.writeDocs(store.DocWrite{Doc: doc("handoff", "t1", `1`), Cond: store.DocCreate})
		_, err = e.s.GetDoc(e.ctx, "task", "t1")
		isErr(e.t, "same id in another collection", err, store.ErrNotFound)
	})

	subtest(t, h, area, "a batch is atomic", func(e *env) {
		e.writeDocs(store.DocWrite{Doc: doc("task", "a", `{"v":1}`, "k", "1")})
		_, err := e.s.WriteDocs(e.ctx, []store.DocWrite{
			{Doc: doc("task", "a", `{"v":2}`, "k", "2"), Cond: store.DocMatch, Version: 1},
			{Doc: doc("task", "b", `{"v":1}`), Cond: store.DocCreate},
			{Doc: doc("task", "a2", `{}`), Cond: store.DocMatch, Version: 7},
		})
		isDocConflict(e.t, "batch with a failing precondition", err, 7, 0)
		same(e.t, "docs after the failed batch", []string{"a"}, docIDs(e.listDocs(store.DocQuery{Collection: "task"})))
		if d := e.getDoc("task", "a"); d.Version != 1 || string(d.Data) != `{"v":1}` {
			e.t.Errorf("doc a after the failed batch: version %d data %s; want 1 {\"v\":1}", d.Version, d.Data)
		}
		same(e.t, "key query after the failed batch", []string{"a"}, docIDs(e.listDocs(store.DocQuery{Collection: "task", Where: map[string]string{"k": "1"}})))

		out := e.writeDocs(
			store.DocWrite{Doc: doc("task", "a", `{"v":2}`, "k", "2"), Cond: store.DocMatch, Version: 1},
			store.DocWrite{Doc: doc("task", "b", `{"v":1}`), Cond: store.DocCreate},
		)
		if len(out) != 2 || out[0].Version != 2 || out[1].Version != 1 {
			e.t.Errorf("batch results: %+v; want versions 2 and 1", out)
		}
	})

	subtest(t, h, area, "list by keys, prefix, order and limit", func(e *env) {
		for i, d := range []store.Doc{
			doc("handoff", "h_1", `{}`, "task", "t1", "to", "bob", "status", "pending"),
			doc("handoff", "h_2", `{}`, "task", "t1", "to", "eve", "status", "pending"),
			doc("handoff", "hx3", `{}`, "task", "t2", "to", "bob", "status", "accepted"),
			doc("handoff", "g_4", `{}`, "task", "t1", "to", "bob", "status", "accepted"),
			doc("event", "h_5", `{}`, "task", "t1"),
		} {
			if i > 0 {
				tick()
			}
			e.writeDocs(store.DocWrite{Doc: d, Cond: store.DocCreate})
		}
		for _, c := range []struct {
			name string
			q    store.DocQuery
			want []string
		}{
			{"all of a collection", store.DocQuery{Collection: "handoff"}, []string{"h_1", "h_2", "hx3", "g_4"}},
			{"newest first", store.DocQuery{Collection: "handoff", Desc: true}, []string{"g_4", "hx3", "h_2", "h_1"}},
			{"one key", store.DocQuery{Collection: "handoff", Where: map[string]string{"to": "bob"}}, []string{"h_1", "hx3", "g_4"}},
			{"two keys", store.DocQuery{Collection: "handoff", Where: map[string]string{"task": "t1", "status": "pending"}}, []string{"h_1", "h_2"}},
			{"no match", store.DocQuery{Collection: "handoff", Where: map[string]string{"to": "zed"}}, nil},
			{"prefix holding _", store.DocQuery{Collection: "handoff", IDPrefix: "h_"}, []string{"h_1", "h_2"}},
			{"limit", store.DocQuery{Collection: "handoff", Limit: 2}, []string{"h_1", "h_2"}},
			{"limit, newest first", store.DocQuery{Collection: "handoff", Limit: 1, Desc: true, Where: map[string]string{"task": "t1"}}, []string{"g_4"}},
			{"empty collection", store.DocQuery{Collection: "template"}, nil},
		} {
			same(e.t, "ListDocs "+c.name, c.want, docIDs(e.listDocs(c.q)))
		}
		// A write replaces the keys: the old value no longer matches.
		e.writeDocs(store.DocWrite{Doc: doc("handoff", "h_1", `{}`, "task", "t1", "to", "bob", "status", "accepted"), Cond: store.DocMatch, Version: 1})
		same(e.t, "pending after an update", []string{"h_2"}, docIDs(e.listDocs(store.DocQuery{Collection: "handoff", Where: map[string]string{"status": "pending"}})))
		e.writeDocs(store.DocWrite{Doc: store.Doc{Collection: "handoff", ID: "h_2"}, Cond: store.DocDelete})
		same(e.t, "pending after a delete", []string(nil), docIDs(e.listDocs(store.DocQuery{Collection: "handoff", Where: map[string]string{"status": "pending"}})))
	})

	subtest(t, h, area, "concurrent conditional writes: one winner", func(e *env) {
		e.writeDocs(store.DocWrite{Doc: doc("handoff", "h1", `{"status":"pending"}`), Cond: store.DocCreate})
		const n = 6
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = e.s.WriteDocs(e.ctx, []store.DocWrite{{
					Doc: doc("handoff", "h1", fmt.Sprintf(`{"status":"accepted","by":%d}`, i)), Cond: store.DocMatch, Version: 1}})
			}()
		}
		wg.Wait()
		wins := 0
		for i, err := range errs {
			switch {
			case err == nil:
				wins++
			case !errors.Is(err, store.ErrStale):
				e.t.Errorf("writer %d: %v; want nil or ErrStale", i, err)
			}
		}
		if wins != 1 {
			e.t.Errorf("%d writers won; want exactly 1", wins)
		}
		if d := e.getDoc("handoff", "h1"); d.Version != 2 {
			e.t.Errorf("version after the race: %d; want 2", d.Version)
		}
	})

	subtest(t, h, area, "invalid writes and queries", func(e *env) {
		ok := doc("task", "t1", `{}`)
		for _, c := range []struct {
			name  string
			ws    []store.DocWrite
			field string
		}{
			{"empty batch", nil, "DocWrite"},
			{"bad collection", []store.DocWrite{{Doc: doc("Task!", "t1", `{}`)}}, "DocWrite[0].Doc.Collection"},
			{"bad id", []store.DocWrite{{Doc: doc("task", "a b", `{}`)}}, "DocWrite[0].Doc.ID"},
			{"no data", []store.DocWrite{{Doc: store.Doc{Collection: "task", ID: "t1"}}}, "DocWrite[0].Doc.Data"},
			{"bad json", []store.DocWrite{{Doc: doc("task", "t1", `{"a":`)}}, "DocWrite[0].Doc.Data"},
			{"match without a version", []store.DocWrite{{Doc: ok, Cond: store.DocMatch}}, "DocWrite[0].Version"},
			{"unknown condition", []store.DocWrite{{Doc: ok, Cond: 42}}, "DocWrite[0].Cond"},
			{"twice in a batch", []store.DocWrite{{Doc: ok}, {Doc: ok}}, "DocWrite[1].Doc.ID"},
			{"empty key", []store.DocWrite{{Doc: doc("task", "t1", `{}`, "", "x")}}, "DocWrite[0].Doc.Keys"},
		} {
			_, err := e.s.WriteDocs(e.ctx, c.ws)
			isInvalid(e.t, c.name, err, c.field)
		}
		_, err := e.s.ListDocs(e.ctx, store.DocQuery{Collection: ""})
		isInvalid(e.t, "list without a collection", err, "DocQuery.Collection")
		_, err = e.s.ListDocs(e.ctx, store.DocQuery{Collection: "task", Limit: -1})
		isInvalid(e.t, "negative limit", err, "DocQuery.Limit")
		_, err = e.s.GetDoc(e.ctx, "Bad Name", "x")
		isInvalid(e.t, "get from a bad collection", err, "collection")
		same(e.t, "docs after the failed writes", []string(nil), docIDs(e.listDocs(store.DocQuery{Collection: "task"})))
	})

	if h.Reopen != nil {
		subtest(t, h, area, "documents survive a reopen", func(e *env) {
			a := e.writeDocs(store.DocWrite{Doc: doc("task", "t1", `{"n":1}`, "status", "open"), Cond: store.DocCreate})[0]
			e.writeDocs(store.DocWrite{Doc: doc("task", "t2", `{"n":2}`)})
			e.writeDocs(store.DocWrite{Doc: store.Doc{Collection: "task", ID: "t2"}, Cond: store.DocDelete})
			e.reopen()
			same(e.t, "doc after reopen", a, e.getDoc("task", "t1"))
			same(e.t, "docs after reopen", []string{"t1"}, docIDs(e.listDocs(store.DocQuery{Collection: "task", Where: map[string]string{"status": "open"}})))
		})
	}
}

// doc builds a document with keys given as alternating names and values.
func doc(collection, id, data string, kv ...string) store.Doc {
	d := store.Doc{Collection: collection, ID: id, Data: json.RawMessage(data)}
	for i := 0; i+1 < len(kv); i += 2 {
		if d.Keys == nil {
			d.Keys = map[string]string{}
		}
		d.Keys[kv[i]] = kv[i+1]
	}
	return d
}

func docIDs(ds []store.Doc) []string {
	var ids []string
	for _, d := range ds {
		ids = append(ids, d.ID)
	}
	return ids
}

func (e *env) writeDocs(ws ...store.DocWrite) []store.Doc {
	e.t.Helper()
	out, err := e.s.WriteDocs(e.ctx, ws)
	if err != nil {
		e.t.Fatalf("WriteDocs(%d writes): %v", len(ws), err)
	}
	if len(out) != len(ws) {
		e.t.Fatalf("WriteDocs returned %d docs for %d writes", len(out), len(ws))
	}
	return out
}

func (e *env) getDoc(collection, id string) store.Doc {
	e.t.Helper()
	d, err := e.s.GetDoc(e.ctx, collection, id)
	if err != nil {
		e.t.Fatalf("GetDoc(%s, %s): %v", collection, id, err)
	}
	return d
}

func (e *env) listDocs(q store.DocQuery) []store.Doc {
	e.t.Helper()
	ds, err := e.s.ListDocs(e.ctx, q)
	if err != nil {
		e.t.Fatalf("ListDocs(%+v): %v", q, err)
	}
	return ds
}

// isDocConflict checks that err is a *DocConflictError with the versions given, and
// matches store.ErrStale.
func isDocConflict(t *testing.T, what string, err error, want, have uint64) {
	t.Helper()
	var ce *store.DocConflictError
	if !errors.As(err, &ce) || !errors.Is(err, store.ErrStale) {
		t.Errorf("%s: error %v; want a *store.DocConflictError matching ErrStale", what, err)
		return
	}
	if ce.Want != want || ce.Have != have {
		t.Errorf("%s: conflict want %d have %d; expected want %d have %d", what, ce.Want, ce.Have, want, have)
	}
}
