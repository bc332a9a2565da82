package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/contract"
	"github.com/modelgate/modelgate/internal/jsonx"
)

// The validator walks the raw body member by member (jsonx.Check has
// already guaranteed syntax, UTF-8 and unique keys) and checks each known
// member's JSON type and range. Matching keys is exact, as vendors do:
// encoding/json would read "Max_Tokens" as max_tokens while the vendor
// ignores it, so a key that differs from a known one only by case is
// refused instead.

// maxDepth bounds JSON nesting; tool schemas are the deepest legitimate
// structures and stay far below it.
const maxDepth = 128

// checkJSON rejects bodies that are not one well-formed JSON object with
// valid UTF-8 and no duplicate keys.
func checkJSON(body []byte) *apierr.Error {
	if err := jsonx.Check(body, maxDepth); err != nil {
		return apierr.Invalid("", "We could not parse the JSON body of your request: %v. "+
			"The body must be a single JSON object in UTF-8 with no duplicate keys.", err)
	}
	if t := bytes.TrimLeft(body, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return apierr.Invalid("", "The request body must be a JSON object.")
	}
	return nil
}

// checkBody is checkJSON followed by the official request contract of the
// endpoint (see internal/contract).
func checkBody(body []byte, b contract.Body) *apierr.Error {
	if e := checkJSON(body); e != nil {
		return e
	}
	return contract.Validate(b, body)
}

// members calls fn for each member of the object raw, refusing keys that
// match one of known only when case is ignored.
func members(raw []byte, at string, known []string, fn func(key string, val []byte) *apierr.Error) *apierr.Error {
	var bad *apierr.Error
	_ = jsonx.Each(raw, func(k, v []byte) bool {
		key := string(k)
		for _, name := range known {
			if key == name {
				bad = fn(key, v)
				return bad == nil
			}
		}
		for _, name := range known {
			if strings.EqualFold(key, name) {
				param := join(at, key)
				bad = apierr.Invalid(param, "Unrecognized request argument '%s'; did you mean '%s'? Parameter names are case-sensitive.", param, name)
				return false
			}
		}
		return true // unknown members are the vendor's business
	})
	return bad
}

func join(at, key string) string {
	if at == "" {
		return key
	}
	return at + "." + key
}

// kind names the JSON type of a raw value (see jsonx.Kind).
func kind(raw []byte) string { return jsonx.Kind(raw) }

func isNull(raw []byte) bool { return kind(raw) == "null" }

func article(v string) string {
	switch v {
	case "array", "object", "integer":
		return "an " + v
	case "nothing":
		return "nothing"
	default:
		return "a " + v
	}
}

func missing(param string) *apierr.Error {
	return apierr.Invalid(param, "Missing required parameter: '%s'.", param)
}

func wrongType(param, want string, raw []byte) *apierr.Error {
	return apierr.Invalid(param, "Invalid type for '%s': expected %s, but got %s instead.", param, want, article(kind(raw)))
}

func oneOf(param, got string, allowed ...string) *apierr.Error {
	return apierr.Invalid(param, "Invalid value for '%s': '%s'. Supported values are: '%s'.",
		param, got, strings.Join(allowed, "', '"))
}

// str decodes a string value; null is reported by ok=false with no error.
func str(raw []byte, param string) (s string, ok bool, e *apierr.Error) {
	switch kind(raw) {
	case "null":
		return "", false, nil
	case "string":
	default:
		return "", false, wrongType(param, "a string", raw)
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1]), true, nil
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false, apierr.Invalid(param, "Invalid string for '%s'.", param)
	}
	return s, true, nil
}

// isStr is str for values whose content does not matter.
func isStr(raw []byte, param string) *apierr.Error {
	if k := kind(raw); k != "string" && k != "null" {
		return wrongType(param, "a string", raw)
	}
	return nil
}

func boolean(raw []byte, param string) (v, ok bool, e *apierr.Error) {
	switch string(raw) {
	case "true":
		return true, true, nil
	case "false":
		return false, true, nil
	case "null":
		return false, false, nil
	}
	return false, false, wrongType(param, "a boolean", raw)
}

// number checks a number in [lo, hi]; null passes.
func number(raw []byte, param string, lo, hi float64) *apierr.Error {
	switch kind(raw) {
	case "null":
		return nil
	case "number":
	default:
		return wrongType(param, "a number", raw)
	}
	v, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || v < lo || v > hi {
		return apierr.Invalid(param, "Invalid '%s': expected a value between %g and %g, but got %s instead.", param, lo, hi, raw)
	}
	return nil
}

// integer checks an integer in [lo, hi]; null gives ok=false.
func integer(raw []byte, param string, lo, hi int64) (v int64, ok bool, e *apierr.Error) {
	switch kind(raw) {
	case "null":
		return 0, false, nil
	case "number":
	default:
		return 0, false, wrongType(param, "an integer", raw)
	}
	v, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return 0, false, apierr.Invalid(param, "Invalid '%s': %s is out of range.", param, raw)
		}
		if _, ferr := strconv.ParseFloat(string(raw), 64); ferr == nil && !bytes.ContainsAny(raw, ".eE") {
			return 0, false, apierr.Invalid(param, "Invalid '%s': %s is out of range.", param, raw)
		}
		return 0, false, apierr.Invalid(param, "Invalid type for '%s': expected an integer, but got the number %s instead.", param, raw)
	}
	if v < lo {
		return 0, false, apierr.Invalid(param, "Invalid '%s': expected a value of at least %d, but got %d instead.", param, lo, v)
	}
	if v > hi {
		return 0, false, apierr.Invalid(param, "Invalid '%s': expected a value of at most %d, but got %d instead.", param, hi, v)
	}
	return v, true, nil
}

// elements calls fn for each element of the array raw.
func elements(raw []byte, fn func(i int, el []byte) *apierr.Error) *apierr.Error {
	var bad *apierr.Error
	i := 0
	_ = jsonx.EachElement(raw, func(el []byte) bool {
		bad = fn(i, el)
		i++
		return bad == nil
	})
	return bad
}

func index(at string, i int) string { return fmt.Sprintf("%s[%d]", at, i) }
