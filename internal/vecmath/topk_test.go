package vecmath

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"testing"
)

type push struct {
	score float64
	item  string
}

func TestTopK(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		k      int
		pushes []push
		want   []Scored[string]
	}{
		{"empty", 3, nil, []Scored[string]{}},
		{"fewer than k", 3, []push{{1, "a"}, {3, "b"}},
			[]Scored[string]{{3, "b"}, {1, "a"}}},
		{"keeps the highest", 2, []push{{1, "a"}, {5, "b"}, {3, "c"}, {4, "d"}, {2, "e"}},
			[]Scored[string]{{5, "b"}, {4, "d"}}},
		{"ties keep the earlier", 2, []push{{1, "a"}, {1, "b"}, {1, "c"}},
			[]Scored[string]{{1, "a"}, {1, "b"}}},
		{"ties sorted in push order", 4, []push{{2, "a"}, {1, "b"}, {2, "c"}, {1, "d"}},
			[]Scored[string]{{2, "a"}, {2, "c"}, {1, "b"}, {1, "d"}}},
		{"tie with the minimum does not evict", 2, []push{{5, "a"}, {3, "b"}, {3, "c"}},
			[]Scored[string]{{5, "a"}, {3, "b"}}},
		{"negative and infinite scores", 3, []push{{-1, "a"}, {math.Inf(-1), "b"}, {math.Inf(1), "c"}, {-2, "d"}},
			[]Scored[string]{{math.Inf(1), "c"}, {-1, "a"}, {-2, "d"}}},
		{"NaN ignored", 2, []push{{math.NaN(), "a"}, {1, "b"}, {math.NaN(), "c"}},
			[]Scored[string]{{1, "b"}}},
		{"k zero keeps nothing", 0, []push{{1, "a"}}, []Scored[string]{}},
		{"negative k keeps nothing", -5, []push{{1, "a"}}, []Scored[string]{}},
		{"k one", 1, []push{{1, "a"}, {2, "b"}, {0, "c"}, {2, "d"}},
			[]Scored[string]{{2, "b"}}},
	}
	for _, tt := range tests {
		tk := NewTopK[string](tt.k)
		for _, p := range tt.pushes {
			tk.Push(p.score, p.item)
		}
		got := tk.Sorted()
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: Sorted = %v, want %v", tt.name, got, tt.want)
		}
		if tk.Len() != len(tt.want) {
			t.Errorf("%s: Len = %d, want %d", tt.name, tk.Len(), len(tt.want))
		}
	}
}

func TestTopKMin(t *testing.T) {
	t.Parallel()
	tk := NewTopK[int](3)
	steps := []struct {
		score float64
		min   float64
	}{
		{5, math.Inf(-1)}, {1, math.Inf(-1)}, {3, 1}, {4, 3}, {0, 3}, {10, 4},
	}
	for i, s := range steps {
		tk.Push(s.score, i)
		if got := tk.Min(); got != s.min {
			t.Errorf("after pushing %v: Min = %v, want %v", s.score, got, s.min)
		}
	}
	if got := NewTopK[int](0).Min(); !math.IsInf(got, -1) {
		t.Errorf("Min of an empty k=0 collector = %v, want -Inf", got)
	}
}

func TestTopKSortedLeavesCollectorUsable(t *testing.T) {
	t.Parallel()
	tk := NewTopK[int](2)
	tk.Push(1, 1)
	tk.Push(2, 2)
	first := tk.Sorted()
	first[0].Score = 100
	tk.Push(3, 3)
	want := []Scored[int]{{3, 3}, {2, 2}}
	if got := tk.Sorted(); !reflect.DeepEqual(got, want) {
		t.Errorf("Sorted after more pushes = %v, want %v", got, want)
	}
}

func TestTopKMatchesFullSort(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(15, 16))
	for _, k := range []int{1, 2, 7, 50, 1000, 3000} {
		// Scores drawn from a small set force many ties.
		n := 2000
		type rec struct {
			score float64
			seq   int
		}
		all := make([]rec, n)
		tk := NewTopK[int](k)
		for i := range all {
			s := float64(r.IntN(40))
			all[i] = rec{s, i}
			tk.Push(s, i)
		}
		sort.SliceStable(all, func(i, j int) bool { return all[i].score > all[j].score })
		want := make([]Scored[int], 0, k)
		for _, a := range all[:min(k, n)] {
			want = append(want, Scored[int]{a.score, a.seq})
		}
		if got := tk.Sorted(); !slices.Equal(got, want) {
			t.Errorf("k=%d: Sorted differs from a stable full sort", k)
		}
	}
}

func BenchmarkTopKPush(b *testing.B) {
	r := rand.New(rand.NewPCG(17, 18))
	scores := make([]float64, 1<<16)
	for i := range scores {
		scores[i] = r.Float64()
	}
	for _, k := range []int{10, 100} {
		b.Run("k="+itoa(k), func(b *testing.B) {
			tk := NewTopK[int](k)
			i := 0
			for b.Loop() {
				tk.Push(scores[i&(len(scores)-1)], i)
				i++
			}
		})
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
