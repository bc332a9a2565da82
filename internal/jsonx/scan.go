package jsonx

// Cursor helpers for walkers that validate a body in one pass. They assume
// b is valid JSON (see Check) and return -1 when it is not.

// SkipSpace returns the offset of the first non-whitespace byte at or after i.
func SkipSpace(b []byte, i int) int { return skipWS(b, i) }

// SkipString returns the offset just past the string that starts at b[i] == '"'.
func SkipString(b []byte, i int) int { return skipString(b, i) }

// SkipValue returns the offset just past the value that starts at b[i].
func SkipValue(b []byte, i int) int { return skipValue(b, i) }

// Unescape decodes the body of a JSON string (without its quotes) that
// contains escapes; callers keep raw as is when it has no backslash.
func Unescape(raw []byte) []byte { return unescape(raw) }
