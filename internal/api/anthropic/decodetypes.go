package anthropic

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/jsonx"
)

// The JSON type checks of the Messages walk (see decode.go): each names the
// member by its full path and answers in the words OpenAI's and
// Anthropic's validators use.

// members checks that v is an object (null passes) and calls fn for each
// member named in known, refusing a key that matches a known one only when
// case is ignored (encoding/json would read it as the known one, while
// Anthropic ignores it). fn nil checks the type alone.
func (c reqCheck) members(v []byte, at string, known []string, fn func(key string, val []byte) *apierr.Error) *apierr.Error {
	var bad *apierr.Error
	_ = jsonx.Each(v, func(k, val []byte) bool {
		key := string(k)
		if slices.Contains(known, key) {
			bad = fn(key, val)
			return bad == nil
		}
		for _, name := range known {
			if strings.EqualFold(key, name) {
				p := joinParam(at, key)
				bad = apierr.Invalid(p, "Unrecognized request argument '%s'; did you mean '%s'? Parameter names are case-sensitive.", p, name)
				return false
			}
		}
		return true
	})
	return bad
}

// object is members for a value that must be an object or null.
func (c reqCheck) object(v []byte, at string, known []string, fn func(key string, val []byte) *apierr.Error) *apierr.Error {
	switch k := jsonx.Kind(v); k {
	case "null":
		return nil
	case "object":
	default:
		return wrongJSONType(at, "an object", k)
	}
	if fn == nil {
		return nil
	}
	return c.members(v, at, known, fn)
}

// array calls fn for each element of the array v (null passes), with the
// element's path.
func (c reqCheck) array(v []byte, at string, fn func(at string, el []byte) *apierr.Error) *apierr.Error {
	switch k := jsonx.Kind(v); k {
	case "null":
		return nil
	case "array":
	default:
		return wrongJSONType(at, "an array", k)
	}
	var bad *apierr.Error
	i := 0
	_ = jsonx.EachElement(v, func(el []byte) bool {
		bad = fn(at+"."+strconv.Itoa(i), el)
		i++
		return bad == nil
	})
	return bad
}

// str checks a string or null.
func (c reqCheck) str(v []byte, at string) *apierr.Error {
	if k := jsonx.Kind(v); k != "string" && k != "null" {
		return wrongJSONType(at, "a string", k)
	}
	return nil
}

// reqStr checks a string.
func (c reqCheck) reqStr(v []byte, at string) *apierr.Error {
	if k := jsonx.Kind(v); k != "string" {
		return wrongJSONType(at, "a string", k)
	}
	return nil
}

func (c reqCheck) boolean(v []byte, at string) *apierr.Error {
	if k := jsonx.Kind(v); k != "boolean" && k != "null" {
		return wrongJSONType(at, "a boolean", k)
	}
	return nil
}

// oneOf checks a string among allowed and returns it.
func (c reqCheck) oneOf(v []byte, at string, allowed ...string) (string, *apierr.Error) {
	if k := jsonx.Kind(v); k != "string" {
		return "", wrongJSONType(at, "a string", k)
	}
	var s string
	_ = json.Unmarshal(v, &s)
	if !slices.Contains(allowed, s) {
		return "", apierr.Invalid(at, "Invalid value for '%s': '%s'. Supported values are: '%s'.", at, s, strings.Join(allowed, "', '"))
	}
	return s, nil
}

// number checks a number in [lo, hi] or null.
func (c reqCheck) number(v []byte, at string, lo, hi float64) *apierr.Error {
	switch k := jsonx.Kind(v); k {
	case "null":
		return nil
	case "number":
	default:
		return wrongJSONType(at, "a number", k)
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil || f < lo || f > hi {
		return apierr.Invalid(at, "Invalid '%s': expected a value between %g and %g, but got %s instead.", at, lo, hi, v)
	}
	return nil
}

// integer checks an integer of at least lo (null passes as absent).
func (c reqCheck) integer(v []byte, at string, lo int64) (int64, *apierr.Error) {
	switch k := jsonx.Kind(v); k {
	case "null":
		return 0, nil
	case "number":
	default:
		return 0, wrongJSONType(at, "an integer", k)
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		if bytes.ContainsAny(v, ".eE") {
			return 0, apierr.Invalid(at, "Invalid type for '%s': expected an integer, but got the number %s instead.", at, v)
		}
		return 0, apierr.Invalid(at, "Invalid '%s': %s is out of range.", at, v)
	}
	if n < lo {
		return 0, apierr.Invalid(at, "Invalid '%s': expected a value of at least %d, but got %d instead.", at, lo, n)
	}
	return n, nil
}

func missingParam(at string) *apierr.Error {
	return apierr.Invalid(at, "Missing required parameter: '%s'.", at)
}

func wrongJSONType(at, want, got string) *apierr.Error {
	return apierr.Invalid(at, "Invalid type for '%s': expected %s, but got %s instead.", at, want, jsonArticle(got))
}

func jsonArticle(kind string) string {
	switch kind {
	case "array", "object", "integer":
		return "an " + kind
	case "nothing":
		return "nothing"
	}
	return "a " + kind
}

func joinParam(at, key string) string {
	if at == "" {
		return key
	}
	return at + "." + key
}
