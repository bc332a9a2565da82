// Package reqinfo carries what is learned about one request (its id, who
// sent it, which model and provider served it, how it ended) from the
// handlers to the middleware that logs it, without either importing the
// other.
package reqinfo

import (
	"context"
	"time"

	"github.com/modelgate/modelgate/internal/ratelimit"
)

// Info is filled in as the request proceeds. Only the request's own
// goroutine writes it.
type Info struct {
	ID        string
	Start     time.Time
	Endpoint  string
	KeyID     string
	AccountID string
	Model     string
	Provider  string
	Upstream  string
	Stream    bool
	Status    int    // final status as the client saw it (499 if it left)
	ErrCode   string // OpenAI error code, empty on success
	ErrDetail string // the cause, for the log only
	Remote    string // the client's address (RemoteAddr), for the refused-request log
	// TraceParent is the client's W3C traceparent header ("" if none): the
	// request's trace span becomes its child.
	TraceParent string
	// Upstreamed is set when the error the client got came from the
	// upstream (or ended an answer the upstream had started): the request
	// was no refusal of the gateway's own, which are only counted.
	Upstreamed bool
	// VendorFailed is set when that error is the vendor's own answer
	// (provider.VendorFailed), not a failure the gateway ran into on the
	// way: what the metrics count as an upstream error.
	VendorFailed bool
	// Recorded is set once the request's usage record (or refusal) was
	// left: a request is recorded at most once, which the usage store's
	// hot path relies on (store.Usage.AppendUsage does not look for
	// stored request ids).
	Recorded bool
	// Limited is the request's part in its key's rate limits, given
	// back or corrected when it ends.
	Limited Limited
	// Attempts are the request's upstream tries, in order (AddAttempt).
	Attempts   []Attempt
	attemptBuf [1]Attempt // Attempts' first home: no allocation for the one try of most requests
}

// Attempt is one upstream try.
type Attempt struct {
	Provider string
	Upstream string // the vendor's model id
	Start    time.Time
	Duration time.Duration
	Status   int    // the upstream's HTTP status; 0 when no answer came
	Error    string // why it failed; "" when it answered
}

// AddAttempt appends a to Attempts.
func (i *Info) AddAttempt(a Attempt) {
	if i.Attempts == nil {
		i.Attempts = i.attemptBuf[:0]
	}
	i.Attempts = append(i.Attempts, a)
}

// Limited is what a request holds of its key's rate limits.
type Limited struct {
	Slot      bool            // it holds one of the key's running slots
	TPM       int64           // the key's token limit (0: none)
	Tokens    int64           // the tokens it took (ahead or at admission), to correct once settled
	Ahead     ratelimit.Ahead // what a shared limiter took ahead, until TakeTokens
	Took      bool            // a token take was made (Remaining and Reset are its)
	Remaining int64           // tokens remaining after the take
	Reset     time.Duration   // until the token allowance is whole again
}

type ctxKey struct{}

// With returns a context carrying info.
func With(ctx context.Context, info *Info) context.Context {
	return context.WithValue(ctx, ctxKey{}, info)
}

// From returns the request's Info, or a fresh one when the request did not
// pass through the middleware (handlers used directly in tests).
func From(ctx context.Context) *Info {
	if i, ok := ctx.Value(ctxKey{}).(*Info); ok {
		return i
	}
	return &Info{Start: time.Now()}
}
