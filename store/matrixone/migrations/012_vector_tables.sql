-- Embeddings move out of the record tables into one vectors table per kind, keyed by
-- the vid of the version they belong to. Closing a version rewrites its whole row on
-- the server; without the embedding in it, that rewrite is small. A branch's copy or
-- fork holds the parent's vids and shares the parent's rows here. This migration's Go
-- step (moveVectors) gives versions keyed before migration 004 (vids below 2^24,
-- numbered table by table) vids of their own table, copies every embedding of every
-- branch's facts, observations and messages tables here, then drops the embedding
-- column, unless a branch was forked natively (DATA BRANCH): there the column stays,
-- unread, since rewriting the tables would show in the server's branch diffs.
CREATE TABLE IF NOT EXISTS facts_vectors (
	vid       BIGINT           NOT NULL,
	embedding vecf32({{dims}}) NOT NULL,
	PRIMARY KEY (vid)
);
CREATE TABLE IF NOT EXISTS observations_vectors (
	vid       BIGINT           NOT NULL,
	embedding vecf32({{dims}}) NOT NULL,
	PRIMARY KEY (vid)
);
CREATE TABLE IF NOT EXISTS messages_vectors (
	vid       BIGINT           NOT NULL,
	embedding vecf32({{dims}}) NOT NULL,
	PRIMARY KEY (vid)
);
