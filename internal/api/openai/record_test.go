package openai

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/gate"
	"github.com/modelgate/modelgate/internal/lifecycle"
	"github.com/modelgate/modelgate/internal/reqinfo"
	"github.com/modelgate/modelgate/internal/route"
	"github.com/modelgate/modelgate/internal/store"
)

// keyAuth accepts only "Bearer good".
type keyAuth struct{}

func (keyAuth) Authenticate(_ context.Context, header string) (gate.Principal, error) {
	if header != "Bearer good" {
		return gate.Principal{}, apierr.InvalidAPIKey(nil)
	}
	return gate.Principal{KeyID: "key_1", AccountID: "acct_1", Group: "default"}, nil
}

type memRecorder struct {
	mu   sync.Mutex
	recs []store.UsageRecord
}

func (r *memRecorder) Record(u store.UsageRecord) {
	r.mu.Lock()
	r.recs = append(r.recs, u)
	r.mu.Unlock()
}

type memRefusals struct {
	mu      sync.Mutex
	reasons map[string]int
	remotes []string
}

func (m *memRefusals) Add(reason, remote string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.reasons == nil {
		m.reasons = map[string]int{}
	}
	m.reasons[reason]++
	m.remotes = append(m.remotes, remote)
}

// A request without an authenticated account leaves no usage record but
// is counted by its error code, with the client's address; one with an
// account leaves its record, refused or not, and is not counted.
func TestUnauthenticatedNotRecorded(t *testing.T) {
	rec, ref := &memRecorder{}, &memRefusals{}
	h := &Handler{Core: &lifecycle.Core{Auth: keyAuth{}, Usage: rec, Refused: ref, MaxBody: 1 << 20,
		Policy: gate.NewPolicy(map[string][]string{"default": {"*"}}, nil), Router: route.New(nil)}}
	mux := http.NewServeMux()
	h.Routes(mux)
	do := func(method, path, auth string) int {
		r := httptest.NewRequest(method, path, strings.NewReader(`{}`))
		r.RemoteAddr = "192.0.2.1:1234"
		r = r.WithContext(reqinfo.With(r.Context(), &reqinfo.Info{ID: "req_" + path, Remote: r.RemoteAddr}))
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, r)
		return w.Code
	}
	for _, tc := range []struct {
		method, path, auth string
		status             int
	}{
		{"GET", "/v1/nope", "", 404},
		{"GET", "/v1/nope", "Bearer good", 404}, // unknown paths are refused before the key is read
		{"GET", "/v1/chat/completions", "Bearer good", 405},
		{"POST", "/v1/chat/completions", "", 401},
		{"GET", "/v1/models", "Bearer bad", 401},
		{"POST", "/v1/embeddings", "Bearer bad", 401},
	} {
		if got := do(tc.method, tc.path, tc.auth); got != tc.status {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.path, got, tc.status)
		}
	}
	if len(rec.recs) != 0 {
		t.Errorf("%d usage records for unauthenticated requests: %+v", len(rec.recs), rec.recs)
	}
	want := map[string]int{"not_found": 2, "method_not_allowed": 1, "invalid_api_key": 3}
	for reason, n := range want {
		if ref.reasons[reason] != n {
			t.Errorf("reason %s counted %d times, want %d (all: %v)", reason, ref.reasons[reason], n, ref.reasons)
		}
	}
	if len(ref.reasons) != len(want) || ref.remotes[0] != "192.0.2.1:1234" {
		t.Errorf("counted %v from %v", ref.reasons, ref.remotes)
	}

	// Authenticated: not counted; a refusal after the key is recorded (no
	// key refusal counter here), the model list, which uses no model, is not.
	if got := do("GET", "/v1/models", "Bearer good"); got != 200 {
		t.Fatalf("models: %d", got)
	}
	if len(rec.recs) != 0 {
		t.Errorf("the model list left a usage record: %+v", rec.recs)
	}
	if got := do("POST", "/v1/chat/completions", "Bearer good"); got != 400 {
		t.Fatalf("bad chat: %d", got)
	}
	if len(rec.recs) != 1 || rec.recs[0].AccountID != "acct_1" || rec.recs[0].Status != 400 {
		t.Errorf("records %+v", rec.recs)
	}
	if len(ref.remotes) != 6 {
		t.Errorf("authenticated requests were counted as refused: %v", ref.reasons)
	}

	// Without a counter nothing breaks and nothing is stored.
	h.Refused = nil
	if got := do("GET", "/nope", ""); got != 404 || len(rec.recs) != 1 {
		t.Errorf("without a counter: %d, %d records", got, len(rec.recs))
	}
}

// A request leaves one usage record however often record runs for it: the
// usage store's hot path does not look for stored request ids.
func TestRecordOncePerRequest(t *testing.T) {
	for _, tc := range []struct {
		name    string
		account string
		records int
		refused int
	}{
		{"with an account", "acct_1", 1, 0},
		{"without an account", "", 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec, ref := &memRecorder{}, &memRefusals{}
			h := &Handler{Core: &lifecycle.Core{Usage: rec, Refused: ref}}
			info := &reqinfo.Info{ID: "req_1", AccountID: tc.account, Status: 404}
			for range 3 {
				h.Record(info, &lifecycle.Outcome{})
			}
			if len(rec.recs) != tc.records || len(ref.remotes) != tc.refused {
				t.Errorf("%d records and %d refusals, want %d and %d", len(rec.recs), len(ref.remotes), tc.records, tc.refused)
			}
		})
	}
}
