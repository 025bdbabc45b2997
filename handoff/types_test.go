package handoff

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1/store"
)

func TestParseType(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want Type
	}{
		{"full", TypeFull},
		{"Partial", TypePartial},
		{" ESCALATION ", TypeEscalation},
		{"checkpoint", TypeCheckpoint},
		{"task_continuation", TypeTaskContinuation},
		{"Agent-Switch", TypeAgentSwitch},
		{"session handoff", TypeSessionHandoff},
	}
	for _, tc := range tests {
		got, err := ParseType(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseType(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"", "handoff", "fullish", "agent__switch"} {
		_, err := ParseType(in)
		var ve *store.ValidationError
		if !errors.As(err, &ve) || ve.Field != "Type" {
			t.Errorf("ParseType(%q) error = %v, want a ValidationError on Type", in, err)
		}
	}
	if len(Types()) != 7 {
		t.Errorf("Types() has %d types, want 7", len(Types()))
	}
}

func TestTypeCoreAndScope(t *testing.T) {
	t.Parallel()
	type row struct {
		Core  Type
		IsCor bool
		Scope Scope
	}
	full := Scope{Core: TypeFull, AllConversations: true, TransfersOwnership: true, Receiver: ReceiverAny}
	withReceiver := func(s Scope, r Receiver) Scope { s.Receiver = r; return s }
	want := map[Type]row{
		TypeFull:       {TypeFull, true, full},
		TypePartial:    {TypePartial, true, Scope{Core: TypePartial, CompletedObjectivesOnly: true, TransfersOwnership: true, Receiver: ReceiverAny}},
		TypeEscalation: {TypeEscalation, true, Scope{Core: TypeEscalation, AllConversations: true, FailedAttempts: true, TransfersOwnership: true, Receiver: ReceiverOther}},
		TypeCheckpoint: {TypeCheckpoint, true, Scope{Core: TypeCheckpoint, Receiver: ReceiverNone}},

		TypeTaskContinuation: {TypeFull, false, withReceiver(full, ReceiverOther)},
		TypeAgentSwitch:      {TypeFull, false, withReceiver(full, ReceiverOther)},
		TypeSessionHandoff:   {TypeFull, false, withReceiver(full, ReceiverSame)},
		"bogus":              {"", false, Scope{}},
	}
	for typ, w := range want {
		got := row{typ.Core(), typ.IsCore(), typ.Scope()}
		if diff := cmp.Diff(w, got); diff != "" {
			t.Errorf("%q (-want +got)\n%s", typ, diff)
		}
	}
}

func TestCheckReceiver(t *testing.T) {
	t.Parallel()
	tests := []struct {
		typ       Type
		from, to  string
		wantField string // "" means no error
	}{
		{TypeFull, "a", "b", ""},
		{TypeFull, "a", "a", ""}, // the same agent in a new session
		{TypeFull, "a", "", ""},  // anyone may claim it
		{TypePartial, "", "b", ""},
		{TypeEscalation, "a", "b", ""},
		{TypeEscalation, "a", "a", "ToAgent"},
		{TypeEscalation, "", "b", ""}, // no source: any receiver differs from it
		{TypeAgentSwitch, "a", "a", "ToAgent"},
		{TypeAgentSwitch, "a", "", ""},
		{TypeTaskContinuation, "a", "a", "ToAgent"},
		{TypeSessionHandoff, "a", "a", ""},
		{TypeSessionHandoff, "a", "", ""},
		{TypeSessionHandoff, "a", "b", "ToAgent"},
		{TypeSessionHandoff, "", "", "FromAgent"},
		{TypeCheckpoint, "a", "", ""},
		{TypeCheckpoint, "a", "a", ""},
		{TypeCheckpoint, "a", "b", "ToAgent"},
		{"bogus", "a", "b", "Type"},
	}
	for _, tc := range tests {
		err := tc.typ.CheckReceiver(tc.from, tc.to)
		if tc.wantField == "" {
			if err != nil {
				t.Errorf("%s.CheckReceiver(%q, %q) = %v, want nil", tc.typ, tc.from, tc.to, err)
			}
			continue
		}
		var ve *store.ValidationError
		if !errors.As(err, &ve) || ve.Field != tc.wantField {
			t.Errorf("%s.CheckReceiver(%q, %q) = %v, want a ValidationError on %s", tc.typ, tc.from, tc.to, err, tc.wantField)
		}
	}
}

func TestPriority(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]Priority{
		"": PriorityNormal, "low": PriorityLow, "Normal": PriorityNormal, " HIGH ": PriorityHigh,
		"urgent": PriorityUrgent, "-1": PriorityLow, "0": PriorityNormal, "2": PriorityUrgent,
	} {
		got, err := ParsePriority(in)
		if err != nil || got != want {
			t.Errorf("ParsePriority(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"3", "-2", "1.5", "critical", "02", "+1"} {
		if _, err := ParsePriority(in); !errors.Is(err, store.ErrInvalidArgument) {
			t.Errorf("ParsePriority(%q) error = %v, want ErrInvalidArgument", in, err)
		}
	}
	if Priority(5).Valid() || !PriorityHigh.Valid() {
		t.Error("Valid range wrong")
	}
	if got := Priority(5).String(); got != "Priority(5)" {
		t.Errorf("String() = %q", got)
	}
	if PriorityUrgent <= PriorityHigh || PriorityHigh <= PriorityNormal || PriorityNormal <= PriorityLow {
		t.Error("priorities are not ordered by urgency")
	}
}
