// Package contract enforces the request rules of the official OpenAI API on
// the bodies the gateway accepts, before anything is reserved or sent
// upstream, so one request is refused the same way whichever vendor serves
// it. The rules are not written by hand: gen/ compiles them from the
// official OpenAPI description (internal/oapitest/testdata/openai-openapi.yaml)
// plus a short overlay of rules the description states only in prose
// (gen/overlay.yaml), into schemas_gen.go:
//
//	go generate ./internal/contract
//
// What is enforced: JSON types (including each branch of a union), enum
// values, minimum/maximum (exclusive too), minLength/maxLength (in
// characters), pattern, minItems/maxItems, minProperties/maxProperties,
// propertyNames and required members, at every depth. What is not, on
// purpose: members the description does not know pass through (vendors add
// their own), a null for an optional member means "absent" (SDKs and
// frameworks send them), a key that differs from a known one only by case is
// refused (the vendor would ignore it silently), and "format" is not
// checked (data: URLs are valid image URLs). Refusals are the OpenAI error
// body: 400 invalid_request_error with the param path and OpenAI's codes
// (invalid_type, invalid_value, missing_required_parameter,
// integer_above_max_value, string_above_max_length, array_above_max_length,
// empty_array, object_above_max_properties, ...).
//
// Validation is one pass over the raw bytes, which must already be well
// formed (jsonx.Check); a body that passes allocates nothing.
package contract

//go:generate go run ./gen

// Body names the request body of one endpoint.
type Body int32

// kinds is a set of JSON types.
type kinds uint8

const (
	kNull kinds = 1 << iota
	kBoolean
	kInteger // a number without fraction or exponent
	kNumber  // any number (integers included)
	kString
	kArray
	kObject
)

// has marks which optional constraints a node carries.
type has uint16

const (
	hasMin has = 1 << iota
	hasMax
	exclMin
	exclMax
	hasMinLen
	hasMaxLen
	hasMinItems
	hasMaxItems
	hasMinProps
	hasMaxProps
	nullable // null is one of the accepted values (besides types)
)

// node is one compiled schema. Node 0 accepts anything; the other fields'
// zero values mean "no constraint" unless has says otherwise.
type node struct {
	name     string // the component it came from, for messages and tests ("" inline)
	types    kinds  // 0 = any type
	has      has
	min, max float64
	minLen   int32
	maxLen   int32
	minItems int32
	maxItems int32
	minProps int32
	maxProps int32
	enum     []string // allowed string values
	pattern  int32    // 1-based index into patterns; 0 = none
	items    int32    // node of every array element; 0 = anything
	props    []prop   // sorted by name
	required []string
	addl     int32 // node of members not in props; 0 = anything
	names    int32 // node every member name must match; 0 = anything
	alts     []alt // anyOf/oneOf: the value must match one
	tag      string
	all      []int32 // further schemas the value must also match
}

// prop is one declared member of an object.
type prop struct {
	name string
	node int32
}

// alt is one branch of a union, with the values of the union's tag member
// that select it (nil: any), and whether the branch requires the tag.
type alt struct {
	node     int32
	tags     []string
	needsTag bool
}
