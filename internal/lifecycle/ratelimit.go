package lifecycle

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/gate"
	"github.com/modelgate/modelgate/internal/ratelimit"
	"github.com/modelgate/modelgate/internal/reqinfo"
)

// RateLimits count each key's requests, tokens and running requests
// against its limits (the key's own, else its group's; see gate.Limits).
// Each limiter is keyed by the key id.
type RateLimits struct {
	Requests ratelimit.Limiter     // requests per minute
	Tokens   ratelimit.Limiter     // tokens per minute
	Running  ratelimit.Concurrency // requests running at once
	// Shared, when set, is used instead of the three: it checks all of a
	// request's limits in one step (with Redis, one round trip) and
	// settles them off the request's path.
	Shared ratelimit.Admitter
}

// The OpenAI headers every response of a rate-limited key carries, so the
// official SDKs back off; the token trio only with a token limit.
const (
	hdrLimitRequests     = "X-Ratelimit-Limit-Requests"
	hdrRemainingRequests = "X-Ratelimit-Remaining-Requests"
	hdrResetRequests     = "X-Ratelimit-Reset-Requests"
	hdrLimitTokens       = "X-Ratelimit-Limit-Tokens"
	hdrRemainingTokens   = "X-Ratelimit-Remaining-Tokens"
	hdrResetTokens       = "X-Ratelimit-Reset-Tokens"
)

// Error types of OpenAI's 429s: which limit was reached.
const (
	typeRequests = "requests"
	typeTokens   = "tokens"
)

// limit counts p's request against its key's rate limits, right after
// authentication and before anything is read or reserved, and sets the
// x-ratelimit headers; a 429 rate_limit_exceeded when a limit is reached.
// A key without limits costs a nil check and a map lookup.
func (h *Core) limit(w http.ResponseWriter, p gate.Principal, info *reqinfo.Info) error {
	rl := h.RateLimits
	if rl == nil {
		return nil
	}
	l := p.Limits
	if h.Policy != nil {
		l = l.Or(h.Policy.Rules(p.Group).Limits)
	}
	if !l.Any() {
		return nil
	}
	now := h.Clock()
	hdr := w.Header()
	if rl.Shared != nil {
		return admitShared(rl.Shared, hdr, p.KeyID, l, now, info)
	}
	if l.TPM > 0 {
		info.Limited.TPM = l.TPM
		limitHeaders(hdr, hdrLimitTokens, hdrRemainingTokens, hdrResetTokens, rl.Tokens.Take(p.KeyID, 0, l.TPM, now))
	}
	if l.RPM > 0 {
		r := rl.Requests.Take(p.KeyID, 1, l.RPM, now)
		limitHeaders(hdr, hdrLimitRequests, hdrRemainingRequests, hdrResetRequests, r)
		if !r.Allowed {
			return tooManyRequests(l.RPM, r.RetryAfter)
		}
	}
	if l.Concurrency > 0 {
		if !rl.Running.Acquire(p.KeyID, l.Concurrency) {
			return tooManyRunning(l.Concurrency)
		}
		info.Limited.Slot = true
	}
	return nil
}

// TakeTokens counts n tokens (a request's prompt and output bound) against
// its key's token limit, before its balance is reserved; a 429 when they
// are not there. A request whose bound exceeds the whole limit needs the
// whole allowance (see ratelimit.Limiter). It notes the take in info, for
// the headers (LimitTokenHeaders) and the correction when the request ends
// (unlimit).
func (h *Core) TakeTokens(info *reqinfo.Info, n int64) error {
	l := &info.Limited
	if l.TPM == 0 || h.RateLimits == nil || l.Took {
		return nil // no limit, or taken already (a request admitted again for another deployment)
	}
	n = max(n, 1)
	var r ratelimit.Result
	if sh := h.RateLimits.Shared; sh != nil {
		r = sh.TakeTokens(info.KeyID, n, l.Ahead, l.TPM, h.Clock())
		l.Ahead, l.Tokens = ratelimit.Ahead{}, 0 // taken back or counted in r
	} else {
		r = h.RateLimits.Tokens.Take(info.KeyID, n, l.TPM, h.Clock())
	}
	l.Remaining, l.Reset, l.Took = r.Remaining, r.Reset, true
	if !r.Allowed {
		return tooMany(typeTokens, r.RetryAfter, fmt.Sprintf("Rate limit reached for tokens per minute (TPM): "+
			"Limit %d, Remaining %d, Requested %d (the prompt and the most output the request allows; set max_tokens "+
			"to ask for less). Please try again in %s.", l.TPM, r.Remaining, min(n, l.TPM), ratelimit.Duration(r.RetryAfter)))
	}
	l.Tokens = min(n, l.TPM)
	return nil
}

// LimitTokenHeaders sets the token headers from the request's own take
// (TakeTokens), which limit could not know yet.
func LimitTokenHeaders(w http.ResponseWriter, info *reqinfo.Info) {
	if l := &info.Limited; l.Took {
		limitHeaders(w.Header(), hdrLimitTokens, hdrRemainingTokens, hdrResetTokens,
			ratelimit.Result{Limit: l.TPM, Remaining: l.Remaining, Reset: l.Reset})
	}
}

// unlimit ends a request's part in its key's limits: it gives back its
// running slot and corrects its tokens to what it used (out.usage, once
// settled: nothing for a request that failed before the vendor answered).
func (h *Core) unlimit(info *reqinfo.Info, out *Outcome) {
	l := &info.Limited
	if h.RateLimits == nil {
		return
	}
	if sh := h.RateLimits.Shared; sh != nil {
		var d int64
		if l.Tokens > 0 {
			d = out.Usage.PromptTokens + out.Usage.CompletionTokens - l.Tokens
		}
		if l.Slot || d != 0 {
			sh.Done(info.KeyID, l.Slot, d, l.TPM, h.Clock())
		}
		l.Slot, l.Tokens = false, 0
		return
	}
	if l.Slot {
		l.Slot = false
		h.RateLimits.Running.Release(info.KeyID)
	}
	if l.Tokens > 0 {
		used := out.Usage.PromptTokens + out.Usage.CompletionTokens
		if d := used - l.Tokens; d != 0 {
			// A refund always goes through; usage above the bound (which
			// bounds it from above) is taken only if it fits.
			h.RateLimits.Tokens.Take(info.KeyID, d, l.TPM, h.Clock())
		}
		l.Tokens = 0
	}
}

// admitShared is limit's work done by a shared Admitter: the same
// headers and refusals from one call.
func admitShared(sh ratelimit.Admitter, hdr http.Header, key string, l gate.Limits, now time.Time, info *reqinfo.Info) error {
	a := sh.Admit(key, ratelimit.Limits{RPM: l.RPM, TPM: l.TPM, Concurrency: l.Concurrency}, now)
	if l.TPM > 0 {
		info.Limited.TPM = l.TPM
		limitHeaders(hdr, hdrLimitTokens, hdrRemainingTokens, hdrResetTokens, a.Tokens)
	}
	if l.RPM > 0 {
		limitHeaders(hdr, hdrLimitRequests, hdrRemainingRequests, hdrResetRequests, a.Requests)
	}
	switch a.Refused {
	case ratelimit.RefusedRequests:
		return tooManyRequests(l.RPM, a.Requests.RetryAfter)
	case ratelimit.RefusedConcurrency:
		return tooManyRunning(l.Concurrency)
	}
	info.Limited.Slot = a.Slot
	info.Limited.Ahead, info.Limited.Tokens = a.Ahead, a.Ahead.Tokens
	return nil
}

// tooManyRequests is the 429 of a reached RPM.
func tooManyRequests(rpm int64, retry time.Duration) error {
	return tooMany(typeRequests, retry, fmt.Sprintf("Rate limit reached for requests per minute (RPM): "+
		"Limit %d, Remaining 0, Requested 1. Please try again in %s.", rpm, ratelimit.Duration(retry)))
}

// tooManyRunning is the 429 of a reached concurrency limit.
func tooManyRunning(n int64) error {
	return tooMany(typeRequests, time.Second, fmt.Sprintf("Rate limit reached for concurrent requests: "+
		"this key may run %d at once. Wait for one to finish and try again.", n))
}

// limitHeaders sets one trio of x-ratelimit headers from r: their values
// are cut from one string and share one slice (two allocations, not six).
func limitHeaders(hdr http.Header, limit, remaining, reset string, r ratelimit.Result) {
	var buf [64]byte
	b := strconv.AppendInt(buf[:0], r.Limit, 10)
	i := len(b)
	b = strconv.AppendInt(b, r.Remaining, 10)
	j := len(b)
	s := string(ratelimit.AppendDuration(b, r.Reset))
	v := []string{s[:i], s[i:j], s[j:]}
	hdr[limit], hdr[remaining], hdr[reset] = v[0:1:1], v[1:2:2], v[2:3:3]
}

// tooMany is the 429 of a reached rate limit (typ: which kind).
func tooMany(typ string, retry time.Duration, msg string) *apierr.Error {
	return &apierr.Error{Status: http.StatusTooManyRequests, Type: typ, Code: apierr.CodeRateLimitExceeded,
		Message: msg, RetryAfter: max(retry, time.Second)}
}
