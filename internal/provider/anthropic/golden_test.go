package anthropic

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
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/tokenize"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// fixedNow makes created deterministic.
var fixedNow = func() time.Time { return time.Unix(1767225600, 0) }

// testTokens holds the vocabularies for every test client, loaded once.
var testTokens = tokenize.NewSet()

// claudeTokenizer is what the catalog names for Claude models: none, so
// o200k, marked approximate.
func claudeTokenizer(string, string) *tokenize.Tokenizer { return testTokens.For("") }

func testClient(t testing.TB) *Client {
	t.Helper()
	c, err := New(Options{Name: "test-anthropic", APIKey: "k", Tokenizer: claudeTokenizer})
	if err != nil {
		t.Fatal(err)
	}
	c.now = fixedNow
	return c
}

// jsonToolFor names the json_schema tool a fixture's request used.
func jsonToolFor(name string) string {
	if strings.HasPrefix(name, "json_schema") {
		return "person"
	}
	return ""
}

// golden compares got with the golden file semantically, or rewrites it.
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
	if !sameJSONLines(t, want, got) {
		t.Errorf("%s differs\n got: %s\nwant: %s", path, got, want)
	}
}

// sameJSONLines compares two texts line by line, JSON lines semantically.
func sameJSONLines(t *testing.T, a, b []byte) bool {
	la, lb := bytes.Split(bytes.TrimSpace(a), []byte("\n")), bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	if len(la) != len(lb) {
		return false
	}
	for i := range la {
		var va, vb any
		ea, eb := json.Unmarshal(la[i], &va), json.Unmarshal(lb[i], &vb)
		if ea != nil || eb != nil {
			if !bytes.Equal(bytes.TrimSpace(la[i]), bytes.TrimSpace(lb[i])) {
				return false
			}
			continue
		}
		if !reflect.DeepEqual(va, vb) {
			return false
		}
	}
	return true
}

func indent(t *testing.T, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		t.Fatal(err)
	}
	return append(out.Bytes(), '\n')
}

func fixtures(t *testing.T, dir, pattern string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join("testdata", dir, pattern))
	if err != nil || len(names) == 0 {
		t.Fatalf("no fixtures in testdata/%s/%s: %v", dir, pattern, err)
	}
	var out []string
	for _, n := range names {
		if !strings.Contains(filepath.Base(n), ".golden") {
			out = append(out, n)
		}
	}
	return out
}

func chatRequest(body []byte) *provider.ChatRequest {
	var head struct {
		Stream        bool `json:"stream"`
		StreamOptions struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	_ = json.Unmarshal(body, &head)
	return &provider.ChatRequest{PublicModel: "claude-public", UpstreamModel: "claude-sonnet-4-5",
		Body: body, Stream: head.Stream, IncludeUsage: head.StreamOptions.IncludeUsage}
}

// TestRequestGolden translates each OpenAI request under testdata/requests
// and checks the Anthropic body, which must also pass the SDK oracle.
func TestRequestGolden(t *testing.T) {
	c := testClient(t)
	for _, path := range fixtures(t, "requests", "*.json") {
		t.Run(filepath.Base(path), func(t *testing.T) {
			in, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			req := chatRequest(in)
			tr, err := c.translate(req, req.Stream)
			if err != nil {
				t.Fatal(err)
			}
			if tr.jsonTool != jsonToolFor(filepath.Base(path)) {
				t.Errorf("json tool %q", tr.jsonTool)
			}
			checkRequestOracle(t, tr.body)
			golden(t, strings.TrimSuffix(path, ".json")+".golden.json", indent(t, tr.body))
		})
	}
}

// TestResponseGolden translates each Anthropic Message under
// testdata/responses, which the SDK must also accept.
func TestResponseGolden(t *testing.T) {
	c := testClient(t)
	for _, path := range fixtures(t, "responses", "*.json") {
		t.Run(filepath.Base(path), func(t *testing.T) {
			in, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			checkMessageOracle(t, in)
			res, err := c.response(in, "claude-public", jsonToolFor(filepath.Base(path)), testTokens.For(""))
			if err != nil {
				t.Fatal(err)
			}
			var w struct {
				Usage struct {
					PromptTokens            int64 `json:"prompt_tokens"`
					CompletionTokens        int64 `json:"completion_tokens"`
					CompletionTokensDetails struct {
						ReasoningTokens int64 `json:"reasoning_tokens"`
					} `json:"completion_tokens_details"`
				} `json:"usage"`
			}
			_ = json.Unmarshal(res.Body, &w)
			if !res.HasUsage || res.Usage.PromptTokens != w.Usage.PromptTokens || res.Usage.CompletionTokens != w.Usage.CompletionTokens ||
				res.Usage.ReasoningTokens != w.Usage.CompletionTokensDetails.ReasoningTokens {
				t.Errorf("usage %+v does not match body %+v", res.Usage, w.Usage)
			}
			golden(t, strings.TrimSuffix(path, ".json")+".golden.json", indent(t, res.Body))
		})
	}
}

// runStream feeds an SSE body through a stream and renders its chunks, one
// per line, then an "error" line with the status and code if it failed.
func runStream(t testing.TB, c *Client, body io.Reader, jsonTool string, includeUsage bool) []byte {
	t.Helper()
	k := c.start(context.Background())
	s := c.newStream(k, io.NopCloser(body), &provider.ChatRequest{PublicModel: "claude-public",
		UpstreamModel: "claude-sonnet-4-5", IncludeUsage: includeUsage}, jsonTool)
	defer s.Close()
	var out bytes.Buffer
	for s.Next() {
		out.Write(s.Chunk())
		out.WriteByte('\n')
	}
	if err := s.Err(); err != nil {
		var ae *apierr.Error
		if !errors.As(err, &ae) {
			t.Fatalf("stream error %T is not an *apierr.Error: %v", err, err)
		}
		fmt.Fprintf(&out, "error %d %s: %s\n", ae.Status, ae.Code, ae.Message)
	}
	if u, ok := s.Usage(); ok {
		fmt.Fprintf(&out, "usage %d %d %d %d\n", u.PromptTokens, u.CompletionTokens, u.CachedTokens, u.ReasoningTokens)
	}
	return out.Bytes()
}

// TestStreamGolden translates each Anthropic SSE stream under
// testdata/streams (with include_usage on) whose events the SDK must accept.
func TestStreamGolden(t *testing.T) {
	c := testClient(t)
	for _, path := range fixtures(t, "streams", "*.sse") {
		t.Run(filepath.Base(path), func(t *testing.T) {
			in, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			checkEventsOracle(t, in)
			got := runStream(t, c, bytes.NewReader(in), jsonToolFor(filepath.Base(path)), true)
			golden(t, strings.TrimSuffix(path, ".sse")+".golden", got)
		})
	}
}

// TestStreamWithoutUsage checks no usage-only chunk is sent unless asked.
func TestStreamWithoutUsage(t *testing.T) {
	c := testClient(t)
	in, err := os.ReadFile("testdata/streams/text.sse")
	if err != nil {
		t.Fatal(err)
	}
	with := runStream(t, c, bytes.NewReader(in), "", true)
	without := runStream(t, c, bytes.NewReader(in), "", false)
	if n, m := bytes.Count(with, []byte("\n")), bytes.Count(without, []byte("\n")); n != m+1 {
		t.Errorf("with usage %d lines, without %d; want one more", n, m)
	}
	if bytes.Contains(without, []byte(`"choices":[]`)) {
		t.Errorf("usage chunk sent though not asked for:\n%s", without)
	}
}
