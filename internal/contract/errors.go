package contract

import (
	"strconv"
	"strings"

	"github.com/modelgate/modelgate/internal/apierr"
)

// The error codes OpenAI answers for each broken rule.
const (
	CodeInvalidType     = "invalid_type"
	CodeInvalidValue    = "invalid_value"
	CodeMissing         = "missing_required_parameter"
	CodeUnknown         = "unknown_parameter"
	CodeEmptyString     = "empty_string"
	CodeStringTooShort  = "string_below_min_length"
	CodeStringTooLong   = "string_above_max_length"
	CodeEmptyArray      = "empty_array"
	CodeArrayTooShort   = "array_below_min_length"
	CodeArrayTooLong    = "array_above_max_length"
	CodeTooFewMembers   = "object_below_min_properties"
	CodeTooManyMembers  = "object_above_max_properties"
	CodeIntegerTooSmall = "integer_below_min_value"
	CodeIntegerTooLarge = "integer_above_max_value"
	CodeDecimalTooSmall = "decimal_below_min_value"
	CodeDecimalTooLarge = "decimal_above_max_value"
)

func typeError(param, want, got string) *apierr.Error {
	return apierr.Broken(CodeInvalidType, param, "Invalid type for '%s': expected %s, but got %s instead.", param, want, got)
}

func enumError(param, got string, allowed []string) *apierr.Error {
	if r := []rune(got); len(r) > 100 {
		got = string(r[:100]) + "…"
	}
	return apierr.Broken(CodeInvalidValue, param, "Invalid value for '%s': '%s'. Supported values are: %s.", param, got, quoteList(allowed))
}

// quoteList renders 'a', 'b', and 'c'.
func quoteList(vals []string) string {
	q := make([]string, len(vals))
	for i, v := range vals {
		q[i] = "'" + v + "'"
	}
	if len(q) < 2 {
		return strings.Join(q, "")
	}
	if len(q) == 2 {
		return q[0] + " and " + q[1]
	}
	return strings.Join(q[:len(q)-1], ", ") + ", and " + q[len(q)-1]
}

// lengthError is the answer to a string or array outside its length limits.
func lengthError(param, what string, tooShort bool, limit, got int32) *apierr.Error {
	article := "a " + what
	if what == "array" {
		article = "an array"
	}
	switch {
	case tooShort && got == 0:
		code := CodeEmptyString
		if what == "array" {
			code = CodeEmptyArray
		}
		return apierr.Broken(code, param, "Invalid '%s': empty %s. Expected %s with minimum length %d, but got an empty %s instead.",
			param, what, article, limit, what)
	case tooShort:
		code := CodeStringTooShort
		if what == "array" {
			code = CodeArrayTooShort
		}
		return apierr.Broken(code, param, "Invalid '%s': %s too short. Expected %s with minimum length %d, but got %s with length %d instead.",
			param, what, article, limit, article, got)
	}
	code := CodeStringTooLong
	if what == "array" {
		code = CodeArrayTooLong
	}
	return apierr.Broken(code, param, "Invalid '%s': %s too long. Expected %s with maximum length %d, but got %s with length %d instead.",
		param, what, article, limit, article, got)
}

func propsError(param string, tooFew bool, limit, got int32) *apierr.Error {
	if tooFew {
		return apierr.Broken(CodeTooFewMembers, param, "Invalid '%s': too few properties. Expected an object with at least %d properties, but got an object with %d properties instead.",
			param, limit, got)
	}
	return apierr.Broken(CodeTooManyMembers, param, "Invalid '%s': too many properties. Expected an object with at most %d properties, but got an object with %d properties instead.",
		param, limit, got)
}

func patternError(param, pattern string) *apierr.Error {
	return apierr.Broken(CodeInvalidValue, param, "Invalid '%s': string does not match pattern. Expected a string that matches the pattern '%s'.", param, pattern)
}

func rangeError(param, lit string) *apierr.Error {
	return apierr.Broken(CodeInvalidValue, param, "Invalid '%s': %s is out of range.", param, lit)
}

// boundError is the answer to a number below its minimum or above its maximum.
func boundError(param string, integer, above, exclusive bool, bound float64, got string) *apierr.Error {
	kind, code := "decimal", CodeDecimalTooSmall
	if integer {
		kind, code = "integer", CodeIntegerTooSmall
	}
	rel, word, op := "below", "minimum", ">="
	if above {
		rel, word, op = "above", "maximum", "<="
		code = map[bool]string{true: CodeIntegerTooLarge, false: CodeDecimalTooLarge}[integer]
	}
	if exclusive {
		op = op[:1]
	}
	return apierr.Broken(code, param, "Invalid '%s': %s %s %s value. Expected a value %s %s, but got %s instead.",
		param, kind, rel, word, op, strconv.FormatFloat(bound, 'g', -1, 64), got)
}

func missingError(param string) *apierr.Error {
	return apierr.Broken(CodeMissing, param, "Missing required parameter: '%s'.", param)
}

func caseError(param, known string) *apierr.Error {
	return apierr.Broken(CodeUnknown, param, "Unrecognized request argument '%s'; did you mean '%s'? Parameter names are case-sensitive.", param, known)
}

// expected names the JSON types a node accepts: "a string or an array".
func expected(nd *node) string {
	k := acceptedKinds(nd, 0)
	var names []string
	for _, t := range []struct {
		k    kinds
		name string
	}{{kString, "a string"}, {kInteger, "an integer"}, {kNumber, "a number"}, {kBoolean, "a boolean"},
		{kArray, "an array"}, {kObject, "an object"}} {
		if k&t.k != 0 && !(t.k == kInteger && k&kNumber != 0) {
			names = append(names, t.name)
		}
	}
	switch len(names) {
	case 0:
		return "null"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

func acceptedKinds(nd *node, depth int) kinds {
	if nd.types != 0 || depth > 8 {
		return nd.types
	}
	var k kinds
	for _, a := range nd.alts {
		k |= acceptedKinds(&nodes[a.node], depth+1)
	}
	return k
}

// got names the JSON type of a value for messages.
func got(k kinds) string {
	switch k {
	case kString:
		return "a string"
	case kInteger:
		return "an integer"
	case kNumber:
		return "a decimal number"
	case kBoolean:
		return "a boolean"
	case kArray:
		return "an array"
	case kObject:
		return "an object"
	}
	return "null"
}
