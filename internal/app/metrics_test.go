package app_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"

	"github.com/modelgate/modelgate/internal/config"
)

// TestMetricsEndToEnd: a chat, a stream, an unknown model, a bad key, a
// vendor's error and a public GET /metrics, then one scrape of the metrics
// listener shows each where it belongs, with bounded labels.
func TestMetricsEndToEnd(t *testing.T) {
	g := startGateway(t, func(c *config.Config) { c.Metrics = &config.Metrics{Listen: "127.0.0.1:0"} })
	addr := g.app.MetricsAddr()
	if addr == "" {
		t.Fatal("MetricsAddr is empty with metrics.listen set")
	}
	ctx := context.Background()
	c := g.client(g.keys["default"])
	msg := []oai.ChatCompletionMessageParamUnion{oai.UserMessage("Hello")}

	res, err := c.Chat.Completions.New(ctx, oai.ChatCompletionNewParams{Model: "gpt-4o-mini", Messages: msg})
	if err != nil {
		t.Fatal(err)
	}
	prompt, completion := res.Usage.PromptTokens, res.Usage.CompletionTokens
	s := c.Chat.Completions.NewStreaming(ctx, streamParams("gpt-4o-mini", true))
	var acc oai.ChatCompletionAccumulator
	for s.Next() {
		acc.AddChunk(s.Current())
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	prompt, completion = prompt+acc.Usage.PromptTokens, completion+acc.Usage.CompletionTokens
	_, err = c.Chat.Completions.New(ctx, oai.ChatCompletionNewParams{Model: "no-such-model", Messages: msg})
	apiError(t, err, http.StatusNotFound, "model_not_found")
	bad := g.client("sk-not-a-key")
	_, err = bad.Chat.Completions.New(ctx, oai.ChatCompletionNewParams{Model: "gpt-4o-mini", Messages: msg})
	apiError(t, err, http.StatusUnauthorized, "invalid_api_key")
	_, err = c.Chat.Completions.New(ctx, oai.ChatCompletionNewParams{Model: "err-500", Messages: msg})
	var vendor *oai.Error
	if !errors.As(err, &vendor) {
		t.Fatalf("err-500: want an API error, got %v", err)
	}
	if st, _ := get(t, g.URL+"/metrics"); st != http.StatusNotFound {
		t.Errorf("public GET /metrics = %d, want 404", st)
	}

	want := map[string]float64{
		`modelgate_requests_total{endpoint="chat.completions",model="gpt-4o-mini",provider="fake-openai",status="200"}`:                            2,
		`modelgate_requests_total{endpoint="chat.completions",model="other",provider="none",status="404"}`:                                         1,
		`modelgate_requests_total{endpoint="chat.completions",model="other",provider="none",status="401"}`:                                         1,
		`modelgate_requests_total{endpoint="unknown",model="other",provider="none",status="404"}`:                                                  1,
		fmt.Sprintf(`modelgate_requests_total{endpoint="chat.completions",model="err-500",provider="fake-openai",status="%d"}`, vendor.StatusCode): 1,
		`modelgate_upstream_errors_total{provider="fake-openai",status="500"}`:                                                                     1,
		`modelgate_tokens_total{kind="prompt",model="gpt-4o-mini",provider="fake-openai"}`:                                                         float64(prompt),
		`modelgate_tokens_total{kind="completion",model="gpt-4o-mini",provider="fake-openai"}`:                                                     float64(completion),
		`modelgate_time_to_first_token_seconds_count{model="gpt-4o-mini",provider="fake-openai"}`:                                                  1,
		`modelgate_request_duration_seconds_count{endpoint="chat.completions",model="gpt-4o-mini",provider="fake-openai"}`:                         2,
		`modelgate_streams_in_flight`: 0,
		`modelgate_refusals_total{authenticated="false",reason="invalid_api_key"}`: 1,
		`modelgate_refusals_total{authenticated="false",reason="not_found"}`:       1,
		`modelgate_refusals_total{authenticated="true",reason="model_not_found"}`:  1,
	}
	// Each request is counted as its handler returns, which may be just
	// after the client has its answer: scrape until all are in.
	var got map[string]float64
	for deadline := time.Now().Add(10 * time.Second); ; {
		got = scrapeMetrics(t, "http://"+addr+"/metrics")
		if matches(got, want) || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	if cost := got[`modelgate_cost_micros_total{model="gpt-4o-mini",provider="fake-openai"}`]; cost <= 0 {
		t.Errorf("cost of the answered requests = %v, want > 0", cost)
	}
	if prompt == 0 || completion == 0 {
		t.Errorf("the fake upstream reported no usage (%d, %d): the token assertions prove nothing", prompt, completion)
	}
	for k := range got {
		if strings.Contains(k, "no-such-model") || strings.Contains(k, "sk-not-a-key") {
			t.Errorf("a client's value became a label: %s", k)
		}
	}
	if _, ok := got["go_goroutines"]; !ok {
		t.Error("the Go collector is missing")
	}
	if st, _ := get(t, "http://"+addr+"/v1/models"); st != http.StatusNotFound {
		t.Errorf("the metrics listener serves /v1/models: %d", st)
	}
}

// TestMetricsOff: no metrics section, no listener.
func TestMetricsOff(t *testing.T) {
	g := startGateway(t)
	if a := g.app.MetricsAddr(); a != "" {
		t.Errorf("MetricsAddr = %q without metrics.listen", a)
	}
}

// TestReadyz: ready while the database answers, 503 in the OpenAI error
// shape once it cannot; /healthz (process alive) is unchanged.
func TestReadyz(t *testing.T) {
	g := startGateway(t)
	if st, body := get(t, g.URL+"/readyz"); st != http.StatusOK || body != "ready\n" {
		t.Errorf("/readyz = %d %q, want 200 ready", st, body)
	}
	if err := g.app.Store().Close(); err != nil {
		t.Fatal(err)
	}
	st, body := get(t, g.URL+"/readyz")
	if st != http.StatusServiceUnavailable || !strings.Contains(body, `"code":"not_ready"`) {
		t.Errorf("/readyz with the store closed = %d %s, want 503 not_ready", st, body)
	}
	if st, body := get(t, g.URL+"/healthz"); st != http.StatusOK || body != "ok\n" {
		t.Errorf("/healthz = %d %q", st, body)
	}
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, string(b)
}

// scrapeMetrics reads the exposition text into sample name{labels} → value.
func scrapeMetrics(t *testing.T, url string) map[string]float64 {
	t.Helper()
	st, body := get(t, url)
	if st != http.StatusOK {
		t.Fatalf("scrape: %d %s", st, body)
	}
	out := map[string]float64{}
	for line := range strings.Lines(body) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("scrape: bad line %q", line)
		}
		out[line[:i]] = v
	}
	return out
}

func matches(got, want map[string]float64) bool {
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

// TestMetricsStreamsInFlight: a stream being relayed is in flight until
// its client leaves.
func TestMetricsStreamsInFlight(t *testing.T) {
	g := startGateway(t, func(c *config.Config) { c.Metrics = &config.Metrics{Listen: "127.0.0.1:0"} })
	url := "http://" + g.app.MetricsAddr() + "/metrics"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := g.client(g.keys["default"])
	s := c.Chat.Completions.NewStreaming(ctx, streamParams("endless", false))
	if !s.Next() {
		t.Fatalf("no first chunk: %v", s.Err())
	}
	const gauge = "modelgate_streams_in_flight"
	if got := scrapeMetrics(t, url)[gauge]; got != 1 {
		t.Errorf("%s during a stream = %v, want 1", gauge, got)
	}
	cancel()
	_ = s.Close()
	var got float64
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if got = scrapeMetrics(t, url)[gauge]; got == 0 || time.Now().After(deadline) {
			break
		}
	}
	if got != 0 {
		t.Errorf("%s after the client left = %v, want 0", gauge, got)
	}
	left := `modelgate_requests_total{endpoint="chat.completions",model="endless",provider="fake-openai",status="499"}`
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if got = scrapeMetrics(t, url)[left]; got == 1 || time.Now().After(deadline) {
			break
		}
	}
	if got != 1 {
		t.Errorf("%s = %v, want 1", left, got)
	}
}
