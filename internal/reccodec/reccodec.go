// Package reccodec encodes a store.Record as bytes and back, for the stores that keep
// records in files: the JSON text of the record without its embedding, and the
// embedding apart as little-endian float32s, so that the numbers cost four bytes each
// and are read back exactly.
package reccodec

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/day1ai/day1/store"
)

// Split returns the JSON text of r without its embedding, and the embedding as
// little-endian float32s (nil without one).
func Split(r store.Record) (text, emb []byte) {
	if v := store.EmbeddingOf(r); len(v) > 0 {
		emb = Floats(v)
		r = store.WithEmbedding(r, nil)
	}
	text, _ = json.Marshal(r) // records hold only strings, numbers, maps and times
	return text, emb
}

// Floats returns v as little-endian float32s.
func Floats(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// Vector reads little-endian float32s back; nil for no bytes.
func Vector(b []byte) ([]float32, error) {
	if len(b) == 0 {
		return nil, nil
	}
	if len(b)%4 != 0 {
		return nil, errors.New("embedding bytes not a multiple of 4")
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}

// Join decodes a record of kind k from the JSON text and the embedding bytes that
// Split made.
func Join(k store.Kind, text, embBytes []byte) (store.Record, error) {
	emb, err := Vector(embBytes)
	if err != nil {
		return nil, err
	}
	switch k {
	case store.KindFact:
		var f store.Fact
		err = json.Unmarshal(text, &f)
		f.Embedding = emb
		return f, err
	case store.KindObservation:
		var x store.Observation
		err = json.Unmarshal(text, &x)
		x.Embedding = emb
		return x, err
	case store.KindRelation:
		var x store.Relation
		err = json.Unmarshal(text, &x)
		return x, err
	case store.KindConversation:
		var x store.Conversation
		err = json.Unmarshal(text, &x)
		return x, err
	case store.KindAlias:
		var x store.Alias
		err = json.Unmarshal(text, &x)
		return x, err
	case store.KindMessage:
		var x store.Message
		err = json.Unmarshal(text, &x)
		x.Embedding = emb
		// A record written before picks were recorded holds PickedTo alone.
		return store.SyncPicks(x), err
	}
	return nil, fmt.Errorf("unknown record kind %q", k)
}
