// Package storetest is the conformance suite every store.Store passes: the in-memory
// and durable embedded stores (store/memstore) and MatrixOne (store/matrixone). It
// specifies, as tests that can fail, the semantics the store.Store doc comments
// promise, so that every backend behaves the same.
//
// A store's tests call Run with a Harness:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, storetest.Harness{
//			New: func(t *testing.T) store.Store {
//				s, err := memstore.New(memstore.Options{})
//				if err != nil {
//					t.Fatal(err)
//				}
//				return s
//			},
//		})
//	}
//
// Every subtest gets its own store from Harness.New and runs in parallel with the other
// subtests of its area; the suite closes the store. A store that lacks a feature lists
// it in Harness.Unsupported, by area ("search") or by area and subtest
// ("search/hybrid weighted fusion"), with the reason, and those subtests skip. The
// durability area runs only when Harness.Reopen is set, the retention subtest only
// when Harness.Retained is.
//
// The suite builds its embeddings by hand: 8-dimension vectors with integer
// Pythagorean components, so cosines such as 0.6, 0.8 and 0.96 are exact and
// thresholds can be tested at their boundary. It needs no embedder.
//
// Reads at an instant take the instant from time.Now between writes, with a few
// milliseconds of sleep on either side, so a store's commit clock must agree with the
// test's clock to within that margin. Explicit timestamps have microsecond precision.
//
// # Areas
//
//   - write: Put and Get of each kind with defaults stamped (CreatedAt, UpdatedAt,
//     fact status active, confidence 1, Relation.ValidFrom = CreatedAt); explicit
//     times and PutOptions.Now; Branch set to the branch written; records are copies;
//     batch atomicity; a repeated write is Deduplicated without a new version (Head
//     stays); the same id with other content is Updated; a fact with the text of a
//     live fact is Deduplicated with Replaced naming it; a near-duplicate fact (cosine
//     >= PutOptions.DedupeThreshold to a live fact on the same branch) is Superseded,
//     its ParentID naming the old fact, now superseded; below the threshold, with a
//     zero threshold, against a fact that is not live or only on another branch, a
//     fact is Created; facts without embedding are keyword searchable; Delete; messages
//     in Seq order; every List filter, order, limit and offset.
//   - search: keyword (BM25: only documents with a query term, more and rarer terms
//     rank higher), vector (cosine order, VectorScore equals the cosine), hybrid (RRF:
//     score = Σ 1/(k + rank); a document found by both retrievers ranks first) and
//     weighted fusion (Alpha·vector + (1-Alpha)·keyword of min-max normalised scores);
//     every filter in every mode, including branch isolation; Kinds; Limit; MinScore;
//     query validation, including a vector whose dimension differs from the
//     embeddings the store holds.
//   - messagesearch: messages (by content and embedding) and conversation titles in
//     a default search; what a message hit carries to render it; filters on role,
//     conversation, session, agent and time in every mode; a Window's neighbours, as
//     the branch, snapshot or deletion leaves them, and its scoring; message
//     embeddings read back and after a reopen.
//   - branch: creation from main, from a branch, from a snapshot and from an instant;
//     names; duplicates and unknown parents; GetBranch and ListBranches filters; a
//     branch sees its parent as of the fork, never the parent's later creates, updates
//     or deletes, and its writes never show on the parent; archived branches refuse
//     writes and stay readable; DeleteBranch; unknown branches.
//   - diff: added, updated and deleted records of every kind on each side since the
//     merge base (child and parent, siblings forked at different times, grandchild and
//     grandparent), with Before and After; Base and BaseAt; changes equal on both
//     sides left out; BothChanged and BothSuperseded conflicts, whose changes are also
//     listed on their sides; TargetHead; an empty diff after a merge.
//   - merge: through the merge engine (package merge): native with the fail, skip and
//     accept policies, cherry-pick, squash, auto with the default resolver; the merge
//     history, newest first; the source marked merged (except for cherry-pick); gates;
//     dry runs; and Store.ApplyMerge directly: stale plans (store.ErrStale), atomicity,
//     the recorded merge.
//   - snapshot: create, get, list (oldest first), delete, duplicates, unknown names,
//     name validation; a branch forked from a snapshot outlives it.
//   - timetravel: Get, List (every kind) and Search (every mode) at a snapshot and at
//     an instant return exactly what was visible then, on main and on a branch. A read
//     of a branch at an instant before its fork shows its parent as it was at that
//     instant: the records that existed then, none of the branch's own writes. A
//     snapshot of another branch cannot be read (a *store.ValidationError). With
//     Harness.Retained, a store that keeps a few seconds of history: once they have
//     passed, reads and forks at an older instant fail with store.ErrTooOld, while a
//     snapshot taken then still reads, and forks, what it named.
//   - sessions: PutSession, GetSession, ListSessions with filters, oldest first.
//   - concurrency: concurrent writers on one branch and on separate branches, with
//     concurrent readers and forks, lose nothing; a branch forked during the writes
//     sees a prefix of each writer's writes. Run it with -race.
//   - durability: records, versions, deletes, branches, statuses, snapshots, merges,
//     sessions and search indexes survive Harness.Reopen.
//   - errors: a closed store returns store.ErrClosed from every method; a cancelled
//     context returns context.Canceled and writes nothing; bad input is a
//     *store.ValidationError whose Field names it.
package storetest
