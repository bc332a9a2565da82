//go:build unix

package app_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// agentFixture is one request an agent CLI sent, as recorded in
// testdata/agents (secrets and session ids scrubbed).
type agentFixture struct {
	Captured string              `json:"captured"`
	Method   string              `json:"method"`
	Path     string              `json:"path"`
	Query    string              `json:"query"`
	Headers  map[string][]string `json:"headers"`
	Body     json.RawMessage     `json:"body"`
}

// fixtureMarker is what the recorded tool call printed: a second turn
// carries it, and the scripted vendor then answers with text.
const fixtureMarker = "modelgate-capture-7f3a"

// notReplayed are recorded headers a replay does not send: the client's
// own credentials (scrubbed anyway) and transport headers Go sets itself.
var notReplayed = map[string]bool{"X-Api-Key": true, "Authorization": true, "Accept-Encoding": true,
	"Connection": true, "Content-Length": true}

func loadAgentFixtures(t *testing.T, prefix string) map[string]agentFixture {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "agents", prefix+"*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no %s fixtures: %v", prefix, err)
	}
	out := map[string]agentFixture{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var fx agentFixture
		if err := json.Unmarshal(b, &fx); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if fx.Method == http.MethodPost {
			out[strings.TrimSuffix(filepath.Base(f), ".json")] = fx
		}
	}
	return out
}

// withModel is body with its model replaced.
func withModel(t *testing.T, body []byte, model string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	m["model"] = model
	return m
}

// replayFixture sends the recorded request to the gateway as the CLI did,
// with the gateway key in the header the CLI puts its key in and the model
// replaced, and returns the status and whole answer.
func replayFixture(t *testing.T, g *gateway, fx agentFixture, model string) (int, http.Header, []byte) {
	t.Helper()
	body, err := json.Marshal(withModel(t, fx.Body, model))
	if err != nil {
		t.Fatal(err)
	}
	url := g.URL + fx.Path
	if fx.Query != "" {
		url += "?" + fx.Query
	}
	req, err := http.NewRequest(fx.Method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range fx.Headers {
		if !notReplayed[http.CanonicalHeaderKey(k)] {
			req.Header[http.CanonicalHeaderKey(k)] = vs
		}
	}
	if _, ok := fx.Headers["X-Api-Key"]; ok {
		req.Header.Set("X-Api-Key", g.keys["default"])
	} else {
		req.Header.Set("Authorization", "Bearer "+g.keys["default"])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read answer: %v", err)
	}
	return resp.StatusCode, resp.Header, b
}

// lastEvent is the name of a server-sent event stream's last event.
func lastEvent(stream []byte) string {
	var last string
	for _, line := range strings.Split(string(stream), "\n") {
		if name, ok := strings.CutPrefix(line, "event: "); ok {
			last = strings.TrimSpace(name)
		}
	}
	return last
}

// TestAgentsFixturesReplay sends each recorded request of Claude Code,
// Codex and the OpenAI Agents SDK to the gateway, passed through and translated. Passed through, the
// vendor must get the client's body with only the model changed (and
// Anthropic's version and betas unchanged); either way the client gets a
// complete stream ending as its API ends one, and a usage record is kept.
func TestAgentsFixturesReplay(t *testing.T) {
	routes := []struct {
		prefix, providerType, vendorPath, endpoint, lastEvent string
		// gatewayAdds are fields the gateway adds to a passed-through
		// body when the client sent none: max_tool_calls bounds what
		// built-in tools can cost (see internal/api/openai/responses_native.go).
		gatewayAdds []string
	}{
		{"codex-", "openai", "/v1/responses", "responses", "response.completed", []string{"max_tool_calls"}},
		{"codex-", "anthropic", "/v1/messages", "responses", "response.completed", nil},
		{"openai-agents-", "openai", "/v1/responses", "responses", "response.completed", []string{"max_tool_calls"}},
		{"openai-agents-", "anthropic", "/v1/messages", "responses", "response.completed", nil},
		{"claude-code-", "anthropic", "/v1/messages", "messages", "message_stop", nil},
		{"claude-code-", "openai", "/v1/chat/completions", "messages", "message_stop", nil},
	}
	for _, rt := range routes {
		for name, fx := range loadAgentFixtures(t, rt.prefix) {
			t.Run(name+"/"+rt.providerType, func(t *testing.T) {
				v := newAgentVendor(t, agentScript{Command: "echo " + fixtureMarker, Marker: fixtureMarker})
				const model, upstream = "replay-model", "vendor-replay-model"
				g := startAgentGateway(t, v, rt.providerType, model, upstream)
				status, _, answer := replayFixture(t, g, fx, model)
				if status != http.StatusOK {
					t.Fatalf("%s %s: %d %s", fx.Method, fx.Path, status, answer)
				}
				if got := lastEvent(answer); got != rt.lastEvent {
					t.Errorf("stream ends with %q, want %q:\n%s", got, rt.lastEvent, tail(string(answer)))
				}
				turns := v.Turns()
				if len(turns) != 1 || turns[0].Path != rt.vendorPath || turns[0].Model != upstream {
					t.Fatalf("vendor requests %+v, want one at %s", turns, rt.vendorPath)
				}
				if rt.vendorPath == fx.Path { // passed through
					var got map[string]any
					if err := json.Unmarshal(turns[0].Body, &got); err != nil {
						t.Fatal(err)
					}
					want := withModel(t, fx.Body, upstream)
					for _, k := range rt.gatewayAdds {
						if _, sent := want[k]; !sent {
							delete(got, k)
						}
					}
					if !reflect.DeepEqual(got, want) {
						t.Errorf("vendor got a body that differs from the client's in more than its model:\n%s", diffKeys(want, got))
					}
					for _, h := range []string{"Anthropic-Version", "Anthropic-Beta"} {
						if want, ok := fx.Headers[h]; ok && strings.Join(turns[0].Header[h], ",") != strings.Join(want, ",") {
							t.Errorf("vendor got %s %q, client sent %q", h, turns[0].Header[h], want)
						}
					}
				}
				checkAgentUsage(t, g, v, rt.endpoint, model, 1)
			})
		}
	}
}

// diffKeys names the top-level fields in which two bodies differ.
func diffKeys(want, got map[string]any) string {
	var b strings.Builder
	for k, w := range want {
		if g, ok := got[k]; !ok {
			b.WriteString("missing " + k + "\n")
		} else if !reflect.DeepEqual(w, g) {
			wj, _ := json.Marshal(w)
			gj, _ := json.Marshal(g)
			b.WriteString("changed " + k + ": " + tail(string(wj)) + " → " + tail(string(gj)) + "\n")
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			b.WriteString("added " + k + "\n")
		}
	}
	return b.String()
}
