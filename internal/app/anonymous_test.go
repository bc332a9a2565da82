package app_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/modelgate/modelgate/internal/app"
	"github.com/modelgate/modelgate/internal/provider/providertest"
)

// Requests nobody authenticated (unknown paths, wrong methods, missing,
// unknown or revoked keys) leave no usage record: 3,000 of them must not
// grow the database by a row.
func TestAnonymousRequestsLeaveNoUsage(t *testing.T) {
	g := startGateway(t)
	const n = 3000
	kinds := []struct {
		method, path, key string
		status            int
	}{
		{"GET", "/v1/nope", "", 404},
		{"POST", "/admin/%d", "", 404},
		{"GET", "/v1/chat/completions", "", 405},
		{"POST", "/v1/chat/completions", "", 401},
		{"POST", "/v1/chat/completions", "sk-mg-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", 401},
		{"GET", "/v1/models", "revoked", 401},
	}
	var wg sync.WaitGroup
	jobs := make(chan int)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				k := kinds[i%len(kinds)]
				path := k.path
				if strings.Contains(path, "%d") {
					path = fmt.Sprintf(path, i)
				}
				req, _ := http.NewRequest(k.method, g.URL+path, strings.NewReader(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`))
				switch k.key {
				case "":
				case "revoked":
					req.Header.Set("Authorization", "Bearer "+g.revoked)
				default:
					req.Header.Set("Authorization", "Bearer "+k.key)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != k.status {
					t.Errorf("%s %s: status %d, want %d", k.method, path, resp.StatusCode, k.status)
				}
			}
		}()
	}
	for i := range n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	// One authenticated request still leaves its record.
	c := g.client(g.keys["default"])
	if _, err := c.Chat.Completions.New(context.Background(), hello("demo-chat")); err != nil {
		t.Fatal(err)
	}
	recs := g.usage()
	if len(recs) != 1 || recs[0].AccountID == "" || recs[0].Endpoint != "chat.completions" {
		t.Errorf("%d usage records after %d unauthenticated requests and 1 authenticated one, want only the authenticated one", len(recs), n)
	}
	// They are counted instead, by the code each client got.
	want := map[string]uint64{"not_found": n / 3, "method_not_allowed": n / 6, "invalid_api_key": n / 2}
	if got := g.app.Refused().Counts(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("refused counts %v, want %v", got, want)
	}
	if got := g.app.Refused().Total(); got != n {
		t.Errorf("refused total %d, want %d", got, n)
	}
}

// Refused requests are logged as a summary at most once a minute (the
// first at once, the rest when the gateway stops), never with the key.
func TestUnauthenticatedLogLine(t *testing.T) {
	up := providertest.NewOpenAI(t)
	cfg := testConfig(t, up.URL)
	cfg.Log.Requests = new(bool) // only the summary, not one line per request
	var buf logBuffer
	g := serveApp(t, cfg, app.Options{Logger: slog.New(slog.NewTextHandler(&buf, nil))})
	const secret = "sk-mg-ThisIsNotAKeyButMustNeverBeLogged00"
	for i := range 50 {
		key := ""
		if i%2 == 0 {
			key = secret
		}
		resp, _ := g.post("/v1/chat/completions", "application/json", key, strings.NewReader(`{}`))
		if resp.StatusCode != 401 {
			t.Fatalf("status %d", resp.StatusCode)
		}
	}
	warns := func() []string {
		var out []string
		for _, l := range strings.Split(buf.String(), "\n") {
			if strings.Contains(l, "level=WARN") && strings.Contains(l, "refused") {
				out = append(out, l)
			}
		}
		return out
	}
	if w := warns(); len(w) != 1 || !strings.Contains(w[0], "count=1 ") || !strings.Contains(w[0], "reasons.invalid_api_key=1") ||
		!strings.Contains(w[0], "sample_remote=127.0.0.1") {
		t.Fatalf("summary lines after 50 refusals within a minute: %q", w)
	}
	if err := g.stop(); err != nil {
		t.Fatal(err)
	}
	if w := warns(); len(w) != 2 || !strings.Contains(w[1], "count=49 ") {
		t.Fatalf("summary lines after stopping: %q", w)
	}
	if strings.Contains(buf.String(), "NotAKey") {
		t.Error("the presented key reached the log")
	}
}

// logBuffer is a strings.Builder safe for the logger and the test at once.
type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
