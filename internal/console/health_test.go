package console

import (
	"context"
	"net/http"
	"testing"

	"github.com/modelgate/modelgate/internal/console/web"
	"github.com/modelgate/modelgate/internal/store"
)

type healthOperator struct{ Operator }

func (healthOperator) Providers() []web.AdminProvider {
	return []web.AdminProvider{{Name: "openai-a"}}
}

// The providers page counts only upstream outcomes as the provider's
// errors: a gateway-side 429 insufficient_quota (no balance) is not one;
// the vendor's 429 and 5xx are; the client's 400 is not.
func TestProviderHealthCountsUpstreamOutcomes(t *testing.T) {
	e := newEnv(t)
	e.c.Operator = healthOperator{}
	now := e.clock.Now()
	var recs []store.UsageRecord
	for i, r := range []struct {
		status int
		code   string
	}{
		{http.StatusOK, ""},
		{http.StatusTooManyRequests, "insufficient_quota"},  // the gateway's: no balance
		{http.StatusTooManyRequests, "rate_limit_exceeded"}, // the vendor's rate limit
		{http.StatusBadGateway, "upstream_error"},
		{http.StatusServiceUnavailable, "upstream_unavailable"}, // the vendor's own insufficient_quota
		{http.StatusBadRequest, "invalid_request_error"},
	} {
		recs = append(recs, store.UsageRecord{RequestID: "req_" + string(rune('a'+i)), Time: now, AccountID: "acct_1", KeyID: "key_1",
			Endpoint: "chat.completions", Model: "gpt-4o-mini", Provider: "openai-a", Status: r.status, ErrorCode: r.code})
	}
	if err := e.st.InsertUsage(context.Background(), recs); err != nil {
		t.Fatal(err)
	}
	ps, err := e.c.providerHealth(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 1 || ps[0].Requests != 6 || ps[0].Errors != 3 {
		t.Fatalf("providers = %+v, want openai-a with 6 requests and 3 errors", ps)
	}
}
