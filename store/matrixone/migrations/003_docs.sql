-- Documents: global, versioned JSON records of the engines (tasks, handoffs, templates,
-- agent profiles...). day1_doc_keys indexes each document's keys for equality queries.
CREATE TABLE IF NOT EXISTS day1_docs (
	collection VARCHAR(64)  NOT NULL,
	id         VARCHAR(128) NOT NULL,
	version    BIGINT       NOT NULL,
	data       TEXT         NOT NULL,
	doc_keys   TEXT         NOT NULL,
	created_at DATETIME(6)  NOT NULL,
	updated_at DATETIME(6)  NOT NULL,
	PRIMARY KEY (collection, id)
);
CREATE TABLE IF NOT EXISTS day1_doc_keys (
	collection VARCHAR(64)  NOT NULL,
	k          VARCHAR(64)  NOT NULL,
	v          VARCHAR(256) NOT NULL,
	id         VARCHAR(128) NOT NULL,
	PRIMARY KEY (collection, k, v, id)
);
