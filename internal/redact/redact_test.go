package redact_test

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/apikey"
	"github.com/modelgate/modelgate/internal/redact"
)

func TestString(t *testing.T) {
	const secret = "upstream-SECRET/123+abc=="
	r := redact.New(secret, "x", "  short ", "", "Azure0123456789abcdef0123456789ab")
	gatewayKey, _, _ := apikey.Generate()
	for _, tc := range []struct{ name, in, want string }{
		{"openai key", "Incorrect API key provided: sk-upstream-SECRET-123.", "Incorrect API key provided: [redacted]."},
		{"project key", "bad key sk-proj-AbCdEf0123456789_xyz-QRS rejected", "bad key [redacted] rejected"},
		{"anthropic key", "invalid x-api-key sk-ant-api03-AbCdEfGhIjKlMnOp-0123456789", "invalid x-api-key [redacted]"},
		{"gateway key", "key " + gatewayKey + " unknown", "key [redacted] unknown"},
		{"google key", "API key not valid: AIzaSyA-0123456789abcdefghijklmnopqrstu", "API key not valid: [redacted]"},
		{"xai key", "xai-0123456789abcdefghijKLMNOP is wrong", "[redacted] is wrong"},
		{"groq key", "Invalid API Key gsk_0123456789abcdefghijKLMN", "Invalid API Key [redacted]"},
		{"bearer", "header Authorization: Bearer abc.def-ghi_jkl~mno= refused", "header Authorization: Bearer [redacted] refused"},
		{"url key", "GET https://g.example/v1beta/models?alt=sse&key=abc123XYZ&x=1 failed",
			"GET https://g.example/v1beta/models?alt=sse&key=[redacted]&x=1 failed"},
		{"url sig", "https://blob.example/v.mp4?sv=1&sig=Zm9v%2Fbar", "https://blob.example/v.mp4?sv=1&sig=[redacted]"},
		{"key header", `got "api-key": "0123abcd0123abcd"`, `got "api-key": "[redacted]"`},
		{"configured secret mid-text", "you sent " + secret + " which we do not know", "you sent [redacted] which we do not know"},
		{"configured secret JSON-escaped", `{"message":"key upstream-SECRET\/123+abc== is wrong"}`, `{"message":"key [redacted] is wrong"}`},
		{"configured secret URL-escaped", "?token=x&k=" + "upstream-SECRET%2F123%2Babc%3D%3D", "?token=[redacted]&k=[redacted]"},
		{"configured hex key (no key shape)", "Access denied: Azure0123456789abcdef0123456789ab invalid", "Access denied: [redacted] invalid"},
		{"short secret ignored", "x marks the short spot", "x marks the short spot"},
		{"ordinary text", "Invalid value for 'max_tokens': must be >= 1 (task-0123456789abcdef, sk-learn)",
			"Invalid value for 'max_tokens': must be >= 1 (task-0123456789abcdef, sk-learn)"},
		{"empty", "", ""},
		{"non-ASCII kept", "Ungültiger Schlüssel sk-0123456789abcdef – prüfen", "Ungültiger Schlüssel [redacted] – prüfen"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := r.String(tc.in); got != tc.want {
				t.Errorf("String(%q)\n got %q\nwant %q", tc.in, got, tc.want)
			}
			if got := r.String(r.String(tc.in)); got != tc.want {
				t.Errorf("redacting twice gives %q, want %q", got, tc.want)
			}
		})
	}
}

func TestNilRedactsShapesOnly(t *testing.T) {
	var r *redact.Redactor
	in := "key sk-upstream-SECRET-123 and Azure0123456789abcdef0123456789ab"
	want := "key [redacted] and Azure0123456789abcdef0123456789ab"
	if got := r.String(in); got != want {
		t.Errorf("nil Redactor: got %q, want %q", got, want)
	}
	if got := (&redact.Redactor{}).String(in); got != want {
		t.Errorf("zero Redactor: got %q, want %q", got, want)
	}
}

func TestLongestSecretFirst(t *testing.T) {
	r := redact.New("abcdefgh", "abcdefgh-ijklmnop")
	if got := r.String("k=abcdefgh-ijklmnop."); got != "k=[redacted]." {
		t.Errorf("got %q: the longer secret must be replaced whole", got)
	}
}

func TestError(t *testing.T) {
	r := redact.New("the-upstream-key")
	err := r.Error(fmt.Errorf("provider p: %w: echoed the-upstream-key", io.ErrUnexpectedEOF))
	if strings.Contains(err.Error(), "the-upstream-key") || !strings.Contains(err.Error(), "echoed [redacted]") {
		t.Errorf("Error() = %q", err.Error())
	}
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Error("the redacted error no longer unwraps to its cause")
	}
	if r.Error(nil) != nil {
		t.Error("Error(nil) is not nil")
	}
}

// BenchmarkString is the cost of one vendor error message (error path only).
func BenchmarkString(b *testing.B) {
	r := redact.New("upstream-SECRET/123+abc==", "0123456789abcdef0123456789abcdef")
	msg := "Incorrect API key provided: sk-upstream-SECRET-123. You can find your API key at https://platform.openai.com/account/api-keys."
	b.ReportAllocs()
	for b.Loop() {
		_ = r.String(msg)
	}
}
