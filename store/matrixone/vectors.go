package matrixone

import (
	"context"
	"database/sql"

	"github.com/day1ai/day1/store"
)

// Embeddings live in one vectors table per kind (vecTable), keyed by the vid of the
// version they belong to. The record tables hold everything else. On the server an
// UPDATE rewrites the whole row, and reading one value of a column decompresses that
// column's block: with the embeddings in the record tables, closing 50 versions of a
// 100k-row branch table made by one INSERT ... SELECT took over a second on the
// 2024-11 build, against milliseconds without them (docs/matrixone.md).

// vectorChunk is how many vids one read of the vectors table names.
const vectorChunk = 500

// loadVectors reads the embeddings of the versions vids from the vectors table of
// kind k. Versions without one are absent from the map.
func loadVectors(ctx context.Context, q queryer, k store.Kind, vids []int64) (map[int64][]float32, error) {
	out := make(map[int64][]float32, len(vids))
	if !hasEmbedding(k) || len(vids) == 0 {
		return out, nil
	}
	for _, chunk := range chunks(vids, vectorChunk) {
		args := make([]any, len(chunk))
		for i, v := range chunk {
			args[i] = v
		}
		rs, err := q.QueryContext(ctx, "SELECT vid, hex(embedding) FROM "+vecTable(k)+" WHERE vid IN ("+placeholders(len(chunk))+")", args...)
		if err != nil {
			return nil, err
		}
		for rs.Next() {
			var vid int64
			var hexEmb sql.NullString
			if err := rs.Scan(&vid, &hexEmb); err != nil {
				rs.Close()
				return nil, err
			}
			if !hexEmb.Valid {
				continue
			}
			v, err := parseVec(hexEmb.String)
			if err != nil {
				rs.Close()
				return nil, err
			}
			out[vid] = v
		}
		rs.Close()
		if err := rs.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// withVectors gives the records of rows their embeddings, in place.
func withVectors(ctx context.Context, q queryer, k store.Kind, rows []row) error {
	if !hasEmbedding(k) {
		return nil
	}
	vids := make([]int64, 0, len(rows))
	for _, r := range rows {
		if r.rec != nil {
			vids = append(vids, r.vid)
		}
	}
	vecs, err := loadVectors(ctx, q, k, vids)
	if err != nil {
		return err
	}
	for i, r := range rows {
		if v, ok := vecs[r.vid]; ok && r.rec != nil {
			rows[i].rec = store.WithEmbedding(r.rec, v)
		}
	}
	return nil
}

// withVectorsByID is withVectors for rows keyed by id.
func withVectorsByID(ctx context.Context, q queryer, k store.Kind, rows map[string]row) error {
	list := make([]row, 0, len(rows))
	for _, r := range rows {
		list = append(list, r)
	}
	if err := withVectors(ctx, q, k, list); err != nil {
		return err
	}
	for _, r := range list {
		rows[r.id] = r
	}
	return nil
}
