// Package chain records how much context each stored Responses response
// holds, so that a request continuing one (previous_response_id) reserves
// what the vendor bills for that context, which its own body does not
// show.
//
// A response's size (the vendor's input and output tokens) is known when
// its answer ends. Sizes.Record makes it known at once to this process and
// writes it to the store in batches (Run), off the request path; other
// replicas see it a flush later. Until then, and when a size is lost (a
// crash before the flush), a continuing request reserves the response's
// bound: what the response's own request reserved, saved with its owner.
package chain

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/modelgate/modelgate/internal/store"
)

// Store is the part of store.Store the package uses.
type Store interface {
	StoredResponse(ctx context.Context, id string) (store.StoredResponse, error)
	SizeResponses(ctx context.Context, sizes []store.ResponseSize) error
}

// Defaults of Options.
const (
	DefaultEvery      = time.Second
	DefaultMaxPending = 1 << 16
	flushTimeout      = 10 * time.Second
)

// Options tune Sizes; zero fields take the defaults.
type Options struct {
	Every      time.Duration // how often pending sizes are written (DefaultEvery)
	MaxPending int           // sizes kept unwritten at most; more are dropped with a warning (DefaultMaxPending)
	Log        *slog.Logger  // nil: discarded
}

// Sizes records stored responses' sizes. Its methods are safe for
// concurrent use.
type Sizes struct {
	st  Store
	o   Options
	log *slog.Logger

	mu      sync.Mutex
	pending map[string]store.ResponseSize // not written yet; this process reads them from here
}

// New returns Sizes writing to st.
func New(st Store, o Options) *Sizes {
	if o.Every <= 0 {
		o.Every = DefaultEvery
	}
	if o.MaxPending <= 0 {
		o.MaxPending = DefaultMaxPending
	}
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Sizes{st: st, o: o, log: log, pending: map[string]store.ResponseSize{}}
}

// Record notes that the response id ended with input and output tokens.
func (s *Sizes) Record(id string, input, output int64) {
	if id == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.pending[id]; !ok && len(s.pending) >= s.o.MaxPending {
		s.log.Warn("chain: too many response sizes waiting for the store; this one is dropped (a request continuing it reserves its bound)",
			"response_id", id)
		return
	}
	s.pending[id] = store.ResponseSize{ID: id, InputTokens: input, OutputTokens: output}
}

// Lookup returns what was recorded of the response id, with the size this
// process recorded when the store does not have it yet.
func (s *Sizes) Lookup(ctx context.Context, id string) (store.StoredResponse, error) {
	r, err := s.st.StoredResponse(ctx, id)
	if err != nil {
		return r, err
	}
	s.mu.Lock()
	z, ok := s.pending[id]
	s.mu.Unlock()
	if ok {
		r.Sized, r.InputTokens, r.OutputTokens = true, z.InputTokens, z.OutputTokens
	}
	return r, nil
}

// Tokens is how many tokens of context a request continuing r makes the
// vendor bill: its input and output when sized, else its bound, else (a
// response saved before bounds were kept) fallback.
func Tokens(r store.StoredResponse, fallback int64) int64 {
	switch {
	case r.Sized:
		return r.InputTokens + r.OutputTokens
	case r.Bound > 0:
		return r.Bound
	}
	return fallback
}

// Run writes pending sizes every Options.Every until ctx ends, then once
// more (so a clean shutdown loses none); it returns nil.
func (s *Sizes) Run(ctx context.Context) error {
	t := time.NewTicker(s.o.Every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), flushTimeout)
			defer cancel()
			if err := s.Flush(fctx); err != nil {
				s.log.Error("chain: writing response sizes at shutdown failed; requests continuing them reserve their bounds", "err", err)
			}
			return nil
		case <-t.C:
			if err := s.Flush(ctx); err != nil && ctx.Err() == nil {
				s.log.Warn("chain: writing response sizes failed; will retry", "err", err)
			}
		}
	}
}

// Flush writes the pending sizes now; those written are no longer pending.
func (s *Sizes) Flush(ctx context.Context) error {
	s.mu.Lock()
	batch := make([]store.ResponseSize, 0, len(s.pending))
	for _, z := range s.pending {
		batch = append(batch, z)
	}
	s.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	if err := s.st.SizeResponses(ctx, batch); err != nil {
		return fmt.Errorf("chain: write %d response sizes: %w", len(batch), err)
	}
	s.mu.Lock()
	for _, z := range batch {
		if s.pending[z.ID] == z { // unless recorded again meanwhile
			delete(s.pending, z.ID)
		}
	}
	s.mu.Unlock()
	return nil
}
