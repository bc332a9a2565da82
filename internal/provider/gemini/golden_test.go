package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/provider/oaiwire"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// fakeFetcher serves one known image URL.
type fakeFetcher struct{}

func (fakeFetcher) Fetch(_ context.Context, u string) (string, []byte, error) {
	switch u {
	case "https://example.com/cat.png":
		return "image/png", []byte("\x89PNG\r\n\x1a\nfake"), nil
	case "https://example.com/page.html":
		return "text/html", []byte("<html>"), nil
	}
	return "", nil, apierr.Invalid("messages", "cannot fetch %s", u)
}

// testClient is a client with fixed clock and counting ids, so output is
// reproducible.
func testClient(t testing.TB, base string) *Client {
	t.Helper()
	c, err := New(Options{Name: "gemini-test", BaseURL: base, APIKey: "k", Fetcher: fakeFetcher{},
		Timeout: 5 * time.Second, IdleTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	c.now = func() time.Time { return time.Unix(1767225600, 0) }
	c.newID = func(prefix string) string { n++; return fmt.Sprintf("%sgen%d", prefix, n) }
	return c
}

// canonical re-encodes JSON with sorted keys and indentation, so files
// compare by meaning, not spelling.
func canonical(t testing.TB, b []byte) []byte {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	out, _ := json.MarshalIndent(v, "", "  ")
	return append(out, '\n')
}

// golden compares got with the file, or rewrites it under -update.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(bytes.TrimSpace(want), bytes.TrimSpace(got)) {
		t.Errorf("%s differs (run with -update after checking)\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func cases(t *testing.T, pattern string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", pattern))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures for %s: %v", pattern, err)
	}
	return files
}

// TestRequestGolden: OpenAI request → Gemini request body, which must also
// decode strictly into the official genai types.
func TestRequestGolden(t *testing.T) {
	for _, in := range cases(t, "request/*.in.json") {
		name := strings.TrimSuffix(filepath.Base(in), ".in.json")
		t.Run(name, func(t *testing.T) {
			body, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			got := translateBody(t, testClient(t, ""), body, 8192)
			checkRequestOracle(t, got)
			golden(t, strings.TrimSuffix(in, ".in.json")+".golden.json", canonical(t, got))
		})
	}
}

func translateBody(t testing.TB, c *Client, body []byte, maxOutput int64) []byte {
	t.Helper()
	req, err := oaiwire.ParseRequest(body)
	if err != nil {
		t.Fatal(err)
	}
	gr, err := c.translate(context.Background(), req, maxOutput)
	if err != nil {
		t.Fatalf("translate: %v", err)
	}
	b, err := json.Marshal(gr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestResponseGolden: Gemini answer → chat.completion.
func TestResponseGolden(t *testing.T) {
	for _, in := range cases(t, "response/*.gemini.json") {
		name := strings.TrimSuffix(filepath.Base(in), ".gemini.json")
		t.Run(name, func(t *testing.T) {
			body, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			checkResponseOracle(t, body)
			var gr genResponse
			if err := json.Unmarshal(body, &gr); err != nil {
				t.Fatal(err)
			}
			out, _ := testClient(t, "").toOpenAI(&gr, "public-model")
			b, _ := json.Marshal(out)
			golden(t, strings.TrimSuffix(in, ".gemini.json")+".openai.json", canonical(t, b))
		})
	}
}

// TestStreamGolden: Gemini SSE → OpenAI chunks (with include_usage), plus
// the error the stream ends with.
func TestStreamGolden(t *testing.T) {
	for _, in := range cases(t, "stream/*.sse") {
		name := strings.TrimSuffix(filepath.Base(in), ".sse")
		t.Run(name, func(t *testing.T) {
			body, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			for _, ev := range sseData(body) {
				checkResponseOracle(t, ev)
			}
			got := runStream(t, io.NopCloser(bytes.NewReader(body)), true)
			golden(t, strings.TrimSuffix(in, ".sse")+".golden", got)
		})
	}
}

// runStream drains a stream over body and renders each chunk canonically
// (one line each) and the final error.
func runStream(t testing.TB, body io.ReadCloser, includeUsage bool) []byte {
	t.Helper()
	c := testClient(t, "")
	s := c.newStream(c.start(context.Background()), body, "public-model", includeUsage)
	defer s.Close()
	var out bytes.Buffer
	for s.Next() {
		var v any
		if err := json.Unmarshal(s.Chunk(), &v); err != nil {
			t.Fatalf("chunk is not JSON: %s", s.Chunk())
		}
		line, _ := json.Marshal(v)
		fmt.Fprintf(&out, "data: %s\n", line)
	}
	if err := s.Err(); err != nil {
		var ae *apierr.Error
		if !errors.As(err, &ae) {
			t.Fatalf("stream error is not an *apierr.Error: %v", err)
		}
		fmt.Fprintf(&out, "error: %d %s %s\n", ae.Status, ae.Code, ae.Message)
	}
	if u, ok := s.Usage(); ok {
		fmt.Fprintf(&out, "usage: %+v\n", u)
	}
	return out.Bytes()
}

// sseData returns the data of each event (a test helper, not the parser).
func sseData(b []byte) [][]byte {
	var out [][]byte
	b = bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
	for _, ev := range bytes.Split(b, []byte("\n\n")) {
		var data [][]byte
		for _, l := range bytes.Split(ev, []byte("\n")) {
			if d, ok := bytes.CutPrefix(l, []byte("data: ")); ok {
				data = append(data, d)
			}
		}
		if len(data) > 0 {
			out = append(out, bytes.Join(data, []byte("\n")))
		}
	}
	return out
}

// The usage a stream reports is kept whether or not the client asked for
// a usage chunk; only the chunk depends on include_usage.
func TestStreamWithoutUsageChunk(t *testing.T) {
	body, _ := os.ReadFile("testdata/stream/text.sse")
	got := string(runStream(t, io.NopCloser(bytes.NewReader(body)), false))
	if strings.Contains(got, `"choices":[]`) || !strings.Contains(got, "usage: {PromptTokens:5 CompletionTokens:9") {
		t.Errorf("without include_usage:\n%s", got)
	}
}

var _ provider.ChatStream = (*stream)(nil)

// Events that are not a GenerateContentResponse end the stream with a 502,
// after the chunks already translated; a body cut inside an event is a
// stream without its finish.
func TestStreamBadEvents(t *testing.T) {
	const ok = "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Hi\"}],\"role\":\"model\"},\"index\":0}]}\n\n"
	tests := []struct{ name, body string }{
		{"not json", ok + "data: <html>oops</html>\n\n"},
		{"array", ok + "data: [1,2]\n\n"},
		{"cut inside an event", ok + "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"!\"}]},\"finishReason\":\"ST"},
		{"empty body", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(runStream(t, io.NopCloser(strings.NewReader(tt.body)), true))
			if !strings.Contains(got, "error: 502 bad_upstream_response") {
				t.Errorf("got\n%s", got)
			}
			if tt.body != "" && !strings.Contains(got, `"content":"Hi"`) {
				t.Errorf("the good event was lost:\n%s", got)
			}
		})
	}
}
