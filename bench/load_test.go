package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i))
	}
	for _, c := range []struct {
		p    float64
		want time.Duration
	}{{0.5, 50}, {0.99, 99}, {1, 100}, {0.001, 1}} {
		if got := percentile(d, c.p); got != c.want {
			t.Errorf("percentile(1..100, %v) = %v, want %v", c.p, got, c.want)
		}
	}
	if got := percentile(nil, 0.5); got != 0 {
		t.Errorf("percentile(nil) = %v, want 0", got)
	}
	if got := percentile([]time.Duration{7}, 0.99); got != 7 {
		t.Errorf("percentile([7], 0.99) = %v, want 7", got)
	}
}

func TestMedian(t *testing.T) {
	xs := []float64{3, 1, 2}
	if got := median(xs); got != 2 {
		t.Errorf("median(3,1,2) = %v, want 2", got)
	}
	if xs[0] != 3 {
		t.Error("median sorted its argument")
	}
	if got := median([]float64{4, 1, 3, 2}); got != 2.5 {
		t.Errorf("median(4,1,3,2) = %v, want 2.5", got)
	}
	if got := median([]time.Duration{}); got != 0 {
		t.Errorf("median() = %v, want 0", got)
	}
}

func TestSummarize(t *testing.T) {
	open := time.Now()
	w1 := &worker{lat: []time.Duration{3, 1}, ttfb: []time.Duration{1, 1}, errs: 1, msgs: []string{"boom"}}
	w2 := &worker{lat: []time.Duration{2, 4}, ttfb: []time.Duration{2, 2}}
	r := summarize([]*worker{w1, w2}, open, open.Add(2*time.Second))
	if r.Requests != 4 || r.RPS != 2 || r.P50 != 2 || r.P99 != 4 || r.TTFB50 != 1 || r.Errors != 1 || len(r.FirstErrors) != 1 {
		t.Errorf("summarize = %+v", r)
	}
}

func sse(events ...string) string {
	var b strings.Builder
	for _, e := range events {
		b.WriteString("data: " + e + "\n\n")
	}
	return b.String()
}

func TestReadSSE(t *testing.T) {
	for _, c := range []struct {
		name, body string
		want       int
		err        string
	}{
		{"ok", sse(`{"a":1}`, `{"a":2}`, "[DONE]"), 2, ""},
		{"ok any count", ": comment\nevent: x\r\n" + sse(`{"a":1}`, "[DONE]"), 0, ""},
		{"no done", sse(`{"a":1}`), 0, "without [DONE]"},
		{"wrong count", sse(`{"a":1}`, "[DONE]"), 2, "want 2"},
		{"malformed", sse(`{"a":1`, "[DONE]"), 0, "malformed"},
		{"after done", sse("[DONE]", `{"a":1}`), 0, "after [DONE]"},
	} {
		ttfb, err := readSSE(bufio.NewReader(strings.NewReader(c.body)), time.Now(), c.want)
		if c.err == "" && (err != nil || ttfb <= 0) {
			t.Errorf("%s: ttfb %v, err %v", c.name, ttfb, err)
		}
		if c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s: err %v, want one containing %q", c.name, err, c.err)
		}
	}
}

// TestClientAgainstUpstream drives the real load loop, briefly, against
// the mock upstream, chat and Messages, and checks that its answers
// satisfy the client.
func TestClientAgainstUpstream(t *testing.T) {
	srv := httptest.NewServer(newUpstream().handler())
	defer srv.Close()
	client := newClient(2)
	ps, _, _ := selectPasses("non-stream,stream,messages,messages-stream")
	for _, p := range ps {
		s := p.requestFor(target{name: "modelgate"}).spec(srv.URL, []string{"k"})
		s.Clients, s.Warmup, s.Duration = 2, 20*time.Millisecond, 150*time.Millisecond
		r := runLoad(context.Background(), client, s)
		if r.Errors != 0 || r.Requests == 0 || r.P50 <= 0 || r.TTFB50 <= 0 || r.TTFB50 > r.P99 {
			t.Errorf("%s: %+v", p.name, r)
		}
	}
}

// TestBareProxy sends both kinds of requests through the bare proxy.
func TestBareProxy(t *testing.T) {
	up := httptest.NewServer(newUpstream().handler())
	defer up.Close()
	h, err := newBareProxy(up.URL)
	if err != nil {
		t.Fatal(err)
	}
	px := httptest.NewServer(h)
	defer px.Close()
	client := newClient(4)
	for _, stream := range []bool{false, true} {
		r := runLoad(context.Background(), client, loadSpec{
			URL: px.URL + "/v1/chat/completions", Body: requestBody(stream), Stream: stream,
			Events: streamEvents, Clients: 4, Duration: 200 * time.Millisecond,
		})
		if r.Errors != 0 || r.Requests == 0 {
			t.Errorf("stream=%v: %+v", stream, r)
		}
	}
}

// TestUpstreamUsageChunk checks that the mock sends the usage-only chunk
// (and "usage":null elsewhere) only when asked, as OpenAI does.
func TestUpstreamUsageChunk(t *testing.T) {
	srv := httptest.NewServer(newUpstream().handler())
	defer srv.Close()
	body := `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`
	resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if _, err := readSSE(bufio.NewReader(strings.NewReader(string(b))), time.Now(), streamEvents+1); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"choices":[],"usage":{"prompt_tokens":1,`) || !strings.Contains(string(b), `"usage":null`) {
		t.Errorf("no usage chunk in:\n%s", b)
	}
	if !strings.Contains(string(b), `"model":"m"`) {
		t.Errorf("model not echoed in:\n%s", b)
	}

	resp, err = http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"m"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("request without messages: status %d, want 400", resp.StatusCode)
	}
}

// TestKeysTakenInTurn: each client sends its requests with the keys in
// turn, the clients starting at keys spread over the list.
func TestKeysTakenInTurn(t *testing.T) {
	up := newUpstream().handler()
	var mu sync.Mutex
	seen := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.Header.Get("Authorization")]++
		mu.Unlock()
		up.ServeHTTP(w, r)
	}))
	defer srv.Close()
	for _, tc := range []struct {
		keys    []string
		clients int
		first   []int // each client's first key
	}{
		{[]string{"k"}, 2, []int{0, 0}},
		{[]string{"a", "b", "c", "d"}, 2, []int{0, 2}},
		{[]string{"a", "b", "c", "d", "e", "f"}, 3, []int{0, 2, 4}},
	} {
		s := loadSpec{URL: srv.URL + "/v1/chat/completions", Keys: tc.keys, Body: requestBody(false), Clients: tc.clients}
		for i, want := range tc.first {
			if got := newWorker(&s, i).next; got != want {
				t.Errorf("%d keys, %d clients: client %d starts at key %d, want %d", len(tc.keys), tc.clients, i, got, want)
			}
		}
		seen = map[string]int{}
		s.Warmup, s.Duration = 10*time.Millisecond, time.Second // long enough for a request on a busy machine
		if r := runLoad(context.Background(), newClient(tc.clients), s); r.Errors != 0 || r.Requests == 0 {
			t.Fatalf("%d keys: %+v", len(tc.keys), r)
		}
		mu.Lock()
		if len(seen) != len(tc.keys) {
			t.Errorf("%d keys: the upstream saw %v", len(tc.keys), seen)
		}
		for _, k := range tc.keys {
			if seen["Bearer "+k] == 0 {
				t.Errorf("key %q never sent (saw %v)", k, seen)
			}
		}
		mu.Unlock()
	}
}
