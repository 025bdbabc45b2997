package matrixone

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Writes of many rows go to the server as LOAD DATA INLINE, the rows as one string in
// the statement, where the server takes it inside a transaction
// (Capabilities.LoadData): on the 2024-11 build, 500 fact rows load about 2.6 times as
// fast as the same rows in a multi-row INSERT, since the server parses one delimited
// string faster than the literals of an SQL statement. The transaction that loads them
// commits or rolls back with them, and a duplicate primary key fails the commit.
//
// Embeddings go in INSERTs all the same: a LOAD DATA of 500 embeddings returns sooner
// than their INSERTs, but the commit after it then takes longer by as much, so that
// at 10k facts the two paths cost the same.
//
// LOAD DATA LOCAL INFILE, which streams the rows from the client, loads faster still,
// but the 2024-11 build can crash on it: the goroutine it starts to watch for
// cancellation reads the statement's context, which the server clears when the
// statement ends, and a goroutine scheduled late dereferences nil. The store never
// sends it.

// loadMin is the fewest rows a LOAD DATA writes. A LOAD DATA costs the 2024-11 build
// about 19 ms more than an INSERT before its first row, and a fact row about a fifth of
// what the row costs in an INSERT: the two break even near 120 rows.
const loadMin = 128

// loadChunk bounds the bytes of one LOAD DATA: a chunk ends at the first row that
// brings it past this.
const loadChunk = 4 << 20

// loadFormat is the fields clause of every LOAD DATA the store sends: fields in double
// quotes, separated by commas, one row a line, backslash escapes, \N for NULL.
const loadFormat = ` FIELDS TERMINATED BY ',' ENCLOSED BY '"' ESCAPED BY '\\' LINES TERMINATED BY '\n'`

// writeRows writes rows (each a value for every column of cols, in order) into the
// table t: by LOAD DATA when the store may load and there are at least loadMin rows,
// else by insertRows.
func (s *Store) writeRows(ctx context.Context, q queryer, t string, cols []string, rows [][]any) error {
	if s.caps.WritePath == WritePathLoad && len(rows) >= loadMin {
		s.loads.Add(1)
		return loadRows(ctx, q, t, cols, rows)
	}
	return insertRows(ctx, q, t, cols, rows)
}

// insertRows writes rows into t by multi-row INSERTs of insertChunk rows.
func insertRows(ctx context.Context, q queryer, t string, cols []string, rows [][]any) error {
	rowPH := "(" + placeholders(len(cols)) + ")"
	head := "INSERT INTO " + t + " (" + strings.Join(cols, ", ") + ") VALUES "
	for _, chunk := range chunks(rows, insertChunk) {
		args := make([]any, 0, len(chunk)*len(cols))
		for _, r := range chunk {
			args = append(args, r...)
		}
		if _, err := q.ExecContext(ctx, head+strings.TrimSuffix(strings.Repeat(rowPH+", ", len(chunk)), ", "), args...); err != nil {
			return err
		}
	}
	return nil
}

// loadRows writes rows into t with LOAD DATA INLINE statements of at most loadChunk
// bytes of data each.
func loadRows(ctx context.Context, q queryer, t string, cols []string, rows [][]any) error {
	stmt := "LOAD DATA INLINE FORMAT='csv', DATA=? INTO TABLE " + t + loadFormat + " (" + strings.Join(cols, ", ") + ")"
	var buf bytes.Buffer
	flush := func() error {
		if buf.Len() == 0 {
			return nil
		}
		_, err := q.ExecContext(ctx, stmt, buf.String())
		buf.Reset()
		return err
	}
	for i, r := range rows {
		if len(r) != len(cols) {
			return fmt.Errorf("day1: matrixone: row %d of %s has %d values for %d columns", i, t, len(r), len(cols))
		}
		if err := appendLoadRow(&buf, r); err != nil {
			return fmt.Errorf("day1: matrixone: row %d of %s: %w", i, t, err)
		}
		if buf.Len() >= loadChunk {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// appendLoadRow appends one row in loadFormat.
func appendLoadRow(buf *bytes.Buffer, r []any) error {
	var num [32]byte
	for j, v := range r {
		if j > 0 {
			buf.WriteByte(',')
		}
		switch v := v.(type) {
		case nil:
			buf.WriteString(`\N`)
		case string:
			appendLoadString(buf, v)
		case int:
			buf.Write(strconv.AppendInt(num[:0], int64(v), 10))
		case int64:
			buf.Write(strconv.AppendInt(num[:0], v, 10))
		case float64:
			buf.Write(strconv.AppendFloat(num[:0], v, 'g', -1, 64))
		case bool:
			if v {
				buf.WriteByte('1')
			} else {
				buf.WriteByte('0')
			}
		case time.Time:
			// The form the driver interpolates; the server rounds to the column's
			// precision either way.
			buf.WriteByte('"')
			buf.Write(v.UTC().AppendFormat(num[:0], "2006-01-02 15:04:05.999999999"))
			buf.WriteByte('"')
		default:
			return fmt.Errorf("cannot load a value of type %T", v)
		}
	}
	buf.WriteByte('\n')
	return nil
}

// appendLoadString appends s in double quotes, with the backslash escapes LOAD DATA
// reads back: backslash, double quote, newline, carriage return and NUL.
func appendLoadString(buf *bytes.Buffer, s string) {
	buf.WriteByte('"')
	last := 0
	for i := 0; i < len(s); i++ {
		var esc string
		switch s[i] {
		case '\\':
			esc = `\\`
		case '"':
			esc = `\"`
		case '\n':
			esc = `\n`
		case '\r':
			esc = `\r`
		case 0:
			esc = `\0`
		default:
			continue
		}
		buf.WriteString(s[last:i])
		buf.WriteString(esc)
		last = i + 1
	}
	buf.WriteString(s[last:])
	buf.WriteByte('"')
}
