package provider

import (
	"mime"
	"strings"
)

// IsEventStream reports whether a Content-Type header names
// text/event-stream. The spellings vendors send ("text/event-stream",
// optionally followed by parameters such as "; charset=utf-8") are
// recognised without mime.ParseMediaType, which builds a map for the
// parameters on every stream; anything else (other case, spaces) is parsed.
func IsEventStream(contentType string) bool {
	if rest, ok := strings.CutPrefix(contentType, "text/event-stream"); ok && (rest == "" || rest[0] == ';' || rest[0] == ' ') {
		return true
	}
	mt, _, _ := mime.ParseMediaType(contentType)
	return mt == "text/event-stream"
}
