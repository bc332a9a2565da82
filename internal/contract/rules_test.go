package contract

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestEveryRule walks every schema reachable from each endpoint's body and,
// for every rule it states (type, enum, bounds, lengths, pattern, item and
// member counts, required members), builds a whole request that holds one
// valid value at that place and one that breaks the rule there. The valid
// one must pass; the invalid one must be refused with the rule's code and
// the exact param path. The table is derived from the compiled
// description, so a new description brings its new rules into the test.
func TestEveryRule(t *testing.T) {
	bodies := []struct {
		name string
		body Body
	}{{"chat", ChatCompletions}, {"completions", Completions}, {"embeddings", Embeddings},
		{"images", ImageGenerations}, {"responses", Responses}}
	total, lenient := 0, 0
	for _, b := range bodies {
		t.Run(b.name, func(t *testing.T) {
			r := &ruleWalker{t: t, seen: map[int32]bool{}}
			root := func(v string) string { return v }
			base, ok := r.minimal(int32(b.body), 0)
			if !ok {
				t.Fatal("no minimal body")
			}
			if err := Validate(b.body, []byte(base)); err != nil {
				t.Fatalf("minimal body %s refused: %v", base, err)
			}
			r.visit(b.body, int32(b.body), "", root, nil, false, 0)
			t.Logf("%d rules checked with a valid and an invalid value, %d (under overlapping union branches) with a valid value only",
				r.strict, r.lenient)
			if r.strict < 10 {
				t.Errorf("too few rules checked strictly: %d strict, %d lenient", r.strict, r.lenient)
			}
			total += r.strict
			lenient += r.lenient
		})
	}
	if total < 400 || total < 2*lenient {
		t.Errorf("only %d rules checked strictly over all endpoints (%d leniently)", total, lenient)
	}
}

// ruleWalker builds values from the node table.
type ruleWalker struct {
	t               *testing.T
	seen            map[int32]bool
	strict, lenient int
}

// place puts a value at the visited position and returns the whole body.
type place func(value string) string

// unionAt is a union above the visited position and the value it holds
// there for a given value at the position.
type unionAt struct {
	node int32
	at   place
}

// visit checks the rules of node n, reached at path through place at,
// then the nodes below it. An invalid value is checked strictly (the
// exact param and code) when each union above it has one branch that can
// take it; else another branch's answer is as right, and only the refusal
// is checked. branch is true for a union's branch, whose type the union
// checks.
func (r *ruleWalker) visit(b Body, n int32, path string, at place, unions []unionAt, branch bool, depth int) {
	if n == 0 || r.seen[n] || depth > 12 {
		return
	}
	r.seen[n] = true
	nd := &nodes[n]
	for _, c := range r.cases(n, branch) {
		r.check(b, path, at(c.value), c, dispatched(unions, c.value))
	}
	// below wraps at, and the place of every union above, in one more level.
	below := func(wrap place) (place, []unionAt) {
		us := make([]unionAt, len(unions))
		for i, u := range unions {
			us[i] = unionAt{u.node, func(v string) string { return u.at(wrap(v)) }}
		}
		return func(v string) string { return at(wrap(v)) }, us
	}
	for _, p := range nd.props {
		a, us := below(func(v string) string { return r.object(n, p.name, v) })
		r.visit(b, p.node, join(path, p.name), a, us, false, depth+1)
	}
	if nd.addl != 0 {
		a, us := below(func(v string) string { return r.object(n, "k", v) })
		r.visit(b, nd.addl, join(path, "k"), a, us, false, depth+1)
	}
	if nd.items != 0 {
		rest, _ := r.minimal(nd.items, 1)
		a, us := below(func(v string) string {
			return "[" + v + strings.Repeat(","+rest, int(max(nd.minItems-1, 0))) + "]"
		})
		r.visit(b, nd.items, path+"[0]", a, us, false, depth+1)
	}
	if len(nd.alts) > 0 {
		us := append(slices.Clone(unions), unionAt{n, func(v string) string { return v }})
		for _, a := range nd.alts {
			r.visit(b, a.node, path, at, us, true, depth+1)
		}
	}
}

// check validates one case's body.
func (r *ruleWalker) check(b Body, path, body string, c ruleCase, strict bool) {
	err := Validate(b, []byte(body))
	switch {
	case c.code == "":
		if err != nil {
			r.t.Errorf("%s: valid value %s refused: %v\nbody %s", path, c.value, err, body)
		}
		return
	case !strict: // another branch may take the value, or refuse it otherwise
		r.lenient++
		return
	case err == nil:
		r.t.Errorf("%s: %s (%s) accepted\nbody %s", path, c.value, c.code, body)
		return
	}
	r.strict++
	want := path
	if c.param != "" {
		want = join(path, c.param)
	}
	if err.Param != want || err.Code != c.code || err.Status != 400 || err.Type != "invalid_request_error" {
		r.t.Errorf("%s: %s: got %d %s %s %q, want param %q code %s\nbody %s", path, c.value, err.Status, err.Type, err.Code, err.Param, want, c.code, body)
	}
}

// dispatched reports whether, with v at the visited position, every union
// above it has exactly one branch that can take its value.
func dispatched(unions []unionAt, v string) bool {
	for _, u := range unions {
		val := []byte(u.at(v))
		k := kindAt(val, 0)
		var tag []byte
		hasTag := false
		nd := &nodes[u.node]
		if k == kObject && nd.tag != "" {
			var m map[string]any
			_ = json.Unmarshal(val, &m)
			if s, ok := m[nd.tag].(string); ok {
				tag, hasTag = []byte(s), true
			}
		}
		n := 0
		for _, a := range nd.alts {
			if mayAccept(a.node, k, 0) && nd.selects(a, k, tag, hasTag) {
				n++
			}
		}
		if n != 1 {
			return false
		}
	}
	return true
}

// object is a minimal value of object node n with member key set to v.
func (r *ruleWalker) object(n int32, key, v string) string {
	nd := &nodes[n]
	members := []string{strconv.Quote(key) + ":" + v}
	for _, req := range nd.required {
		if req == key {
			continue
		}
		rv, _ := r.minimal(propNode(nd, req), 1)
		members = append(members, strconv.Quote(req)+":"+rv)
	}
	return "{" + strings.Join(members, ",") + "}"
}

func propNode(nd *node, name string) int32 {
	p, _ := lookup(nd.props, []byte(name))
	return p
}

// patternSamples are strings that match each pattern of the description;
// a new pattern needs a sample here.
var patternSamples = map[string]string{
	"^[a-zA-Z0-9_-]+$":      "get_weather",
	"^[A-Za-z0-9_.-]+$":     "a.b-c",
	"^tunnel_[a-z0-9]{32}$": "tunnel_" + strings.Repeat("a1", 16),
}

// minimal builds the smallest value node n accepts.
func (r *ruleWalker) minimal(n int32, depth int) (string, bool) {
	nd := &nodes[n]
	if n == 0 {
		return `"x"`, true
	}
	if depth > 16 {
		return "", false
	}
	if len(nd.alts) > 0 && !nd.ownRules() {
		for _, a := range nd.alts {
			if v, ok := r.minimal(a.node, depth+1); ok && nd.accepts(kindAt([]byte(v), 0)) {
				return v, true
			}
		}
		return "", false
	}
	switch {
	case nd.enum != nil:
		return strconv.Quote(nd.enum[0]), true
	case nd.types&kObject != 0 || nd.props != nil:
		var members []string
		for _, req := range nd.required {
			v, ok := r.minimal(propNode(nd, req), depth+1)
			if !ok {
				return "", false
			}
			members = append(members, strconv.Quote(req)+":"+v)
		}
		return "{" + strings.Join(members, ",") + "}", true
	case nd.types&kString != 0:
		if nd.pattern != 0 {
			s, ok := patternSamples[patterns[nd.pattern].String()]
			if !ok {
				r.t.Fatalf("no sample for pattern %s", patterns[nd.pattern])
			}
			return strconv.Quote(s), true
		}
		return strconv.Quote(strings.Repeat("a", int(max(1, nd.minLen)))), true
	case nd.types&kInteger != 0:
		return strconv.FormatInt(r.inRange(nd, 1), 10), true
	case nd.types&kNumber != 0:
		return strconv.FormatInt(r.inRange(nd, 0), 10), true
	case nd.types&kBoolean != 0:
		return "true", true
	case nd.types&kArray != 0:
		el, ok := r.minimal(nd.items, depth+1)
		if !ok {
			return "", false
		}
		return "[" + strings.TrimSuffix(strings.Repeat(el+",", int(nd.minItems)), ",") + "]", true
	case nd.types&kNull != 0:
		return "null", true
	}
	return `"x"`, true
}

// inRange is v moved inside the node's bounds.
func (r *ruleWalker) inRange(nd *node, v int64) int64 {
	if nd.has&hasMin != 0 && float64(v) <= nd.min {
		v = int64(nd.min)
		if nd.has&exclMin != 0 || float64(v) < nd.min {
			v++
		}
	}
	if nd.has&hasMax != 0 && float64(v) > nd.max {
		v = int64(nd.max)
	}
	return v
}

// ruleCase is one value for a node: valid when code is "", else breaking
// the rule with that code (at the node, or at member param below it).
type ruleCase struct {
	value, code, param string
}

// cases lists a valid and an invalid value for every rule of node n.
func (r *ruleWalker) cases(n int32, branch bool) []ruleCase {
	nd := &nodes[n]
	v, ok := r.minimal(n, 0)
	if !ok {
		return nil
	}
	cs := []ruleCase{{value: v}}
	if k := acceptedKinds(nd, 0); k != 0 && nd.has&nullable == 0 && !branch {
		cs = append(cs, ruleCase{value: wrongValue(k), code: CodeInvalidType})
	}
	if nd.has&nullable != 0 {
		cs = append(cs, ruleCase{value: "null"})
	}
	for _, e := range nd.enum {
		cs = append(cs, ruleCase{value: strconv.Quote(e)})
	}
	if nd.enum != nil {
		cs = append(cs, ruleCase{value: `"no-such-value"`, code: CodeInvalidValue})
	}
	integer := nd.types&kInteger != 0 && nd.types&kNumber == 0
	if nd.has&hasMin != 0 && nd.min > -1e15 {
		lo := nd.min
		if nd.has&exclMin == 0 {
			cs = append(cs, ruleCase{value: num(lo)})
		}
		below := lo - 1
		if nd.has&exclMin != 0 {
			below = lo
		} else if !integer {
			below = lo - 0.5
		}
		cs = append(cs, ruleCase{value: num(below), code: map[bool]string{true: CodeIntegerTooSmall, false: CodeDecimalTooSmall}[integer]})
	}
	if nd.has&hasMax != 0 && nd.max < 1e15 {
		if nd.has&exclMax == 0 {
			cs = append(cs, ruleCase{value: num(nd.max)})
		}
		above := nd.max + 1
		if nd.has&exclMax != 0 {
			above = nd.max
		}
		cs = append(cs, ruleCase{value: num(above), code: map[bool]string{true: CodeIntegerTooLarge, false: CodeDecimalTooLarge}[integer]})
	}
	if nd.pattern == 0 && nd.enum == nil && nd.types&kString != 0 {
		if nd.has&hasMinLen != 0 && nd.minLen > 0 {
			cs = append(cs, ruleCase{value: strconv.Quote(strings.Repeat("é", int(nd.minLen)))},
				ruleCase{value: strconv.Quote(strings.Repeat("é", int(nd.minLen)-1)), code: map[bool]string{true: CodeEmptyString, false: CodeStringTooShort}[nd.minLen == 1]})
		}
		if nd.has&hasMaxLen != 0 && nd.maxLen < 1<<16 {
			cs = append(cs, ruleCase{value: strconv.Quote(strings.Repeat("é", int(nd.maxLen)))},
				ruleCase{value: strconv.Quote(strings.Repeat("é", int(nd.maxLen)+1)), code: CodeStringTooLong})
		}
	}
	if nd.pattern != 0 {
		cs = append(cs, ruleCase{value: `"not valid!"`, code: CodeInvalidValue})
	}
	if nd.types&kArray != 0 {
		el, ok := r.minimal(nd.items, 0)
		if ok && nd.has&hasMinItems != 0 && nd.minItems > 0 {
			cs = append(cs, ruleCase{value: array(el, nd.minItems-1), code: map[bool]string{true: CodeEmptyArray, false: CodeArrayTooShort}[nd.minItems == 1]})
		}
		if ok && nd.has&hasMaxItems != 0 {
			cs = append(cs, ruleCase{value: array(el, nd.maxItems)}, ruleCase{value: array(el, nd.maxItems+1), code: CodeArrayTooLong})
		}
	}
	if nd.types&kObject != 0 {
		for _, req := range nd.required {
			obj, ok := r.without(n, req)
			if ok {
				cs = append(cs, ruleCase{value: obj, code: CodeMissing, param: req})
			}
		}
		if nd.has&hasMaxProps != 0 && nd.addl != 0 && len(nd.required) == 0 {
			val, _ := r.minimal(nd.addl, 0)
			cs = append(cs, ruleCase{value: members(val, nd.maxProps)}, ruleCase{value: members(val, nd.maxProps+1), code: CodeTooManyMembers})
		}
		if nd.names != 0 && nodes[nd.names].has&hasMaxLen != 0 && nd.addl != 0 {
			val, _ := r.minimal(nd.addl, 0)
			long := strings.Repeat("k", int(nodes[nd.names].maxLen)+1)
			cs = append(cs, ruleCase{value: "{" + strconv.Quote(long) + ":" + val + "}", code: CodeStringTooLong, param: long})
		}
		for _, p := range nd.props {
			if nd.addl != 0 {
				break
			}
			if up := strings.ToUpper(p.name); up != p.name && !slices.ContainsFunc(nd.props, func(q prop) bool { return q.name == up }) {
				obj := r.object(n, up, `"x"`)
				cs = append(cs, ruleCase{value: obj, code: CodeUnknown, param: up})
				break // one per object is enough
			}
		}
	}
	return cs
}

// without is a minimal value of object node n lacking member req.
func (r *ruleWalker) without(n int32, req string) (string, bool) {
	nd := &nodes[n]
	var ms []string
	for _, other := range nd.required {
		if other == req {
			continue
		}
		v, ok := r.minimal(propNode(nd, other), 1)
		if !ok {
			return "", false
		}
		ms = append(ms, strconv.Quote(other)+":"+v)
	}
	return "{" + strings.Join(ms, ",") + "}", true
}

func wrongValue(k kinds) string {
	switch {
	case k&kString == 0:
		return `"a string"`
	case k&(kInteger|kNumber) == 0:
		return "42"
	case k&kObject == 0:
		return "{}"
	}
	return "true"
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func array(el string, n int32) string {
	return "[" + strings.TrimSuffix(strings.Repeat(el+",", int(n)), ",") + "]"
}

func members(val string, n int32) string {
	ms := make([]string, n)
	for i := range ms {
		ms[i] = fmt.Sprintf("%q:%s", fmt.Sprintf("k%d", i), val)
	}
	return "{" + strings.Join(ms, ",") + "}"
}

func join(path, member string) string {
	if path == "" {
		return member
	}
	return path + "." + member
}
