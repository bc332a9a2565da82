package jsonx

import (
	"bytes"
	"errors"
)

// ErrNotObject is returned when a top-level operation meets something other
// than a JSON object.
var ErrNotObject = errors.New("jsonx: not a JSON object")

// Field returns the raw value of the top-level key in the object b, and
// whether it was present. b must be valid JSON (see Check); escaped keys are
// compared by their decoded value.
func Field(b []byte, key string) ([]byte, bool) {
	start, end, _, ok := span(b, key)
	if !ok {
		return nil, false
	}
	return b[start:end], true
}

// AppendSet appends to dst a copy of object b in which the top-level key has
// the raw JSON value val: replaced in place when present, added at the end
// otherwise. Every other byte of b is kept as it was.
func AppendSet(dst, b []byte, key string, val []byte) ([]byte, error) {
	start, end, closeAt, ok := span(b, key)
	if closeAt < 0 {
		return dst, ErrNotObject
	}
	if ok {
		dst = append(dst, b[:start]...)
		dst = append(dst, val...)
		return append(dst, b[end:]...), nil
	}
	// Insert before the closing brace, with a comma unless the object is empty.
	dst = append(dst, b[:closeAt]...)
	if !emptyObject(b[:closeAt]) {
		dst = append(dst, ',')
	}
	dst = append(dst, '"')
	dst = append(dst, key...)
	dst = append(dst, '"', ':')
	dst = append(dst, val...)
	return append(dst, b[closeAt:]...), nil
}

// Set is AppendSet into a new slice.
func Set(b []byte, key string, val []byte) ([]byte, error) {
	return AppendSet(make([]byte, 0, len(b)+len(key)+len(val)+4), b, key, val)
}

// IsNull reports whether a raw value is absent or the literal null.
func IsNull(raw []byte) bool {
	return len(raw) == 0 || bytes.Equal(raw, []byte("null"))
}

func emptyObject(head []byte) bool {
	head = bytes.TrimRight(head, " \t\r\n")
	return len(head) > 0 && head[len(head)-1] == '{'
}

// Members finds the first occurrence of each of keys among the members of
// the top-level object b in one pass, without validating (b must be valid
// JSON, see Check): spans[i] is keys[i]'s span, not Found when absent. It
// returns the offset of the object's closing brace, for members to add
// before it (see AppendEdits).
func Members(b []byte, keys []string, spans []Span) (int, error) {
	clear(spans)
	return members(b, func(keyStart, keyEnd, valStart, valEnd int) bool {
		for k, key := range keys {
			if !spans[k].Found() && keyEquals(b[keyStart+1:keyEnd-1], key) {
				spans[k] = Span{KeyStart: keyStart, ValStart: valStart, ValEnd: valEnd}
				break
			}
		}
		return true
	})
}

// members calls fn with where each member of the top-level object b is
// (its key with quotes, its value), in order, until fn returns false, and
// returns the offset of the closing brace (-1 when fn stopped early).
func members(b []byte, fn func(keyStart, keyEnd, valStart, valEnd int) bool) (int, error) {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return -1, ErrNotObject
	}
	i++
	for {
		i = skipWS(b, i)
		if i < len(b) && b[i] == ',' {
			i = skipWS(b, i+1)
		}
		if i >= len(b) {
			return -1, ErrNotObject
		}
		if b[i] == '}' {
			return i, nil
		}
		keyStart, keyEnd := i, skipString(b, i)
		if b[i] != '"' || keyEnd < 0 {
			return -1, ErrNotObject
		}
		i = skipWS(b, keyEnd)
		if i >= len(b) || b[i] != ':' {
			return -1, ErrNotObject
		}
		i = skipWS(b, i+1)
		valEnd := skipValue(b, i)
		if valEnd < 0 {
			return -1, ErrNotObject
		}
		if !fn(keyStart, keyEnd, i, valEnd) {
			return -1, nil
		}
		i = valEnd
	}
}

// NoMembers reports whether head, an object up to its closing brace, has
// no member yet: a member added there needs no comma before it.
func NoMembers(head []byte) bool { return emptyObject(head) }

// span finds key in the top-level object b: the value's [start, end) and the
// offset of the object's closing brace (-1 when b is not an object).
func span(b []byte, key string) (start, end, closeAt int, ok bool) {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return 0, 0, -1, false
	}
	i++
	start, end = -1, -1
	for {
		i = skipWS(b, i)
		if i >= len(b) {
			return 0, 0, -1, false
		}
		if b[i] == '}' {
			return start, end, i, start >= 0
		}
		if b[i] == ',' {
			i = skipWS(b, i+1)
		}
		if i >= len(b) || b[i] != '"' {
			return 0, 0, -1, false
		}
		kEnd := skipString(b, i)
		if kEnd < 0 {
			return 0, 0, -1, false
		}
		match := keyEquals(b[i+1:kEnd-1], key)
		i = skipWS(b, kEnd)
		if i >= len(b) || b[i] != ':' {
			return 0, 0, -1, false
		}
		i = skipWS(b, i+1)
		vEnd := skipValue(b, i)
		if vEnd < 0 {
			return 0, 0, -1, false
		}
		if match && start < 0 {
			start, end = i, vEnd
		}
		i = vEnd
	}
}

// keyEquals compares a raw key with key, decoding escapes when there are
// any, so "\u006dodel" is found as "model" and never added a second time.
func keyEquals(raw []byte, key string) bool {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw) == key
	}
	return string(unescape(raw)) == key
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the offset just past the string starting at b[i] == '"'.
// Short strings (most keys and values) are scanned byte by byte; longer
// ones jump from quote to quote with IndexByte. Backslashes before a quote
// are counted to tell an escaped quote from the closing one.
func skipString(b []byte, i int) int {
	j := i + 1
	for {
		k := -1
		for n := j; n < len(b) && n < j+32; n++ {
			if b[n] == '"' {
				k = n - j
				break
			}
		}
		if k < 0 {
			if j+32 >= len(b) {
				return -1
			}
			k = bytes.IndexByte(b[j+32:], '"')
			if k < 0 {
				return -1
			}
			k += 32
		}
		j += k
		n := 0
		for p := j - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return j + 1
		}
		j++
	}
}

// structural marks the bytes that matter when skipping a container.
var structural = func() (t [256]bool) {
	for _, c := range `"{}[]` {
		t[c] = true
	}
	return t
}()

// skipValue returns the offset just past the value starting at b[i].
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			for j < len(b) && !structural[b[j]] {
				j++
			}
			if j >= len(b) {
				return -1
			}
			switch b[j] {
			case '"':
				j = skipString(b, j)
				if j < 0 {
					return -1
				}
				j--
			case '{', '[':
				depth++
			default: // '}' or ']'
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	default:
		j := i
		for j < len(b) {
			switch b[j] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return j
			}
			j++
		}
		return j
	}
}

// AppendDelete appends to dst a copy of object b without the top-level key
// (and its separating comma). b is copied unchanged when the key is absent.
func AppendDelete(dst, b []byte, key string) ([]byte, error) {
	start, end, closeAt, ok := span(b, key)
	if closeAt < 0 {
		return dst, ErrNotObject
	}
	if !ok {
		return append(dst, b...), nil
	}
	// Walk back from the value to the key's opening quote.
	k := bytes.LastIndexByte(b[:start], ':')
	k = bytes.LastIndexByte(b[:k], '"')
	k = bytes.LastIndexByte(b[:k], '"')
	// Remove a preceding comma if there is one, else a following one.
	before := bytes.TrimRight(b[:k], " \t\r\n")
	after := end
	if len(before) > 0 && before[len(before)-1] == ',' {
		k = len(before) - 1
	} else if j := skipWS(b, end); j < len(b) && b[j] == ',' {
		after = skipWS(b, j+1)
	}
	dst = append(dst, b[:k]...)
	return append(dst, b[after:]...), nil
}

// Each calls fn for every member of the top-level object b, in order, with
// the raw key (without quotes, escapes decoded) and the raw value; it stops
// when fn returns false. b must be valid JSON.
func Each(b []byte, fn func(key, val []byte) bool) error {
	_, err := members(b, func(keyStart, keyEnd, valStart, valEnd int) bool {
		key := b[keyStart+1 : keyEnd-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			key = unescape(key)
		}
		return fn(key, b[valStart:valEnd])
	})
	return err
}

// EachElement calls fn for every element of the top-level array b, in
// order; it stops when fn returns false. b must be valid JSON.
func EachElement(b []byte, fn func(el []byte) bool) error {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '[' {
		return ErrNotArray
	}
	i++
	for {
		i = skipWS(b, i)
		if i < len(b) && b[i] == ',' {
			i = skipWS(b, i+1)
		}
		if i >= len(b) {
			return ErrNotArray
		}
		if b[i] == ']' {
			return nil
		}
		end := skipValue(b, i)
		if end < 0 {
			return ErrNotArray
		}
		if !fn(b[i:end]) {
			return nil
		}
		i = end
	}
}

// ErrNotArray is returned when an array operation meets something else.
var ErrNotArray = errors.New("jsonx: not a JSON array")

// Kind names the JSON type of a raw value for error messages: "string",
// "object", "array", "boolean", "null", "number", or "nothing" when empty.
// It looks at the first byte only; the value is assumed valid.
func Kind(raw []byte) string {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	default:
		return "number"
	}
}
