package contract

import (
	"encoding/json"
	"strings"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/jsonx"
)

// Multipart bodies (image edits, transcriptions) carry every member as
// text; Field reads each value as the JSON its schema expects (a number, a
// boolean, a JSON object or array, else a string) and checks it with the
// same rules as a JSON body. Repeated fields ("include[]" or a repeated
// name) are the elements of an array member.

// Field checks one text field of a multipart body of endpoint b. Unknown
// fields pass, except one that differs from a known field only by case.
func Field(b Body, name, value string) *apierr.Error {
	nd := &nodes[b]
	member := strings.TrimSuffix(name, "[]")
	n, ok := lookup(nd.props, []byte(member))
	if !ok {
		for _, p := range nd.props {
			if strings.EqualFold(p.name, member) {
				return caseError(member, p.name)
			}
		}
		return nil
	}
	if arr := arrayOf(n); arr != nil && (strings.HasSuffix(name, "[]") || !acceptsText(&nodes[n])) {
		n = arr.items // one element of the array
	}
	raw := formJSON(n, value)
	w := walker{b: raw}
	w.push([]byte(member), 0)
	if _, f := w.value(n, 0); f != nil {
		return f.err
	}
	return nil
}

// Form checks what only the whole form tells: that required members are
// present and that repeated fields stay within their array's length
// limits. counts holds how many times each member (names without "[]")
// was sent, files included.
func Form(b Body, counts map[string]int) *apierr.Error {
	nd := &nodes[b]
	for _, r := range nd.required {
		if counts[r] == 0 {
			return missingError(r)
		}
	}
	for _, p := range nd.props {
		c := int32(counts[p.name])
		arr := arrayOf(p.node)
		if c < 2 || arr == nil {
			continue
		}
		if arr.has&hasMaxItems != 0 && c > arr.maxItems {
			return lengthError(p.name, "array", false, arr.maxItems, c)
		}
	}
	return nil
}

// arrayOf returns the array schema of a member (itself or a union branch).
func arrayOf(n int32) *node {
	nd := &nodes[n]
	if nd.types&kArray != 0 {
		return nd
	}
	for _, a := range nd.alts {
		if an := &nodes[a.node]; an.types&kArray != 0 {
			return an
		}
	}
	return nil
}

// acceptsText reports whether a member takes a plain (non-array) value.
func acceptsText(nd *node) bool {
	return acceptedKinds(nd, 0)&^kArray != 0
}

// formJSON renders a field's text as the JSON value node n expects.
func formJSON(n int32, v string) []byte {
	k := acceptedKinds(&nodes[n], 0)
	t := strings.TrimSpace(v)
	switch {
	case k&(kInteger|kNumber) != 0 && t != "" && json.Valid([]byte(t)) && (t[0] == '-' || t[0] >= '0' && t[0] <= '9'):
		return []byte(t)
	case k&kBoolean != 0 && (t == "true" || t == "false"):
		return []byte(t)
	case k&(kObject|kArray) != 0 && t != "" && (t[0] == '{' || t[0] == '[') && jsonx.Check([]byte(t), 64) == nil:
		return []byte(t)
	}
	s, _ := json.Marshal(v) // a string always encodes
	return s
}
