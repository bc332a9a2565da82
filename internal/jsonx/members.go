package jsonx

import "bytes"

// Span locates one top-level member of an object: b[KeyStart:ValEnd] is
// `"key": value` and b[ValStart:ValEnd] the value. ValEnd is 0 when the
// member is absent.
type Span struct {
	KeyStart, ValStart, ValEnd int
}

// Found reports whether the member was present.
func (s Span) Found() bool { return s.ValEnd > 0 }

// Value is the member's raw value in b, nil when absent.
func (s Span) Value(b []byte) []byte {
	if !s.Found() {
		return nil
	}
	return b[s.ValStart:s.ValEnd]
}

// CheckObject is Check for a top-level object that also records, in one
// pass, where each of keys is: spans[i] is the span of keys[i]. It returns
// the offset of the object's closing brace. Stream chunks are validated and
// edited this way, so each chunk is read once. Duplicate keys are refused
// at the top level only, the level the caller edits: a chunk's nested
// members go to the client as the vendor wrote them, and the search would
// cost every chunk a few percent of the gateway's CPU.
func CheckObject(b []byte, maxDepth int, keys []string, spans []Span) (int, error) {
	clear(spans)
	s := checkers.Get().(*checker)
	defer func() { s.b, s.want, s.spans = nil, nil, nil; checkers.Put(s) }()
	*s = checker{b: b, max: maxDepth, keys: keyStack{keys: s.keys.keys[:0], sets: s.keys.sets[:0]},
		topDupsOnly: true, want: keys, spans: spans, closeAt: -1}
	s.ws()
	if s.i >= len(b) || b[s.i] != '{' {
		return -1, s.fail("expected a JSON object")
	}
	if err := s.value(); err != nil {
		return -1, err
	}
	s.ws()
	if s.i != len(s.b) {
		return -1, s.fail("unexpected data after the top-level value")
	}
	return s.closeAt, nil
}

// noteMember records a top-level member when its key is wanted.
func (s *checker) noteMember(keyStart, keyEnd, valEnd int, escaped bool) {
	raw := s.b[keyStart+1 : keyEnd-1]
	if escaped {
		raw = unescape(raw)
	}
	for i, k := range s.want {
		if string(raw) == k && !s.spans[i].Found() {
			valStart := keyEnd
			for valStart < len(s.b) && (s.b[valStart] == ':' || isWS(s.b[valStart])) {
				valStart++
			}
			s.spans[i] = Span{KeyStart: keyStart, ValStart: valStart, ValEnd: valEnd}
		}
	}
}

func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// Edit replaces b[Start:End] with With.
type Edit struct {
	Start, End int
	With       []byte
}

// AppendEdits appends b to dst with edits applied; edits must be sorted by
// Start and must not overlap.
func AppendEdits(dst, b []byte, edits ...Edit) []byte {
	at := 0
	for _, e := range edits {
		dst = append(dst, b[at:e.Start]...)
		dst = append(dst, e.With...)
		at = e.End
	}
	return append(dst, b[at:]...)
}

// Removal is the edit that deletes member sp from object b together with
// one separating comma, keeping the object valid.
func Removal(b []byte, sp Span) Edit {
	before := bytes.TrimRight(b[:sp.KeyStart], " \t\r\n")
	if len(before) > 0 && before[len(before)-1] == ',' {
		return Edit{Start: len(before) - 1, End: sp.ValEnd}
	}
	end := skipWS(b, sp.ValEnd)
	if end < len(b) && b[end] == ',' {
		end = skipWS(b, end+1)
	} else {
		end = sp.ValEnd
	}
	return Edit{Start: sp.KeyStart, End: end}
}
