-- Aliases: the caller's id of a fact deduplicated against another fact's text, and
-- the id of that fact (target). A table per branch like the record tables, in their
-- shape (vid, id, rev, next_rev, deleted), so that forks, diffs, merges, snapshots
-- and time travel treat aliases as they treat records. The Go step (addAliasTables)
-- gives every branch made before this migration its table: forked from its parent's
-- with DATA BRANCH when the branch was, else created empty, as no alias existed.
CREATE TABLE IF NOT EXISTS aliases_b0 (
	vid        BIGINT       NOT NULL,
	id         VARCHAR(128) NOT NULL,
	rev        BIGINT       NOT NULL,
	next_rev   BIGINT       NOT NULL,
	deleted    TINYINT      NOT NULL DEFAULT 0,
	target     VARCHAR(128) NOT NULL DEFAULT '',
	created_at DATETIME(6)  NULL,
	PRIMARY KEY (vid),
	KEY aliases_id (id),
	KEY aliases_rev (rev)
);
