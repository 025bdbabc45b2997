package evaldata

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The question categories of the LoCoMo data set, named by the number the data set
// gives them.
const (
	LoCoMo1 Category = "locomo-1"
	LoCoMo2 Category = "locomo-2"
	LoCoMo3 Category = "locomo-3"
	LoCoMo4 Category = "locomo-4"
	LoCoMo5 Category = "locomo-5"
)

// LoCoMoCategories lists the LoCoMo categories in the order reports show them.
var LoCoMoCategories = []Category{LoCoMo1, LoCoMo2, LoCoMo3, LoCoMo4, LoCoMo5}

// ReadLoCoMo reads the LoCoMo conversational-memory benchmark (Maharana et al., 2024,
// github.com/snap-research/locomo) from path: either the file locomo10.json, a JSON
// array of samples each with a "conversation" and a "qa" list, or a directory of one
// JSON file per dialogue with the sessions and "qa" at the top level (the layout of
// data/multimodal_dialog/locomo10_v2 in the data set's archive).
//
// Each session turn becomes a Turn: its Speaker is "user" for the dialogue's first
// speaker (speaker_a) and "assistant" for the second, Name is the speaker's name, At
// the session's date and time, and ID the dialogue's id joined to the turn's dia_id
// ("conv-26-D1:3"). Each question with evidence becomes a Question in category
// "locomo-N"; evidence that names no turn of its dialogue is dropped, and a question
// left with none is skipped. Dialogues come sorted by id.
func ReadLoCoMo(path string) ([]Dialogue, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	var samples []locomoSample
	if info.IsDir() {
		err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || filepath.Ext(p) != ".json" {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			var s map[string]json.RawMessage
			if err := json.Unmarshal(b, &s); err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			sample := locomoSample{ID: "conv-" + strings.TrimSuffix(filepath.Base(p), ".json"), Conversation: s}
			if q, ok := s["qa"]; ok {
				if err := json.Unmarshal(q, &sample.QA); err != nil {
					return fmt.Errorf("%s: qa: %w", p, err)
				}
			}
			samples = append(samples, sample)
			return nil
		})
	} else {
		var b []byte
		if b, err = os.ReadFile(path); err == nil {
			if err = json.Unmarshal(b, &samples); err != nil {
				err = fmt.Errorf("%s: %w", path, err)
			}
		}
	}
	if err != nil {
		return nil, err
	}
	if len(samples) == 0 {
		return nil, fmt.Errorf("%s: no LoCoMo dialogues", path)
	}
	out := make([]Dialogue, 0, len(samples))
	for i, s := range samples {
		if s.ID == "" {
			s.ID = fmt.Sprintf("conv-%d", i)
		}
		d, err := s.dialogue()
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", path, s.ID, err)
		}
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b Dialogue) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

type locomoSample struct {
	ID           string                     `json:"sample_id"`
	Conversation map[string]json.RawMessage `json:"conversation"`
	QA           []locomoQuestion           `json:"qa"`
}

type locomoTurn struct {
	Speaker string `json:"speaker"`
	DiaID   string `json:"dia_id"`
	Text    string `json:"text"`
}

type locomoQuestion struct {
	Question string          `json:"question"`
	Category int             `json:"category"`
	Evidence json.RawMessage `json:"evidence"`
}

var sessionKey = regexp.MustCompile(`^session_(\d+)$`)

// locomoEvidence matches a turn id inside an evidence string, which sometimes holds
// several ("D8:6; D9:17").
var locomoEvidence = regexp.MustCompile(`D\d+:\d+`)

func (s locomoSample) dialogue() (Dialogue, error) {
	var a string
	if err := json.Unmarshal(s.Conversation["speaker_a"], &a); err != nil {
		return Dialogue{}, fmt.Errorf("speaker_a: %w", err)
	}
	var sessions []int
	for k := range s.Conversation {
		if m := sessionKey.FindStringSubmatch(k); m != nil {
			n, _ := strconv.Atoi(m[1])
			sessions = append(sessions, n)
		}
	}
	slices.Sort(sessions)
	d := Dialogue{ID: s.ID}
	turns := map[string]string{}
	for i, n := range sessions {
		var ts []locomoTurn
		if err := json.Unmarshal(s.Conversation[fmt.Sprintf("session_%d", n)], &ts); err != nil {
			return Dialogue{}, fmt.Errorf("session_%d: %w", n, err)
		}
		var when string
		_ = json.Unmarshal(s.Conversation[fmt.Sprintf("session_%d_date_time", n)], &when)
		at, _ := time.Parse("3:04 pm on 2 January, 2006", when)
		for _, t := range ts {
			if strings.TrimSpace(t.Text) == "" || t.DiaID == "" {
				continue
			}
			role := "assistant"
			if t.Speaker == a {
				role = "user"
			}
			id := s.ID + "-" + t.DiaID
			turns[t.DiaID] = id
			d.Turns = append(d.Turns, Turn{ID: id, Session: i, Speaker: role, Name: t.Speaker, At: at, Text: t.Text})
		}
	}
	if len(d.Turns) == 0 {
		return Dialogue{}, errors.New("no turns")
	}
	for _, q := range s.QA {
		var ev []string
		for _, e := range locomoEvidence.FindAllString(string(q.Evidence), -1) {
			if id, ok := turns[e]; ok && !slices.Contains(ev, id) {
				ev = append(ev, id)
			}
		}
		if len(ev) == 0 || strings.TrimSpace(q.Question) == "" {
			continue
		}
		d.Questions = append(d.Questions, Question{
			Text: q.Question, Category: Category(fmt.Sprintf("locomo-%d", q.Category)), Evidence: ev,
		})
	}
	return d, nil
}
