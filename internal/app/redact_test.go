package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/app"
	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/money"
)

// The upstream secrets of the redaction tests. Only the first is shaped
// like a key; the others are caught only because the adapter knows them
// as its own (the API key, or a configured header value).
const (
	echoOpenAIKey    = "sk-upstream-SECRET-123"
	echoHeaderSecret = "extra-header-secret-42"
	echoAzureKey     = "0123456789abcdef0123456789abcdef" // Azure's keys are 32 hex digits
	echoAnthropicKey = "anthropic-upstream-secret-789"
	echoGeminiKey    = "gemini-upstream-secret-000"
	echoSoraKey      = "sora-upstream-secret-321"
)

var echoSecrets = []string{echoOpenAIKey, echoHeaderSecret, echoAzureKey, echoAnthropicKey, echoGeminiKey, echoSoraKey}

// echoVendor is a fake of every dialect (OpenAI, Azure, Anthropic, Gemini,
// Sora's Videos API) whose errors echo the credentials it was sent, as
// some vendors do: "Incorrect API key provided: <key>". The upstream model
// (or Azure deployment) picks the scenario: "400" and "401" answer that
// status, "stream" sends one good event and then an error event.
func newEchoVendor(t *testing.T) *httptest.Server {
	echo := func(r *http.Request) string {
		key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		for _, h := range []string{"Api-Key", "X-Api-Key", "X-Goog-Api-Key"} {
			if v := r.Header.Get(h); v != "" {
				key = v
			}
		}
		msg := "Incorrect API key provided: " + key + "."
		if v := r.Header.Get("X-Extra-Auth"); v != "" {
			msg += " Extra header: " + v + "."
		}
		return msg
	}
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	model := func(r *http.Request) string {
		var b struct {
			Model string `json:"model"`
		}
		_ = json.NewDecoder(r.Body).Decode(&b)
		return b.Model
	}
	sse := func(w http.ResponseWriter, events ...string) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range events {
			fmt.Fprint(w, e+"\n\n")
			w.(http.Flusher).Flush()
		}
	}
	openaiErr := func(w http.ResponseWriter, r *http.Request, scenario string) {
		msg := echo(r)
		switch scenario {
		case "400", "401":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(map[string]int{"400": 400, "401": 401}[scenario])
			fmt.Fprintf(w, `{"error":{"message":%s,"type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`, q(msg))
		case "stream":
			sse(w, `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},"finish_reason":null}]}`,
				fmt.Sprintf(`data: {"error":{"message":%s,"type":"invalid_request_error","code":"invalid_api_key"}}`, q(msg)))
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		openaiErr(w, r, model(r))
	})
	mux.HandleFunc("POST /openai/deployments/{dep}/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		openaiErr(w, r, r.PathValue("dep"))
	})
	mux.HandleFunc("POST /v1/messages", func(w http.ResponseWriter, r *http.Request) {
		msg := echo(r)
		switch m := model(r); m {
		case "400", "401":
			typ := map[string]string{"400": "invalid_request_error", "401": "authentication_error"}[m]
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(map[string]int{"400": 400, "401": 401}[m])
			fmt.Fprintf(w, `{"type":"error","error":{"type":%q,"message":%s}}`, typ, q(msg))
		case "stream":
			sse(w, "event: message_start\n"+`data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"stream","content":[],"stop_reason":null,"usage":{"input_tokens":5,"output_tokens":1}}}`,
				"event: error\n"+fmt.Sprintf(`data: {"type":"error","error":{"type":"invalid_request_error","message":%s}}`, q(msg)))
		}
	})
	mux.HandleFunc("POST /v1beta/models/{call}", func(w http.ResponseWriter, r *http.Request) {
		msg := echo(r)
		m, _, _ := strings.Cut(r.PathValue("call"), ":")
		switch m {
		case "400", "401":
			status := map[string]string{"400": "INVALID_ARGUMENT", "401": "UNAUTHENTICATED"}[m]
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(map[string]int{"400": 400, "401": 401}[m])
			fmt.Fprintf(w, `{"error":{"code":%s,"message":%s,"status":%q}}`, m, q(msg), status)
		case "stream":
			sse(w, `data: {"candidates":[{"content":{"role":"model","parts":[{"text":"Hi"}]},"index":0}]}`,
				fmt.Sprintf(`data: {"error":{"code":400,"message":%s,"status":"INVALID_ARGUMENT"}}`, q(msg)))
		}
	})
	mux.HandleFunc("POST /v1/videos", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"id":"video_echo_1","object":"video","status":"queued","progress":0,"created_at":1,"seconds":"4","size":"720x1280"}`)
	})
	mux.HandleFunc("GET /v1/videos/{id}", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"id":%q,"object":"video","status":"failed","created_at":1,"seconds":"4","size":"720x1280","error":{"code":"invalid_api_key","message":%s}}`,
			r.PathValue("id"), q(echo(r)))
	})
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// syncBuffer is a log destination the test reads while the gateway writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestVendorEchoedSecretsRedacted runs a gateway in front of vendors of
// every dialect whose errors echo the gateway's upstream credentials: a
// 400 (relayed to the client), a 401 (only logged), an error event in the
// middle of a stream and a failed video job. Neither what the client gets
// nor the log may hold a credential; the vendor's message otherwise
// survives, with "[redacted]" where the credential was.
func TestVendorEchoedSecretsRedacted(t *testing.T) {
	vendor := newEchoVendor(t)
	cfg := testConfig(t, "http://127.0.0.1:1")
	videoConfig(cfg)
	in, out := config.Amount(money.Unit), config.Amount(2*money.Unit)
	video, perSecond := "video", config.Amount(money.Unit/10)
	cfg.Models = append(cfg.Models, config.ModelConfig{ID: "echo-sora", Modality: &video, VideoPerSecond: &perSecond,
		Sizes: []string{"720x1280"}, VideoDurations: []int{4}})
	timeouts := func(p config.Provider) config.Provider {
		p.Timeout, p.IdleTimeout = config.Duration(10*time.Second), config.Duration(5*time.Second)
		return p
	}
	dialects := []struct {
		name string
		code string // of the relayed 400
		p    config.Provider
	}{
		{"openai", "invalid_api_key", config.Provider{Type: "openai", BaseURL: vendor.URL + "/v1", APIKey: echoOpenAIKey,
			Headers: map[string]string{"X-Extra-Auth": echoHeaderSecret}}},
		{"azure", "invalid_api_key", config.Provider{Type: "azure", BaseURL: vendor.URL, APIKey: echoAzureKey, APIVersion: "2024-10-21"}},
		{"anthropic", "invalid_request_error", config.Provider{Type: "anthropic", BaseURL: vendor.URL, APIKey: echoAnthropicKey}},
		{"gemini", "invalid_argument", config.Provider{Type: "gemini", BaseURL: vendor.URL + "/v1beta", APIKey: echoGeminiKey}},
	}
	for _, d := range dialects {
		p := timeouts(d.p)
		p.Name = "echo-" + d.name
		for _, sc := range []string{"400", "401", "stream"} {
			id := "echo-" + d.name + "-" + sc
			p.Models = append(p.Models, config.ModelRef{ID: id, Upstream: sc})
			cfg.Models = append(cfg.Models, config.ModelConfig{ID: id, Input: &in, Output: &out})
		}
		cfg.Providers = append(cfg.Providers, p)
	}
	cfg.Providers = append(cfg.Providers, timeouts(config.Provider{Name: "echo-sora", Type: "openai", BaseURL: vendor.URL + "/v1",
		APIKey: echoSoraKey, Models: []config.ModelRef{{ID: "echo-sora", Upstream: "sora-2"}}}))
	logs := &syncBuffer{}
	g := serveApp(t, cfg, app.Options{Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})), Version: "test"})
	key := g.createKey("default", false)
	c := g.client(key)
	ctx := context.Background()

	noSecret := func(what, s string) {
		t.Helper()
		for _, secret := range echoSecrets {
			if strings.Contains(s, secret) {
				t.Errorf("%s holds the upstream secret %q: %s", what, secret, s)
			}
		}
	}
	for _, d := range dialects {
		want := "Incorrect API key provided: [redacted]."
		if d.name == "openai" {
			want += " Extra header: [redacted]."
		}
		t.Run(d.name, func(t *testing.T) {
			// A 400 is the client's to read: relayed, credential redacted.
			_, err := c.Chat.Completions.New(ctx, streamParams("echo-"+d.name+"-400", false))
			e := apiError(t, err, http.StatusBadRequest, d.code)
			noSecret("400 answer", e.RawJSON())
			if e.Message != want {
				t.Errorf("400 message %q, want %q", e.Message, want)
			}
			// A 401 is the gateway's own key refused: a 502 to the client,
			// the vendor's words only in the log.
			_, err = c.Chat.Completions.New(ctx, streamParams("echo-"+d.name+"-401", false))
			e = apiError(t, err, http.StatusBadGateway, apierr.CodeUpstreamAuth)
			noSecret("401 answer", e.RawJSON())
			// An error event in the middle of a stream.
			s := c.Chat.Completions.NewStreaming(ctx, streamParams("echo-"+d.name+"-stream", false))
			got := 0
			for s.Next() {
				got++
			}
			if got == 0 || s.Err() == nil {
				t.Fatalf("stream: %d chunks, err %v; want chunks, then the vendor's error", got, s.Err())
			}
			noSecret("stream error", s.Err().Error())
			resp, body := g.post("/v1/chat/completions", "application/json", key,
				strings.NewReader(`{"model":"echo-`+d.name+`-stream","stream":true,"messages":[{"role":"user","content":"Hi"}]}`))
			noSecret("stream body", string(body))
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "[redacted]") && d.name != "openai" && d.name != "azure" {
				// OpenAI's error chunk maps to a 502 worded by the gateway;
				// the others' are the client's 400s, relayed.
				t.Errorf("stream answer %d %s: want the vendor's message with [redacted]", resp.StatusCode, body)
			}
		})
	}

	t.Run("video", func(t *testing.T) {
		task := g.waitSpec(key, g.submitSpec(key, `{"model":"echo-sora","prompt":"a fox","duration":4}`).ID, nil)
		if task.Status != "failed" || task.Error != "Incorrect API key provided: [redacted]." {
			t.Errorf("video task %+v, want failed with the vendor's message, redacted", task)
		}
		req, _ := http.NewRequest(http.MethodGet, g.URL+"/v1/videos/"+task.ID, nil)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		noSecret("GET /v1/videos/{id}", string(body))
		if !strings.Contains(string(body), "Incorrect API key provided: [redacted].") {
			t.Errorf("GET /v1/videos/%s: %d %s, want the redacted vendor message", task.ID, resp.StatusCode, body)
		}
	})

	if err := g.stop(); err != nil { // every request line written
		t.Fatal(err)
	}
	log := logs.String()
	noSecret("the log", log)
	for _, d := range dialects {
		// The 401's cause is logged with the vendor's words, redacted.
		if !strings.Contains(log, "provider echo-"+d.name+": HTTP 401") {
			t.Errorf("the log has no line of %s's 401", d.name)
		}
	}
	if n := strings.Count(log, "Incorrect API key provided: [redacted]."); n < len(dialects) {
		t.Errorf("the log holds the redacted vendor message %d times, want at least %d:\n%s", n, len(dialects), log)
	}
}
