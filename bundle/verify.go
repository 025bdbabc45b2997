package bundle

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/day1ai/day1/store"
)

// Verify judges a stored bundle's content with the curator (its model, or the
// heuristic without one): every fact, and every conversation with its messages. The
// bundle's Score becomes the mean of the verdicts' scores and VerifiedBy the judge;
// its Status becomes Verified when the curator's policy verifies a record of that
// score, and Draft otherwise (a published bundle that passes stays Published). The
// content itself does not change.
func (e *Engine) Verify(ctx context.Context, id string) (Bundle, error) {
	s, _, err := e.read(ctx, id)
	if err != nil {
		return Bundle{}, err
	}
	r, err := NewReader(e.parts(ctx, s), 0)
	if err != nil {
		return Bundle{}, err
	}
	cur := e.curator()
	var sum float64
	var n int
	var by string
	var convs []store.Conversation
	msgs := map[string][]store.Message{}
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Bundle{}, err
		}
		switch v := rec.(type) {
		case store.Fact:
			verdict, err := cur.JudgeFact(ctx, v)
			if err != nil {
				return Bundle{}, fmt.Errorf("day1: verifying bundle %q: %w", id, err)
			}
			sum, n, by = sum+verdict.Score, n+1, verdict.By
		case store.Conversation:
			convs = append(convs, v)
		case store.Message:
			msgs[v.ConversationID] = append(msgs[v.ConversationID], v)
		}
	}
	for _, c := range convs {
		verdict, err := cur.JudgeConversation(ctx, c, msgs[c.ID])
		if err != nil {
			return Bundle{}, fmt.Errorf("day1: verifying bundle %q: %w", id, err)
		}
		sum, n, by = sum+verdict.Score, n+1, verdict.By
	}
	var score float64
	if n > 0 {
		score = sum / float64(n)
	}
	passed := n > 0 && cur.Policy.OrDefault().Status(score) == store.Verified
	now := e.now()
	return e.change(ctx, id, func(s *stored) error {
		s.Score, s.VerifiedBy, s.VerifiedAt = score, by, now
		switch {
		case !passed:
			s.Status = Draft
		case s.Status != Published:
			s.Status = Verified
		}
		return nil
	})
}
