-- Global (not branched) tables: store state, commit clock, branches, snapshots,
-- sessions and merge history. JSON is kept as TEXT.
CREATE TABLE IF NOT EXISTS day1_state (
	id          TINYINT     NOT NULL,
	rev         BIGINT      NOT NULL,
	at          DATETIME(6) NOT NULL,
	next_suffix BIGINT      NOT NULL,
	dims        INT         NOT NULL,
	PRIMARY KEY (id)
);
CREATE TABLE IF NOT EXISTS day1_commits (
	rev BIGINT      NOT NULL,
	at  DATETIME(6) NOT NULL,
	PRIMARY KEY (rev)
);
CREATE INDEX day1_commits_at ON day1_commits (at);
CREATE TABLE IF NOT EXISTS day1_branches (
	name        VARCHAR(128) NOT NULL,
	suffix      VARCHAR(32)  NOT NULL,
	parent      VARCHAR(128) NOT NULL DEFAULT '',
	forked_at   DATETIME(6)  NOT NULL,
	fork_rev    BIGINT       NOT NULL,
	created_rev BIGINT       NOT NULL,
	from_snap   VARCHAR(128) NOT NULL DEFAULT '',
	status      VARCHAR(16)  NOT NULL,
	description TEXT         NOT NULL,
	metadata    TEXT         NOT NULL,
	created_at  DATETIME(6)  NOT NULL,
	merged_at   DATETIME(6)  NULL,
	merged_into VARCHAR(128) NOT NULL DEFAULT '',
	head        BIGINT       NOT NULL,
	PRIMARY KEY (name)
);
CREATE TABLE IF NOT EXISTS day1_snapshots (
	name        VARCHAR(128) NOT NULL,
	branch      VARCHAR(128) NOT NULL,
	rev         BIGINT       NOT NULL,
	at          DATETIME(6)  NOT NULL,
	description TEXT         NOT NULL,
	created_at  DATETIME(6)  NOT NULL,
	PRIMARY KEY (name)
);
CREATE TABLE IF NOT EXISTS day1_sessions (
	id         VARCHAR(128) NOT NULL,
	branch     VARCHAR(128) NOT NULL,
	agent_id   VARCHAR(255) NOT NULL DEFAULT '',
	task_id    VARCHAR(255) NOT NULL DEFAULT '',
	status     VARCHAR(16)  NOT NULL,
	started_at DATETIME(6)  NOT NULL,
	body       TEXT         NOT NULL,
	PRIMARY KEY (id)
);
CREATE INDEX day1_sessions_started ON day1_sessions (started_at);
CREATE TABLE IF NOT EXISTS day1_merges (
	rev        BIGINT       NOT NULL,
	id         VARCHAR(128) NOT NULL,
	source     VARCHAR(128) NOT NULL,
	target     VARCHAR(128) NOT NULL,
	created_at DATETIME(6)  NOT NULL,
	body       TEXT         NOT NULL,
	PRIMARY KEY (rev)
);
INSERT IGNORE INTO day1_state (id, rev, at, next_suffix, dims) VALUES (1, 0, {{now}}, 1, {{dims}});
INSERT IGNORE INTO day1_commits (rev, at) VALUES (0, {{now}});
INSERT IGNORE INTO day1_branches (name, suffix, parent, forked_at, fork_rev, created_rev, status, description, metadata, created_at, head)
	VALUES ('main', 'b0', '', {{now}}, 0, 0, 'active', '', '', {{now}}, 0);
