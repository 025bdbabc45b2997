package eino

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/cloudwego/eino/schema"

	"github.com/day1ai/day1/store"
)

// MetaJSONKeys is the fact metadata key under which an Indexer lists, as a JSON array,
// the keys whose values it stored as JSON because they were not strings. A Retriever
// reads it to decode those values again and leaves it out of the documents it returns.
const MetaJSONKeys = "eino.json_keys"

// Document metadata keys that Eino gives a meaning of its own (the schema package's
// accessors read and write them). An Indexer does not store them as fact metadata: the
// sub-indexes name branches, a score belongs to one retrieval, and vectors made by
// another embedder do not fit day1's, which embeds the content itself.
const (
	keySubIndexes   = "_sub_indexes"
	keyScore        = "_score"
	keyDenseVector  = "_dense_vector"
	keySparseVector = "_sparse_vector"
)

// Keys a Retriever adds to the metadata of the documents it returns, beside the score
// that schema.Document.Score reads.
const (
	// MetaBranch is the branch the document was retrieved from.
	MetaBranch = "day1_branch"
	// MetaCategory is the fact's category, when it has one.
	MetaCategory = "day1_category"
	// MetaRankScore is the fused ranking score of the search (day1's Hit.Score), which
	// orders the documents; the document's Score is its Relevance in [0, 1].
	MetaRankScore = "day1_rank_score"
)

// factMetadata turns a document's metadata into a fact's: strings as they are, other
// values as their JSON encoding, listed under MetaJSONKeys; Eino's own keys are left
// out. field names the document in errors, like "docs[2]".
func factMetadata(field string, md map[string]any) (map[string]string, error) {
	if len(md) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(md))
	var encoded []string
	for k, v := range md {
		switch k {
		case keySubIndexes, keyScore, keyDenseVector, keySparseVector:
			continue
		case MetaJSONKeys:
			return nil, store.Invalid(field+".MetaData["+k+"]", "is a key the Indexer keeps for itself; rename it", nil)
		}
		if s, ok := v.(string); ok {
			out[k] = s
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, store.Invalid(field+".MetaData["+k+"]", fmt.Sprintf("must be a string or a value encoding/json encodes (it failed: %v)", err), nil)
		}
		out[k] = string(b)
		encoded = append(encoded, k)
	}
	if len(encoded) > 0 {
		slices.Sort(encoded)
		b, _ := json.Marshal(encoded)
		out[MetaJSONKeys] = string(b)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// documentMetadata turns a fact's metadata back into a document's: the values listed
// under MetaJSONKeys are decoded (numbers come back as float64, objects as
// map[string]any), the others stay strings.
func documentMetadata(md map[string]string) map[string]any {
	out := make(map[string]any, len(md)+3)
	var encoded []string
	if raw, ok := md[MetaJSONKeys]; ok {
		_ = json.Unmarshal([]byte(raw), &encoded)
	}
	for k, v := range md {
		if k == MetaJSONKeys {
			continue
		}
		if slices.Contains(encoded, k) {
			var x any
			if err := json.Unmarshal([]byte(v), &x); err == nil {
				out[k] = x
				continue
			}
		}
		out[k] = v
	}
	return out
}

// subIndexes returns the branches a document names with schema.Document.WithSubIndexes,
// accepting a []any of strings too, which is what the metadata holds after a JSON
// round trip.
func subIndexes(d *schema.Document) []string {
	if s := d.SubIndexes(); len(s) > 0 {
		return s
	}
	list, ok := d.MetaData[keySubIndexes].([]any)
	if !ok {
		return nil
	}
	var out []string
	for _, x := range list {
		if s, ok := x.(string); ok && strings.TrimSpace(s) != "" {
			out = append(out, s)
		}
	}
	return out
}
