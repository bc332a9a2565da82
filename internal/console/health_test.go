package console

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/console/web"
	"github.com/modelgate/modelgate/internal/store"
)

type healthOperator struct{ Operator }

func (healthOperator) Providers() []web.AdminProvider {
	return []web.AdminProvider{{Name: "openai-a"}, {Name: "openai-b"}}
}

// The providers page counts only what upstreams answered: a request the
// gateway refused before calling one (no balance, a rate limit, an unknown
// model, a bad parameter) has no attempt and counts for no provider; an
// upstream's 5xx, 429 and no answer at all are its errors, its 400 is the
// client's; a retried request counts for each provider it tried.
func TestProviderHealthCountsUpstreamOutcomes(t *testing.T) {
	e := newEnv(t)
	e.c.Operator = healthOperator{}
	now := e.clock.Now()
	var recs []store.UsageRecord
	for i, r := range []struct {
		provider string
		status   int
		code     string
		attempts []store.Attempt
	}{
		{"openai-a", http.StatusOK, "", nil},                                 // one try that answered
		{"", http.StatusTooManyRequests, "insufficient_quota", nil},          // the gateway's: no balance
		{"", http.StatusTooManyRequests, "rate_limit_exceeded", nil},         // the gateway's rate limit
		{"openai-a", http.StatusTooManyRequests, "rate_limit_exceeded", nil}, // refused, no try stored
		{"", http.StatusNotFound, "model_not_found", nil},
		{"", http.StatusBadRequest, "invalid_request_error", nil},
		{"openai-a", http.StatusServiceUnavailable, "upstream_unavailable", []store.Attempt{{Provider: "openai-a", Status: 529, Error: "overloaded"}}},
		{"openai-b", http.StatusOK, "", []store.Attempt{{Provider: "openai-a", Error: "connection refused"}, {Provider: "openai-b", Status: 200}}},
		{"openai-a", http.StatusBadRequest, "context_length_exceeded", []store.Attempt{{Provider: "openai-a", Status: 400, Error: "too long"}}},
		{"openai-a", http.StatusTooManyRequests, "rate_limit_exceeded", []store.Attempt{{Provider: "openai-a", Status: 429, Error: "vendor rate limit"}}},
	} {
		recs = append(recs, store.UsageRecord{RequestID: "req_" + string(rune('a'+i)), Time: now.Add(time.Duration(i) * time.Second),
			AccountID: "acct_1", KeyID: "key_1", Endpoint: "chat.completions", Model: "gpt-4o-mini", Provider: r.provider,
			Status: r.status, ErrorCode: r.code, Attempts: r.attempts})
	}
	e.clock.Add(time.Minute)
	if err := e.st.InsertUsage(context.Background(), recs); err != nil {
		t.Fatal(err)
	}
	ps, err := e.c.providerHealth(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []web.AdminProvider{
		{Name: "openai-a", Requests: 5, Errors: 3, Health: "errors", LastError: "vendor rate limit"},
		{Name: "openai-b", Requests: 1, Health: "ok"},
	}
	if len(ps) != len(want) {
		t.Fatalf("providers = %+v", ps)
	}
	for i, w := range want {
		p := ps[i]
		if p.Name != w.Name || p.Requests != w.Requests || p.Errors != w.Errors || p.Health != w.Health || p.LastError != w.LastError {
			t.Errorf("provider %d = %+v, want %+v", i, p, w)
		}
	}
}
