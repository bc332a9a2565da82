package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/modelgate/modelgate/internal/app"
	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
	"github.com/modelgate/modelgate/internal/tokenize"
)

// The fault-injecting vendor: an OpenAI chat completions server (JSON and
// event streams) whose every answer is scripted per request, to walk the
// gateway's failover through each way a vendor fails.

// faultKind is one way a scripted vendor answers.
type faultKind int

const (
	fAnswer    faultKind = iota // a clean completion, or stream
	fStatus                     // an error status with a JSON error body (and Retry-After)
	fReset                      // the connection closed once the request is read, no answer
	fSlow                       // the answer after delay (nothing before; the request's end cuts it short)
	fHang                       // nothing at all until the request ends
	fStall                      // a stream's first chunk, then silence until the request ends
	fCut                        // a stream's first chunks, then the connection closed without [DONE]
	fBadSSE                     // 200 event stream whose first event is not JSON
	fTruncated                  // 200 JSON cut in the middle
	fEmpty                      // 200 with an empty body
	fHTML                       // 200 with an HTML page (a captive portal, a proxy's error page)
	fErrorBody                  // 200 whose JSON body is an OpenAI error object
)

// fault is one scripted answer.
type fault struct {
	kind       faultKind
	status     int           // fStatus
	retryAfter string        // fStatus: the Retry-After header ("" none)
	delay      time.Duration // fSlow
}

// answers is a clean answer.
var answers = fault{kind: fAnswer}

// failing answers code.
func failing(code int) fault { return fault{kind: fStatus, status: code} }

// limited answers 429 with Retry-After.
func limited(retryAfter string) fault {
	return fault{kind: fStatus, status: http.StatusTooManyRequests, retryAfter: retryAfter}
}

// script picks the answer to a vendor's hit-th request (1 for the first),
// sent with the bearer key.
type script func(hit int, key string) fault

// always answers f.
func always(f fault) script { return func(int, string) fault { return f } }

// firstThen fails the first k requests with f, then answers.
func firstThen(k int, f fault) script {
	return func(hit int, _ string) fault {
		if hit <= k {
			return f
		}
		return answers
	}
}

// refusing answers 401 to requests sent with key bad, and the others.
func refusing(bad string) script {
	return func(_ int, key string) fault {
		if key == bad {
			return failing(http.StatusUnauthorized)
		}
		return answers
	}
}

// Every vendor reports this usage for its answer: at the test price ($1
// in, $2 out per million tokens) it costs answerCost.
const (
	answerPrompt     = 1000
	answerCompletion = 500
	answerCost       = money.Micros(answerPrompt + 2*answerCompletion)
)

// cutContent is what an fCut stream sends before it breaks off.
const cutContent = "the answer was going to be"

// faultVendor is a fake vendor running a script. It counts its requests
// and the key each came with, and notes when a request it was holding
// (fSlow, fHang, fStall) ended under it.
type faultVendor struct {
	*httptest.Server
	name   string
	script script

	mu   sync.Mutex
	keys []string // bearer key of each request, in order
	gone chan time.Time
}

func newFaultVendor(t *testing.T, name string, s script) *faultVendor {
	v := &faultVendor{name: name, script: s, gone: make(chan time.Time, 64)}
	v.Server = httptest.NewServer(v)
	t.Cleanup(v.Close)
	return v
}

// hits is how many chat requests reached the vendor.
func (v *faultVendor) hits() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.keys)
}

// sawKey is how many requests came with key.
func (v *faultVendor) sawKey(key string) int {
	v.mu.Lock()
	defer v.mu.Unlock()
	n := 0
	for _, k := range v.keys {
		if k == key {
			n++
		}
	}
	return n
}

// answer is the content of the vendor's answers, telling who answered.
func (v *faultVendor) answer() string { return "answer from " + v.name }

func (v *faultVendor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.NotFound(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, `{"error":{"message":"bad json","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	v.mu.Lock()
	v.keys = append(v.keys, key)
	hit := len(v.keys)
	v.mu.Unlock()

	f := v.script(hit, key)
	switch f.kind {
	case fStatus:
		if f.retryAfter != "" {
			w.Header().Set("Retry-After", f.retryAfter)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(f.status)
		fmt.Fprintf(w, `{"error":{"message":"scripted %d from %s","type":"server_error","code":null}}`, f.status, v.name)
		return
	case fReset:
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			_ = conn.Close()
		}
		return
	case fSlow:
		select {
		case <-time.After(f.delay):
		case <-r.Context().Done():
			v.gone <- time.Now()
			return
		}
	case fHang:
		<-r.Context().Done()
		v.gone <- time.Now()
		return
	case fTruncated:
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"chatcmpl-cut","object":"chat.completion","choices":[{"index":0,`)
		return
	case fEmpty:
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", "0")
		w.WriteHeader(http.StatusOK)
		return
	case fErrorBody:
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"error":{"message":"the model is overloaded","type":"server_error","code":null}}`)
		return
	case fHTML:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, "<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head><body><h1>Bad Gateway</h1></body></html>\n")
		return
	}
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"chatcmpl-%s","object":"chat.completion","created":1700000000,"model":%q,`+
			`"choices":[{"index":0,"message":{"role":"assistant","content":%q,"refusal":null},"logprobs":null,"finish_reason":"stop"}],`+
			`"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`,
			v.name, req.Model, v.answer(), answerPrompt, answerCompletion, answerPrompt+answerCompletion)
		return
	}
	v.stream(w, r, req.Model, f)
}

// stream answers a streamed request (fAnswer, fSlow once its delay passed,
// and the stream faults).
func (v *faultVendor) stream(w http.ResponseWriter, r *http.Request, model string, f fault) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	if f.kind == fBadSSE {
		_, _ = io.WriteString(w, "data: {\"id\":\"chatcmpl-bad\",\"choices\":[{\"delta\":\n\n")
		_ = rc.Flush()
		return
	}
	chunk := func(delta, finish, usage string) {
		fmt.Fprintf(w, `data: {"id":"chatcmpl-%s","object":"chat.completion.chunk","created":1700000000,"model":%q,"choices":[`, v.name, model)
		if delta != "" {
			fmt.Fprintf(w, `{"index":0,"delta":%s,"logprobs":null,"finish_reason":%s}`, delta, finish)
		}
		_, _ = io.WriteString(w, "]")
		if usage != "" {
			_, _ = io.WriteString(w, `,"usage":`+usage)
		}
		_, _ = io.WriteString(w, "}\n\n")
		_ = rc.Flush()
	}
	chunk(`{"role":"assistant","content":""}`, "null", "")
	switch f.kind {
	case fStall:
		<-r.Context().Done()
		v.gone <- time.Now()
		return
	case fCut:
		chunk(fmt.Sprintf(`{"content":%q}`, cutContent), "null", "")
		return
	}
	chunk(fmt.Sprintf(`{"content":%q}`, v.answer()), "null", "")
	chunk(`{}`, `"stop"`, "")
	chunk("", "", fmt.Sprintf(`{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}`,
		answerPrompt, answerCompletion, answerPrompt+answerCompletion))
	_, _ = io.WriteString(w, "data: [DONE]\n\n")
	_ = rc.Flush()
}

// faultModel is the public model of the fault tests that need but one.
const faultModel = "m"

// faultConfig is the base config of a fault gateway, without providers
// (see deploy): retries wait a millisecond or two, and the circuit never
// opens.
func faultConfig(t *testing.T) *config.Config {
	return &config.Config{
		Database:        "sqlite:" + filepath.Join(t.TempDir(), "modelgate.db"),
		Groups:          map[string]config.Group{"default": {Models: []string{"*"}}},
		ShutdownTimeout: config.Duration(5 * time.Second),
		AuthCacheTTL:    config.Duration(time.Nanosecond),
		Usage:           config.Usage{BatchSize: 64, FlushInterval: config.Duration(20 * time.Millisecond)},
		Routing:         config.Routing{Backoff: config.Duration(time.Millisecond), MaxBackoff: config.Duration(2 * time.Millisecond)},
		Circuit:         config.Circuit{Failures: 1 << 20},
	}
}

// deploy adds model to cfg, priced like testConfig's scenario models ($1
// in, $2 out per million tokens), served by the vendors tried in the order
// given (priority 1, 2, ...), each a provider of its name whose silence
// (idle_timeout) ends a try after 500ms.
func deploy(cfg *config.Config, model string, vendors ...*faultVendor) {
	in, out := config.Amount(money.Unit), config.Amount(2*money.Unit)
	cfg.Models = append(cfg.Models, config.ModelConfig{ID: model, Input: &in, Output: &out})
	for i, v := range vendors {
		cfg.Providers = append(cfg.Providers, config.Provider{Name: v.name, Type: "openai", BaseURL: v.URL + "/v1",
			APIKey: "sk-" + v.name, Priority: i + 1, Models: config.ModelList{{ID: model, Upstream: model + "-at-" + v.name}},
			Timeout: config.Duration(5 * time.Second), IdleTimeout: config.Duration(500 * time.Millisecond)})
	}
}

// serveFaults runs a gateway of cfg with a key of the default group.
func serveFaults(t *testing.T, cfg *config.Config) *gateway {
	t.Helper()
	cfg.ApplyDefaults()
	if ps := cfg.Validate(); config.HasErrors(ps) {
		t.Fatalf("fault config: %v", ps)
	}
	g := serveApp(t, cfg, app.Options{Logger: testLogger(t), Version: "test"})
	g.keys["default"] = g.createKey("default", false)
	return g
}

// startFaults runs a gateway serving faultModel by the vendors in turn;
// mutate changes the config first.
func startFaults(t *testing.T, vendors []*faultVendor, mutate ...func(*config.Config)) *gateway {
	t.Helper()
	cfg := faultConfig(t)
	deploy(cfg, faultModel, vendors...)
	for _, m := range mutate {
		m(cfg)
	}
	return serveFaults(t, cfg)
}

// hello is the request every fault test sends.
func hello(model string) oai.ChatCompletionNewParams {
	return oai.ChatCompletionNewParams{Model: model, Messages: []oai.ChatCompletionMessageParamUnion{oai.UserMessage("Hello")}}
}

// record waits for the usage record of the request with id and returns
// it: the handler leaves it as it returns, which may be just after the
// client had its answer, and the recorder flushes every 20ms.
func (g *gateway) record(id string) store.UsageRecord {
	g.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		recs, err := g.app.Store().ListUsage(context.Background(), store.UsageFilter{})
		if err != nil {
			g.t.Fatal(err)
		}
		for _, r := range recs {
			if r.RequestID == id {
				return r
			}
		}
		if time.Now().After(deadline) {
			g.t.Fatalf("no usage record of request %s", id)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// tried is a usage record's attempts as "provider status" strings, with
// the error code of each failed one: "a 500 upstream_error", "b 200". A
// provider's name is cut at its first dot (vendor "a.3" shows as "a").
func tried(r store.UsageRecord) []string {
	var out []string
	for _, a := range store.AttemptsOf(&r) {
		name, _, _ := strings.Cut(a.Provider, ".")
		s := fmt.Sprintf("%s %d", name, a.Status)
		if a.Error != "" {
			code, _, _ := strings.Cut(a.Error, ":")
			s += " " + code
		}
		out = append(out, s)
	}
	return out
}

// promptEstimate is the gateway's own count of hello(model)'s prompt at
// the test price ($1 per million tokens): what a try owes whose vendor had
// the request but whose answer never came (a connection reset, a timeout).
func promptEstimate(t *testing.T, model string) money.Micros {
	t.Helper()
	n, err := testTokens.For("").ChatPrompt([]byte(`{"model":"` + model + `","messages":[{"role":"user","content":"Hello"}]}`))
	if err != nil || n <= 0 {
		t.Fatalf("prompt estimate: %d, %v", n, err)
	}
	return money.Micros(n)
}

// testTokens counts tokens as the gateway does (o200k, approximating the
// unknown vendor of the test models); its vocabulary loads on first use.
var testTokens = tokenize.NewSet()

// ask sends hello(model) through the SDK, streamed or not, and returns
// the answer's content, the raw response, the chunks of a stream and the
// error.
func ask(g *gateway, model string, stream bool) (content string, raw *http.Response, chunks int, err error) {
	c := g.client(g.keys["default"])
	if !stream {
		res, err := c.Chat.Completions.New(context.Background(), hello(model), option.WithResponseInto(&raw))
		if err != nil {
			return "", raw, 0, err
		}
		return res.Choices[0].Message.Content, raw, 0, nil
	}
	s := c.Chat.Completions.NewStreaming(context.Background(), hello(model), option.WithResponseInto(&raw))
	var acc oai.ChatCompletionAccumulator
	for s.Next() {
		acc.AddChunk(s.Current())
		chunks++
	}
	if len(acc.Choices) > 0 {
		content = acc.Choices[0].Message.Content
	}
	return content, raw, chunks, s.Err()
}

// askCtx is ask with the client's context.
func askCtx(ctx context.Context, g *gateway, model string) (*http.Response, error) {
	var raw *http.Response
	c := g.client(g.keys["default"])
	_, err := c.Chat.Completions.New(ctx, hello(model), option.WithResponseInto(&raw))
	return raw, err
}

// askOK sends hello(model) and fails unless want answers it; it returns
// the request's attempts (see tried).
func askOK(t *testing.T, g *gateway, model string, want *faultVendor) []string {
	t.Helper()
	content, raw, _, err := ask(g, model, false)
	if err != nil {
		t.Fatalf("%s: %v", model, err)
	}
	if content != want.answer() {
		t.Fatalf("%s: answer %q, want %q", model, content, want.answer())
	}
	return tried(g.record(raw.Header.Get("X-Request-Id")))
}

// withMetrics serves the metrics on a listener of their own.
func withMetrics(c *config.Config) { c.Metrics = &config.Metrics{Listen: "127.0.0.1:0"} }

// waitMetrics scrapes g's metrics until they hold want (each request is
// counted as its handler returns, which may be after its client is done).
func waitMetrics(t *testing.T, g *gateway, want map[string]float64) {
	t.Helper()
	var got map[string]float64
	for deadline := time.Now().Add(10 * time.Second); ; {
		if got = scrapeMetrics(t, "http://"+g.app.MetricsAddr()+"/metrics"); matches(got, want) {
			return
		}
		if time.Now().After(deadline) {
			for k, v := range want {
				if got[k] != v {
					t.Errorf("%s = %v, want %v", k, got[k], v)
				}
			}
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}
