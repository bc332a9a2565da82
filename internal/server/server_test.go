package server

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/reqinfo"
)

func TestMiddleware(t *testing.T) {
	var logs bytes.Buffer
	mux := http.NewServeMux()
	mux.HandleFunc("/panic", func(http.ResponseWriter, *http.Request) { panic("boom") })
	mux.HandleFunc("/late-panic", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(200)
		_, _ = w.Write([]byte("partial"))
		panic("after headers")
	})
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {
		info := reqinfo.From(r.Context())
		info.Model, info.KeyID = "m", "key_1"
		_, _ = w.Write([]byte(info.ID))
	})
	s := New(mux, time.Second, Options{Logger: slog.New(slog.NewJSONHandler(&logs, nil)), LogRequests: true})
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- s.Serve(ctx, ln) }()
	base := "http://" + ln.Addr().String()

	resp, err := http.Get(base + "/ok")
	if err != nil {
		t.Fatal(err)
	}
	var body bytes.Buffer
	_, _ = body.ReadFrom(resp.Body)
	resp.Body.Close()
	id := resp.Header.Get("X-Request-Id")
	if !strings.HasPrefix(id, "req_") || len(id) != 28 || body.String() != id {
		t.Fatalf("request id %q, handler saw %q", id, body.String())
	}

	resp, err = http.Get(base + "/panic")
	if err != nil {
		t.Fatal(err)
	}
	var e struct {
		Error struct{ Code string } `json:"error"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&e)
	resp.Body.Close()
	if resp.StatusCode != 500 || e.Error.Code != "server_error" {
		t.Fatalf("panic answered %d %+v", resp.StatusCode, e)
	}
	// A panic after the response started cannot change it, but the server survives.
	if resp, err := http.Get(base + "/late-panic"); err == nil {
		_, err = body.ReadFrom(resp.Body)
		resp.Body.Close()
		if err == nil {
			t.Error("a response cut by a panic read as complete")
		}
	}
	if resp, err := http.Get(base + "/ok"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("server did not survive panics: %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	out := logs.String()
	for _, want := range []string{`"request_id":"` + id + `"`, `"model":"m"`, `"key":"key_1"`, `"panic":"boom"`, `"status":500`} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %s:\n%s", want, out)
		}
	}
}

func TestRequestIDOrder(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	a, b := NewRequestID(t0), NewRequestID(t0.Add(time.Millisecond))
	if a >= b || len(a) != 28 || !strings.HasPrefix(a, "req_") {
		t.Fatalf("ids %q, %q not time-ordered", a, b)
	}
	seen := map[string]bool{}
	for range 1000 {
		id := NewRequestID(t0)
		raw, err := hex.DecodeString(strings.TrimPrefix(id, "req_"))
		if err != nil || len(raw) != 12 || strings.ToLower(id) != id {
			t.Fatalf("id %q is not req_ and 24 lowercase hex digits", id)
		}
		if ms := uint64(raw[0])<<40 | uint64(raw[1])<<32 | uint64(raw[2])<<24 | uint64(raw[3])<<16 | uint64(raw[4])<<8 | uint64(raw[5]); ms != uint64(t0.UnixMilli()) {
			t.Fatalf("id %q encodes %d ms, want %d", id, ms, t0.UnixMilli())
		}
		if seen[id] {
			t.Fatalf("id %q twice within a millisecond", id)
		}
		seen[id] = true
	}
}

// TestLogRequestLevels checks which request lines a logger's level keeps:
// a success is Info, a client error is Info with its code, a server error
// is Warn with its cause; a line below the level is not written at all.
func TestLogRequestLevels(t *testing.T) {
	r := httptestRequest(t)
	tests := []struct {
		name   string
		level  slog.Level
		info   reqinfo.Info
		status int
		want   []string // substrings of the line; nil: no line
	}{
		{"ok at info", slog.LevelInfo, reqinfo.Info{ID: "req_1", Model: "m", Stream: true}, 200,
			[]string{`"level":"INFO"`, `"request_id":"req_1"`, `"status":200`, `"model":"m"`, `"stream":true`}},
		{"ok at warn", slog.LevelWarn, reqinfo.Info{ID: "req_2"}, 200, nil},
		{"client error at warn", slog.LevelWarn, reqinfo.Info{ID: "req_3", Status: 400, ErrCode: "invalid_value"}, 0, nil},
		{"client error at info", slog.LevelInfo, reqinfo.Info{ID: "req_4", Status: 400, ErrCode: "invalid_value"}, 0,
			[]string{`"level":"INFO"`, `"status":400`, `"error":"invalid_value"`}},
		{"server error at warn", slog.LevelWarn, reqinfo.Info{ID: "req_5", Status: 502, ErrCode: "upstream_error", ErrDetail: "refused"}, 0,
			[]string{`"level":"WARN"`, `"status":502`, `"error":"upstream_error"`, `"cause":"refused"`}},
		{"5xx without a code is info", slog.LevelWarn, reqinfo.Info{ID: "req_6"}, 503, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			log := slog.New(slog.NewJSONHandler(&out, &slog.HandlerOptions{Level: tt.level}))
			logRequest(context.Background(), log, r, &tt.info, tt.status, time.Millisecond)
			if tt.want == nil {
				if out.Len() != 0 {
					t.Fatalf("wrote %s", out.String())
				}
				return
			}
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("line lacks %s: %s", w, out.String())
				}
			}
		})
	}
}

func httptestRequest(t *testing.T) *http.Request {
	t.Helper()
	r, err := http.NewRequest(http.MethodPost, "http://gw/v1/chat/completions", nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
