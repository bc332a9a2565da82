package server

import (
	"bytes"
	"context"
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
	if NewRequestID(t0) == NewRequestID(t0) {
		t.Fatal("same id twice within a millisecond")
	}
}
