package llm_test

import (
	"context"
	"fmt"

	"github.com/day1ai/day1/llm"
)

func ExampleLocalEmbedder() {
	e := llm.NewLocalEmbedder(0) // 384 dimensions
	vs, err := e.Embed(context.Background(), []string{
		"authentication fails for users logging in",
		"user authentication failure at login",
		"the database migration added an index on orders",
	})
	if err != nil {
		panic(err)
	}
	// Vectors have unit length, so the dot product is the cosine similarity.
	dot := func(a, b []float32) (s float32) {
		for i := range a {
			s += a[i] * b[i]
		}
		return s
	}
	related, unrelated := dot(vs[0], vs[1]), dot(vs[0], vs[2])
	fmt.Println(e.Name(), len(vs), len(vs[0]))
	fmt.Println("related texts are closer:", related > unrelated+0.2)

	_, err = e.EmbedOne("the and of")
	fmt.Println(err)
	// Output:
	// local-hash-384 3 384
	// related texts are closer: true
	// day1: nothing to embed: text has no words
}
