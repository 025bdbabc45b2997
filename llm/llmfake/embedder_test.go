package llmfake

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/day1ai/day1/llm"
)

func TestEmbedderMatchesLocalEmbedder(t *testing.T) {
	t.Parallel()
	texts := []string{"user authentication failure", "数据库超时"}
	for _, dims := range []int{0, 64} {
		e := NewEmbedder(dims)
		local := llm.NewLocalEmbedder(dims)
		got, err := e.Embed(context.Background(), texts)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := local.Embed(context.Background(), texts)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("dims %d: vectors differ from LocalEmbedder's", dims)
		}
		if e.Dimensions() != local.Dimensions() || e.Name() != local.Name() {
			t.Errorf("dims %d: Dimensions/Name = %d/%q, want %d/%q", dims, e.Dimensions(), e.Name(), local.Dimensions(), local.Name())
		}
	}
	var zero Embedder
	if zero.Dimensions() != llm.DefaultDimensions {
		t.Errorf("zero Embedder has %d dimensions, want %d", zero.Dimensions(), llm.DefaultDimensions)
	}
	if _, err := zero.Embed(context.Background(), texts); err != nil {
		t.Errorf("zero Embedder: %v", err)
	}
}

func TestEmbedderFailures(t *testing.T) {
	t.Parallel()
	boom := errors.New("provider down")
	secret := func(s string) bool { return strings.Contains(s, "secret") }
	type call struct {
		texts   []string
		wantErr error
	}
	tests := []struct {
		name  string
		setup func(*Embedder)
		calls []call
	}{
		{"fail next two", func(e *Embedder) { e.FailNext(2, boom) }, []call{
			{[]string{"a1"}, boom}, {[]string{"a2"}, boom}, {[]string{"a3"}, nil},
		}},
		{"nil error is ErrInjected", func(e *Embedder) { e.FailNext(1, nil) }, []call{
			{[]string{"a1"}, ErrInjected}, {[]string{"a2"}, nil},
		}},
		{"fail when", func(e *Embedder) { e.FailWhen(secret) }, []call{
			{[]string{"public", "top secret"}, ErrInjected}, {[]string{"public"}, nil}, {[]string{"secret"}, ErrInjected},
		}},
		{"fail when removed", func(e *Embedder) { e.FailWhen(secret).FailWhen(nil) }, []call{
			{[]string{"secret"}, nil},
		}},
		{"fail next before fail when", func(e *Embedder) { e.FailWhen(secret).FailNext(1, boom) }, []call{
			{[]string{"secret"}, boom}, {[]string{"secret"}, ErrInjected},
		}},
		{"empty text passes through", func(*Embedder) {}, []call{
			{[]string{"ok", "the"}, llm.ErrEmptyText},
		}},
	}
	for _, tt := range tests {
		e := NewEmbedder(16)
		tt.setup(e)
		var wantTexts []string
		for i, c := range tt.calls {
			vs, err := e.Embed(context.Background(), c.texts)
			wantTexts = append(wantTexts, c.texts...)
			if c.wantErr == nil {
				if err != nil || len(vs) != len(c.texts) {
					t.Errorf("%s: call %d: %d vectors, %v; want success", tt.name, i, len(vs), err)
				}
				continue
			}
			if !errors.Is(err, c.wantErr) || vs != nil {
				t.Errorf("%s: call %d: %v, %v; want nil, %v", tt.name, i, vs, err, c.wantErr)
			}
		}
		if e.Calls() != len(tt.calls) {
			t.Errorf("%s: Calls = %d, want %d", tt.name, e.Calls(), len(tt.calls))
		}
		if !reflect.DeepEqual(e.Texts(), wantTexts) {
			t.Errorf("%s: Texts = %q, want %q", tt.name, e.Texts(), wantTexts)
		}
	}
}

func TestEmbedderFailWhenMessage(t *testing.T) {
	t.Parallel()
	e := NewEmbedder(8).FailWhen(func(s string) bool { return s == "bad" })
	_, err := e.Embed(context.Background(), []string{"good", "bad"})
	if err == nil || !strings.Contains(err.Error(), `texts[1] "bad"`) || !strings.HasPrefix(err.Error(), "day1: ") {
		t.Errorf("error %v should start with day1: and name texts[1]", err)
	}
}

func TestEmbedderContext(t *testing.T) {
	t.Parallel()
	e := NewEmbedder(8)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if vs, err := e.Embed(ctx, []string{"x y"}); !errors.Is(err, context.Canceled) || vs != nil {
		t.Errorf("Embed with a cancelled context = %v, %v", vs, err)
	}
	if e.Calls() != 0 || len(e.Texts()) != 0 {
		t.Errorf("a call with a done context was recorded")
	}
}

func TestEmbedderTextsIsCopy(t *testing.T) {
	t.Parallel()
	e := NewEmbedder(8)
	in := []string{"alpha", "beta"}
	if _, err := e.Embed(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	in[0] = "changed"
	got := e.Texts()
	got[1] = "changed"
	if want := []string{"alpha", "beta"}; !reflect.DeepEqual(e.Texts(), want) {
		t.Errorf("Texts = %q, want %q", e.Texts(), want)
	}
}

func TestEmbedderConcurrent(t *testing.T) {
	t.Parallel()
	e := NewEmbedder(32).FailWhen(func(s string) bool { return s == "never" })
	var wg sync.WaitGroup
	const workers, per = 8, 50
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range per {
				if _, err := e.Embed(context.Background(), []string{"hello world", "user_id"}); err != nil {
					t.Error(err)
					return
				}
				_ = e.Texts()
			}
		}()
	}
	wg.Wait()
	if e.Calls() != workers*per || len(e.Texts()) != 2*workers*per {
		t.Errorf("Calls %d, Texts %d; want %d, %d", e.Calls(), len(e.Texts()), workers*per, 2*workers*per)
	}
}
