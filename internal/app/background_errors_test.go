package app_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestBackgroundCancelBadInput: POST /v1/responses/{id}/cancel refuses a
// malformed id, a query it does not take and other methods, in the
// OpenAI error shape, with no upstream call and no charge; an id the
// caller's account did not create is 404.
func TestBackgroundCancelBadInput(t *testing.T) {
	g, _ := startBackgroundGateway(t, newClock())
	key := g.keys["default"]
	st := g.app.Store()
	acct := accountOf(t, st, key)
	before := balance(t, st, acct)
	calls := len(g.upstream.Received())
	for _, tc := range []struct {
		name, method, path string
		status             int
		code, param        string
	}{
		{"malformed id", http.MethodPost, "/v1/responses/resp%2E%2E%20x/cancel", 400, "invalid_request_error", "response_id"},
		{"unknown parameter", http.MethodPost, "/v1/responses/resp_1/cancel?include[]=x", 400, "unknown_parameter", "include[]"},
		{"model twice", http.MethodPost, "/v1/responses/resp_1/cancel?model=deep&model=deep", 400, "invalid_request_error", "model"},
		{"unknown model", http.MethodPost, "/v1/responses/resp_1/cancel?model=nope", 404, "model_not_found", "model"},
		{"not the caller's", http.MethodPost, "/v1/responses/resp_1/cancel", 404, "not_found", ""},
		{"GET", http.MethodGet, "/v1/responses/resp_1/cancel", 405, "method_not_allowed", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, g.URL+tc.path, nil)
			req.Header.Set("Authorization", "Bearer "+key)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			body := string(b)
			if resp.StatusCode != tc.status || !strings.Contains(body, `"code":"`+tc.code+`"`) ||
				(tc.param != "" && !strings.Contains(body, `"param":"`+tc.param+`"`)) {
				t.Errorf("%d %s", resp.StatusCode, body)
			}
		})
	}
	if n := len(g.upstream.Received()); n != calls {
		t.Errorf("%d requests reached the vendor", n-calls)
	}
	if b := balance(t, st, acct); b != before {
		t.Errorf("charged %v", before-b)
	}
}
