package provider

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// An exchange started under a tracked context reports that the vendor has
// the request once it was written whole; a download the adapter makes
// outside an exchange (an image URL) does not count, nor does a request
// that never reached anyone.
func TestRequestSent(t *testing.T) {
	got := make(chan struct{}, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		got <- struct{}{}
		<-r.Context().Done() // never answers: the request is all that matters
	}))
	defer srv.Close()
	post := func(ctx context.Context, url string) {
		ctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(`{"model":"m"}`))
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}

	var s RequestSent
	ctx := s.Track(context.Background())
	post(ctx, srv.URL) // a download, not under an exchange
	<-got
	if s.Sent() {
		t.Fatal("a request outside an exchange counted as the vendor's")
	}
	k := StartCall(ctx, time.Minute, time.Minute)
	post(k.Ctx, "http://127.0.0.1:1") // refused: nobody has it
	if s.Sent() {
		t.Fatal("a request that could not be sent counted")
	}
	post(k.Ctx, srv.URL)
	k.Release()
	<-got
	if !s.Sent() {
		t.Fatal("the exchange's request reached the vendor but was not reported")
	}

	// A nested exchange reports once, through the same hook.
	var s2 RequestSent
	outer := StartCall(s2.Track(context.Background()), time.Minute, time.Minute)
	inner := StartCall(outer.Ctx, time.Minute, time.Minute)
	post(inner.Ctx, srv.URL)
	inner.Release()
	outer.Release()
	<-got
	if !s2.Sent() {
		t.Fatal("a nested exchange's request was not reported")
	}
	var none *RequestSent
	if none.Sent() {
		t.Error("a nil RequestSent reports a request")
	}
}

// The errors a vendor answers with are told apart from the ones the
// gateway runs into, whatever their status.
func TestVendorFailed(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"error status", FromStatus("p", http.StatusInternalServerError, nil, VendorError{Message: "oops"}), true},
		{"client error status", FromStatus("p", http.StatusBadRequest, nil, VendorError{Message: "bad"}), true},
		{"refusal in a 2xx answer", VendorRefused(BadResponse("p", io.EOF)), true},
		{"unreadable answer", BadResponse("p", io.ErrUnexpectedEOF), false},
		{"client gone", FromTransport(ctx, "p", context.Canceled), false},
		{"timeout", FromTransport(context.Background(), "p", context.DeadlineExceeded), false},
		{"nil", nil, false},
	} {
		if got := VendorFailed(tc.err); got != tc.want {
			t.Errorf("%s: VendorFailed = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestFirstByteBounds: a RequestSent's FirstByte replaces the adapter's
// idle timeout for the wait for the first bytes, and Until cuts it short.
func TestFirstByteBounds(t *testing.T) {
	cases := []struct {
		name  string
		first time.Duration
		until time.Duration // from now; 0: none
	}{
		{"first byte", 20 * time.Millisecond, 0},
		{"deadline", time.Hour, 20 * time.Millisecond},
		{"deadline passed", 0, -time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var s RequestSent
			s.FirstByte = c.first
			if c.until != 0 {
				s.Until = time.Now().Add(c.until)
			}
			k := StartCall(s.Track(context.Background()), time.Hour, time.Hour)
			defer k.Release()
			select {
			case <-k.Ctx.Done():
				if !errors.Is(context.Cause(k.Ctx), ErrIdleTimeout) {
					t.Fatalf("cause %v, want the idle timeout", context.Cause(k.Ctx))
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the first-byte bound never fired (the hour-long idle timeout applied)")
			}
		})
	}
}
