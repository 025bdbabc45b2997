package llmfake_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/day1ai/day1/llm"
	"github.com/day1ai/day1/llm/llmfake"
)

func ExampleModel() {
	ctx := context.Background()
	m := llmfake.NewModel().
		On(`(?i)rate this fact`, "```json\n{\"score\": 0.9, \"verdict\": \"verified\"}\n```").
		Default(`{"score": 0.5, "verdict": "unverified"}`)

	var v struct {
		Score   float64 `json:"score"`
		Verdict string  `json:"verdict"`
	}
	err := llm.CompleteJSON(ctx, m, llm.Request{
		System:   "You are a strict reviewer.",
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "Rate this fact: the auth service caches tokens for 5 minutes."}},
	}, &v)
	fmt.Println(v.Score, v.Verdict, err)

	m.FailNext(1, nil)
	_, err = m.Complete(ctx, llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hello"}}})
	fmt.Println(errors.Is(err, llmfake.ErrInjected))

	fmt.Println(m.CallCount(), m.Calls()[0].JSON)
	// Output:
	// 0.9 verified <nil>
	// true
	// 2 true
}

func ExampleEmbedder() {
	ctx := context.Background()
	e := llmfake.NewEmbedder(64).FailNext(1, errors.New("embedding service unavailable"))

	_, err := e.Embed(ctx, []string{"first try"})
	fmt.Println(err)

	vs, err := e.Embed(ctx, []string{"second try", "another text"})
	fmt.Println(len(vs), len(vs[0]), err)
	fmt.Println(e.Calls(), e.Texts())
	// Output:
	// embedding service unavailable
	// 2 64 <nil>
	// 2 [first try second try another text]
}
