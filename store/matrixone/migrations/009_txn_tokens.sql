-- Transaction tokens: every write transaction inserts one row with a token of its own,
-- in the same transaction. When the acknowledgement of a COMMIT is lost (the
-- connection dropped after the statement was sent), the store looks the token up on
-- another connection to learn whether the transaction committed. Rows older than an
-- hour are pruned by later writes.
CREATE TABLE IF NOT EXISTS day1_txns (
	token VARCHAR(32) NOT NULL,
	at    DATETIME(6) NOT NULL,
	PRIMARY KEY (token)
);
