package openai

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/gate"
	"github.com/modelgate/modelgate/internal/lifecycle"
	"github.com/modelgate/modelgate/internal/ratelimit"
	"github.com/modelgate/modelgate/internal/route"
)

// TestRateLimitAnswers drives the handler with a fake clock: what each
// request of a key limited to 3 requests a minute (its group's 2
// overridden) gets, status, Retry-After and headers.
func TestRateLimitAnswers(t *testing.T) {
	chunk := []byte(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"x"},"finish_reason":null}]}`)
	start := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	now := start
	h := &Handler{Core: &lifecycle.Core{Auth: benchAuth{limits: gate.Limits{RPM: 3}}, Usage: &benchRecorder{}, MaxBody: 1 << 20, Now: func() time.Time { return now },
		Policy: gate.NewPolicy(map[string][]string{"default": {"*"}}, []string{"gpt-4o-mini"}).
			WithRules(map[string]gate.Rules{"default": {Limits: gate.Limits{RPM: 2, Concurrency: 5}}}),
		Router:     route.New([]route.Deployment{{Provider: "p", Chatter: benchChatter{[][]byte{chunk}}, Model: "gpt-4o-mini", Upstream: "gpt-4o-mini"}}),
		RateLimits: &lifecycle.RateLimits{Requests: ratelimit.NewMemory(), Tokens: ratelimit.NewMemory(), Running: ratelimit.NewSlots()}}}
	mux := http.NewServeMux()
	h.Routes(mux)
	for i, st := range []struct {
		at         time.Duration
		status     int
		remaining  string
		reset      string
		retryAfter string
	}{
		{0, http.StatusOK, "2", "1m0s", ""},
		{0, http.StatusOK, "1", "1m0s", ""},
		{0, http.StatusOK, "0", "1m0s", ""},
		{5 * time.Second, http.StatusTooManyRequests, "0", "55s", "55"},
		{19*time.Second + 500*time.Millisecond, http.StatusTooManyRequests, "0", "40.5s", "41"},
		{time.Minute, http.StatusOK, "2", "1m0s", ""},
		{time.Minute + 30*time.Millisecond, http.StatusOK, "1", "1m0.07s", ""},
		{3 * time.Minute, http.StatusOK, "2", "1m0s", ""},
	} {
		now = start.Add(st.at)
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", bytes.NewReader([]byte(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`)))
		r.Header.Set("Authorization", "Bearer sk-x")
		mux.ServeHTTP(w, r)
		hd := w.Header()
		if w.Code != st.status || hd.Get("X-Ratelimit-Limit-Requests") != "3" || hd.Get("X-Ratelimit-Remaining-Requests") != st.remaining ||
			hd.Get("X-Ratelimit-Reset-Requests") != st.reset || hd.Get("Retry-After") != st.retryAfter {
			t.Errorf("request %d at %v: %d, headers %v; want %d, remaining %s, reset %s, Retry-After %q",
				i, st.at, w.Code, hd, st.status, st.remaining, st.reset, st.retryAfter)
		}
		if st.status == http.StatusTooManyRequests {
			var body struct {
				Error struct{ Type, Code string }
			}
			if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || body.Error.Type != "requests" || body.Error.Code != "rate_limit_exceeded" {
				t.Errorf("request %d: body %s", i, w.Body)
			}
		}
	}
	// Every request ended: the concurrency slots are all back.
	for i := range 5 {
		if !h.RateLimits.Running.Acquire("key_1", 5) {
			t.Fatalf("only %d of 5 running slots free: a request never gave its slot back", i)
		}
	}
}
