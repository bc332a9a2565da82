package app_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	oai "github.com/openai/openai-go/v3"

	"github.com/modelgate/modelgate/internal/app"
	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/provider/providertest"
)

// vendorNet stands in for the internet: every host the gateway dials (the
// real vendor hosts included) reaches one TLS server, which records the URL
// each request arrived at and hands it to the matching fake vendor.
type vendorNet struct {
	*httptest.Server
	openai    *providertest.OpenAI
	gemini    *providertest.Gemini
	anthropic *providertest.Anthropic

	mu   sync.Mutex
	seen []string // "host/path?query" of each request, in order
}

func newVendorNet(t *testing.T) *vendorNet {
	n := &vendorNet{openai: providertest.NewOpenAI(t), gemini: providertest.NewGemini(t), anthropic: providertest.NewAnthropic(t)}
	n.Server = httptest.NewTLSServer(http.HandlerFunc(n.serve))
	t.Cleanup(n.Close)
	return n
}

func (n *vendorNet) serve(w http.ResponseWriter, r *http.Request) {
	seen := r.Host + r.URL.Path
	if r.URL.RawQuery != "" {
		seen += "?" + r.URL.RawQuery
	}
	n.mu.Lock()
	n.seen = append(n.seen, seen)
	n.mu.Unlock()
	p := r.URL.Path
	switch {
	case strings.HasPrefix(r.Host, "broken."): // a base_url pointing at the wrong path
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"error":{"code":404,"message":"Not Found","status":"NOT_FOUND"}}`)
	case strings.Contains(p, "/models/") && strings.Contains(p, ":"):
		r.URL.Path = "/v1beta/models/" + p[strings.Index(p, "/models/")+len("/models/"):]
		n.gemini.ServeHTTP(w, r)
	case strings.HasSuffix(p, "/v1/messages"):
		r.URL.Path = "/v1/messages"
		n.anthropic.ServeHTTP(w, r)
	case strings.HasSuffix(p, "/chat/completions"):
		r.URL.Path = "/v1/chat/completions"
		n.openai.ServeHTTP(w, r)
	default:
		http.NotFound(w, r)
	}
}

// last is the URL of the most recent request.
func (n *vendorNet) last(t *testing.T) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.seen) == 0 {
		t.Fatal("no upstream request")
	}
	return n.seen[len(n.seen)-1]
}

// client dials the vendor net for every host and trusts its certificate.
func (n *vendorNet) client() *http.Client {
	addr := n.Listener.Addr().String()
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		},
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // a test server
	}}
}

// lockedBuffer is a log sink the gateway's goroutines may write while a test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startGatewayFile loads a YAML config (database and groups are added) the
// way serve does, and runs the gateway on the vendor net with log as its logger.
func startGatewayFile(t *testing.T, n *vendorNet, yaml string, env map[string]string, log *slog.Logger) *gateway {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "modelgate.yaml")
	body := "database: sqlite:" + filepath.Join(dir, "mg.db") + "\nauth_cache_ttl: 1ns\ngroups:\n  default: {models: [\"*\"]}\n" + yaml
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, ps, err := config.Load(path, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	if config.HasErrors(ps) {
		t.Fatalf("config problems: %q", ps)
	}
	g := serveApp(t, cfg, app.Options{Logger: log, Version: "test", HTTPClient: n.client()})
	g.keys["default"] = g.createKey("default", false)
	return g
}

// TestBaseURLForms sends a chat completion through every documented way of
// writing each vendor's base_url and checks the URL it arrived at.
func TestBaseURLForms(t *testing.T) {
	type form struct {
		typ, base, upstream string
		extra               string // more provider settings, YAML
		want                string // host/path?query the vendor saw
	}
	const (
		gem = "generativelanguage.googleapis.com"
		dep = "/openai/deployments/my-gpt4o/chat/completions?api-version="
	)
	forms := []form{
		{typ: "openai", base: "https://api.openai.com/v1", want: "api.openai.com/v1/chat/completions"},
		{typ: "openai", base: "https://api.openai.com/v1/", want: "api.openai.com/v1/chat/completions"},
		{typ: "openai", base: "https://api.openai.com", want: "api.openai.com/v1/chat/completions"},
		{typ: "openai", base: "https://api.openai.com/v1/chat/completions", want: "api.openai.com/v1/chat/completions"},
		{typ: "openai", base: "https://api.groq.com", want: "api.groq.com/openai/v1/chat/completions"},
		{typ: "openai", base: "https://api.groq.com/openai/v1/", want: "api.groq.com/openai/v1/chat/completions"},
		{typ: "openai", base: "https://openrouter.ai", want: "openrouter.ai/api/v1/chat/completions"},
		{typ: "openai", base: "https://openrouter.ai/api/v1/chat/completions", want: "openrouter.ai/api/v1/chat/completions"},
		{typ: "openai", base: "https://api.fireworks.ai", want: "api.fireworks.ai/inference/v1/chat/completions"},
		{typ: "openai", base: "https://api.x.ai/", want: "api.x.ai/v1/chat/completions"},
		{typ: "openai", base: "https://api.mistral.ai", want: "api.mistral.ai/v1/chat/completions"},
		{typ: "openai", base: "https://api.together.xyz", want: "api.together.xyz/v1/chat/completions"},
		{typ: "openai", base: "https://api.deepseek.com", want: "api.deepseek.com/chat/completions"},
		{typ: "openai", base: "https://api.deepseek.com/v1/", want: "api.deepseek.com/v1/chat/completions"},
		{typ: "openai", base: "https://vllm.internal:8443/v1/", want: "vllm.internal:8443/v1/chat/completions"},
		{typ: "openai", base: "https://" + gem + "/v1beta/openai/", want: gem + "/v1beta/openai/chat/completions"},

		{typ: "gemini", base: "", upstream: "gemini-2.5-flash", want: gem + "/v1beta/models/gemini-2.5-flash:generateContent"},
		{typ: "gemini", base: "https://" + gem, upstream: "gemini-2.5-flash", want: gem + "/v1beta/models/gemini-2.5-flash:generateContent"},
		{typ: "gemini", base: "https://" + gem + "/", upstream: "gemini-2.5-flash", want: gem + "/v1beta/models/gemini-2.5-flash:generateContent"},
		{typ: "gemini", base: "https://" + gem + "/v1beta", upstream: "gemini-2.5-flash", want: gem + "/v1beta/models/gemini-2.5-flash:generateContent"},
		{typ: "gemini", base: "https://" + gem + "/v1beta/", upstream: "gemini-2.5-flash", want: gem + "/v1beta/models/gemini-2.5-flash:generateContent"},
		{typ: "gemini", base: "https://" + gem + "/v1", upstream: "gemini-2.5-flash", want: gem + "/v1/models/gemini-2.5-flash:generateContent"},
		{typ: "gemini", base: "https://" + gem + "/v1alpha/", upstream: "gemini-2.5-flash", want: gem + "/v1alpha/models/gemini-2.5-flash:generateContent"},
		{typ: "gemini", base: "https://" + gem + "/v1beta/models/gemini-2.0-flash:generateContent", upstream: "gemini-2.5-flash",
			want: gem + "/v1beta/models/gemini-2.5-flash:generateContent"},

		{typ: "anthropic", base: "", upstream: "claude-haiku-4-5", want: "api.anthropic.com/v1/messages"},
		{typ: "anthropic", base: "https://api.anthropic.com", upstream: "claude-haiku-4-5", want: "api.anthropic.com/v1/messages"},
		{typ: "anthropic", base: "https://api.anthropic.com/", upstream: "claude-haiku-4-5", want: "api.anthropic.com/v1/messages"},
		{typ: "anthropic", base: "https://api.anthropic.com/v1", upstream: "claude-haiku-4-5", want: "api.anthropic.com/v1/messages"},
		{typ: "anthropic", base: "https://api.anthropic.com/v1/", upstream: "claude-haiku-4-5", want: "api.anthropic.com/v1/messages"},
		{typ: "anthropic", base: "https://api.anthropic.com/v1/messages", upstream: "claude-haiku-4-5", want: "api.anthropic.com/v1/messages"},

		{typ: "azure", base: "https://acme.openai.azure.com", upstream: "my-gpt4o", want: "acme.openai.azure.com" + dep + "2024-10-21"},
		{typ: "azure", base: "https://acme.openai.azure.com/", upstream: "my-gpt4o", want: "acme.openai.azure.com" + dep + "2024-10-21"},
		{typ: "azure", base: "https://acme.openai.azure.com/openai", upstream: "my-gpt4o", want: "acme.openai.azure.com" + dep + "2024-10-21"},
		{typ: "azure", base: "https://acme.openai.azure.com/openai/v1/", upstream: "my-gpt4o", want: "acme.openai.azure.com" + dep + "2024-10-21"},
		{typ: "azure", base: "https://acme.cognitiveservices.azure.com/", upstream: "my-gpt4o", want: "acme.cognitiveservices.azure.com" + dep + "2024-10-21"},
		{typ: "azure", base: "https://acme.openai.azure.com/openai/deployments/other/chat/completions?api-version=2025-01-01-preview",
			upstream: "my-gpt4o", want: "acme.openai.azure.com" + dep + "2025-01-01-preview"},
		{typ: "azure", base: "https://acme.openai.azure.com/openai/deployments/other/chat/completions?api-version=2025-01-01-preview",
			upstream: "my-gpt4o", extra: "api_version: 2024-06-01", want: "acme.openai.azure.com" + dep + "2024-06-01"},
	}
	var y strings.Builder
	y.WriteString("providers:\n")
	var prices strings.Builder
	prices.WriteString("models:\n")
	for i, f := range forms {
		up := f.upstream
		if up == "" {
			up = "gpt-4o-mini"
		}
		fmt.Fprintf(&y, "  - name: p%d\n    type: %s\n    api_key: ${KEY}\n    models: [{id: form-%d, upstream: %s}]\n", i, f.typ, i, up)
		if f.base != "" {
			fmt.Fprintf(&y, "    base_url: %q\n", f.base)
		}
		if f.extra != "" {
			fmt.Fprintf(&y, "    %s\n", f.extra)
		}
		fmt.Fprintf(&prices, "  - {id: form-%d, input: 1, output: 2}\n", i)
	}
	n := newVendorNet(t)
	g := startGatewayFile(t, n, y.String()+prices.String(), map[string]string{"KEY": "sk-vendor-key"}, nil)
	c := g.client(g.keys["default"])
	for i, f := range forms {
		t.Run(fmt.Sprintf("%s %s", f.typ, f.base), func(t *testing.T) {
			r, err := c.Chat.Completions.New(context.Background(), oai.ChatCompletionNewParams{
				Model: fmt.Sprintf("form-%d", i), Messages: []oai.ChatCompletionMessageParamUnion{oai.UserMessage("Hello")}})
			if err != nil {
				t.Fatalf("chat: %v (upstream saw %s)", err, n.last(t))
			}
			if r.Choices[0].Message.Content == "" {
				t.Errorf("empty answer %+v", r)
			}
			if got := n.last(t); got != f.want {
				t.Errorf("upstream URL %s, want %s", got, f.want)
			}
		})
	}
	// Streams use the same base: Gemini's :streamGenerateContent under the version written.
	v1 := slices.IndexFunc(forms, func(f form) bool { return f.typ == "gemini" && strings.HasSuffix(f.base, "/v1") })
	s := c.Chat.Completions.NewStreaming(context.Background(), oai.ChatCompletionNewParams{
		Model: fmt.Sprintf("form-%d", v1), Messages: []oai.ChatCompletionMessageParamUnion{oai.UserMessage("Hello")}})
	for s.Next() {
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if got, want := n.last(t), gem+"/v1/models/gemini-2.5-flash:streamGenerateContent?alt=sse"; got != want {
		t.Errorf("stream URL %s, want %s", got, want)
	}
}

// TestNotFoundLogged checks that a vendor 404 for the configured path is
// logged at ERROR as a configuration error naming the provider and the URL
// (never the key), while the client's answer stays the usual 502.
func TestNotFoundLogged(t *testing.T) {
	var logs lockedBuffer
	n := newVendorNet(t)
	g := startGatewayFile(t, n, `providers:
  - name: gemini-broken
    type: gemini
    base_url: https://broken.example/v9/
    api_key: ${GEMINI_KEY}
    models: [{id: broken-model, upstream: gemini-2.5-flash}]
models:
  - {id: broken-model, input: 1, output: 2}
`, map[string]string{"GEMINI_KEY": "AIzaSyTheSecretKey"}, slog.New(slog.NewTextHandler(&logs, nil)))
	c := g.client(g.keys["default"])
	_, err := c.Chat.Completions.New(context.Background(), oai.ChatCompletionNewParams{
		Model: "broken-model", Messages: []oai.ChatCompletionMessageParamUnion{oai.UserMessage("Hello")}})
	e := apiError(t, err, http.StatusBadGateway, "upstream_error")
	if !strings.Contains(e.Message, "does not know the configured model") {
		t.Errorf("client message %q", e.Message)
	}
	var line string
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "configuration error") {
			line = l
		}
	}
	for _, want := range []string{"level=ERROR", "provider=gemini-broken",
		"url=https://broken.example/v9/models/gemini-2.5-flash:generateContent", "status=404", "upstream_model=gemini-2.5-flash"} {
		if !strings.Contains(line, want) {
			t.Errorf("log line lacks %q:\n%s", want, logs.String())
		}
	}
	if strings.Contains(logs.String(), "AIzaSyTheSecretKey") {
		t.Errorf("the key reached the log:\n%s", logs.String())
	}
}

// TestRedactURL checks the URL form the 404 log and config check use.
func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://g.example/v1beta/models/m:generateContent?key=AIzaSecret&alt=sse":                "https://g.example/v1beta/models/m:generateContent?alt=sse&key=***",
		"https://user:pass@proxy.example/v1/chat/completions":                                     "https://***@proxy.example/v1/chat/completions",
		"https://x.openai.azure.com/openai/deployments/d/chat/completions?api-version=2024-10-21": "https://x.openai.azure.com/openai/deployments/d/chat/completions?api-version=2024-10-21",
	} {
		u, err := url.Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := app.RedactURL(u); got != want {
			t.Errorf("RedactURL(%s) = %s, want %s", in, got, want)
		}
	}
}

// TestEndpoint checks the URLs config check prints for each vendor.
func TestEndpoint(t *testing.T) {
	for _, tt := range []struct {
		p    config.Provider
		want string
	}{
		{config.Provider{Type: "openai", BaseURL: "https://api.openai.com"}, "https://api.openai.com/v1/chat/completions"},
		{config.Provider{Type: "openai", BaseURL: "https://api.groq.com/openai/v1/"}, "https://api.groq.com/openai/v1/chat/completions"},
		{config.Provider{Type: "openai", BaseURL: "https://user:secret@proxy.example/v1"}, "https://***@proxy.example/v1/chat/completions"},
		{config.Provider{Type: "gemini"}, "https://generativelanguage.googleapis.com/v1beta/models/{model}:generateContent"},
		{config.Provider{Type: "gemini", BaseURL: "https://generativelanguage.googleapis.com/v1/"}, "https://generativelanguage.googleapis.com/v1/models/{model}:generateContent"},
		{config.Provider{Type: "anthropic", BaseURL: "https://api.anthropic.com/v1"}, "https://api.anthropic.com/v1/messages"},
		{config.Provider{Type: "azure", BaseURL: "https://x.openai.azure.com/openai/v1"},
			"https://x.openai.azure.com/openai/deployments/{deployment}/chat/completions?api-version=2024-10-21"},
		{config.Provider{Type: "azure", BaseURL: "https://x.openai.azure.com", APIVersion: "2025-01-01-preview"},
			"https://x.openai.azure.com/openai/deployments/{deployment}/chat/completions?api-version=2025-01-01-preview"},
		{config.Provider{Type: "demo"}, "built in, no network"},
		{config.Provider{Type: "gemini", BaseURL: "https://generativelanguage.googleapis.com/v1beta/openai"}, "(invalid base_url)"},
	} {
		if got := app.Endpoint(tt.p); got != tt.want {
			t.Errorf("Endpoint(%s %s) = %s, want %s", tt.p.Type, tt.p.BaseURL, got, tt.want)
		}
	}
}

// TestModelPatternsServed checks that provider model patterns reach
// /v1/models and routing: claude-* and all expand to the vendor's priced
// catalog models (video left out), an explicit entry keeps its upstream, and
// an expanded model is sent under its catalog id (with Fireworks' prefix).
func TestModelPatternsServed(t *testing.T) {
	n := newVendorNet(t)
	g := startGatewayFile(t, n, `providers:
  - name: anthropic
    type: anthropic
    api_key: ${KEY}
    models: ["claude-*", {id: claude-2, upstream: claude-2.1}]
  - name: openai
    type: openai
    base_url: https://api.openai.com
    api_key: ${KEY}
    models: all
  - name: fireworks
    type: openai
    base_url: https://api.fireworks.ai/inference/v1
    api_key: ${KEY}
    models: ["llama-v3p1-*"]
`, map[string]string{"KEY": "k"}, nil)
	c := g.client(g.keys["default"])
	page, err := c.Models.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	owners := map[string]string{}
	for _, m := range page.Data {
		owners[m.ID] = m.OwnedBy
	}
	for id, owner := range map[string]string{"claude-haiku-4-5": "anthropic", "claude-opus-4-1": "anthropic", "claude-2": "anthropic",
		"gpt-4o-mini": "openai", "dall-e-3": "openai", "whisper-1": "openai", "text-embedding-3-small": "openai",
		"llama-v3p1-8b-instruct": "fireworks"} {
		if owners[id] != owner {
			t.Errorf("/v1/models: %s owned by %q, want %q", id, owners[id], owner)
		}
	}
	for _, id := range []string{"veo-3.0-generate-001", "gemini-2.5-flash", "phi-4"} {
		if _, ok := owners[id]; ok {
			t.Errorf("/v1/models lists %s", id)
		}
	}

	ask := func(model string) {
		t.Helper()
		if _, err := c.Chat.Completions.New(context.Background(), oai.ChatCompletionNewParams{
			Model: model, Messages: []oai.ChatCompletionMessageParamUnion{oai.UserMessage("Hello")}}); err != nil {
			t.Fatalf("%s: %v", model, err)
		}
	}
	ask("claude-haiku-4-5")
	if got := n.anthropic.Last().Model; got != "claude-haiku-4-5" {
		t.Errorf("anthropic got model %q", got)
	}
	ask("claude-2")
	if got := n.anthropic.Last().Model; got != "claude-2.1" {
		t.Errorf("explicit entry: anthropic got model %q, want claude-2.1", got)
	}
	ask("llama-v3p1-8b-instruct")
	if got := n.openai.Last().Model; got != "accounts/fireworks/models/llama-v3p1-8b-instruct" {
		t.Errorf("fireworks got model %q", got)
	}
	if got := n.last(t); got != "api.fireworks.ai/inference/v1/chat/completions" {
		t.Errorf("fireworks URL %s", got)
	}
}
