package jsonx

import (
	"bytes"
	"encoding/json"
)

// keyStack holds the keys of every object being checked, innermost last,
// so finding a duplicate allocates nothing for the small objects requests
// are made of. An object with many keys gets a map.
type keyStack struct {
	keys [][]byte
	sets []map[string]struct{} // per open object, nil until it has many keys
}

// keyMark is where an object's keys start on the stack.
type keyMark struct {
	start, depth int
}

const keySetLinearMax = 16

func (k *keyStack) open() keyMark {
	k.sets = append(k.sets, nil)
	return keyMark{start: len(k.keys), depth: len(k.sets) - 1}
}

func (k *keyStack) close(m keyMark) {
	k.keys = k.keys[:m.start]
	k.sets = k.sets[:m.depth]
}

// addDup adds the raw key (without quotes) to the object at m and reports
// whether it was there already. Keys with escapes are compared by their
// decoded value, so "a" and "\u0061" count as the same key.
func (k *keyStack) addDup(m keyMark, raw []byte, escaped bool) bool {
	if escaped {
		raw = unescape(raw)
	}
	if set := k.sets[m.depth]; set != nil {
		if _, ok := set[string(raw)]; ok {
			return true
		}
		set[string(raw)] = struct{}{}
		return false
	}
	for _, seen := range k.keys[m.start:] {
		if bytes.Equal(seen, raw) {
			return true
		}
	}
	k.keys = append(k.keys, raw)
	if n := len(k.keys) - m.start; n > keySetLinearMax {
		set := make(map[string]struct{}, 2*n)
		for _, s := range k.keys[m.start:] {
			set[string(s)] = struct{}{}
		}
		k.sets[m.depth] = set
	}
	return false
}

// unescape decodes a JSON string body (already validated).
func unescape(raw []byte) []byte {
	quoted := make([]byte, 0, len(raw)+2)
	quoted = append(quoted, '"')
	quoted = append(quoted, raw...)
	quoted = append(quoted, '"')
	var s string
	if err := json.Unmarshal(quoted, &s); err != nil {
		return raw
	}
	return []byte(s)
}
