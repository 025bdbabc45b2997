package handoff

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1/store"
)

func TestCanTransitionEveryPair(t *testing.T) {
	t.Parallel()
	allowed := map[[2]Status]bool{
		{StatusPending, StatusAccepting}:       true,
		{StatusPending, StatusAccepted}:        true,
		{StatusAccepting, StatusAccepted}:      true,
		{StatusAccepting, StatusRolledBack}:    true,
		{StatusPending, StatusRejected}:        true,
		{StatusPending, StatusExpired}:         true,
		{StatusPending, StatusRolledBack}:      true,
		{StatusInitiated, StatusValidating}:    true,
		{StatusInitiated, StatusFailed}:        true,
		{StatusValidating, StatusTransferring}: true,
		{StatusValidating, StatusFailed}:       true,
		{StatusValidating, StatusRolledBack}:   true,
		{StatusTransferring, StatusCompleted}:  true,
		{StatusTransferring, StatusFailed}:     true,
		{StatusTransferring, StatusRolledBack}: true,
		{StatusFailed, StatusRolledBack}:       true,
	}
	for _, from := range Statuses() {
		for _, to := range Statuses() {
			want := allowed[[2]Status{from, to}]
			if got := CanTransition(from, to); got != want {
				t.Errorf("CanTransition(%s, %s) = %v, want %v", from, to, got, want)
			}
			err := Transition(from, to)
			if want {
				if err != nil {
					t.Errorf("Transition(%s, %s) = %v, want nil", from, to, err)
				}
				continue
			}
			var te *TransitionError
			if !errors.As(err, &te) || te.From != from || te.To != to {
				t.Errorf("Transition(%s, %s) = %v, want *TransitionError{%s, %s}", from, to, err, from, to)
			}
			if !errors.Is(err, store.ErrConflict) {
				t.Errorf("Transition(%s, %s) error does not match store.ErrConflict", from, to)
			}
		}
	}
}

func TestTransitionErrors(t *testing.T) {
	t.Parallel()
	err := Transition(StatusAccepted, StatusRejected)
	if got, want := err.Error(), "day1: a handoff cannot go from accepted to rejected; it is final and allows no change"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	err = Transition(StatusPending, StatusCompleted)
	if got, want := err.Error(), "day1: a handoff cannot go from pending to completed; allowed next: accepting, accepted, rejected, expired, rolled_back"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	for _, tc := range []struct {
		from, to Status
		field    string
	}{
		{"done", StatusAccepted, "from"},
		{StatusPending, "Accepted", "to"},
		{"", "", "from"},
	} {
		err := Transition(tc.from, tc.to)
		var ve *store.ValidationError
		if !errors.As(err, &ve) || ve.Field != tc.field {
			t.Errorf("Transition(%q, %q) = %v, want a ValidationError on %s", tc.from, tc.to, err, tc.field)
		}
		if CanTransition(tc.from, tc.to) {
			t.Errorf("CanTransition(%q, %q) = true for an unknown status", tc.from, tc.to)
		}
	}
}

func TestStatusProperties(t *testing.T) {
	t.Parallel()
	var terminal []Status
	for _, s := range Statuses() {
		if !s.Valid() {
			t.Errorf("%s is not Valid", s)
		}
		if s.Terminal() {
			terminal = append(terminal, s)
		}
	}
	want := []Status{StatusAccepted, StatusRejected, StatusExpired, StatusCompleted, StatusRolledBack}
	if diff := cmp.Diff(want, terminal); diff != "" {
		t.Errorf("terminal statuses (-want +got)\n%s", diff)
	}
	if Status("nope").Terminal() || Status("nope").Valid() {
		t.Error("an unknown status is Valid or Terminal")
	}
	if diff := cmp.Diff([]Status{StatusRolledBack}, StatusFailed.Next()); diff != "" {
		t.Errorf("failed.Next() (-want +got)\n%s", diff)
	}
	// Next returns a copy.
	n := StatusPending.Next()
	n[0] = StatusCompleted
	if !CanTransition(StatusPending, StatusAccepted) || CanTransition(StatusPending, StatusCompleted) {
		t.Error("changing the slice from Next changed the state machine")
	}
}

func TestParseStatus(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]Status{
		"pending": StatusPending, " Rolled-Back ": StatusRolledBack, "rolled back": StatusRolledBack, "COMPLETED": StatusCompleted,
	} {
		got, err := ParseStatus(in)
		if err != nil || got != want {
			t.Errorf("ParseStatus(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "done", "rolledback"} {
		if _, err := ParseStatus(in); !errors.Is(err, store.ErrInvalidArgument) {
			t.Errorf("ParseStatus(%q) error = %v, want ErrInvalidArgument", in, err)
		}
	}
}
