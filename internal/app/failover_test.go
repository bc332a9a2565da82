package app_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

// Charges of the table's outcomes, given the prompt estimate p.
var (
	chargeNothing = func(money.Micros) money.Micros { return 0 }
	chargeAnswer  = func(money.Micros) money.Micros { return answerCost }
	chargePrompt  = func(p money.Micros) money.Micros { return p }
	chargeBoth    = func(p money.Micros) money.Micros { return p + answerCost }
)

// cutDelivered is what an fCut stream delivered before it broke off, at
// $2 per million tokens by the gateway's count.
func cutDelivered() money.Micros {
	return money.Micros(2 * testTokens.For("").Count([]byte(cutContent)))
}

// failsOver is a's fault f, then b's answer.
func failsOver(f fault) []script { return []script{always(f), always(answers)} }

// faultCase is one row of TestFailoverFaults.
type faultCase struct {
	name      string
	up        []script // the vendors' scripts, in the order tried; nil: a closed port
	stream    bool
	firstByte bool // the model's first_byte_timeout is 200ms
	// The client's outcome: 0 for a clean answer from the last vendor
	// hit; else the error status and code, or with event the code of the
	// error event that ends a stream already started.
	status     int
	code       string
	event      bool
	retryAfter string // the error's Retry-After header
	hits       []int  // each vendor's requests
	attempts   []string
	charged    func(money.Micros) money.Micros
}

var faultCases = []faultCase{
	// Retried on b: a vendor's 5xx and 429 bill nothing, so only b's answer is charged.
	{name: "500", up: failsOver(failing(500)), hits: []int{1, 1}, attempts: []string{"a 500 upstream_error", "b 200"}, charged: chargeAnswer},
	{name: "500 stream", up: failsOver(failing(500)), stream: true, hits: []int{1, 1}, attempts: []string{"a 500 upstream_error", "b 200"}, charged: chargeAnswer},
	{name: "502", up: failsOver(failing(502)), hits: []int{1, 1}, attempts: []string{"a 502 upstream_error", "b 200"}, charged: chargeAnswer},
	{name: "503", up: failsOver(failing(503)), hits: []int{1, 1}, attempts: []string{"a 503 upstream_unavailable", "b 200"}, charged: chargeAnswer},
	{name: "504", up: failsOver(failing(504)), hits: []int{1, 1}, attempts: []string{"a 504 upstream_timeout", "b 200"}, charged: chargeAnswer},
	{name: "529", up: failsOver(failing(529)), hits: []int{1, 1}, attempts: []string{"a 529 upstream_unavailable", "b 200"}, charged: chargeAnswer},
	{name: "429", up: failsOver(limited("")), hits: []int{1, 1}, attempts: []string{"a 429 rate_limit_exceeded", "b 200"}, charged: chargeAnswer},
	{name: "401", up: failsOver(failing(401)), stream: true, hits: []int{1, 1}, attempts: []string{"a 401 upstream_auth_failed", "b 200"}, charged: chargeAnswer},
	{name: "error in a 200 body", up: failsOver(fault{kind: fErrorBody}), hits: []int{1, 1},
		attempts: []string{"a 502 upstream_error", "b 200"}, charged: chargeAnswer},
	{name: "connection refused", up: []script{nil, always(answers)}, hits: []int{0, 1},
		attempts: []string{"a 0 upstream_unavailable", "b 200"}, charged: chargeAnswer},
	// Retried on b, but a had the request: its prompt is owed as well.
	{name: "connection reset", up: failsOver(fault{kind: fReset}), hits: []int{1, 1}, attempts: []string{"a 0 upstream_error", "b 200"}, charged: chargeBoth},
	{name: "connection reset stream", up: failsOver(fault{kind: fReset}), stream: true, hits: []int{1, 1},
		attempts: []string{"a 0 upstream_error", "b 200"}, charged: chargeBoth},
	{name: "slow first byte", up: failsOver(fault{kind: fSlow, delay: 3 * time.Second}), firstByte: true, hits: []int{1, 1},
		attempts: []string{"a 0 upstream_timeout", "b 200"}, charged: chargeBoth},
	{name: "slow first byte stream", up: failsOver(fault{kind: fSlow, delay: 3 * time.Second}), firstByte: true, stream: true, hits: []int{1, 1},
		attempts: []string{"a 0 upstream_timeout", "b 200"}, charged: chargeBoth},
	// The client's own fault: passed through (a 404 is the gateway's
	// config's), not retried, nothing charged.
	{name: "400", up: failsOver(failing(400)), status: 400, code: "invalid_request_error", hits: []int{1, 0},
		attempts: []string{"a 400 invalid_request_error"}, charged: chargeNothing},
	{name: "404", up: failsOver(failing(404)), status: 502, code: "upstream_error", hits: []int{1, 0},
		attempts: []string{"a 404 upstream_error"}, charged: chargeNothing},
	{name: "413", up: failsOver(failing(413)), status: 413, code: "invalid_request_error", hits: []int{1, 0},
		attempts: []string{"a 413 invalid_request_error"}, charged: chargeNothing},
	{name: "422", up: failsOver(failing(422)), status: 422, code: "invalid_request_error", hits: []int{1, 0},
		attempts: []string{"a 422 invalid_request_error"}, charged: chargeNothing},
	{name: "501", up: failsOver(failing(501)), status: 502, code: "upstream_error", hits: []int{1, 0},
		attempts: []string{"a 501 upstream_error"}, charged: chargeNothing},
	// An answer that cannot be read: the vendor may have done the work,
	// so it is not retried, and the prompt is charged.
	{name: "200 empty body", up: failsOver(fault{kind: fEmpty}), status: 502, code: "bad_upstream_response", hits: []int{1, 0},
		attempts: []string{"a 200 bad_upstream_response"}, charged: chargePrompt},
	{name: "200 html", up: failsOver(fault{kind: fHTML}), status: 502, code: "bad_upstream_response", hits: []int{1, 0},
		attempts: []string{"a 200 bad_upstream_response"}, charged: chargePrompt},
	{name: "truncated json", up: failsOver(fault{kind: fTruncated}), status: 502, code: "bad_upstream_response", hits: []int{1, 0},
		attempts: []string{"a 200 bad_upstream_response"}, charged: chargePrompt},
	{name: "malformed sse", up: failsOver(fault{kind: fBadSSE}), stream: true, status: 502, code: "bad_upstream_response", hits: []int{1, 0},
		attempts: []string{"a 200 bad_upstream_response"}, charged: chargePrompt},
	// Bytes went to the client: an error event ends the stream, never retried.
	{name: "stream stalls", up: failsOver(fault{kind: fStall}), stream: true, code: "upstream_timeout", event: true, hits: []int{1, 0},
		attempts: []string{"a 200"}, charged: chargePrompt},
	{name: "stream cut", up: failsOver(fault{kind: fCut}), stream: true, code: "bad_upstream_response", event: true, hits: []int{1, 0},
		attempts: []string{"a 200"}, charged: func(p money.Micros) money.Micros { return p + cutDelivered() }},
	// Every candidate failed: 503 with Retry-After, each try listed.
	{name: "all fail", up: []script{always(failing(500)), always(failing(502))}, status: 503, code: "service_unavailable", retryAfter: "1",
		hits: []int{1, 1}, attempts: []string{"a 500 upstream_error", "b 502 upstream_error"}, charged: chargeNothing},
	{name: "all fail, one had the request", up: []script{always(failing(503)), always(fault{kind: fReset}), always(failing(529))},
		status: 503, code: "service_unavailable", retryAfter: "1", hits: []int{1, 1, 1},
		attempts: []string{"a 503 upstream_unavailable", "b 0 upstream_error", "c 529 upstream_unavailable"}, charged: chargePrompt},
	{name: "max attempts", up: []script{always(failing(500)), always(failing(500)), always(failing(500)), always(answers)},
		status: 503, code: "service_unavailable", retryAfter: "1", hits: []int{1, 1, 1, 0},
		attempts: []string{"a 500 upstream_error", "b 500 upstream_error", "c 500 upstream_error"}, charged: chargeNothing},
	// One candidate tried once: its own error.
	{name: "single provider", up: []script{always(failing(500))}, status: 502, code: "upstream_error", hits: []int{1},
		attempts: []string{"a 500 upstream_error"}, charged: chargeNothing},
}

// TestFailoverFaults sends one request per row through the official SDK to
// a model of its own, served by the row's vendors (a tried first), and
// checks what the client sees, which vendors were tried (their counts and
// the usage record's attempts), and what was charged (the record's cost,
// and X-Modelgate-Cost on an answer). The rows share one gateway.
func TestFailoverFaults(t *testing.T) {
	cfg := faultConfig(t)
	vendors := make([][]*faultVendor, len(faultCases))
	for i, tc := range faultCases {
		model := fmt.Sprintf("m%d", i)
		for j, s := range tc.up {
			v := newFaultVendor(t, fmt.Sprintf("%c.%d", 'a'+j, i), s)
			if s == nil {
				v.Close() // its port refuses connections
			}
			vendors[i] = append(vendors[i], v)
		}
		deploy(cfg, model, vendors[i]...)
		if tc.firstByte {
			d := config.Duration(200 * time.Millisecond)
			cfg.Models[len(cfg.Models)-1].FirstByteTimeout = &d
		}
	}
	g := serveFaults(t, cfg)
	t.Cleanup(func() { // once every row is done: the account paid what the records say
		recs, err := g.app.Store().ListUsage(context.Background(), store.UsageFilter{})
		if err != nil || len(recs) != len(faultCases) {
			t.Fatalf("%d usage records (%v), want %d", len(recs), err, len(faultCases))
		}
		if balance := audit(t, g.app.Store(), recs[0].AccountID); balance >= 100*money.Unit {
			t.Errorf("balance %s: nothing was charged", balance)
		}
	})
	for i, tc := range faultCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			model := fmt.Sprintf("m%d", i)
			content, raw, chunks, err := ask(g, model, tc.stream)
			vs := vendors[i]
			switch {
			case tc.event:
				if err == nil || !strings.Contains(err.Error(), tc.code) || chunks == 0 {
					t.Fatalf("after %d chunks: %v, want chunks then an error event %s", chunks, err, tc.code)
				}
			case tc.status != 0:
				e := apiError(t, err, tc.status, tc.code)
				if got := e.Response.Header.Get("Retry-After"); tc.retryAfter != "" && got != tc.retryAfter {
					t.Errorf("Retry-After %q, want %q", got, tc.retryAfter)
				}
			case err != nil:
				t.Fatalf("want an answer, got %v", err)
			default:
				last := len(vs) - 1
				for vs[last].hits() == 0 {
					last--
				}
				if content != vs[last].answer() {
					t.Fatalf("answer %q, want %q", content, vs[last].answer())
				}
			}
			for j, v := range vs {
				if v.hits() != tc.hits[j] {
					t.Errorf("vendor %s: %d requests, want %d", v.name, v.hits(), tc.hits[j])
				}
			}
			rec := g.record(raw.Header.Get("X-Request-Id"))
			if got := tried(rec); !slices.Equal(got, tc.attempts) {
				t.Errorf("attempts %q, want %q", got, tc.attempts)
			}
			if want := tc.charged(promptEstimate(t, model)); rec.Cost != want {
				t.Errorf("charged %s, want %s", rec.Cost, want)
			}
			if tc.status == 0 && !tc.stream {
				if h := raw.Header.Get("X-Modelgate-Cost"); h != rec.Cost.String() {
					t.Errorf("X-Modelgate-Cost %q, the record charged %s", h, rec.Cost)
				}
			}
		})
	}
}
