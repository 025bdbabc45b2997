package cond

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1/store"
)

// evalCtx is the context most expression tests read.
func evalCtx() map[string]any {
	return map[string]any{
		"context": map[string]any{
			"tokens_used": 120000,
			"confidence":  0.4,
			"stuck":       true,
			"note":        "it's \"done\"",
		},
		"agent": map[string]any{
			"error_count":  3,
			"role":         "implementer",
			"capabilities": []string{"go", "sql"},
			"scores":       []any{1, 2.5, 3},
			"nothing":      nil,
			"labels":       map[string]string{"team": "auth"},
		},
		"n_int":   int64(math.MaxInt64),
		"n_float": 9.223372036854775807e18,
		"big":     json.Number("12345678901234567890"),
		"small":   json.Number("42"),
		"i32":     int32(-7),
		"u64":     uint64(math.MaxUint64),
		"f32":     float32(0.5),
		"nan":     math.NaN(),
		"yes":     true,
		"name":    "beta",
	}
}

func TestEval(t *testing.T) {
	t.Parallel()
	tests := []struct {
		src  string
		want bool
	}{
		// Literals and boolean operators.
		{"true", true},
		{"false", false},
		{"TRUE and not False", true},
		{"true or false and false", true},    // and binds tighter than or
		{"(true or false) and false", false}, // parentheses override
		{"not true or true", true},           // not binds tighter than or
		{"not (true or true)", false},
		{"!false && !false", true},
		{"false || true", true},
		{"not not true", true},
		{"!!!false", true},
		{"not 1 == 2", true},    // not applies to the whole comparison
		{"!yes == false", true}, // !(yes == false)
		{"true and true and true and false", false},
		{"false or false or false or true", true},
		// Identifiers and nested maps.
		{"context.tokens_used > 100000", true},
		{"context.tokens_used > 100000 and agent.error_count >= 3", true},
		{"agent.error_count > 3", false},
		{"agent.role == 'implementer'", true},
		{`agent.role != "reviewer"`, true},
		{"yes", true},
		{"context.stuck and not yes", false},
		{"agent.labels.team == 'auth'", true},
		{"agent.scores.1 == 2.5", true},
		{"agent.nothing == null", true},
		{"agent.nothing != null", false},
		{"null == null", true},
		{"agent.role != null", true},
		// Numbers: ints and floats compare exactly.
		{"3 == 3.0", true},
		{"agent.error_count == 3.0", true},
		{"agent.error_count < 3.5", true},
		{"agent.error_count > 2.999", true},
		{"context.confidence < 0.5", true},
		{"context.confidence == 0.4", true},
		{"-1 < 0", true},
		{"-2.5e1 == -25", true},
		{"1e3 == 1000", true},
		{"n_int < n_float", true}, // 2^63-1 < 2^63, which float64(n_int) would lose
		{"n_int != n_float", true},
		{"n_float > n_int", true},
		{"9007199254740993 > 9007199254740992.0", true}, // 2^53+1 vs 2^53
		{"big > 1e19", true},
		{"small == 42", true},
		{"i32 == -7", true},
		{"u64 > n_int", true},
		{"f32 == 0.5", true},
		{"nan == nan", false},
		{"nan != nan", true},
		{"nan < 1", false},
		{"nan >= 1", false},
		// Strings compare byte-wise.
		{"name > 'alpha'", true},
		{"name < 'gamma'", true},
		{"name <= 'beta'", true},
		{"name >= 'beta0'", false},
		{"'B' < 'a'", true},
		{`context.note == "it's \"done\""`, true},
		{`context.note == 'it\'s "done"'`, true},
		{`"\u00e9" == "é"`, true},
		{`"\U0001F600" == "😀"`, true},
		{`"a\tb" != "a b"`, true},
		// in and not in.
		{"agent.role in ['implementer', 'reviewer']", true},
		{"agent.role not in ['implementer', 'reviewer']", false},
		{"'go' in agent.capabilities", true},
		{"'rust' in agent.capabilities", false},
		{"'rust' not in agent.capabilities", true},
		{"2.5 in agent.scores", true},
		{"3.0 in agent.scores", true},
		{"agent.error_count in [1, 2, 3]", true},
		{"agent.error_count in []", false},
		{"agent.nothing in [null, 'x']", true},
		{"true in [false, true]", true},
	}
	ctx := evalCtx()
	for _, tc := range tests {
		e, err := Compile(tc.src)
		if err != nil {
			t.Errorf("Compile(%q): %v", tc.src, err)
			continue
		}
		got, err := e.Eval(ctx)
		if err != nil {
			t.Errorf("Eval(%q): %v", tc.src, err)
			continue
		}
		if got != tc.want {
			t.Errorf("Eval(%q) = %v, want %v", tc.src, got, tc.want)
		}
	}
}

func TestEvalShortCircuit(t *testing.T) {
	t.Parallel()
	// The right operands would fail (missing key, type mismatch) if evaluated.
	tests := []struct {
		src  string
		want bool
	}{
		{"false and missing.key > 1", false},
		{"true or missing.key > 1", true},
		{"false and name > 1", false},
		{"true or name > 1", true},
		{"false && (nope || nope)", false},
		{"yes or 'a' in agent.scores", true},
	}
	for _, tc := range tests {
		e, err := Compile(tc.src)
		if err != nil {
			t.Fatalf("Compile(%q): %v", tc.src, err)
		}
		got, err := e.Eval(evalCtx())
		if err != nil || got != tc.want {
			t.Errorf("Eval(%q) = %v, %v; want %v, nil", tc.src, got, err, tc.want)
		}
	}
	// The same operands are evaluated, and fail, when they are needed.
	for _, src := range []string{"true and missing.key > 1", "false or missing.key > 1"} {
		e, err := Compile(src)
		if err != nil {
			t.Fatalf("Compile(%q): %v", src, err)
		}
		if _, err := e.Eval(evalCtx()); !errors.Is(err, ErrMissingKey) {
			t.Errorf("Eval(%q) error = %v, want ErrMissingKey", src, err)
		}
	}
}

func TestEvalErrors(t *testing.T) {
	t.Parallel()
	type want struct {
		Missing string // MissingKeyError.Path
		Op      string // TypeError.Op
		Got     string // TypeError.Got
		Pos     int
	}
	tests := []struct {
		src  string
		want want
	}{
		{"missing > 1", want{Missing: "missing", Pos: 0}},
		{"yes and agent.nope == 1", want{Missing: "agent.nope", Pos: 8}},
		{"agent.nothing.deeper == 1", want{Missing: "agent.nothing.deeper"}},
		{"agent.scores.9 == 1", want{Missing: "agent.scores.9"}},
		{"name > 1", want{Op: ">", Got: "string and number", Pos: 5}},
		{"name == 1", want{Op: "==", Got: "string and number", Pos: 5}},
		{"agent.error_count == 'three'", want{Op: "==", Got: "number and string", Pos: 18}},
		{"yes < true", want{}}, // caught by Compile, see TestCompileErrors
		{"yes == 1", want{Op: "==", Got: "boolean and number", Pos: 4}},
		{"agent.nothing < 1", want{Op: "<", Got: "null and number", Pos: 14}},
		{"agent.error_count", want{Op: "condition", Got: "number"}},
		{"agent.role and yes", want{Op: "and", Got: "string"}},
		{"false or agent.scores", want{Op: "or", Got: "list", Pos: 9}},
		{"not agent.role", want{Op: "not", Got: "string", Pos: 4}},
		{"agent.capabilities == 'go'", want{Op: "==", Got: "list and string", Pos: 19}},
		{"agent.labels == null", want{Op: "==", Got: "map and null", Pos: 13}},
		{"1 in agent.capabilities", want{Op: "in", Got: "number and string", Pos: 2}},
		{"'x' in name", want{Op: "in", Got: "string", Pos: 4}},
		{"agent.scores in [1]", want{Op: "in", Got: "list", Pos: 13}},
		{"name in [1, 2]", want{Op: "in", Got: "string and number", Pos: 5}},
		{"name.first == 'b'", want{Op: "key name.first", Got: "string"}},
		{"agent.role.x.y == 1", want{Op: "key agent.role.x.y", Got: "string"}},
	}
	for _, tc := range tests {
		if tc.want == (want{}) {
			continue
		}
		e, err := Compile(tc.src)
		if err != nil {
			t.Errorf("Compile(%q): %v", tc.src, err)
			continue
		}
		_, err = e.Eval(evalCtx())
		if !errors.Is(err, store.ErrInvalidArgument) {
			t.Errorf("Eval(%q) error %v does not match store.ErrInvalidArgument", tc.src, err)
		}
		var got want
		var mk *MissingKeyError
		var te *TypeError
		switch {
		case errors.As(err, &mk):
			got = want{Missing: mk.Path, Pos: mk.Pos}
			if !errors.Is(err, ErrMissingKey) {
				t.Errorf("Eval(%q): MissingKeyError does not match ErrMissingKey", tc.src)
			}
		case errors.As(err, &te):
			got = want{Op: te.Op, Got: te.Got, Pos: te.Pos}
			if !errors.Is(err, ErrTypeMismatch) {
				t.Errorf("Eval(%q): TypeError does not match ErrTypeMismatch", tc.src)
			}
		default:
			t.Errorf("Eval(%q) error = %v (%T), want a MissingKeyError or TypeError", tc.src, err, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("Eval(%q) error %v: (-want +got)\n%s", tc.src, err, diff)
		}
	}
}

func TestEvalUnsupportedContextValue(t *testing.T) {
	t.Parallel()
	e, err := Compile("x.y == 1")
	if err != nil {
		t.Fatal(err)
	}
	for _, ctx := range []map[string]any{
		{"x": map[string]any{"y": struct{}{}}},
		{"x": map[string]any{"y": make(chan int)}},
		{"x": map[int]any{1: 1}},
	} {
		_, err := e.Eval(ctx)
		var te *TypeError
		if !errors.As(err, &te) {
			t.Errorf("Eval over %v error = %v, want *TypeError", ctx, err)
		}
	}
}

func TestEvalMissingAsNull(t *testing.T) {
	t.Parallel()
	tests := []struct {
		src     string
		want    bool
		wantErr error
	}{
		{"missing == null", true, nil},
		{"missing != null", false, nil},
		{"agent.nope == null", true, nil},
		{"agent.nothing.deeper == null", true, nil},
		{"missing != null and missing > 3", false, nil},
		{"missing == 'x'", false, nil},
		{"missing in ['x', null]", true, nil},
		{"missing > 3", false, ErrTypeMismatch}, // null does not order
		{"missing", false, ErrTypeMismatch},     // null is not a condition
		{"name.first == 'b'", false, ErrTypeMismatch},
	}
	for _, tc := range tests {
		e, err := Compile(tc.src)
		if err != nil {
			t.Fatalf("Compile(%q): %v", tc.src, err)
		}
		got, err := e.EvalWith(evalCtx(), EvalOptions{MissingAsNull: true})
		if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
			t.Errorf("EvalWith(%q) error = %v, want %v", tc.src, err, tc.wantErr)
		}
		if got != tc.want {
			t.Errorf("EvalWith(%q) = %v, want %v", tc.src, got, tc.want)
		}
	}
}

func TestEvalNilAndZero(t *testing.T) {
	t.Parallel()
	e, err := Compile("x == null")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Eval(nil); !errors.Is(err, ErrMissingKey) {
		t.Errorf("Eval(nil) error = %v, want ErrMissingKey", err)
	}
	if got, err := e.EvalWith(nil, EvalOptions{MissingAsNull: true}); err != nil || !got {
		t.Errorf("EvalWith(nil, MissingAsNull) = %v, %v; want true, nil", got, err)
	}
	var nilExpr *Expr
	if _, err := nilExpr.Eval(nil); !errors.Is(err, store.ErrInvalidArgument) {
		t.Errorf("nil Expr Eval error = %v, want ErrInvalidArgument", err)
	}
	if _, err := new(Expr).Eval(nil); !errors.Is(err, store.ErrInvalidArgument) {
		t.Errorf("zero Expr Eval error = %v, want ErrInvalidArgument", err)
	}
	if nilExpr.String() != "" || nilExpr.Paths() != nil {
		t.Error("nil Expr: String or Paths not empty")
	}
}

func TestCompileErrors(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("(", MaxExprDepth+1) + "true" + strings.Repeat(")", MaxExprDepth+1)
	tests := []struct {
		src     string
		pos     int
		msgPart string
	}{
		{"", 0, "empty expression"},
		{"   ", 3, "empty expression"},
		{"a >", 3, "expected an operand"},
		{"a = 1", 2, "'=='"},
		{"a & b", 2, "'&&'"},
		{"a | b", 2, "'||'"},
		{"(a > 1", 6, "expected ')'"},
		{"a > 1)", 5, "unexpected ')'"},
		{"a > 1 b", 6, "expected and, or"},
		{"a < b < c", 6, "do not chain"},
		{"a == b in [1]", 7, "do not chain"},
		{"'abc", 0, "unterminated string"},
		{`"a\qb"`, 2, `unknown escape \q`},
		{`"\u12"`, 1, "hex digits"},
		{`"\uD800"`, 1, "surrogate"},
		{`"\U00110000"`, 1, "not a Unicode character"},
		{"1.", 2, "digit after the decimal point"},
		{"1e", 2, "exponent"},
		{"1.2.3 > 1", 3, "after a number"},
		{"3abc > 1", 1, "after a number"},
		{"99999999999999999999 > 1", 0, "int64 range"},
		{"1e999 > 1", 0, "float64 range"},
		{"a - 1 > 0", 2, "minus sign"},
		{"a. == 1", 2, "expected a key"},
		{"a.b. == 1", 4, "expected a key"},
		{"a # b", 2, "unexpected character '#'"},
		{"a == é", 5, "unexpected character 'é'"},
		{"1", 0, "found a number literal"},
		{"'yes'", 0, "found a string literal"},
		{"null", 0, "found a null literal"},
		{"a and 1", 6, "found a number literal"},
		{"2 or a", 0, "found a number literal"},
		{"not 'x'", 4, "found a string literal"},
		{"(1)", 1, "found a number literal"},
		{"1 == 'a'", 2, "cannot compare number with string"},
		{"true == 1", 5, "cannot compare boolean with number"},
		{"a < true", 4, "orders numbers or strings, not boolean"},
		{"null >= a", 0, "orders numbers or strings, not null"},
		{"a in [1, 'x']", 9, "mixes number and string"},
		{"'a' in [1, 2]", 4, "cannot look for a string in a list of number"},
		{"a in [b]", 6, "lists hold literals"},
		{"a in [1 2]", 8, "expected ',' or ']'"},
		{"a in [1,", 8, "end of expression"},
		{"a in 'abc'", 5, "after in"},
		{"[1] == a", 0, "only after in"},
		{"a not b", 2, "unexpected 'not'"},
		{deep, MaxExprDepth, "nesting deeper"},
		{strings.Repeat("not ", MaxExprDepth+1) + "true", 4 * MaxExprDepth, "nesting deeper"},
		{strings.Repeat("a", MaxExprLen+1), MaxExprLen, "longer than"},
		{"a == \"\xff\"", 6, "invalid UTF-8"},
	}
	for _, tc := range tests {
		_, err := Compile(tc.src)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("Compile(%q) error = %v, want *SyntaxError", tc.src, err)
			continue
		}
		if !errors.Is(err, store.ErrInvalidArgument) {
			t.Errorf("Compile(%q): SyntaxError does not match store.ErrInvalidArgument", tc.src)
		}
		if se.Pos != tc.pos || !strings.Contains(se.Msg, tc.msgPart) {
			t.Errorf("Compile(%q) = {Pos %d, Msg %q}, want Pos %d and a message containing %q", tc.src, se.Pos, se.Msg, tc.pos, tc.msgPart)
		}
	}
}

func TestCompileLimitsAccepted(t *testing.T) {
	t.Parallel()
	srcs := []string{
		strings.Repeat("(", MaxExprDepth) + "true" + strings.Repeat(")", MaxExprDepth),
		strings.Repeat("not ", MaxExprDepth) + "true",
		"a == '" + strings.Repeat("x", MaxExprLen-8) + "'",
		strings.TrimSuffix(strings.Repeat("true or ", MaxExprLen/8), " or "),
	}
	for _, src := range srcs {
		if len(src) > MaxExprLen {
			t.Fatalf("test source is %d bytes, over the limit", len(src))
		}
		if _, err := Compile(src); err != nil {
			t.Errorf("Compile(%.40q...) = %v, want success", src, err)
		}
	}
}

func TestExprTextAndPaths(t *testing.T) {
	t.Parallel()
	src := "agent.error_count > 3 or (context.stuck and agent.error_count > 1) or 'x' in agent.tags"
	e, err := Compile(src)
	if err != nil {
		t.Fatal(err)
	}
	if e.String() != src {
		t.Errorf("String() = %q, want the source", e.String())
	}
	if diff := cmp.Diff([]string{"agent.error_count", "context.stuck", "agent.tags"}, e.Paths()); diff != "" {
		t.Errorf("Paths (-want +got)\n%s", diff)
	}

	type rec struct {
		When *Expr `json:"when"`
	}
	b, err := json.Marshal(rec{When: e})
	if err != nil {
		t.Fatal(err)
	}
	var back rec
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.When.String() != src {
		t.Errorf("JSON round trip = %q, want %q", back.When.String(), src)
	}
	got, err := back.When.Eval(map[string]any{"agent": map[string]any{"error_count": 5}})
	if err != nil || !got {
		t.Errorf("round-tripped Eval = %v, %v; want true, nil", got, err)
	}
	err = json.Unmarshal([]byte(`{"when":"a >"}`), &back)
	var se *SyntaxError
	if !errors.As(err, &se) {
		t.Errorf("Unmarshal of bad source error = %v, want *SyntaxError", err)
	}
	if back.When.String() != src {
		t.Errorf("a failed UnmarshalText changed the Expr to %q", back.When.String())
	}
}

func TestErrorMessages(t *testing.T) {
	t.Parallel()
	_, err := Compile("a >")
	if got, want := err.Error(), "day1: condition syntax error at offset 3: unexpected end of expression; expected an operand: a number, a string, true, false, null, an identifier or '('"; got != want {
		t.Errorf("SyntaxError = %q, want %q", got, want)
	}
	e, _ := Compile("name > 1")
	_, err = e.Eval(evalCtx())
	if got, want := err.Error(), "day1: condition at offset 5: > needs two numbers or two strings, got string and number"; got != want {
		t.Errorf("TypeError = %q, want %q", got, want)
	}
	e, _ = Compile("agent.nope == 1")
	_, err = e.Eval(evalCtx())
	if !strings.Contains(err.Error(), "has no key agent.nope") {
		t.Errorf("MissingKeyError = %q, want it to name agent.nope", err)
	}
}

func FuzzCompile(f *testing.F) {
	for _, s := range []string{
		"context.tokens_used > 100000 and agent.error_count >= 3",
		"not (a == 'x') || b in [1, 2.5, -3e2]",
		`"\u00e9\t" != 'q\'' && !c`,
		"a not in [null, true]",
		"((((a))))",
		"x.0.y <= -0.0",
		"a in b",
		"",
	} {
		f.Add(s)
	}
	ctx := map[string]any{
		"a": 1, "b": []any{1, "x", nil, []any{}}, "c": true,
		"context": map[string]any{"tokens_used": 5.5}, "x": []any{map[string]any{"y": "z"}},
	}
	f.Fuzz(func(t *testing.T, src string) {
		e, err := Compile(src)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Compile(%q) error %T is not a *SyntaxError", src, err)
			}
			if se.Pos < 0 || se.Pos > len(src) {
				t.Fatalf("Compile(%q) error offset %d outside the source", src, se.Pos)
			}
			return
		}
		if e.String() != src {
			t.Fatalf("String() = %q, want %q", e.String(), src)
		}
		for _, opts := range []EvalOptions{{}, {MissingAsNull: true}} {
			if _, err := e.EvalWith(ctx, opts); err != nil && !errors.Is(err, store.ErrInvalidArgument) {
				t.Fatalf("EvalWith(%q) error %v does not match store.ErrInvalidArgument", src, err)
			}
		}
	})
}

func BenchmarkCompile(b *testing.B) {
	src := "context.tokens_used > 100000 and (agent.error_count >= 3 or agent.role in ['implementer', 'tester'])"
	for b.Loop() {
		if _, err := Compile(src); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEval(b *testing.B) {
	e, err := Compile("context.tokens_used > 100000 and (agent.error_count >= 3 or agent.role in ['implementer', 'tester'])")
	if err != nil {
		b.Fatal(err)
	}
	ctx := evalCtx()
	for b.Loop() {
		if _, err := e.Eval(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
