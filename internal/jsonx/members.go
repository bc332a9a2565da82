package jsonx

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
	closeAt, _, err := CheckObjectProbe(b, maxDepth, keys, spans, -1, "")
	return closeAt, err
}

// CheckObjectProbe is CheckObject that also reports, from the same pass,
// whether an object directly inside the value of top-level member
// keys[in] (an element of that array, or a member of that object) has a
// member named probe whose value is a string: a stream chunk's
// choices[].finish_reason. in < 0 probes nothing.
func CheckObjectProbe(b []byte, maxDepth int, keys []string, spans []Span, in int, probe string) (closeAt int, hit bool, err error) {
	s := checkers.Get().(*checker)
	defer func() { s.b, s.want, s.spans = nil, nil, nil; checkers.Put(s) }()
	return s.objectProbe(b, maxDepth, keys, spans, in, probe, false)
}

// objectProbe is CheckObjectProbe on s; with strings set it also notes in
// s.strs where every string value (not key) starts and ends.
func (s *checker) objectProbe(b []byte, maxDepth int, keys []string, spans []Span, in int, probe string, strings bool) (closeAt int, hit bool, err error) {
	clear(spans)
	if in >= len(keys) {
		in = -1
	}
	*s = checker{b: b, max: maxDepth, keys: keyStack{keys: s.keys.keys[:0], sets: s.keys.sets[:0]},
		topDupsOnly: true, want: keys, spans: spans, closeAt: -1, probeIn: in, probeKey: probe,
		noteStrings: strings, strs: s.strs[:0]}
	s.ws()
	if s.i >= len(b) || b[s.i] != '{' {
		return -1, false, s.fail("expected a JSON object")
	}
	if err := s.value(); err != nil {
		return -1, false, err
	}
	s.ws()
	if s.i != len(s.b) {
		return -1, false, s.fail("unexpected data after the top-level value")
	}
	return s.closeAt, s.probeHit, nil
}

// wanted returns the index in s.want of the top-level key b[keyStart:keyEnd]
// (quotes included), or -1 when it is not wanted or was seen before.
func (s *checker) wanted(keyStart, keyEnd int, escaped bool) int {
	raw := s.b[keyStart+1 : keyEnd-1]
	if escaped {
		raw = unescape(raw)
	}
	for i, k := range s.want {
		if string(raw) == k {
			if s.spans[i].Found() {
				return -1
			}
			return i
		}
	}
	return -1
}

// isKey reports whether the key b[keyStart:keyEnd] (quotes included) is k.
func (s *checker) isKey(keyStart, keyEnd int, escaped bool, k string) bool {
	raw := s.b[keyStart+1 : keyEnd-1]
	if escaped {
		raw = unescape(raw)
	}
	return string(raw) == k
}

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
	i := sp.KeyStart
	for i > 0 && isSpace(b[i-1]) {
		i--
	}
	if i > 0 && b[i-1] == ',' {
		return Edit{Start: i - 1, End: sp.ValEnd}
	}
	end := skipWS(b, sp.ValEnd)
	if end < len(b) && b[end] == ',' {
		end = skipWS(b, end+1)
	} else {
		end = sp.ValEnd
	}
	return Edit{Start: sp.KeyStart, End: end}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
