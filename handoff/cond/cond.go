package cond

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/day1ai/day1/store"
)

// Limits on condition expressions. They bound the work and the stack depth one
// untrusted expression can cost.
const (
	// MaxExprLen is the longest condition source accepted, in bytes.
	MaxExprLen = 4096
	// MaxExprDepth is the deepest nesting of parentheses and not/! accepted.
	MaxExprDepth = 32
)

// Expr is a compiled condition: a boolean expression over a context map, such as
//
//	context.tokens_used > 100000 and agent.error_count >= 3
//	not (agent.role == "reviewer") || task.priority in ["high", "urgent"]
//
// It is evaluated by walking its syntax tree; nothing is ever executed. An Expr is
// immutable and safe for concurrent use. It marshals to and from its source text
// (encoding.TextMarshaler), so it can sit in JSON records as a string.
//
// # Grammar
//
//	expr       = or
//	or         = and { ("or" | "||") and }
//	and        = not { ("and" | "&&") not }
//	not        = ("not" | "!") not | comparison
//	comparison = operand [ ("==" | "!=" | "<" | "<=" | ">" | ">=") operand
//	                     | ["not"] "in" ( list | identifier ) ]
//	operand    = number | string | "true" | "false" | "null" | identifier | "(" expr ")"
//	list       = "[" [ literal { "," literal } ] "]"
//
// Precedence, loosest first: or, and, not, comparison. "!" is the same operator as
// "not" and binds as loosely: !a == b means !(a == b). Comparisons do not chain
// (write a < b and b < c). Keywords (and, or, not, in, true, false, null) are
// case-insensitive.
//
// Numbers are integers (int64) or floats (a fraction or an exponent: 0.5, 1e6, -2.5e-3);
// a minus sign is allowed only directly before a number literal. Strings are in single
// or double quotes with the escapes \\ \' \" \n \r \t \uXXXX and \UXXXXXXXX.
// Identifiers are dot-separated paths of ASCII letters, digits and underscores,
// starting with a letter or underscore: "context.tokens_used" reads
// ctx["context"]["tokens_used"]; a segment of digits indexes a list ("errors.0").
//
// # Values and types
//
// Context values may be nil, bool, string, any Go integer or float type, json.Number,
// slices and arrays (only on the right of in), and maps with string keys (only to
// descend into). Integers and floats compare exactly with each other (3 == 3.0).
// Strings compare byte-wise. Booleans support == and != only; null equals only null.
// Comparing values of different types (a string with a number, a boolean with a
// number) is a *TypeError, never a silent false; so is using a non-boolean where a
// condition is needed. Mismatches between literals are caught by Compile.
//
// # Missing keys
//
// By default an identifier that is not in the context is an error, *MissingKeyError:
// a misspelt key fails loudly instead of making "not (x > 3)" silently true. With
// EvalOptions.MissingAsNull a missing key reads as null. Null supports == and !=, and
// may be sought with in, but does not order and is not a list, so guard ordering
// comparisons and lists: "x != null and x > 3".
type Expr struct {
	src  string
	root *node
}

// EvalOptions tunes EvalWith. The zero value is the strict default used by Eval.
type EvalOptions struct {
	// MissingAsNull makes an identifier that is absent from the context (or lies under
	// a null value) evaluate to null instead of failing with *MissingKeyError.
	// Default false.
	MissingAsNull bool
}

// Compile parses src into an Expr. It returns a *SyntaxError (matching
// store.ErrInvalidArgument) with the byte offset and what was expected when src is
// empty, longer than MaxExprLen, nested deeper than MaxExprDepth, not valid UTF-8, or
// malformed; or when it compares literals of different types, or uses a literal that
// is not a boolean where a condition is needed.
func Compile(src string) (*Expr, error) {
	if len(src) > MaxExprLen {
		return nil, &SyntaxError{Pos: MaxExprLen, Msg: fmt.Sprintf("the expression is longer than %d bytes", MaxExprLen)}
	}
	if !utf8.ValidString(src) {
		pos := 0
		for pos < len(src) {
			r, size := utf8.DecodeRuneInString(src[pos:])
			if r == utf8.RuneError && size <= 1 {
				break
			}
			pos += size
		}
		return nil, &SyntaxError{Pos: pos, Msg: "invalid UTF-8; expected text"}
	}
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	if p.peek().kind == tEOF {
		return nil, &SyntaxError{Pos: p.peek().pos, Msg: "empty expression; expected a condition such as agent.error_count > 3"}
	}
	root, err := p.parseOr()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tEOF {
		msg := fmt.Sprintf("unexpected %s; expected and, or, or the end of the expression", t.describe())
		if t.kind == tCmp || t.kind == tIn {
			msg = fmt.Sprintf("unexpected %s: comparisons do not chain; join them with and, e.g. a < b and b < c", t.describe())
		}
		return nil, &SyntaxError{Pos: t.pos, Msg: msg}
	}
	if err := needCondition(root); err != nil {
		return nil, err
	}
	return &Expr{src: src, root: root}, nil
}

// IsZero reports whether e holds no condition: nil, or the zero Expr that Compile
// never returns.
func (e *Expr) IsZero() bool { return e == nil || e.root == nil }

// String returns the source the Expr was compiled from; "" for a nil or zero Expr.
func (e *Expr) String() string {
	if e == nil {
		return ""
	}
	return e.src
}

// MarshalText returns the source text.
func (e *Expr) MarshalText() ([]byte, error) { return []byte(e.String()), nil }

// UnmarshalText compiles text into e; it returns Compile's *SyntaxError on bad input
// and leaves e unchanged then.
func (e *Expr) UnmarshalText(text []byte) error {
	c, err := Compile(string(text))
	if err != nil {
		return err
	}
	*e = *c
	return nil
}

// Paths returns the identifiers the expression reads, in order of first appearance,
// each once. It helps check a context offers every key before evaluating.
func (e *Expr) Paths() []string {
	if e == nil || e.root == nil {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	var walk func(n *node)
	walk = func(n *node) {
		if n.kind == nPath {
			p := strings.Join(n.path, ".")
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
		for _, k := range n.kids {
			walk(k)
		}
	}
	walk(e.root)
	return out
}

// Eval evaluates the expression over ctx (nil is an empty context) with the strict
// default options: a missing key is a *MissingKeyError. It returns a *TypeError when
// an operator meets values it does not accept, and a *store.ValidationError for a nil
// or zero Expr. "and" and "or" short-circuit left to right: an operand that is not
// needed is not evaluated and cannot fail.
func (e *Expr) Eval(ctx map[string]any) (bool, error) {
	return e.EvalWith(ctx, EvalOptions{})
}

// EvalWith is Eval with options; see EvalOptions.
func (e *Expr) EvalWith(ctx map[string]any, opts EvalOptions) (bool, error) {
	if e == nil || e.root == nil {
		return false, store.Invalid("Expr", "is empty; build it with Compile", nil)
	}
	ev := evaluator{ctx: ctx, opts: opts}
	return ev.boolean(e.root, "condition")
}

// ---- values ----

type vkind uint8

const (
	vNull vkind = iota
	vBool
	vInt
	vFloat
	vString
	vList
	vMap   // a context map; only descended into, never compared
	vOther // a context value of a type conditions cannot use
)

type value struct {
	k    vkind
	b    bool
	i    int64
	f    float64
	s    string // string value, or the Go type name for vOther
	list []value
}

func (v value) typeName() string {
	switch v.k {
	case vNull:
		return "null"
	case vBool:
		return "boolean"
	case vInt, vFloat:
		return "number"
	case vString:
		return "string"
	case vList:
		return "list"
	case vMap:
		return "map"
	default:
		return v.s
	}
}

func (v value) isNumber() bool { return v.k == vInt || v.k == vFloat }

// ---- lexer ----

type tokKind uint8

const (
	tEOF tokKind = iota
	tIdent
	tNumber
	tString
	tCmp
	tAnd
	tOr
	tNot
	tIn
	tTrue
	tFalse
	tNull
	tLParen
	tRParen
	tLBrack
	tRBrack
	tComma
)

type token struct {
	kind tokKind
	pos  int
	text string // source text of the token
	val  value  // for literals
	path []string
}

func (t token) describe() string {
	switch t.kind {
	case tEOF:
		return "end of expression"
	case tString:
		return "string " + t.text
	case tNumber:
		return "number " + t.text
	case tIdent:
		return "identifier " + t.text
	default:
		return "'" + t.text + "'"
	}
}

var keywords = map[string]tokKind{
	"and": tAnd, "or": tOr, "not": tNot, "in": tIn,
	"true": tTrue, "false": tFalse, "null": tNull,
}

var punct = [256]tokKind{'(': tLParen, ')': tRParen, '[': tLBrack, ']': tRBrack, ',': tComma}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }

func lex(src string) ([]token, error) {
	var toks []token
	i := 0
	for {
		for i < len(src) && (src[i] == ' ' || src[i] == '\t' || src[i] == '\n' || src[i] == '\r') {
			i++
		}
		if i >= len(src) {
			return append(toks, token{kind: tEOF, pos: i}), nil
		}
		c := src[i]
		start := i
		two := ""
		if i+1 < len(src) {
			two = src[i : i+2]
		}
		switch {
		case punct[c] != 0:
			toks = append(toks, token{kind: punct[c], pos: i, text: string(c)})
			i++
		case two == "==" || two == "!=" || two == "<=" || two == ">=":
			toks = append(toks, token{kind: tCmp, pos: i, text: two})
			i += 2
		case c == '<' || c == '>':
			toks = append(toks, token{kind: tCmp, pos: i, text: string(c)})
			i++
		case c == '=':
			return nil, &SyntaxError{Pos: i, Msg: "unexpected '='; expected '==' to test equality"}
		case c == '!':
			toks = append(toks, token{kind: tNot, pos: i, text: "!"})
			i++
		case two == "&&":
			toks = append(toks, token{kind: tAnd, pos: i, text: two})
			i += 2
		case two == "||":
			toks = append(toks, token{kind: tOr, pos: i, text: two})
			i += 2
		case c == '&' || c == '|':
			return nil, &SyntaxError{Pos: i, Msg: fmt.Sprintf("unexpected '%c'; expected '%c%c'", c, c, c)}
		case c == '"' || c == '\'':
			s, n, err := lexString(src, i)
			if err != nil {
				return nil, err
			}
			toks = append(toks, token{kind: tString, pos: start, text: src[start:n], val: value{k: vString, s: s}})
			i = n
		case isDigit(c) || c == '-' && i+1 < len(src) && isDigit(src[i+1]):
			v, n, err := lexNumber(src, i)
			if err != nil {
				return nil, err
			}
			toks = append(toks, token{kind: tNumber, pos: start, text: src[start:n], val: v})
			i = n
		case c == '-':
			return nil, &SyntaxError{Pos: i, Msg: "unexpected '-'; a minus sign is allowed only directly before a number literal, e.g. -1"}
		case isLetter(c):
			var path []string
			for {
				j := i
				for i < len(src) && (isLetter(src[i]) || isDigit(src[i])) {
					i++
				}
				if i == j {
					return nil, &SyntaxError{Pos: i, Msg: "expected a key (letters, digits, _) after '.'"}
				}
				path = append(path, src[j:i])
				if i < len(src) && src[i] == '.' {
					i++
					continue
				}
				break
			}
			text := src[start:i]
			if len(path) == 1 {
				if kw, ok := keywords[strings.ToLower(text)]; ok {
					t := token{kind: kw, pos: start, text: text}
					switch kw {
					case tTrue:
						t.val = value{k: vBool, b: true}
					case tFalse:
						t.val = value{k: vBool}
					}
					toks = append(toks, t)
					continue
				}
			}
			toks = append(toks, token{kind: tIdent, pos: start, text: text, path: path})
		default:
			r, _ := utf8.DecodeRuneInString(src[i:])
			return nil, &SyntaxError{Pos: i, Msg: fmt.Sprintf("unexpected character %q; expected an operand, an operator or a parenthesis", r)}
		}
	}
}

func lexNumber(src string, i int) (value, int, error) {
	start := i
	if src[i] == '-' {
		i++
	}
	for i < len(src) && isDigit(src[i]) {
		i++
	}
	isFloat := false
	if i < len(src) && src[i] == '.' {
		i++
		if i >= len(src) || !isDigit(src[i]) {
			return value{}, 0, &SyntaxError{Pos: i, Msg: "expected a digit after the decimal point"}
		}
		for i < len(src) && isDigit(src[i]) {
			i++
		}
		isFloat = true
	}
	if i < len(src) && (src[i] == 'e' || src[i] == 'E') {
		i++
		if i < len(src) && (src[i] == '+' || src[i] == '-') {
			i++
		}
		if i >= len(src) || !isDigit(src[i]) {
			return value{}, 0, &SyntaxError{Pos: i, Msg: "expected the digits of an exponent"}
		}
		for i < len(src) && isDigit(src[i]) {
			i++
		}
		isFloat = true
	}
	if i < len(src) && (isLetter(src[i]) || src[i] == '.') {
		return value{}, 0, &SyntaxError{Pos: i, Msg: fmt.Sprintf("unexpected %q after a number; expected an operator", src[i])}
	}
	text := src[start:i]
	if !isFloat {
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return value{}, 0, &SyntaxError{Pos: start, Msg: "integer out of the int64 range; write it as a float, e.g. 1e19"}
		}
		return value{k: vInt, i: n}, i, nil
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsInf(f, 0) {
		return value{}, 0, &SyntaxError{Pos: start, Msg: "number out of the float64 range"}
	}
	return value{k: vFloat, f: f}, i, nil
}

func lexString(src string, i int) (string, int, error) {
	quote := src[i]
	start := i
	i++
	var b strings.Builder
	for {
		if i >= len(src) {
			return "", 0, &SyntaxError{Pos: start, Msg: fmt.Sprintf("unterminated string; expected a closing %c", quote)}
		}
		c := src[i]
		switch {
		case c == quote:
			return b.String(), i + 1, nil
		case c == '\\':
			if i+1 >= len(src) {
				return "", 0, &SyntaxError{Pos: i, Msg: "expected an escape character after '\\'"}
			}
			esc := src[i+1]
			switch esc {
			case '\\', '\'', '"':
				b.WriteByte(esc)
				i += 2
			case 'n':
				b.WriteByte('\n')
				i += 2
			case 'r':
				b.WriteByte('\r')
				i += 2
			case 't':
				b.WriteByte('\t')
				i += 2
			case 'u', 'U':
				n := 4
				if esc == 'U' {
					n = 8
				}
				if i+2+n > len(src) {
					return "", 0, &SyntaxError{Pos: i, Msg: fmt.Sprintf("expected %d hex digits after \\%c", n, esc)}
				}
				code, err := strconv.ParseUint(src[i+2:i+2+n], 16, 32)
				if err != nil {
					return "", 0, &SyntaxError{Pos: i, Msg: fmt.Sprintf("expected %d hex digits after \\%c", n, esc)}
				}
				r := rune(code)
				if code > utf8.MaxRune || (r >= 0xD800 && r <= 0xDFFF) {
					return "", 0, &SyntaxError{Pos: i, Msg: "escape is not a Unicode character (surrogate halves are not allowed; use \\U for characters beyond \\uFFFF)"}
				}
				b.WriteRune(r)
				i += 2 + n
			default:
				return "", 0, &SyntaxError{Pos: i, Msg: fmt.Sprintf("unknown escape \\%c; expected one of \\\\ \\' \\\" \\n \\r \\t \\u \\U", esc)}
			}
		default:
			b.WriteByte(c)
			i++
		}
	}
}

// ---- parser ----

type nodeKind uint8

const (
	nLit nodeKind = iota
	nPath
	nNot
	nAnd
	nOr
	nCmp
	nIn // kids[0] in list (n.list) or kids[1] (a path); n.negate for "not in"
)

type node struct {
	kind   nodeKind
	pos    int
	val    value    // nLit
	path   []string // nPath
	op     string   // nCmp
	negate bool     // nIn
	list   []value  // nIn with a list literal
	kids   []*node
}

type parser struct {
	toks  []token
	i     int
	depth int
}

func (p *parser) peek() token { return p.toks[p.i] }

func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

func (p *parser) enter(pos int) error {
	p.depth++
	if p.depth > MaxExprDepth {
		return &SyntaxError{Pos: pos, Msg: fmt.Sprintf("nesting deeper than %d levels", MaxExprDepth)}
	}
	return nil
}

func (p *parser) parseOr() (*node, error) {
	first, err := p.parseAnd()
	if err != nil {
		return nil, err
	}
	if p.peek().kind != tOr {
		return first, nil
	}
	n := &node{kind: nOr, pos: first.pos, kids: []*node{first}}
	for p.peek().kind == tOr {
		p.next()
		k, err := p.parseAnd()
		if err != nil {
			return nil, err
		}
		n.kids = append(n.kids, k)
	}
	for _, k := range n.kids {
		if err := needCondition(k); err != nil {
			return nil, err
		}
	}
	return n, nil
}

func (p *parser) parseAnd() (*node, error) {
	first, err := p.parseNot()
	if err != nil {
		return nil, err
	}
	if p.peek().kind != tAnd {
		return first, nil
	}
	n := &node{kind: nAnd, pos: first.pos, kids: []*node{first}}
	for p.peek().kind == tAnd {
		p.next()
		k, err := p.parseNot()
		if err != nil {
			return nil, err
		}
		n.kids = append(n.kids, k)
	}
	for _, k := range n.kids {
		if err := needCondition(k); err != nil {
			return nil, err
		}
	}
	return n, nil
}

func (p *parser) parseNot() (*node, error) {
	if t := p.peek(); t.kind == tNot {
		p.next()
		if err := p.enter(t.pos); err != nil {
			return nil, err
		}
		k, err := p.parseNot()
		if err != nil {
			return nil, err
		}
		p.depth--
		if err := needCondition(k); err != nil {
			return nil, err
		}
		return &node{kind: nNot, pos: t.pos, kids: []*node{k}}, nil
	}
	return p.parseComparison()
}

func (p *parser) parseComparison() (*node, error) {
	left, err := p.parseOperand()
	if err != nil {
		return nil, err
	}
	t := p.peek()
	switch {
	case t.kind == tCmp:
		p.next()
		right, err := p.parseOperand()
		if err != nil {
			return nil, err
		}
		n := &node{kind: nCmp, pos: t.pos, op: t.text, kids: []*node{left, right}}
		if left.kind == nLit && right.kind == nLit {
			if _, err := compare(t.text, left.val, right.val, t.pos); err != nil {
				return nil, &SyntaxError{Pos: t.pos, Msg: fmt.Sprintf("%s cannot compare %s with %s", t.text, left.val.typeName(), right.val.typeName())}
			}
		}
		if ordering(t.text) {
			for _, side := range []*node{left, right} {
				if side.kind == nLit && !side.val.isNumber() && side.val.k != vString {
					return nil, &SyntaxError{Pos: side.pos, Msg: fmt.Sprintf("%s orders numbers or strings, not %s", t.text, side.val.typeName())}
				}
			}
		}
		return n, nil
	case t.kind == tIn:
		p.next()
		return p.parseIn(left, t, false)
	case t.kind == tNot && p.toks[p.i+1].kind == tIn:
		p.next()
		in := p.next()
		return p.parseIn(left, in, true)
	}
	return left, nil
}

func (p *parser) parseIn(left *node, in token, negate bool) (*node, error) {
	n := &node{kind: nIn, pos: in.pos, negate: negate, kids: []*node{left}}
	t := p.peek()
	switch t.kind {
	case tIdent:
		p.next()
		n.kids = append(n.kids, &node{kind: nPath, pos: t.pos, path: t.path})
		return n, nil
	case tLBrack:
		p.next()
		var elemType string
		for p.peek().kind != tRBrack {
			if len(n.list) > 0 {
				if c := p.next(); c.kind != tComma {
					return nil, &SyntaxError{Pos: c.pos, Msg: fmt.Sprintf("unexpected %s in a list; expected ',' or ']'", c.describe())}
				}
			}
			e := p.next()
			switch e.kind {
			case tNumber, tString, tTrue, tFalse, tNull:
			default:
				return nil, &SyntaxError{Pos: e.pos, Msg: fmt.Sprintf("unexpected %s in a list; lists hold literals (numbers, strings, true, false, null)", e.describe())}
			}
			if e.val.k != vNull {
				if elemType != "" && e.val.typeName() != elemType {
					return nil, &SyntaxError{Pos: e.pos, Msg: fmt.Sprintf("a list mixes %s and %s; list elements must share one type", elemType, e.val.typeName())}
				}
				elemType = e.val.typeName()
			}
			n.list = append(n.list, e.val)
		}
		p.next()
		if left.kind == nLit && left.val.k != vNull && elemType != "" && left.val.typeName() != elemType {
			return nil, &SyntaxError{Pos: in.pos, Msg: fmt.Sprintf("in cannot look for a %s in a list of %s values", left.val.typeName(), elemType)}
		}
		return n, nil
	default:
		return nil, &SyntaxError{Pos: t.pos, Msg: fmt.Sprintf("unexpected %s after in; expected a list [...] or an identifier", t.describe())}
	}
}

func (p *parser) parseOperand() (*node, error) {
	t := p.next()
	switch t.kind {
	case tNumber, tString, tTrue, tFalse, tNull:
		return &node{kind: nLit, pos: t.pos, val: t.val}, nil
	case tIdent:
		return &node{kind: nPath, pos: t.pos, path: t.path}, nil
	case tLParen:
		if err := p.enter(t.pos); err != nil {
			return nil, err
		}
		n, err := p.parseOr()
		if err != nil {
			return nil, err
		}
		p.depth--
		if c := p.next(); c.kind != tRParen {
			return nil, &SyntaxError{Pos: c.pos, Msg: fmt.Sprintf("unexpected %s; expected ')' to close the '(' at offset %d", c.describe(), t.pos)}
		}
		return n, nil
	case tLBrack:
		return nil, &SyntaxError{Pos: t.pos, Msg: "a list literal is allowed only after in"}
	default:
		return nil, &SyntaxError{Pos: t.pos, Msg: fmt.Sprintf("unexpected %s; expected an operand: a number, a string, true, false, null, an identifier or '('", t.describe())}
	}
}

// needCondition rejects literals that can never be a boolean where a condition is
// needed; identifiers and comparisons are checked at evaluation.
func needCondition(n *node) error {
	if n.kind == nLit && n.val.k != vBool {
		return &SyntaxError{Pos: n.pos, Msg: fmt.Sprintf("expected a condition, found a %s literal", n.val.typeName())}
	}
	return nil
}

func ordering(op string) bool { return op != "==" && op != "!=" }

// ---- evaluation ----

type evaluator struct {
	ctx  map[string]any
	opts EvalOptions
}

func (ev *evaluator) boolean(n *node, op string) (bool, error) {
	v, err := ev.eval(n)
	if err != nil {
		return false, err
	}
	if v.k != vBool {
		return false, &TypeError{Pos: n.pos, Op: op, Want: "a boolean", Got: v.typeName()}
	}
	return v.b, nil
}

func (ev *evaluator) eval(n *node) (value, error) {
	switch n.kind {
	case nLit:
		return n.val, nil
	case nPath:
		return ev.lookup(n)
	case nNot:
		b, err := ev.boolean(n.kids[0], "not")
		return value{k: vBool, b: !b}, err
	case nAnd, nOr:
		op, stop := "and", false
		if n.kind == nOr {
			op, stop = "or", true
		}
		for _, k := range n.kids {
			b, err := ev.boolean(k, op)
			if err != nil {
				return value{}, err
			}
			if b == stop {
				return value{k: vBool, b: stop}, nil
			}
		}
		return value{k: vBool, b: !stop}, nil
	case nCmp:
		l, err := ev.eval(n.kids[0])
		if err != nil {
			return value{}, err
		}
		r, err := ev.eval(n.kids[1])
		if err != nil {
			return value{}, err
		}
		b, err := compare(n.op, l, r, n.pos)
		return value{k: vBool, b: b}, err
	case nIn:
		return ev.in(n)
	}
	return value{}, fmt.Errorf("day1: condition: unknown node kind %d", n.kind)
}

func (ev *evaluator) in(n *node) (value, error) {
	op := "in"
	if n.negate {
		op = "not in"
	}
	l, err := ev.eval(n.kids[0])
	if err != nil {
		return value{}, err
	}
	list := n.list
	if len(n.kids) == 2 {
		r, err := ev.eval(n.kids[1])
		if err != nil {
			return value{}, err
		}
		if r.k != vList {
			return value{}, &TypeError{Pos: n.pos, Op: op, Want: "a list on its right", Got: r.typeName()}
		}
		list = r.list
	}
	switch l.k {
	case vList, vMap, vOther:
		return value{}, &TypeError{Pos: n.pos, Op: op, Want: "a null, boolean, number or string on its left", Got: l.typeName()}
	}
	// Check every element first, so the outcome never depends on where a match sits.
	for _, e := range list {
		if !equalComparable(l, e) {
			return value{}, &TypeError{Pos: n.pos, Op: op, Want: "list elements of the same type as the value sought", Got: l.typeName() + " and " + e.typeName()}
		}
	}
	found := false
	for _, e := range list {
		if eq, _ := equal(l, e); eq {
			found = true
			break
		}
	}
	return value{k: vBool, b: found != n.negate}, nil
}

// lookup resolves an identifier path in the context.
func (ev *evaluator) lookup(n *node) (value, error) {
	missing := func() (value, error) {
		if ev.opts.MissingAsNull {
			return value{k: vNull}, nil
		}
		return value{}, &MissingKeyError{Path: strings.Join(n.path, "."), Pos: n.pos}
	}
	cur, ok := ev.ctx[n.path[0]]
	if !ok {
		return missing()
	}
	for i, seg := range n.path[1:] {
		if cur == nil {
			return missing()
		}
		var found bool
		cur, found, ok = descend(cur, seg)
		if !ok {
			v, _ := fromGo(cur)
			return value{}, &TypeError{Pos: n.pos, Op: "key " + strings.Join(n.path, "."),
				Want: "a map (or a list, for a numeric key) at " + strings.Join(n.path[:i+1], "."), Got: v.typeName()}
		}
		if !found {
			return missing()
		}
	}
	v, err := fromGo(cur)
	if err != nil {
		return value{}, &TypeError{Pos: n.pos, Op: "key " + strings.Join(n.path, "."),
			Want: "a null, boolean, number, string, list or map value", Got: v.s}
	}
	return v, nil
}

// descend steps from cur into key seg. It returns the next value, whether seg was
// found, and ok=false (with cur unchanged) when cur cannot be descended into.
func descend(cur any, seg string) (next any, found, ok bool) {
	switch m := cur.(type) {
	case map[string]any:
		v, found := m[seg]
		return v, found, true
	case []any:
		idx, err := strconv.Atoi(seg)
		if err != nil {
			return cur, false, false
		}
		if idx < 0 || idx >= len(m) {
			return nil, false, true
		}
		return m[idx], true, true
	}
	rv := reflect.ValueOf(cur)
	switch rv.Kind() {
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			return cur, false, false
		}
		v := rv.MapIndex(reflect.ValueOf(seg).Convert(rv.Type().Key()))
		if !v.IsValid() {
			return nil, false, true
		}
		return v.Interface(), true, true
	case reflect.Slice, reflect.Array:
		idx, err := strconv.Atoi(seg)
		if err != nil {
			return cur, false, false
		}
		if idx < 0 || idx >= rv.Len() {
			return nil, false, true
		}
		return rv.Index(idx).Interface(), true, true
	}
	return cur, false, false
}

// fromGo converts a context value. Lists are converted one level deep: nested lists
// and maps become elements that compare with nothing. A value of an unusable type
// yields vOther with its Go type name and an error.
func fromGo(x any) (value, error) {
	switch v := x.(type) {
	case nil:
		return value{k: vNull}, nil
	case bool:
		return value{k: vBool, b: v}, nil
	case string:
		return value{k: vString, s: v}, nil
	case int:
		return value{k: vInt, i: int64(v)}, nil
	case int64:
		return value{k: vInt, i: v}, nil
	case float64:
		return value{k: vFloat, f: v}, nil
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return value{k: vInt, i: i}, nil
		}
		if f, err := v.Float64(); err == nil {
			return value{k: vFloat, f: f}, nil
		}
		return value{k: vOther, s: "malformed json.Number"}, fmt.Errorf("malformed json.Number")
	case map[string]any:
		return value{k: vMap}, nil
	case []any:
		out := make([]value, len(v))
		for i, e := range v {
			out[i] = scalar(e)
		}
		return value{k: vList, list: out}, nil
	case []string:
		out := make([]value, len(v))
		for i, e := range v {
			out[i] = value{k: vString, s: e}
		}
		return value{k: vList, list: out}, nil
	}
	rv := reflect.ValueOf(x)
	switch rv.Kind() {
	case reflect.Bool:
		return value{k: vBool, b: rv.Bool()}, nil
	case reflect.String:
		return value{k: vString, s: rv.String()}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return value{k: vInt, i: rv.Int()}, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		u := rv.Uint()
		if u > math.MaxInt64 {
			return value{k: vFloat, f: float64(u)}, nil
		}
		return value{k: vInt, i: int64(u)}, nil
	case reflect.Float32, reflect.Float64:
		return value{k: vFloat, f: rv.Float()}, nil
	case reflect.Map:
		if rv.Type().Key().Kind() == reflect.String {
			return value{k: vMap}, nil
		}
	case reflect.Slice, reflect.Array:
		out := make([]value, rv.Len())
		for i := range out {
			out[i] = scalar(rv.Index(i).Interface())
		}
		return value{k: vList, list: out}, nil
	}
	return value{k: vOther, s: fmt.Sprintf("%T", x)}, fmt.Errorf("unsupported type %T", x)
}

// scalar converts a list element; lists and maps inside lists are not descended.
func scalar(x any) value {
	if x == nil {
		return value{k: vNull}
	}
	switch reflect.ValueOf(x).Kind() {
	case reflect.Slice, reflect.Array:
		return value{k: vOther, s: "list"}
	}
	v, _ := fromGo(x)
	return v
}

// equalComparable reports whether == may compare a and b without a type error.
func equalComparable(a, b value) bool {
	switch {
	case a.k == vNull || b.k == vNull:
		return a.k != vList && a.k != vMap && a.k != vOther && b.k != vList && b.k != vMap && b.k != vOther
	case a.isNumber() && b.isNumber():
		return true
	case a.k == vString && b.k == vString, a.k == vBool && b.k == vBool:
		return true
	}
	return false
}

// equal reports a == b; ok is false when the types do not compare.
func equal(a, b value) (eq, ok bool) {
	if !equalComparable(a, b) {
		return false, false
	}
	switch {
	case a.k == vNull || b.k == vNull:
		return a.k == b.k, true
	case a.isNumber():
		c, ordered := cmpNumbers(a, b)
		return ordered && c == 0, true
	case a.k == vString:
		return a.s == b.s, true
	default:
		return a.b == b.b, true
	}
}

func compare(op string, a, b value, pos int) (bool, error) {
	if !ordering(op) {
		eq, ok := equal(a, b)
		if !ok {
			return false, &TypeError{Pos: pos, Op: op, Want: "two values of the same type (or null)", Got: a.typeName() + " and " + b.typeName()}
		}
		return eq == (op == "=="), nil
	}
	var c int
	switch {
	case a.isNumber() && b.isNumber():
		var ordered bool
		c, ordered = cmpNumbers(a, b)
		if !ordered {
			return false, nil // NaN orders with nothing
		}
	case a.k == vString && b.k == vString:
		c = strings.Compare(a.s, b.s)
	default:
		return false, &TypeError{Pos: pos, Op: op, Want: "two numbers or two strings", Got: a.typeName() + " and " + b.typeName()}
	}
	switch op {
	case "<":
		return c < 0, nil
	case "<=":
		return c <= 0, nil
	case ">":
		return c > 0, nil
	default:
		return c >= 0, nil
	}
}

// cmpNumbers compares two numbers exactly, ints with floats included. ordered is false
// when a NaN is involved.
func cmpNumbers(a, b value) (c int, ordered bool) {
	switch {
	case a.k == vInt && b.k == vInt:
		return cmpInt(a.i, b.i), true
	case a.k == vInt:
		return cmpIntFloat(a.i, b.f)
	case b.k == vInt:
		c, ok := cmpIntFloat(b.i, a.f)
		return -c, ok
	}
	if math.IsNaN(a.f) || math.IsNaN(b.f) {
		return 0, false
	}
	switch {
	case a.f < b.f:
		return -1, true
	case a.f > b.f:
		return 1, true
	}
	return 0, true
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// cmpIntFloat compares i with f without the rounding a conversion of i to float64
// would bring for large integers.
func cmpIntFloat(i int64, f float64) (int, bool) {
	const two63 = 9223372036854775808.0 // 2^63, exactly representable
	switch {
	case math.IsNaN(f):
		return 0, false
	case f >= two63:
		return -1, true
	case f < -two63:
		return 1, true
	}
	t := math.Trunc(f)
	if c := cmpInt(i, int64(t)); c != 0 {
		return c, true
	}
	switch {
	case f > t:
		return -1, true
	case f < t:
		return 1, true
	}
	return 0, true
}
