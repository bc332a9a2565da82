package app

import (
	"context"
	"fmt"

	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/lifecycle"
	"github.com/modelgate/modelgate/internal/ratelimit"
	"github.com/modelgate/modelgate/internal/ratelimit/redislimit"
)

// rateLimits builds the keys' rate limiters: in memory (per replica)
// without redis (on PostgreSQL, which suggests several replicas, it says
// so at start), in Redis (shared by every replica) with it. A configured
// Redis that does not answer is an error: the gateway must not start with
// limits that would only ever fail open.
func (a *App) rateLimits(ctx context.Context, cfg *config.Config) (*lifecycle.RateLimits, error) {
	if cfg.Redis == "" {
		if kind, _, _ := cfg.DatabaseKind(); kind == "postgres" {
			a.log.Warn("no redis configured: rate limits (rpm, tpm, concurrency) are kept per replica, so with several replicas " +
				"a key gets its limit on each; set redis: to share them")
		}
		return &lifecycle.RateLimits{Requests: ratelimit.NewMemory(), Tokens: ratelimit.NewMemory(), Running: ratelimit.NewSlots()}, nil
	}
	c, err := redislimit.Open(ctx, cfg.Redis)
	if err != nil {
		return nil, fmt.Errorf("rate limits: %w", err)
	}
	a.redis = c
	o := redislimit.Options{Log: a.log}
	slots := redislimit.NewSlots(c, redislimit.SlotOptions{Options: o, Instance: a.instance})
	a.log.Info("rate limits are kept in Redis, shared by every replica", "instance", a.instance)
	req, tok := redislimit.NewLimiter(c, "req", o), redislimit.NewLimiter(c, "tok", o)
	a.slots = redislimit.NewAdmitter(req, tok, slots, 0)
	a.redisFailures = a.slots.Failures
	return &lifecycle.RateLimits{Requests: req, Tokens: tok, Running: slots, Shared: a.slots}, nil
}

// runSlots keeps the Redis slots' lease and writes what requests that
// ended counted until ctx ends (nothing without Redis); the returned func waits for it to stop.
func (a *App) runSlots(ctx context.Context) (wait func()) {
	if a.slots == nil {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		_ = a.slots.Run(ctx) // it only returns when ctx ends
		close(done)
	}()
	return func() { <-done }
}

// closeRedis closes the Redis client, if any.
func (a *App) closeRedis() error {
	if a.redis == nil {
		return nil
	}
	if err := a.redis.Close(); err != nil {
		return fmt.Errorf("redis: close: %w", err)
	}
	return nil
}
