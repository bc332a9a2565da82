package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/config"
)

// pacedUpstream is the mock with short paced streams.
func pacedUpstream(p pacing) *httptest.Server {
	u := newUpstream()
	u.pace = p
	return httptest.NewServer(u.handler())
}

// A paced stream carries its chunks, the finish chunk, the usage chunk
// only when asked for, and [DONE]; a plain request is answered at once.
func TestPacedStream(t *testing.T) {
	p := pacing{chunks: 25, gap: time.Millisecond} // past the 20 pieces: they repeat
	srv := pacedUpstream(p)
	defer srv.Close()
	for _, tc := range []struct {
		name, body string
		events     int
	}{
		{"no usage", string(chatBody(pacedModel, true)), p.events()},
		{"usage", `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`, p.events() + 1},
	} {
		resp, err := http.Post(srv.URL+pacedPath, "application/json", strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		_, err = readSSE(bufio.NewReader(resp.Body), time.Now(), tc.events)
		resp.Body.Close()
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	resp, err := http.Post(srv.URL+pacedPath, "application/json", strings.NewReader(string(chatBody(pacedModel, false))))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	_, _ = bufio.NewReader(resp.Body).WriteTo(&b)
	if err := checkCompletion([]byte(b.String())); err != nil {
		t.Error(err)
	}
}

// The many-streams load holds every stream to its end and counts each one
// once, whether they start together or spread over a ramp; a target that
// refuses is counted in errors with its answer.
func TestStreamsLoad(t *testing.T) {
	p := pacing{chunks: 5, gap: 5 * time.Millisecond}
	srv := pacedUpstream(p)
	defer srv.Close()
	refuse := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, `{"error":"no"}`, http.StatusTooManyRequests)
	}))
	defer refuse.Close()
	for _, tc := range []struct {
		name             string
		url              string
		ramp             time.Duration
		streams, errors  int
		errorMentions    string
		wantTTFB, wantAt bool
	}{
		{"at once", srv.URL + pacedPath, 0, 20, 0, "", true, true},
		{"ramp", srv.URL + pacedPath, 20 * time.Millisecond, 20, 0, "", true, true},
		{"refused", refuse.URL, 0, 0, 20, "HTTP 429", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l streamsLoad
			client := streamsClient(20)
			defer client.CloseIdleConnections()
			r := l.run(context.Background(), client, streamsSpec{URL: tc.url, Key: "k", Body: chatBody(pacedModel, true),
				N: 20, Ramp: tc.ramp, Events: p.events(), Timeout: time.Minute})
			if r.Streams != tc.streams || r.Errors != tc.errors {
				t.Fatalf("%d streams, %d errors (%v); want %d, %d", r.Streams, r.Errors, r.FirstErrors, tc.streams, tc.errors)
			}
			if tc.errorMentions != "" && (len(r.FirstErrors) == 0 || !strings.Contains(r.FirstErrors[0], tc.errorMentions)) {
				t.Errorf("errors %v, want %q", r.FirstErrors, tc.errorMentions)
			}
			if (r.TTFB50 > 0) != tc.wantTTFB || (r.AllOpen > 0) != tc.wantAt || r.TTFB50 > r.TTFB99 || r.TTFB99 > r.TTFBMax {
				t.Errorf("TTFB %v/%v/%v, all open after %v", r.TTFB50, r.TTFB99, r.TTFBMax, r.AllOpen)
			}
			if l.Open() != 0 {
				t.Errorf("%d streams still counted open", l.Open())
			}
		})
	}
}

// The goroutine count is read from a bare number or from Prometheus text.
func TestCountGoroutines(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       int
		ok         bool
	}{
		{"number", "42\n", 42, true},
		{"prometheus", "# HELP go_goroutines Number of goroutines.\n# TYPE go_goroutines gauge\ngo_gc_duration_seconds{quantile=\"0\"} 1e-05\ngo_goroutines 1234\ngo_threads 9\n", 1234, true},
		{"none", "# nothing\nfoo 3\n", 0, false},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Accept-Encoding") != "identity" {
				t.Errorf("%s: Accept-Encoding %q", tc.name, r.Header.Get("Accept-Encoding"))
			}
			fmt.Fprint(w, tc.body)
		}))
		n, err := countGoroutines(context.Background(), srv.URL)
		srv.Close()
		if (err == nil) != tc.ok || n != tc.want {
			t.Errorf("%s: %d, %v; want %d (ok %v)", tc.name, n, err, tc.want, tc.ok)
		}
	}
	if _, err := countGoroutines(context.Background(), ""); err == nil {
		t.Error("no URL: no error")
	}
}

func TestRoleAddrs(t *testing.T) {
	for _, tc := range []struct{ line, addr, stats string }{
		{"127.0.0.1:1 127.0.0.1:2", "127.0.0.1:1", "127.0.0.1:2"},
		{"127.0.0.1:1", "127.0.0.1:1", ""},
		{"", "", ""},
	} {
		if a, s := roleAddrs(tc.line); a != tc.addr || s != tc.stats {
			t.Errorf("%q: %q %q", tc.line, a, s)
		}
	}
}

// The report takes each target's median over rounds, what a stream costs,
// and checks modelgate's peak RSS and TTFB against the proxy's.
func TestStreamsReport(t *testing.T) {
	round := func(r int, target string, idleMB, peakMB float64, ttfbMS int, idleG, peakG int) streamsRound {
		return streamsRound{Round: r, Target: target, IdleRSS: int64(idleMB * 1e6), PeakRSS: int64(peakMB * 1e6),
			IdleGoroutines: idleG, PeakGoroutines: peakG, streamsResult: streamsResult{Streams: 1000, TTFB50: time.Duration(ttfbMS) * time.Millisecond}}
	}
	ts := []streamsTarget{{target: target{name: "proxy"}}, {target: target{name: "modelgate"}}}
	for _, tc := range []struct {
		name       string
		rounds     []streamsRound
		rss, ttfb  float64
		pass       [2]bool
		perStream  float64 // modelgate's KB a stream
		goroutines float64 // modelgate's a stream
	}{
		{"within", []streamsRound{
			round(1, "proxy", 10, 110, 100, 6, 4006), round(1, "modelgate", 60, 100, 105, 30, 4030),
			round(2, "modelgate", 60, 104, 109, 30, 4030), round(2, "proxy", 10, 110, 100, 6, 4006),
		}, 102.0 / 110, 107.0 / 100, [2]bool{true, true}, 42, 4},
		{"over", []streamsRound{round(1, "proxy", 10, 110, 100, 6, 4006), round(1, "modelgate", 60, 160, 111, 30, -1)},
			160.0 / 110, 1.11, [2]bool{false, false}, 100, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := &streamsReport{Streams: 1000, Rounds: tc.rounds}
			rep.summarize(ts)
			if !near(rep.RSSRatio, tc.rss) || !near(rep.TTFB, tc.ttfb) {
				t.Errorf("ratios %.3f, %.3f; want %.3f, %.3f", rep.RSSRatio, rep.TTFB, tc.rss, tc.ttfb)
			}
			mg := rep.Targets[1]
			if !near(mg.RSSPerStreamKB, tc.perStream) || !near(mg.GoroutinesPer, tc.goroutines) {
				t.Errorf("modelgate: %.2f KB and %.2f goroutines a stream; want %.2f, %.2f", mg.RSSPerStreamKB, mg.GoroutinesPer, tc.perStream, tc.goroutines)
			}
			for i, c := range rep.checks() {
				if c.Pass != tc.pass[i] {
					t.Errorf("%s: pass %v, want %v (got %s)", c.Name, c.Pass, tc.pass[i], c.Got)
				}
			}
			var b strings.Builder
			rep.print(&b)
			if !strings.Contains(b.String(), "modelgate ÷ proxy: peak RSS") {
				t.Errorf("print:\n%s", b.String())
			}
		})
	}
}

func TestPostgresURLs(t *testing.T) {
	for _, tc := range []struct{ in, admin, db, err string }{
		{"postgres://postgres@127.0.0.1:5432", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable",
			"postgres://postgres@127.0.0.1:5432/bench_1?sslmode=disable", ""},
		{"postgresql://u:p@db:5433/test?sslmode=require", "postgresql://u:p@db:5433/test?sslmode=require",
			"postgresql://u:p@db:5433/bench_1?sslmode=require", ""},
		{"mysql://x", "", "", "want postgres://"},
		{"postgres:///nohost", "", "", "want postgres://"},
	} {
		admin, db, err := postgresURLs(tc.in, "bench_1")
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || admin != tc.admin || db != tc.db {
			t.Errorf("%s: %q %q %v", tc.in, admin, db, err)
		}
	}
}

// The config the harness writes is one modelgate accepts, on either
// backend, with the paced provider and the many-streams metrics listener.
func TestModelgateConfigLoads(t *testing.T) {
	dir := t.TempDir()
	sqlite, err := newBackend(context.Background(), "sqlite", dir, "", "")
	if err != nil {
		t.Fatal(err)
	}
	pg := &backend{Name: "postgres", Database: "postgres://postgres@127.0.0.1:5432/bench_1?sslmode=disable", Redis: "redis://127.0.0.1:6379/14"}
	for _, be := range []*backend{sqlite, pg} {
		path := filepath.Join(dir, be.Name+".yaml")
		cfg := modelgateConfig("127.0.0.1:1", "127.0.0.1:2", be, true, "", "", "metrics: {listen: 127.0.0.1:3}")
		if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		c, problems, err := config.Load(path, func(string) (string, bool) { return "", false })
		if err != nil {
			t.Fatalf("%s: %v\n%s", be.Name, err, cfg)
		}
		for _, p := range problems {
			t.Logf("%s: %v", be.Name, p)
		}
		if c.Database != be.Database || c.Redis != be.Redis {
			t.Errorf("%s: database %q, redis %q", be.Name, c.Database, c.Redis)
		}
		if !strings.Contains(cfg, "base_url: http://127.0.0.1:2/paced/v1") || !strings.Contains(cfg, pacedModel) {
			t.Errorf("%s: no paced provider:\n%s", be.Name, cfg)
		}
	}
}

// With MODELGATE_TEST_POSTGRES set, the postgres backend makes its
// database and drops it again.
func TestPostgresBackend(t *testing.T) {
	if os.Getenv("MODELGATE_TEST_POSTGRES") == "" {
		t.Skip("MODELGATE_TEST_POSTGRES not set: no PostgreSQL to make a database on")
	}
	server := "postgres://postgres@127.0.0.1:5432"
	b, err := newBackend(context.Background(), "postgres", t.TempDir(), server, "redis://127.0.0.1:6379/14")
	if err != nil {
		t.Fatal(err)
	}
	exists := func() bool {
		err := b.psql(context.Background(), "DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = '"+b.db+"') THEN RAISE 'gone'; END IF; END $$")
		return err == nil
	}
	if !exists() {
		t.Fatalf("%s was not made", b.db)
	}
	b.close()
	if exists() {
		t.Errorf("%s was not dropped", b.db)
	}
}
