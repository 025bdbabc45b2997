package sqlite

import (
	"context"
	"database/sql"
)

// UnpackPostings turns a file's packed posting lists back into rows of the postings
// table and drops what format 4 added, as a file of format 3 had them.
func UnpackPostings(ctx context.Context, db *sql.DB) error {
	rows, err := db.QueryContext(ctx, "SELECT kind, term, data FROM plists")
	if err != nil {
		return err
	}
	var args [][]any
	for rows.Next() {
		var kind, term string
		var data []byte
		if err := rows.Scan(&kind, &term, &data); err != nil {
			rows.Close()
			return err
		}
		err := decodePostings(data, 0, func(rid int64, tf int) error {
			args = append(args, []any{kind, term, rid, tf})
			return nil
		})
		if err != nil {
			rows.Close()
			return err
		}
	}
	rows.Close()
	for _, a := range args {
		if _, err := db.ExecContext(ctx, "INSERT INTO postings (kind, term, rid, tf) VALUES (?, ?, ?, ?)", a...); err != nil {
			return err
		}
	}
	for _, q := range []string{"DROP TABLE plists", "ALTER TABLE bodies DROP COLUMN terms"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return nil
}
