package openai

import (
	"github.com/modelgate/modelgate/internal/apierr"
)

func checkTools(v []byte) *apierr.Error {
	switch kind(v) {
	case "null":
		return nil
	case "array":
	default:
		return wrongType("tools", "an array", v)
	}
	return elements(v, func(i int, el []byte) *apierr.Error {
		at := index("tools", i)
		if kind(el) != "object" {
			return wrongType(at, "an object", el)
		}
		var typ string
		var hasType bool
		var fn []byte
		e := members(el, at, []string{"type", "function"}, func(key string, val []byte) *apierr.Error {
			if key == "function" {
				fn = val
				return nil
			}
			var e *apierr.Error
			typ, hasType, e = str(val, at+".type")
			return e
		})
		switch {
		case e != nil:
			return e
		case !hasType:
			return missing(at + ".type")
		case typ != "function":
			return nil // custom and vendor-specific tools are the vendor's to check
		case fn == nil || isNull(fn):
			return missing(at + ".function")
		}
		return checkFunction(at+".function", fn)
	})
}

func checkFunctions(v []byte) *apierr.Error {
	switch kind(v) {
	case "null":
		return nil
	case "array":
	default:
		return wrongType("functions", "an array", v)
	}
	return elements(v, func(i int, el []byte) *apierr.Error {
		return checkFunction(index("functions", i), el)
	})
}

// checkFunction checks a function definition: a name, and parameters that
// are a JSON schema object when given.
func checkFunction(at string, v []byte) *apierr.Error {
	if kind(v) != "object" {
		return wrongType(at, "an object", v)
	}
	var name string
	e := members(v, at, []string{"name", "description", "parameters", "strict"}, func(key string, val []byte) *apierr.Error {
		var e *apierr.Error
		switch key {
		case "name":
			name, _, e = str(val, at+".name")
		case "description":
			e = isStr(val, at+".description")
		case "parameters":
			if k := kind(val); k != "null" && k != "object" {
				e = wrongType(at+".parameters", "an object", val)
			}
		case "strict":
			_, _, e = boolean(val, at+".strict")
		}
		return e
	})
	if e == nil && name == "" {
		return missing(at + ".name")
	}
	return e
}

// checkChoice validates tool_choice / function_call: one of the keywords,
// or an object naming a function.
func checkChoice(param string, v []byte, keywords ...string) *apierr.Error {
	switch kind(v) {
	case "null":
		return nil
	case "string":
		s, _, _ := str(v, param)
		for _, k := range keywords {
			if s == k {
				return nil
			}
		}
		return oneOf(param, s, keywords...)
	case "object":
	default:
		return wrongType(param, "a string or an object", v)
	}
	if param == "function_call" {
		return checkCall(param, v, true)
	}
	var typ string
	var hasType bool
	var fn []byte
	e := members(v, param, []string{"type", "function"}, func(key string, val []byte) *apierr.Error {
		if key == "function" {
			fn = val
			return nil
		}
		var e *apierr.Error
		typ, hasType, e = str(val, param+".type")
		return e
	})
	switch {
	case e != nil:
		return e
	case !hasType:
		return missing(param + ".type")
	case typ != "function":
		return nil // allowed_tools, custom, ...
	case fn == nil || isNull(fn):
		return missing(param + ".function.name")
	}
	return checkCall(param+".function", fn, true)
}

func checkFormat(v []byte) *apierr.Error {
	switch kind(v) {
	case "null":
		return nil
	case "object":
	default:
		return wrongType("response_format", "an object", v)
	}
	var typ string
	var hasType bool
	var schema []byte
	e := members(v, "response_format", []string{"type", "json_schema"}, func(key string, val []byte) *apierr.Error {
		if key == "json_schema" {
			schema = val
			return nil
		}
		var e *apierr.Error
		typ, hasType, e = str(val, "response_format.type")
		return e
	})
	switch {
	case e != nil:
		return e
	case !hasType:
		return missing("response_format.type")
	}
	switch typ {
	case "text", "json_object":
		return nil
	case "json_schema":
	default:
		return oneOf("response_format.type", typ, "text", "json_object", "json_schema")
	}
	const at = "response_format.json_schema"
	if schema == nil || isNull(schema) {
		return missing(at)
	}
	if kind(schema) != "object" {
		return wrongType(at, "an object", schema)
	}
	var name string
	e = members(schema, at, []string{"name", "description", "schema", "strict"}, func(key string, val []byte) *apierr.Error {
		var e *apierr.Error
		switch key {
		case "name":
			name, _, e = str(val, at+".name")
		case "description":
			e = isStr(val, at+".description")
		case "schema":
			if k := kind(val); k != "null" && k != "object" {
				e = wrongType(at+".schema", "an object", val)
			}
		case "strict":
			_, _, e = boolean(val, at+".strict")
		}
		return e
	})
	if e == nil && name == "" {
		return missing(at + ".name")
	}
	return e
}
