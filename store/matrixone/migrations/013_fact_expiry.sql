-- Fact expiry. Facts tables gain expires_at DATETIME(6) NULL (store.Fact.ExpiresAt;
-- NULL: never), the last column. This migration's Go step (addExpiry) adds it to every
-- branch's facts table that lacks it, so a migration cut short runs again safely.
-- Tables made by 002_branch_tables.sql since have it already. day1_expiring holds a
-- row once a fact with an expiry was written: until then reads check no expiry and
-- read no clock.
CREATE TABLE IF NOT EXISTS day1_expiring (
	id INT NOT NULL,
	PRIMARY KEY (id)
);
