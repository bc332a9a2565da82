package contract

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/jsonx"
)

// Validate checks a JSON request body against the rules of endpoint b and
// returns OpenAI's 400 for the first rule it breaks, or nil. body must be
// one well-formed JSON value (jsonx.Check).
func Validate(b Body, body []byte) *apierr.Error {
	return ValidateSpans(b, body, nil, nil)
}

// ValidateSpans is Validate that also records, in the same pass, where the
// top-level members named in keys are: spans[i] for keys[i] (not Found
// when absent), so a handler reads what it needs without another scan.
func ValidateSpans(b Body, body []byte, keys []string, spans []jsonx.Span) *apierr.Error {
	clear(spans)
	w := walker{b: body, want: keys, spans: spans}
	if _, f := w.value(int32(b), jsonx.SkipSpace(body, 0)); f != nil {
		return f.err
	}
	return nil
}

// step is one step of the path from the body to the value being checked:
// a member name, or an array index when key is nil.
type step struct {
	key []byte
	idx int
}

// walker holds the body and the path to the value being checked; a param
// string is made from the path only for an error. Steps deeper than the
// path array holds are counted but not named (no request schema nests
// that deep).
type walker struct {
	b     []byte
	path  [48]step
	depth int
	want  []string     // top-level members to record (ValidateSpans)
	spans []jsonx.Span // where they are
}

func (w *walker) push(key []byte, idx int) {
	if w.depth < len(w.path) {
		w.path[w.depth] = step{key, idx}
	}
	w.depth++
}

func (w *walker) pop() { w.depth-- }

// param renders the path in OpenAI's syntax: messages[0].content[1].image_url.url.
func (w *walker) param() string {
	var b []byte
	for _, s := range w.path[:min(w.depth, len(w.path))] {
		if s.key == nil {
			b = append(b, '[')
			b = strconv.AppendInt(b, int64(s.idx), 10)
			b = append(b, ']')
			continue
		}
		if len(b) > 0 {
			b = append(b, '.')
		}
		b = append(b, s.key...)
	}
	return string(b)
}

// failure is a broken rule and where it was found: when every branch of a
// union fails, the one that read furthest into the body (then the deepest)
// is the branch the client meant.
type failure struct {
	err   *apierr.Error
	pos   int // offset of the value (or end of the container) that broke it
	depth int
	near  bool // the value has about the right type (a decimal for an integer, say)
}

func (f *failure) beats(g *failure) bool {
	switch {
	case g == nil || f.pos != g.pos:
		return g == nil || f.pos > g.pos
	case f.depth != g.depth:
		return f.depth > g.depth
	}
	return f.near && !g.near
}

// value checks the value at b[i] against node n and returns the offset
// just past it.
func (w *walker) value(n int32, i int) (int, *failure) {
	nd := &nodes[n]
	if n == 0 {
		return jsonx.SkipValue(w.b, i), nil
	}
	k := kindAt(w.b, i)
	if k == kNull && (nd.types&kNull != 0 || nd.has&nullable != 0) {
		return i + 4, nil
	}
	if !nd.accepts(k) {
		return 0, w.typeFailure(i, nd, k)
	}
	var (
		end int
		f   *failure
	)
	if len(nd.alts) > 0 && !nd.ownRules() {
		// A pure union: the branch that holds finds the value's end.
		if end, f = w.union(nd, i, k); f != nil {
			return 0, f
		}
		return w.also(nd, i, end)
	}
	switch k {
	case kString:
		end, f = w.str(nd, i)
	case kArray:
		end, f = w.array(nd, i)
	case kObject:
		end, f = w.object(nd, i)
	case kInteger, kNumber:
		end, f = w.number(nd, i)
	default:
		end = jsonx.SkipValue(w.b, i)
	}
	if f != nil {
		return 0, f
	}
	if len(nd.alts) > 0 {
		if _, f = w.union(nd, i, k); f != nil {
			return 0, f
		}
	}
	return w.also(nd, i, end)
}

// also checks the further schemas the value at b[i:end] must match.
func (w *walker) also(nd *node, i, end int) (int, *failure) {
	for _, m := range nd.all {
		if _, f := w.value(m, i); f != nil {
			return 0, f
		}
	}
	return end, nil
}

// ownRules reports whether the node constrains a value beyond its type and
// its union.
func (nd *node) ownRules() bool {
	return nd.has&^nullable != 0 || nd.enum != nil || nd.pattern != 0 || nd.items != 0 ||
		nd.props != nil || nd.required != nil || nd.addl != 0 || nd.names != 0
}

// kindAt names the JSON type of the value at b[i] (kInteger for numbers
// without fraction or exponent).
func kindAt(b []byte, i int) kinds {
	switch b[i] {
	case '"':
		return kString
	case '{':
		return kObject
	case '[':
		return kArray
	case 't', 'f':
		return kBoolean
	case 'n':
		return kNull
	}
	for j := i; j < len(b); j++ {
		switch b[j] {
		case '.', 'e', 'E':
			return kNumber
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return kInteger
		}
	}
	return kInteger
}

// accepts reports whether a value of kind k is one of the node's types.
func (nd *node) accepts(k kinds) bool {
	switch {
	case nd.types == 0:
		return true
	case k == kInteger:
		return nd.types&(kInteger|kNumber) != 0
	case k == kNull:
		return nd.types&kNull != 0 || nd.has&nullable != 0
	}
	return nd.types&k != 0
}

func (w *walker) str(nd *node, i int) (int, *failure) {
	end := jsonx.SkipString(w.b, i)
	if nd.enum == nil && nd.pattern == 0 && nd.has&(hasMinLen|hasMaxLen) == 0 {
		return end, nil
	}
	raw := w.b[i+1 : end-1]
	if bytes.IndexByte(raw, '\\') >= 0 {
		raw = jsonx.Unescape(raw)
	}
	if nd.enum != nil && !contains(nd.enum, raw) {
		return 0, w.fail(i, enumError(w.param(), string(raw), nd.enum))
	}
	if nd.has&(hasMinLen|hasMaxLen) != 0 {
		n := int32(utf8.RuneCount(raw))
		if nd.has&hasMinLen != 0 && n < nd.minLen {
			return 0, w.fail(i, lengthError(w.param(), "string", true, nd.minLen, n))
		}
		if nd.has&hasMaxLen != 0 && n > nd.maxLen {
			return 0, w.fail(i, lengthError(w.param(), "string", false, nd.maxLen, n))
		}
	}
	if nd.pattern != 0 && !patterns[nd.pattern].Match(raw) {
		return 0, w.fail(i, patternError(w.param(), patterns[nd.pattern].String()))
	}
	return end, nil
}

func contains(list []string, v []byte) bool {
	for _, s := range list {
		if s == string(v) {
			return true
		}
	}
	return false
}

func (w *walker) number(nd *node, i int) (int, *failure) {
	end := jsonx.SkipValue(w.b, i)
	if nd.has&(hasMin|hasMax) == 0 && nd.types&kInteger == 0 {
		return end, nil
	}
	lit := w.b[i:end]
	var v float64
	if nd.types&kInteger != 0 && nd.types&kNumber == 0 {
		n, err := strconv.ParseInt(string(lit), 10, 64)
		if err != nil {
			return 0, w.fail(i, rangeError(w.param(), string(lit)))
		}
		v = float64(n)
	} else {
		var err error
		if v, err = strconv.ParseFloat(string(lit), 64); err != nil {
			return 0, w.fail(i, rangeError(w.param(), string(lit)))
		}
	}
	integral := nd.types&kInteger != 0 && nd.types&kNumber == 0
	if nd.has&hasMin != 0 && (v < nd.min || nd.has&exclMin != 0 && v == nd.min) {
		return 0, w.fail(i, boundError(w.param(), integral, false, nd.has&exclMin != 0, nd.min, string(lit)))
	}
	if nd.has&hasMax != 0 && (v > nd.max || nd.has&exclMax != 0 && v == nd.max) {
		return 0, w.fail(i, boundError(w.param(), integral, true, nd.has&exclMax != 0, nd.max, string(lit)))
	}
	return end, nil
}

func (w *walker) array(nd *node, i int) (int, *failure) {
	j := jsonx.SkipSpace(w.b, i+1)
	count := int32(0)
	for w.b[j] != ']' {
		w.push(nil, int(count))
		end, f := w.value(nd.items, j)
		w.pop()
		if f != nil {
			return 0, f
		}
		count++
		j = jsonx.SkipSpace(w.b, end)
		if w.b[j] == ',' {
			j = jsonx.SkipSpace(w.b, j+1)
		}
	}
	if nd.has&hasMinItems != 0 && count < nd.minItems {
		return 0, w.fail(j, lengthError(w.param(), "array", true, nd.minItems, count))
	}
	if nd.has&hasMaxItems != 0 && count > nd.maxItems {
		return 0, w.fail(j, lengthError(w.param(), "array", false, nd.maxItems, count))
	}
	return j + 1, nil
}

func (w *walker) object(nd *node, i int) (int, *failure) {
	j := jsonx.SkipSpace(w.b, i+1)
	var (
		count int32
		seen  uint64 // bit r: required[r] is present
	)
	for w.b[j] != '}' {
		kEnd := jsonx.SkipString(w.b, j)
		key := w.b[j+1 : kEnd-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			key = jsonx.Unescape(key)
		}
		keyStart := j
		j = jsonx.SkipSpace(w.b, kEnd)
		j = jsonx.SkipSpace(w.b, j+1) // past ':'
		w.push(key, 0)
		end, f := w.member(nd, key, keyStart, j, &seen)
		w.pop()
		if f != nil {
			return 0, f
		}
		if w.depth == 0 && w.want != nil {
			w.note(key, keyStart, j, end)
		}
		count++
		j = jsonx.SkipSpace(w.b, end)
		if w.b[j] == ',' {
			j = jsonx.SkipSpace(w.b, j+1)
		}
	}
	for r, name := range nd.required {
		if r < 64 && seen&(1<<r) == 0 {
			w.push([]byte(name), 0)
			f := w.fail(i, missingError(w.param())) // a weak hint: at the object itself
			w.pop()
			return 0, f
		}
	}
	if nd.has&hasMinProps != 0 && count < nd.minProps {
		return 0, w.fail(i, propsError(w.param(), true, nd.minProps, count))
	}
	if nd.has&hasMaxProps != 0 && count > nd.maxProps {
		return 0, w.fail(i, propsError(w.param(), false, nd.maxProps, count))
	}
	return j + 1, nil
}

// member checks one member of an object whose value starts at b[v].
func (w *walker) member(nd *node, key []byte, keyStart, v int, seen *uint64) (int, *failure) {
	required := false
	for r, name := range nd.required {
		if name == string(key) {
			*seen |= 1 << r
			required = true
		}
	}
	if p, ok := lookup(nd.props, key); ok {
		if !required && w.b[v] == 'n' {
			return v + 4, nil // null means absent for an optional member
		}
		return w.value(p, v)
	}
	if nd.names != 0 {
		if _, f := w.value(nd.names, keyStart); f != nil {
			return 0, f
		}
	}
	if nd.addl != 0 {
		return w.value(nd.addl, v)
	}
	for _, p := range nd.props {
		if strings.EqualFold(p.name, string(key)) {
			return 0, w.fail(keyStart, caseError(w.param(), p.name))
		}
	}
	return jsonx.SkipValue(w.b, v), nil
}

func lookup(props []prop, key []byte) (int32, bool) {
	lo, hi := 0, len(props)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if props[m].name < string(key) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(props) && props[lo].name == string(key) {
		return props[lo].node, true
	}
	return 0, false
}

func (w *walker) fail(pos int, err *apierr.Error) *failure {
	return &failure{err: err, pos: pos, depth: w.depth, near: err.Code != CodeInvalidType}
}

func (w *walker) typeFailure(i int, nd *node, k kinds) *failure {
	f := w.fail(i, typeError(w.param(), expected(nd), got(k)))
	f.near = k == kNumber && nd.types&kInteger != 0
	return f
}
