// Package redact removes credentials from text that came from a vendor
// (an error message, a failed job's reason) before the gateway logs it or
// relays it to a client. Some vendors echo the key they were sent
// ("Incorrect API key provided: sk-..."); the gateway's own upstream keys
// must reach neither its clients nor its logs.
//
// A Redactor replaces two things with Mark: each secret it was built from
// (the configured upstream keys and header values), in the spellings a
// vendor may echo it in (as is, JSON-escaped, URL-escaped), and anything
// shaped like a key whoever it belongs to (sk-…, AIza…, xai-…, gsk_…, a
// Bearer token, a key= query value). It is meant for the error path only:
// a successful answer never goes through it.
package redact

import (
	"encoding/json"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// Mark replaces every secret and key-shaped token.
const Mark = "[redacted]"

// MinSecret is the shortest configured secret that is redacted: a shorter
// one ("x", a placeholder for a vendor that takes no key) would shred
// ordinary words, and is no secret worth the name.
const MinSecret = 8

// Redactor redacts text. The nil *Redactor (and the zero Redactor) knows no
// configured secret and still redacts key-shaped tokens. A Redactor is
// immutable and safe for concurrent use.
type Redactor struct {
	secrets *strings.Replacer // nil when no secret is long enough
}

// New returns a Redactor of secrets. Empty and short ones (under
// MinSecret bytes, after trimming spaces) are ignored.
func New(secrets ...string) *Redactor {
	var forms []string
	for _, s := range secrets {
		s = strings.TrimSpace(s)
		if len(s) < MinSecret {
			continue
		}
		forms = append(forms, spellings(s)...)
	}
	if len(forms) == 0 {
		return &Redactor{}
	}
	// Longest first, so a secret that contains another is replaced whole
	// (strings.Replacer tries its pairs in argument order).
	slices.SortFunc(forms, func(a, b string) int { return len(b) - len(a) })
	forms = slices.Compact(forms)
	pairs := make([]string, 0, 2*len(forms))
	for _, f := range forms {
		pairs = append(pairs, f, Mark)
	}
	return &Redactor{secrets: strings.NewReplacer(pairs...)}
}

// spellings are the ways secret s may appear in a vendor's text: as is,
// escaped inside a JSON string (Go's escaping and the "\/" some encoders
// write), and escaped in a URL query or path.
func spellings(s string) []string {
	out := []string{s}
	add := func(f string) {
		if f != "" && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	if b, err := json.Marshal(s); err == nil {
		j := string(b[1 : len(b)-1])
		add(j)
		add(strings.ReplaceAll(j, "/", `\/`))
	}
	add(url.QueryEscape(s))
	add(url.PathEscape(s))
	return out
}

// shape is one kind of key-shaped token; the text its pattern's first
// group matched (a "Bearer " or "?key=") is kept before Mark.
type shape struct {
	hint string // lower case; a text without it cannot match, and is not scanned
	re   *regexp.Regexp
	repl string
}

// tok is the alphabet of the tokens below (base62 with - and _).
const tok = `[A-Za-z0-9_\-]`

// shapes are the key-shaped tokens redacted whatever secrets are known.
// The minimum lengths keep ordinary words ("sk-learn") intact.
var shapes = []shape{
	// OpenAI and compatible keys (sk-..., sk-proj-..., Anthropic's
	// sk-ant-api03-..., the gateway's own sk-mg-... from internal/apikey).
	{"sk-", regexp.MustCompile(`\bsk-` + tok + `{12,}`), Mark},
	{"aiza", regexp.MustCompile(`\bAIza` + tok + `{30,}`), Mark}, // Google API keys
	{"xai-", regexp.MustCompile(`\bxai-` + tok + `{20,}`), Mark}, // xAI
	{"gsk_", regexp.MustCompile(`\bgsk_[A-Za-z0-9]{20,}`), Mark}, // Groq
	{"bearer", regexp.MustCompile(`(?i)\b(bearer\s+)[A-Za-z0-9._~+/\-]{8,}=*`), "${1}" + Mark},
	// A credential in a URL query (Gemini takes ?key=, Azure SAS sig=).
	{"=", regexp.MustCompile(`(?i)([?&;](?:key|api[_-]?key|access_token|token|sig|signature)=)[^&\s"'#<>\\]+`), "${1}" + Mark},
	// A key header echoed back (api-key: ..., x-goog-api-key=...).
	{"key", regexp.MustCompile(`(?i)\b((?:x-goog-|x-)?api[_-]?key["']?\s*[:=]\s*["']?)[A-Za-z0-9._~+/\-]{8,}`), "${1}" + Mark},
}

// String returns s with every known secret and every key-shaped token
// replaced by Mark; other text is left as it was.
func (r *Redactor) String(s string) string {
	if s == "" {
		return s
	}
	if r != nil && r.secrets != nil {
		s = r.secrets.Replace(s)
	}
	lower := strings.ToLower(s)
	for _, k := range shapes {
		if strings.Contains(lower, k.hint) {
			s = k.re.ReplaceAllString(s, k.repl)
		}
	}
	return s
}

// Error is err with its text redacted (nil for nil). It unwraps to err, so
// errors.Is and errors.As still see through it.
func (r *Redactor) Error(err error) error {
	if err == nil {
		return nil
	}
	return redacted{err: err, r: r}
}

// redacted is an error whose text is redacted.
type redacted struct {
	err error
	r   *Redactor
}

// Error implements error.
func (e redacted) Error() string { return e.r.String(e.err.Error()) }

// Unwrap returns the error redacted.
func (e redacted) Unwrap() error { return e.err }
