package textsearch

import (
	"reflect"
	"strings"
	"testing"
)

func TestTokenize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"empty", "", []string{}},
		{"only separators", "  -- ,.;!? \t\n", []string{}},
		{"lowercases", "Authentication FAILS", []string{"authentication", "fails"}},
		{"drops stopwords", "the user is in the database", []string{"user", "database"}},
		{"keeps meaningful short words", "server down, not up", []string{"server", "down", "not", "up"}},
		{"drops single latin letters", "a b c x y z", []string{}},
		{"keeps single digits", "step 1 of 3", []string{"step", "1", "3"}},
		{"letters and digits join", "IPv6 over HTTP2", []string{"ipv6", "over", "http2"}},
		{"punctuation splits", "foo.bar-baz/qux:quux", []string{"foo", "bar", "baz", "qux", "quux"}},
		{"decimal number splits", "pi is 3.14", []string{"pi", "3", "14"}},
		{"identifier with parts", "user_id", []string{"user_id", "user", "id"}},
		{"identifier uppercase", "MAX_RETRY_COUNT", []string{"max_retry_count", "max", "retry", "count"}},
		{"identifier drops stopword parts", "is_valid", []string{"is_valid", "valid"}},
		{"identifier drops single-letter parts", "a_b", []string{"a_b"}},
		{"identifier keeps digit parts", "v_2", []string{"v_2", "2"}},
		{"leading and trailing underscores", "__init__", []string{"init"}},
		{"repeated underscores", "foo__bar", []string{"foo__bar", "foo", "bar"}},
		{"underscore alone", "_ __ ___", []string{}},
		{"trailing underscore then word", "foo_ bar", []string{"foo", "bar"}},
		{"identifier in a sentence", "Check the session_token in auth_service.go",
			[]string{"check", "session_token", "session", "token", "auth_service", "auth", "service", "go"}},
		{"possessive", "user's token", []string{"user", "token"}},
		{"contraction", "doesn't work", []string{"work"}},
		{"accented latin", "Café CRÈME déjà", []string{"café", "crème", "déjà"}},
		{"single accented letter", "à é", []string{}},
		{"combining mark stays in word", "cafe\u0301 ok", []string{"cafe\u0301", "ok"}},
		{"greek", "Σφάλμα βάσης", []string{"σφάλμα", "βάσης"}},
		{"single greek letter kept", "α", []string{"α"}},
		{"cyrillic", "Ошибка входа", []string{"ошибка", "входа"}},
		{"han one per character", "数据库错误", []string{"数", "据", "库", "错", "误"}},
		{"han next to latin", "MatrixOne数据库", []string{"matrixone", "数", "据", "库"}},
		{"hiragana and katakana", "ログインできません", []string{"ロ", "グ", "イ", "ン", "で", "き", "ま", "せ", "ん"}},
		{"katakana prolonged mark", "サーバー", []string{"サ", "ー", "バ", "ー"}},
		{"hangul forms words", "로그인 실패", []string{"로그인", "실패"}},
		{"non-ascii identifier", "Größe_Max", []string{"größe_max", "größe", "max"}},
		{"dotted capital i", "İSTANBUL", []string{strings.ToLower("İSTANBUL")}},
		{"invalid utf8 separates", "foo\xffbar", []string{"foo", "bar"}},
		{"fullwidth digits are digits", "ｖ１", []string{"ｖ１"}},
		{"emoji separates", "deploy🚀done", []string{"deploy", "done"}},
		{"repeated tokens kept", "retry retry RETRY", []string{"retry", "retry", "retry"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Tokenize(tt.in)
			if len(got) == 0 && len(tt.want) == 0 {
				return
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Tokenize(%q)\n got  %q\n want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestScanKinds(t *testing.T) {
	t.Parallel()
	type tk struct {
		Tok  string
		Kind Kind
	}
	tests := []struct {
		in   string
		want []tk
	}{
		{"fix user_id 修复", []tk{{"fix", Word}, {"user_id", Compound}, {"user", Part}, {"id", Part}, {"修", Ideograph}, {"复", Ideograph}}},
		{"the_end", []tk{{"the_end", Compound}, {"end", Part}}},
		{"", nil},
	}
	for _, tt := range tests {
		var got []tk
		Scan(tt.in, func(tok string, kind Kind) { got = append(got, tk{tok, kind}) })
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Scan(%q)\n got  %v\n want %v", tt.in, got, tt.want)
		}
	}
}

func TestKindString(t *testing.T) {
	t.Parallel()
	for k, want := range map[Kind]string{Word: "word", Compound: "compound", Part: "part", Ideograph: "ideograph", 0: "kind(0)", 42: "kind(42)"} {
		if got := k.String(); got != want {
			t.Errorf("Kind(%d).String() = %q, want %q", k, got, want)
		}
	}
}

func TestAppendTokensReusesSlice(t *testing.T) {
	t.Parallel()
	buf := make([]string, 0, 16)
	buf = AppendTokens(buf, "first text")
	buf = AppendTokens(buf, "second_part")
	want := []string{"first", "text", "second_part", "second", "part"}
	if !reflect.DeepEqual(buf, want) {
		t.Fatalf("AppendTokens = %q, want %q", buf, want)
	}
	if cap(buf) != 16 {
		t.Errorf("AppendTokens grew a slice that had room: cap %d", cap(buf))
	}
}

func TestTokenizeSharesInputMemory(t *testing.T) {
	// Already-lowercase ASCII tokens need no copy; only a lowercased word allocates.
	s := "connection refused by upstream_proxy on port 8080"
	allocs := testing.AllocsPerRun(100, func() {
		var buf [16]string
		_ = AppendTokens(buf[:0], s)
	})
	if allocs != 0 {
		t.Errorf("AppendTokens on lowercase ASCII made %v allocations, want 0", allocs)
	}
}

func TestIsStopword(t *testing.T) {
	t.Parallel()
	tests := []struct {
		word string
		want bool
	}{
		{"the", true}, {"and", true}, {"with", true}, {"yourselves", true}, {"is", true},
		{"The", false}, // callers pass lowercase words
		{"not", false}, {"down", false}, {"up", false}, {"database", false}, {"", false},
		{"themselvesx", false},
	}
	for _, tt := range tests {
		if got := IsStopword(tt.word); got != tt.want {
			t.Errorf("IsStopword(%q) = %v, want %v", tt.word, got, tt.want)
		}
	}
	for _, w := range stopwordList {
		if len(Tokenize(w)) != 0 {
			t.Errorf("Tokenize(%q) = %q, want the stopword dropped", w, Tokenize(w))
		}
		if strings.ToLower(w) != w {
			t.Errorf("stopword %q is not lowercase", w)
		}
	}
}

func TestTermFreqs(t *testing.T) {
	t.Parallel()
	got := TermFreqs(Tokenize("Retry the retry; then RETRY login_retry"))
	want := map[string]int{"retry": 4, "login_retry": 1, "login": 1}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("TermFreqs = %v, want %v", got, want)
	}
	if m := TermFreqs(nil); m == nil || len(m) != 0 {
		t.Errorf("TermFreqs(nil) = %#v, want an empty map", m)
	}
}

func FuzzTokenize(f *testing.F) {
	for _, s := range []string{"user_id", "Café 数据库", "__a__b__", "foo\xffbar", "İ_İ", "e\u0301_x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, tok := range Tokenize(s) {
			if tok == "" {
				t.Fatalf("Tokenize(%q) produced an empty token", s)
			}
			if IsStopword(tok) {
				t.Fatalf("Tokenize(%q) kept stopword %q", s, tok)
			}
			if strings.ToLower(tok) != tok {
				t.Fatalf("Tokenize(%q) produced %q, not lowercase", s, tok)
			}
		}
	})
}

var sinkTokens []string

func BenchmarkTokenize(b *testing.B) {
	inputs := []struct{ name, text string }{
		{"sentence", "Authentication fails for users logging in through the OAuth proxy after the 2.3 upgrade."},
		{"identifiers", "Set MAX_RETRY_COUNT in auth_service.go and check user_id, session_token and refresh_token."},
		{"cjk", "用户登录时身份验证失败，数据库连接超时。"},
	}
	for _, in := range inputs {
		b.Run(in.name, func(b *testing.B) {
			b.SetBytes(int64(len(in.text)))
			b.ReportAllocs()
			for b.Loop() {
				sinkTokens = Tokenize(in.text)
			}
		})
	}
}

func TestTokenizeManyParts(t *testing.T) {
	t.Parallel()
	in := "p1_p2_p3_p4_p5_p6_p7_p8_p9_p10_p11"
	want := append([]string{in}, strings.Split(in, "_")...)
	if got := Tokenize(in); !reflect.DeepEqual(got, want) {
		t.Errorf("Tokenize(%q)\n got  %q\n want %q", in, got, want)
	}
	// The overflow storage is reset between words.
	in2 := in + " q1_q2"
	want2 := append(append([]string{}, want...), "q1_q2", "q1", "q2")
	if got := Tokenize(in2); !reflect.DeepEqual(got, want2) {
		t.Errorf("Tokenize(%q)\n got  %q\n want %q", in2, got, want2)
	}
}

func TestStopwordTableProbes(t *testing.T) {
	t.Parallel()
	// Every listed word is found, and the table keeps probe chains short.
	longest := 0
	for _, w := range stopwordList {
		if !IsStopword(w) {
			t.Errorf("IsStopword(%q) = false for a listed word", w)
		}
		probes := 1
		for i := stopwordHash(w); stopwordTable[i] != w; i = (i + 1) & (stopwordSlots - 1) {
			probes++
		}
		longest = max(longest, probes)
	}
	if longest > 4 {
		t.Errorf("longest probe chain is %d slots; grow stopwordSlots", longest)
	}
}
