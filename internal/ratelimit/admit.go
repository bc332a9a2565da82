package ratelimit

import "time"

// Limits are one key's limits; 0 is no limit of that kind.
type Limits struct {
	RPM, TPM, Concurrency int64
}

// Refusal says which limit refused a request at admission.
type Refusal uint8

// The limits Admit can refuse a request on.
const (
	NotRefused         Refusal = iota
	RefusedRequests            // requests per minute
	RefusedConcurrency         // requests running at once
)

// Admission is what Admitter.Admit found.
type Admission struct {
	// Requests is the request counted against RPM (zero without one).
	Requests Result
	// Tokens is the token allowance as it stands, read without taking
	// anything (for the headers; zero without a TPM).
	Tokens Result
	// Refused is the limit that refused the request, if any. A request
	// refused on concurrency has still taken its unit of RPM, as with the
	// limits checked one by one.
	Refused Refusal
	// Slot reports that a running slot was taken: Done gives it back.
	Slot bool
	// Ahead is what was taken of the request's tokens before they were
	// known (see Ahead); pass it to TakeTokens.
	Ahead Ahead
}

// Ahead is what an Admitter took of a request's tokens at admission,
// before the request was read: as many as the key's last request needed,
// when they fit with as many again to spare (so that near its limit a key
// is counted exactly as without). TakeTokens then needs no call of its own
// when the request needs no more; what it does not need goes back.
type Ahead struct {
	Tokens    int64         // taken ahead (0: none)
	Remaining int64         // the allowance left after them
	Reset     time.Duration // until the allowance is whole again
}

// Admitter checks a request against all of its key's limits at once, and
// settles them when the request ends. A shared implementation (Redis) so
// costs a request one round trip at admission and one for its tokens,
// instead of one per limit; checking Requests, Tokens and Running one by
// one (the in-memory limiters) gives the same answers.
type Admitter interface {
	// Admit reads the key's token allowance, counts the request against
	// its RPM and, when that allows it, takes one of its running slots.
	Admit(key string, l Limits, now time.Time) Admission
	// TakeTokens takes n tokens of the key's allowance of tpm (see
	// Limiter.Take), counting what Admit took ahead for the request
	// (all of it goes back when the rest is refused). Corrections Done
	// has not yet written are written first, so a client that waits for
	// each answer sees its refunds.
	TakeTokens(key string, n int64, ahead Ahead, tpm int64, now time.Time) Result
	// Done ends a request: it gives back its slot (when slot) and takes
	// tokens more from the key's allowance of tpm (a negative number
	// gives them back; 0 corrects nothing): what it used less what it
	// took, ahead or with TakeTokens. It may return before a shared
	// store has it; the same key's next Admit or TakeTokens on this
	// replica sees it, the other replicas within a short flush interval.
	Done(key string, slot bool, tokens, tpm int64, now time.Time)
}
