package app_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/modelgate/modelgate/internal/app"
	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/store"
)

// Every authenticated request that reached the upstream, successful or not,
// leaves exactly one usage record whose request id is the X-Request-Id the
// client saw; one the gateway refused itself (an unknown model) is counted
// per key, reason and minute instead; requests without an authenticated
// key leave none and are counted as refused.
func TestUsageRecords(t *testing.T) {
	g := startGateway(t)
	ctx := context.Background()
	type sent struct {
		id, model string
		status    int
	}
	var all []sent
	do := func(c oai.Client, model string, stream bool) {
		var raw *http.Response
		p := streamParams(model, false)
		if stream {
			s := c.Chat.Completions.NewStreaming(ctx, p, option.WithResponseInto(&raw))
			for s.Next() {
			}
		} else {
			_, _ = c.Chat.Completions.New(ctx, p, option.WithResponseInto(&raw))
		}
		all = append(all, sent{raw.Header.Get("X-Request-Id"), model, raw.StatusCode})
	}
	good := g.client(g.keys["default"])
	const concurrent = 40
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i := range concurrent {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var raw *http.Response
			_, err := good.Chat.Completions.New(ctx, streamParams("demo-chat", false), option.WithResponseInto(&raw))
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			all = append(all, sent{raw.Header.Get("X-Request-Id"), "demo-chat", 200})
			mu.Unlock()
			_ = i
		}()
	}
	wg.Wait()
	do(good, "gpt-4o-mini", false)
	do(good, "gpt-4o-mini", true)
	do(good, "err-500", false)
	do(good, "no-such-model", false)
	do(g.client(g.revoked), "gpt-4o-mini", false)
	for _, tc := range []struct {
		method, path string
		status       int
	}{{"GET", "/v1/nope", 404}, {"GET", "/v1/chat/completions", 405}} {
		req, _ := http.NewRequest(tc.method, g.URL+tc.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		all = append(all, sent{resp.Header.Get("X-Request-Id"), "", tc.status})
	}

	recs := g.usage()
	anon := all[concurrent+4:] // the revoked key, the unknown path, the wrong method
	refusedByKey := all[concurrent+3]
	all = all[:concurrent+3]
	byID := map[string]store.UsageRecord{}
	for _, r := range recs {
		if _, dup := byID[r.RequestID]; dup {
			t.Errorf("two records for %s", r.RequestID)
		}
		byID[r.RequestID] = r
	}
	if len(recs) != len(all) {
		t.Errorf("%d usage records for %d requests", len(recs), len(all))
	}
	for _, s := range all {
		r, ok := byID[s.id]
		if !ok {
			t.Errorf("request %s (%s) left no usage record", s.id, s.model)
			continue
		}
		wantModel := s.model
		if s.status == 401 || s.status == 405 {
			wantModel = "" // the body is not read before the key is checked
		}
		if r.Model != wantModel || r.Status != s.status || r.Latency <= 0 {
			t.Errorf("record %+v for request %+v", r, s)
		}
	}
	ok := byID[all[concurrent].id]
	if ok.Provider != "fake-openai" || ok.UpstreamModel != "gpt-4o-mini-2024-07-18" || ok.PromptTokens != 19 ||
		ok.CompletionTokens != 10 || ok.KeyID == "" || ok.AccountID == "" || ok.Endpoint != "chat.completions" {
		t.Errorf("successful record %+v", ok)
	}
	if r := byID[all[concurrent+2].id]; r.ErrorCode != "upstream_error" || r.Status != 502 {
		t.Errorf("failed record %+v", r)
	}
	if r, ok := byID[refusedByKey.id]; ok {
		t.Errorf("a request for an unknown model left a record %+v", r)
	}
	if got := refusalCounts(g); len(got) != 1 || got["chat.completions 404 model_not_found"] != 1 {
		t.Errorf("refusal counts %v, want the unknown model's", got)
	}
	for _, s := range anon {
		if r, ok := byID[s.id]; ok {
			t.Errorf("a request without an authenticated key left a record %+v", r)
		}
	}
	want := map[string]uint64{"invalid_api_key": 1, "not_found": 1, "method_not_allowed": 1}
	if got := g.app.Refused().Counts(); len(got) != len(want) || got["invalid_api_key"] != 1 ||
		got["not_found"] != 1 || got["method_not_allowed"] != 1 {
		t.Errorf("refused counts %v, want %v", got, want)
	}
}

// SIGTERM's path: in-flight streams finish during the drain and their
// records are written before Run returns.
func TestGracefulDrain(t *testing.T) {
	g := startGateway(t)
	c := g.client(g.keys["default"])
	started := make(chan struct{})
	done := make(chan string, 1)
	go func() {
		s := c.Chat.Completions.NewStreaming(context.Background(), streamParams("paced", false))
		var acc oai.ChatCompletionAccumulator
		first := true
		for s.Next() {
			acc.AddChunk(s.Current())
			if first {
				close(started)
				first = false
			}
		}
		if s.Err() != nil {
			done <- "error: " + s.Err().Error()
			return
		}
		done <- acc.Choices[0].Message.Content
	}()
	<-started
	recs := g.usage() // stops the gateway while the stream is running
	if got := <-done; got != "Hello! How can I assist you today?" {
		t.Fatalf("in-flight stream during shutdown ended with %q", got)
	}
	var found bool
	for _, r := range recs {
		if r.Model == "paced" && r.Status == 200 && r.CompletionTokens == 10 {
			found = true
		}
	}
	if !found {
		t.Fatalf("drained stream has no complete usage record: %+v", recs)
	}
	// New connections are refused once draining is over.
	if _, err := http.Get(g.URL + "/healthz"); err == nil {
		t.Error("server still accepts connections after shutdown")
	}
}

// When the drain period runs out, remaining streams end with an error event
// telling the client to retry, and are still recorded.
func TestDrainTimeout(t *testing.T) {
	g := startGateway(t, func(c *config.Config) {
		c.ShutdownTimeout = config.Duration(200 * time.Millisecond)
		c.Providers[0].Timeout = config.Duration(time.Minute)
	})
	c := g.client(g.keys["default"])
	started := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		s := c.Chat.Completions.NewStreaming(context.Background(), streamParams("endless", false))
		first := true
		for s.Next() {
			if first {
				close(started)
				first = false
			}
		}
		errc <- s.Err()
	}()
	<-started
	recs := g.usage()
	if err := <-errc; err == nil || !strings.Contains(err.Error(), "shutting_down") {
		t.Fatalf("stream cut by shutdown ended with %v", err)
	}
	for _, r := range recs {
		if r.Model == "endless" && r.ErrorCode == "shutting_down" {
			return
		}
	}
	t.Fatalf("no shutting_down record: %+v", recs)
}

// The first start creates one account and key and prints the key once.
func TestBootstrapOnce(t *testing.T) {
	dir := t.TempDir()
	cfg := config.Default()
	cfg.Database = "sqlite:" + dir + "/mg.db"
	var printed []string
	for i := range 2 {
		var out bytes.Buffer
		a, err := app.New(context.Background(), cfg, app.Options{Out: &out})
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Bootstrap(context.Background(), "127.0.0.1:8080"); err != nil {
			t.Fatal(err)
		}
		printed = append(printed, out.String())
		if i == 0 {
			keys, _ := a.Store().ListKeys(context.Background())
			if len(keys) != 1 || keys[0].Group != "default" || keys[0].AccountName != "default" {
				t.Fatalf("bootstrap keys: %+v", keys)
			}
		}
		_ = a.Close()
	}
	if !strings.Contains(printed[0], "sk-mg-") || printed[1] != "" {
		t.Fatalf("first start printed %q, second %q", printed[0], printed[1])
	}
	// The printed key works against the demo provider.
	key := printed[0][strings.Index(printed[0], "sk-mg-"):]
	key = key[:strings.IndexAny(key, " \n")]
	a, err := app.New(context.Background(), cfg, app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	req, _ := http.NewRequest("POST", "/v1/chat/completions",
		strings.NewReader(`{"model":"demo-chat","messages":[{"role":"user","content":"Hello!"}]}`))
	req.Header.Set("Authorization", "Bearer "+key)
	rec := httptest.NewRecorder()
	a.Handler().ServeHTTP(rec, req)
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "modelgate demo") {
		t.Fatalf("demo chat with the printed key: %d %s", rec.Code, rec.Body.String())
	}
}
