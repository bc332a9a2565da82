package app

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/config"
)

// TestNotFoundLogTransport checks the upstream transport's 404 log: a POST
// is logged with the provider and a URL whose key is masked, a GET (a stored
// response that is not there) and other statuses are not, and the response
// reaches the adapter untouched.
func TestNotFoundLogTransport(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "found") {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error":{"message":"no such model"}}`))
			return
		}
		w.WriteHeader(http.StatusBadRequest)
	}))
	defer srv.Close()
	var logs bytes.Buffer
	hc := upstreamClient(config.Provider{Name: "gem"}, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})

	send := func(method, path string) *http.Response {
		req, err := http.NewRequestWithContext(context.Background(), method, srv.URL+path, strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		if resp.StatusCode == http.StatusNotFound && b.String() != `{"error":{"message":"no such model"}}` {
			t.Errorf("body changed: %q", b.String())
		}
		return resp
	}
	send(http.MethodPost, "/v1beta/models/notfound:generateContent?key=AIzaSecret&alt=sse")
	out := logs.String()
	for _, want := range []string{"level=ERROR", "configuration error", "provider=gem",
		"url=\"" + srv.URL + "/v1beta/models/notfound:generateContent?alt=sse&key=***\"", "status=404"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q: %s", want, out)
		}
	}
	if strings.Contains(out, "AIzaSecret") {
		t.Errorf("the key reached the log: %s", out)
	}
	logs.Reset()
	send(http.MethodGet, "/v1/responses/notfound")
	send(http.MethodPost, "/v1/chat/completions")
	if logs.Len() != 0 {
		t.Errorf("logged: %s", logs.String())
	}
}
