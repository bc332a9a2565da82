package contract

import (
	"bytes"
	"slices"

	"github.com/modelgate/modelgate/internal/jsonx"
)

// Unions: which branches may take a value (its JSON type, then its tag
// member), and the walk over them.

// mayAccept is accepts for a union branch, looking into the branches of a
// branch that has no types of its own.
func mayAccept(n int32, k kinds, depth int) bool {
	nd := &nodes[n]
	switch {
	case n == 0:
		return true
	case k == kNull && nd.has&nullable != 0:
		return true
	case nd.types != 0:
		return nd.accepts(k)
	case len(nd.alts) == 0 || depth > 8:
		return true
	}
	for _, a := range nd.alts {
		if mayAccept(a.node, k, depth+1) {
			return true
		}
	}
	return false
}

// union checks the value at b[i:end] against the node's branches: those
// that accept its JSON type and, for objects, its tag value are tried in
// order and the first that holds wins.
// selects reports whether branch a may take a value of kind k whose tag
// member (for objects) is tag, or absent when hasTag is false.
func (nd *node) selects(a alt, k kinds, tag []byte, hasTag bool) bool {
	if k != kObject || nd.tag == "" {
		return true
	}
	if hasTag {
		return a.tags == nil || contains(a.tags, tag)
	}
	return !a.needsTag
}

func (w *walker) union(nd *node, i int, k kinds) (int, *failure) {
	var tag []byte
	hasTag := false
	if k == kObject && nd.tag != "" {
		raw := w.find(i, nd.tag)
		if len(raw) > 0 && raw[0] != '"' && raw[0] != 'n' {
			w.push([]byte(nd.tag), 0)
			f := w.fail(i, typeError(w.param(), "a string", got(kindAt(raw, 0))))
			w.pop()
			return 0, f
		}
		if len(raw) > 1 && raw[0] == '"' {
			tag, hasTag = raw[1:len(raw)-1], true
			if bytes.IndexByte(tag, '\\') >= 0 {
				tag = jsonx.Unescape(tag)
			}
		}
	}
	var (
		best   *failure
		typeOK bool
	)
	for _, a := range nd.alts {
		if !mayAccept(a.node, k, 0) {
			continue
		}
		typeOK = true
		if !nd.selects(a, k, tag, hasTag) {
			continue
		}
		e, f := w.value(a.node, i)
		if f == nil {
			return e, nil
		}
		if f.beats(best) {
			best = f
		}
	}
	switch {
	case best != nil:
		return 0, best
	case !typeOK:
		return 0, w.typeFailure(i, nd, k)
	case !hasTag:
		w.push([]byte(nd.tag), 0)
		f := w.fail(i, missingError(w.param()))
		w.pop()
		return 0, f
	}
	var allowed []string // every branch was ruled out by its tag
	for _, a := range nd.alts {
		for _, t := range a.tags {
			if mayAccept(a.node, k, 0) && !slices.Contains(allowed, t) {
				allowed = append(allowed, t)
			}
		}
	}
	w.push([]byte(nd.tag), 0)
	f := w.fail(i, enumError(w.param(), string(tag), allowed))
	w.pop()
	return 0, f
}

// note records a top-level member when it is wanted.
func (w *walker) note(key []byte, keyStart, valStart, valEnd int) {
	for i, k := range w.want {
		if string(key) == k {
			w.spans[i] = jsonx.Span{KeyStart: keyStart, ValStart: valStart, ValEnd: valEnd}
		}
	}
}

// find returns the raw value of member key of the object at b[i], nil
// when absent. It stops at the first match: keys are unique (jsonx.Check).
func (w *walker) find(i int, key string) []byte {
	j := jsonx.SkipSpace(w.b, i+1)
	for w.b[j] != '}' {
		kEnd := jsonx.SkipString(w.b, j)
		k := w.b[j+1 : kEnd-1]
		j = jsonx.SkipSpace(w.b, jsonx.SkipSpace(w.b, kEnd)+1)
		end := jsonx.SkipValue(w.b, j)
		if string(k) == key || bytes.IndexByte(k, '\\') >= 0 && string(jsonx.Unescape(k)) == key {
			return w.b[j:end]
		}
		j = jsonx.SkipSpace(w.b, end)
		if w.b[j] == ',' {
			j = jsonx.SkipSpace(w.b, j+1)
		}
	}
	return nil
}
