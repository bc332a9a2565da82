package provider

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
)

func TestFromStatus(t *testing.T) {
	retry := http.Header{"Retry-After": []string{"9"}}
	cases := []struct {
		status     int
		h          http.Header
		v          VendorError
		want       int
		code       string
		retryAfter time.Duration
		showsMsg   bool
	}{
		{400, nil, VendorError{Message: "bad thing", Code: "bad_code", Param: "messages"}, 400, "bad_code", 0, true},
		{422, nil, VendorError{Message: "unprocessable"}, 422, apierr.CodeInvalidRequest, 0, true},
		{401, nil, VendorError{Message: "Incorrect API key sk-abc"}, 502, apierr.CodeUpstreamAuth, 0, false},
		{403, nil, VendorError{Message: "forbidden"}, 502, apierr.CodeUpstreamAuth, 0, false},
		{404, nil, VendorError{Message: "no model"}, 502, apierr.CodeUpstreamError, 0, false},
		{429, retry, VendorError{Message: "slow down"}, 429, apierr.CodeRateLimitExceeded, 9 * time.Second, false},
		{429, nil, VendorError{Message: "slow down"}, 429, apierr.CodeRateLimitExceeded, time.Second, false},
		{429, nil, VendorError{Code: "insufficient_quota"}, 503, apierr.CodeUpstreamUnavailable, 30 * time.Second, false},
		{500, nil, VendorError{Message: "oops"}, 502, apierr.CodeUpstreamError, time.Second, false},
		{503, retry, VendorError{}, 503, apierr.CodeUpstreamUnavailable, 9 * time.Second, false},
		{529, nil, VendorError{}, 503, apierr.CodeUpstreamUnavailable, 2 * time.Second, false},
		{504, nil, VendorError{}, 504, apierr.CodeUpstreamTimeout, time.Second, false},
	}
	for _, tc := range cases {
		e := FromStatus("p", tc.status, tc.h, tc.v)
		if e.Status != tc.want || e.Code != tc.code || e.RetryAfter != tc.retryAfter {
			t.Errorf("%d: got %d %s %v, want %d %s %v", tc.status, e.Status, e.Code, e.RetryAfter, tc.want, tc.code, tc.retryAfter)
		}
		if tc.v.Message != "" && strings.Contains(e.Message, tc.v.Message) != tc.showsMsg {
			t.Errorf("%d: message %q (vendor's shown: want %v)", tc.status, e.Message, tc.showsMsg)
		}
	}
	long := FromStatus("p", 400, nil, VendorError{Message: strings.Repeat("é", 3000)})
	if len(long.Message) > maxVendorMessage+4 {
		t.Errorf("vendor message not truncated: %d bytes", len(long.Message))
	}
}

func TestFromTransport(t *testing.T) {
	cause := func(c error) context.Context {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(c)
		return ctx
	}
	dial := &net.OpError{Op: "dial", Err: errors.New("connection refused")}
	cases := []struct {
		name string
		ctx  context.Context
		err  error
		want int
		code string
	}{
		{"idle", cause(ErrIdleTimeout), context.Canceled, 504, apierr.CodeUpstreamTimeout},
		{"total", cause(ErrTotalTimeout), context.Canceled, 504, apierr.CodeUpstreamTimeout},
		{"client left", cause(context.Canceled), context.Canceled, apierr.StatusClientClosed, apierr.CodeClientClosed},
		{"shutdown", cause(apierr.ErrShuttingDown), context.Canceled, 503, apierr.CodeShuttingDown},
		{"refused", context.Background(), dial, 503, apierr.CodeUpstreamUnavailable},
		{"reset", context.Background(), errors.New("connection reset by peer"), 502, apierr.CodeUpstreamError},
	}
	for _, tc := range cases {
		e := FromTransport(tc.ctx, "p", tc.err)
		if e.Status != tc.want || e.Code != tc.code {
			t.Errorf("%s: %d %s, want %d %s", tc.name, e.Status, e.Code, tc.want, tc.code)
		}
	}
}

// FromStatus redacts key-shaped tokens whatever the adapter did, in what
// the client reads and in the cause for the log, and the error stays the
// vendor's own failure (billing reads VendorFailed).
func TestFromStatusRedactsKeyShapes(t *testing.T) {
	v := VendorError{Message: "Incorrect API key provided: sk-proj-0123456789abcdefXYZ.", Code: "invalid_api_key",
		Param: "AIzaSyA-0123456789abcdefghijklmnopqrstu"}
	for _, status := range []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusInternalServerError} {
		e := FromStatus("p", status, nil, v)
		for what, s := range map[string]string{"message": e.Message, "param": e.Param, "cause": e.Err.Error()} {
			if strings.Contains(s, "sk-proj-") || strings.Contains(s, "AIza") {
				t.Errorf("%d: %s holds a key: %q", status, what, s)
			}
		}
		if !strings.Contains(e.Err.Error(), "Incorrect API key provided: [redacted].") {
			t.Errorf("%d: cause %q lost the vendor's message", status, e.Err.Error())
		}
		if !VendorFailed(e) {
			t.Errorf("%d: no longer the vendor's failure", status)
		}
	}
	if e := FromStatus("p", http.StatusBadRequest, nil, v); e.Message != "Incorrect API key provided: [redacted]." {
		t.Errorf("400 message %q", e.Message)
	}
	// An adapter's own secret, not shaped like a key, is its to redact.
	own := VendorError{Message: "key 0123456789abcdef0123456789abcdef refused"}.Redact(Secrets("0123456789abcdef0123456789abcdef", "", nil))
	if own.Message != "key [redacted] refused" {
		t.Errorf("Redact: %q", own.Message)
	}
	sec := Secrets("", "https://user:password-in-url@vendor.example/v1", map[string]string{"X-Auth": "header-value-secret"})
	if got := sec.String("password-in-url, header-value-secret"); got != "[redacted], [redacted]" {
		t.Errorf("Secrets of base URL and headers: %q", got)
	}
	e := BadResponse("p", fmt.Errorf("unknown status in {\"auth\":\"Bearer abcdefgh12345678\"}: %w", context.Canceled))
	if strings.Contains(e.Err.Error(), "abcdefgh12345678") || !errors.Is(e, context.Canceled) {
		t.Errorf("BadResponse cause %q (unwraps to the cause: %v)", e.Err.Error(), errors.Is(e, context.Canceled))
	}
}
