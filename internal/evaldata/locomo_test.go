package evaldata

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestReadLoCoMoFile(t *testing.T) {
	ds, err := ReadLoCoMo("testdata/locomo.json")
	if err != nil {
		t.Fatal(err)
	}
	s1 := time.Date(2024, 3, 3, 9, 5, 0, 0, time.UTC)
	s2 := time.Date(2024, 3, 10, 18, 40, 0, 0, time.UTC)
	want := []Dialogue{{
		ID: "conv-a",
		Turns: []Turn{
			{ID: "conv-a-D1:1", Session: 0, Speaker: "user", Name: "Ana", At: s1, Text: "Morning Ben! I started pottery classes last week."},
			{ID: "conv-a-D1:2", Session: 0, Speaker: "assistant", Name: "Ben", At: s1, Text: "Nice, what did you make?"},
			{ID: "conv-a-D1:3", Session: 0, Speaker: "user", Name: "Ana", At: s1, Text: "A lopsided blue bowl."},
			{ID: "conv-a-D2:1", Session: 1, Speaker: "assistant", Name: "Ben", At: s2, Text: "I adopted a beagle called Milo."},
		},
		Questions: []Question{
			{Text: "What did Ana make in pottery class?", Category: LoCoMo4, Evidence: []string{"conv-a-D1:3"}},
			// Two turns in one evidence string; a turn that is not there is dropped.
			{Text: "What pets and hobbies came up?", Category: LoCoMo1, Evidence: []string{"conv-a-D1:1", "conv-a-D2:1"}},
			// Questions with no evidence, or none that names a turn, are skipped.
		},
	}}
	if diff := cmp.Diff(want, ds); diff != "" {
		t.Errorf("ReadLoCoMo (-want +got):\n%s", diff)
	}
}

func TestReadLoCoMoDir(t *testing.T) {
	ds, err := ReadLoCoMo("testdata/locomo_dir")
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 1 || ds[0].ID != "conv-7" || len(ds[0].Turns) != 2 || len(ds[0].Questions) != 1 {
		t.Fatalf("ReadLoCoMo = %+v", ds)
	}
	if q := ds[0].Questions[0]; q.Evidence[0] != "conv-7-D1:2" || q.Category != LoCoMo4 {
		t.Errorf("question %+v", q)
	}
	if tu := ds[0].Turns[1]; tu.Speaker != "user" || tu.Name != "Cleo" {
		t.Errorf("turn %+v: want Cleo, speaker_a, as the user", tu)
	}
}

func TestReadLoCoMoErrors(t *testing.T) {
	for _, path := range []string{"testdata/missing.json", "testdata/locomo_dir/../../locomo.go"} {
		if _, err := ReadLoCoMo(path); err == nil {
			t.Errorf("ReadLoCoMo(%q) = nil error", path)
		}
	}
}
