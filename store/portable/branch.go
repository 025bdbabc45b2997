package portable

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/day1ai/day1/store"
	"github.com/day1ai/day1/store/driver"
)

// CreateBranch forks a branch in constant time: it writes one branch row.
func (s *Store) CreateBranch(ctx context.Context, spec store.BranchSpec) (store.Branch, error) {
	if err := store.ValidateBranchSpec(spec); err != nil {
		return store.Branch{}, err
	}
	var out store.Branch
	err := s.update(ctx, func(st *state, w driver.Writer) error {
		if _, ok := st.byName[spec.Name]; ok {
			return fmt.Errorf("%w: %q", store.ErrBranchExists, spec.Name)
		}
		from := spec.From
		var snap *snapshotItem
		if spec.At.Snapshot != "" {
			sn, err := st.snapshot(ctx, spec.At.Snapshot)
			if err != nil {
				return err
			}
			snap = &sn
			if from == "" {
				from = sn.Info.Branch
			}
		}
		if from == "" {
			from = store.DefaultBranch
		}
		v, err := st.resolveView(ctx, store.View{Branch: from, At: spec.At})
		if err != nil {
			return err
		}
		now := w.Pending().At
		forkedAt := now
		switch {
		case snap != nil:
			forkedAt = snap.Info.At
		case !spec.At.Time.IsZero():
			forkedAt = spec.At.Time.UTC()
		}
		forkSeq := v.chain[0].cut
		b := &branch{parent: st.byName[from], forkSeq: forkSeq, info: store.Branch{
			Name: spec.Name, Parent: from, ForkedAt: forkedAt, FromSnap: spec.At.Snapshot,
			Status: store.BranchActive, Description: spec.Description,
			Metadata: maps.Clone(spec.Metadata), CreatedAt: now, Head: uint64(w.Pending().Seq),
		}}
		if _, err := putBranch(ctx, w, b); err != nil {
			return err
		}
		out = b.public()
		return nil
	})
	return out, err
}

// GetBranch returns a branch.
func (s *Store) GetBranch(ctx context.Context, name string) (store.Branch, error) {
	var out store.Branch
	err := s.read(ctx, func(st *state) error {
		b, err := st.branch(name)
		if err == nil {
			out = b.public()
		}
		return err
	})
	return out, err
}

// ListBranches returns branches sorted by name.
func (s *Store) ListBranches(ctx context.Context, f store.BranchFilter) ([]store.Branch, error) {
	if f.Status != "" && !f.Status.Valid() {
		return nil, store.Invalid("BranchFilter.Status", "must be active, merged or archived", f.Status)
	}
	var out []store.Branch
	err := s.read(ctx, func(st *state) error {
		for _, b := range st.byName {
			if f.Status != "" && b.info.Status != f.Status ||
				f.Parent != "" && b.info.Parent != f.Parent ||
				!strings.HasPrefix(b.info.Name, f.Prefix) {
				continue
			}
			out = append(out, b.public())
		}
		return nil
	})
	slices.SortFunc(out, func(a, b store.Branch) int { return strings.Compare(a.Name, b.Name) })
	return out, err
}

// SetBranchStatus changes a branch's status.
func (s *Store) SetBranchStatus(ctx context.Context, name string, status store.BranchStatus) (store.Branch, error) {
	if err := store.ValidateBranchStatus(name, status); err != nil {
		return store.Branch{}, err
	}
	var out store.Branch
	err := s.update(ctx, func(st *state, w driver.Writer) error {
		b, err := st.branch(name)
		if err != nil {
			return err
		}
		if b.info.Status != status {
			b.info.Status = status
			if status == store.BranchMerged {
				b.info.MergedAt = w.Pending().At
			}
			if _, err := putBranch(ctx, w, b); err != nil {
				return err
			}
		}
		out = b.public()
		return nil
	})
	return out, err
}

// DeleteBranch removes a branch and its records.
func (s *Store) DeleteBranch(ctx context.Context, name string) error {
	return s.update(ctx, func(st *state, w driver.Writer) error {
		b, err := st.branch(name)
		if err != nil {
			return err
		}
		if name == store.DefaultBranch {
			return store.Invalid("name", "the default branch cannot be deleted", name)
		}
		for _, c := range st.byName {
			if c.parent == b {
				return store.Invalid("name", fmt.Sprintf("branch has child %q; delete or keep its children first", c.info.Name), name)
			}
		}
		var snap string
		err = w.Items(ctx, collSnapshot, "", func(id string, data []byte) error {
			var sn snapshotItem
			if json.Unmarshal(data, &sn) == nil && sn.Info.Branch == name && snap == "" {
				snap = id
			}
			return nil
		})
		if err != nil {
			return err
		}
		if snap != "" {
			return store.Invalid("name", fmt.Sprintf("branch has snapshot %q; delete it first", snap), name)
		}
		return w.DeleteBranch(ctx, b.id)
	})
}

// CreateSnapshot names the head of a branch.
func (s *Store) CreateSnapshot(ctx context.Context, branchName, name, description string) (store.Snapshot, error) {
	if err := store.ValidateID("name", name); err != nil {
		return store.Snapshot{}, err
	}
	var out store.Snapshot
	err := s.update(ctx, func(st *state, w driver.Writer) error {
		if _, err := st.branch(branchName); err != nil {
			return err
		}
		if _, ok, err := w.Item(ctx, collSnapshot, name); err != nil {
			return err
		} else if ok {
			return fmt.Errorf("%w: %q", store.ErrSnapshotExists, name)
		}
		now := w.Pending().At
		sn := snapshotItem{
			Info: store.Snapshot{Name: name, Branch: branchName, At: now, Description: description, CreatedAt: now},
			Seq:  w.Head().Seq,
		}
		data, err := json.Marshal(sn)
		if err != nil {
			return err
		}
		out = sn.Info
		return w.PutItem(ctx, collSnapshot, name, data)
	})
	return out, err
}

// GetSnapshot returns a snapshot.
func (s *Store) GetSnapshot(ctx context.Context, name string) (store.Snapshot, error) {
	var out store.Snapshot
	err := s.read(ctx, func(st *state) error {
		sn, err := st.snapshot(ctx, name)
		out = sn.Info
		return err
	})
	return out, err
}

// ListSnapshots returns the snapshots of a branch, or all, oldest first.
func (s *Store) ListSnapshots(ctx context.Context, branchName string) ([]store.Snapshot, error) {
	var all []snapshotItem
	err := s.read(ctx, func(st *state) error {
		return st.r.Items(ctx, collSnapshot, "", func(id string, data []byte) error {
			var sn snapshotItem
			if err := json.Unmarshal(data, &sn); err != nil {
				return fmt.Errorf("%w: snapshot %q: %v", store.ErrCorrupt, id, err)
			}
			if branchName == "" || sn.Info.Branch == branchName {
				all = append(all, sn)
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(all, func(a, b snapshotItem) int {
		if c := a.Info.At.Compare(b.Info.At); c != 0 {
			return c
		}
		if a.Seq != b.Seq {
			return int(a.Seq - b.Seq)
		}
		return strings.Compare(a.Info.Name, b.Info.Name)
	})
	out := make([]store.Snapshot, len(all))
	for i, sn := range all {
		out[i] = sn.Info
	}
	return out, nil
}

// DeleteSnapshot removes a snapshot.
func (s *Store) DeleteSnapshot(ctx context.Context, name string) error {
	return s.update(ctx, func(st *state, w driver.Writer) error {
		if _, err := st.snapshot(ctx, name); err != nil {
			return err
		}
		return w.DeleteItem(ctx, collSnapshot, name)
	})
}

// PutSession creates or replaces a session.
func (s *Store) PutSession(ctx context.Context, sess store.Session) (store.Session, error) {
	sess, err := store.NormalizeSession(sess)
	if err != nil {
		return store.Session{}, err
	}
	err = s.update(ctx, func(st *state, w driver.Writer) error {
		if sess.StartedAt.IsZero() {
			sess.StartedAt = s.stamp(w)
		}
		sess.StartedAt = sess.StartedAt.UTC()
		data, err := json.Marshal(sess)
		if err != nil {
			return err
		}
		return w.PutItem(ctx, collSession, sess.ID, data)
	})
	if err != nil {
		return store.Session{}, err
	}
	sess.Metadata = maps.Clone(sess.Metadata)
	return sess, nil
}

// GetSession returns a session.
func (s *Store) GetSession(ctx context.Context, id string) (store.Session, error) {
	var out store.Session
	err := s.read(ctx, func(st *state) error {
		data, ok, err := st.r.Item(ctx, collSession, id)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%w: session %q", store.ErrNotFound, id)
		}
		return json.Unmarshal(data, &out)
	})
	return out, err
}

// ListSessions returns sessions, oldest first.
func (s *Store) ListSessions(ctx context.Context, f store.SessionFilter) ([]store.Session, error) {
	var out []store.Session
	err := s.read(ctx, func(st *state) error {
		return st.r.Items(ctx, collSession, "", func(id string, data []byte) error {
			var sess store.Session
			if err := json.Unmarshal(data, &sess); err != nil {
				return fmt.Errorf("%w: session %q: %v", store.ErrCorrupt, id, err)
			}
			if f.Branch != "" && sess.Branch != f.Branch || f.AgentID != "" && sess.AgentID != f.AgentID ||
				f.TaskID != "" && sess.TaskID != f.TaskID || f.Status != "" && sess.Status != f.Status {
				return nil
			}
			out = append(out, sess)
			return nil
		})
	})
	slices.SortFunc(out, func(a, b store.Session) int {
		if c := a.StartedAt.Compare(b.StartedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, err
}
