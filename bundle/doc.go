// Package bundle is day1's knowledge-bundle engine: it packages verified knowledge of
// a task, a branch or a template into a portable, sealed file, stores it, shares it by
// token, judges it, and imports it into a branch of any store.
//
// The engine depends on the store, llm, curation (to judge) and handoff (to read
// tasks) packages, never on the root package.
//
// # Bundles
//
// Engine.Create gathers the records of one source and stores the bundle as documents
// (so it works on every store): one document that describes it (Bundle) and its file,
// gzip-compressed, in parts. Three sources:
//
//   - a task (TaskExport): what the task's branch added since it was forked,
//     optionally after the curator verified the branch (CreateRequest.Verify);
//   - a branch (Curated): its records as it reads now;
//   - a template (TemplateExport): the records of the template's current version.
//
// By default only verified knowledge travels: live facts that are verified
// (store.Fact.IsVerified), conversations that are verified or were cherry-picked, with
// their messages, and the source's relations. CreateRequest.IncludeUnverified takes
// every live fact and conversation; superseded and invalidated facts never travel.
// Aliases (store.Alias) do not travel either: a bundle carries each fact once, under
// its own id, and an import may give it another; the ids other writers used for the
// same text name nothing in the memory that imports it.
//
// A bundle is private until its visibility is team or public; then it carries a share
// token (TokenPrefix and 61 letters and digits from crypto/rand) that Engine.Shared
// resolves. Making it private revokes the token at once, and so does Delete; making it
// shared again issues a new token. Engine.Verify runs the judge over its content and
// stores the mean score and the status (draft, verified, published).
//
// # The file format, version 1
//
// A bundle file is UTF-8 text of one JSON value per line, each line ended by a
// newline, optionally gzip-compressed as a whole (readers detect the gzip header;
// zstd is recognised and refused):
//
//  1. The manifest (Manifest): {"format":"day1.bundle","format_version":1,
//     "producer":..., "created_at":..., "bundle":{id, name, description, type,
//     source_task, source_branch, version, status, verified_by, verification_score,
//     tags, metadata, owner, created_at}, "counts":{facts, observations, relations,
//     conversations, messages}, "embedder":{name, dimensions}}. The embedder is absent
//     when the records carry no embeddings.
//  2. One line per record: {"kind":"fact","record":{...},"embedding":"..."}. The
//     record is the store's JSON encoding of a store.Fact, Observation, Relation,
//     Conversation or Message, without its branch and without its embedding; the
//     embedding, on facts and observations when the manifest names an embedder, is
//     the base64 of its float32 values, little-endian. Records come sorted by kind
//     (fact, observation, relation, conversation, message), then by id, each once.
//  3. The seal: {"seal":"sha256","hash":"<hex>","records":N}: the SHA-256 of the
//     record lines exactly as written, each with its newline, and their number.
//
// The encoding is canonical: Go's encoding/json of the records (struct fields in
// declaration order, map keys sorted) in the order above, so one set of records has
// one file body and one seal; a golden file in the tests pins it. The manifest is
// outside the seal, so a stored bundle's file can be exported with its current status
// and score (Engine.Export) while its records and seal stay as they were made.
//
// Reader checks a file as it streams: the manifest and its format version first, then
// each line (its size, at most MaxLineBytes; its JSON; the record's validity and
// order), then the seal against every record line and the counts against the
// manifest, and that nothing follows. Every fault is a *FormatError that says the line
// and matches ErrFormat and one of ErrVersion, ErrTampered, ErrTruncated and
// ErrTooLarge (a limit on the bytes after decompression). It never panics on input.
//
// # Import
//
// Engine.Import reads a file, a stored bundle or a shared one, checks all of it, and
// only then writes, atomically: one store batch, or beyond store.MaxBatch records a
// staging branch merged into the target in one merge. Records keep their ids and gain
// provenance (MetaBundleID, MetaBundleSource, MetaOriginID); the store's rules apply
// (a fact whose text the branch holds is deduplicated, a near-duplicate supersedes);
// records the branch holds under the same id with other content follow the
// ConflictPolicy. Importing the same bundle twice changes nothing the second time.
// Embeddings travel when the importer's embedder has the bundle's name and
// dimensions, and are computed again otherwise.
//
// # Overview
//
//	eng := &bundle.Engine{Store: st, Embedder: emb}
//	b, err := eng.Create(ctx, bundle.CreateRequest{Name: "oauth fix", Task: "fix-oauth", Visibility: bundle.Team})
//	// elsewhere, with the token:
//	res, err := other.Import(ctx, bundle.ImportRequest{From: file, Branch: "main"})
package bundle
