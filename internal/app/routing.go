package app

import (
	"time"

	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/route"
	"github.com/modelgate/modelgate/internal/telemetry"
)

// newRouter builds the router of deps with the config's circuit breaker
// and strategy.
func newRouter(cfg *config.Config, deps []route.Deployment, now func() time.Time) *route.Router {
	return route.New(deps, route.Options{
		Health: route.Health{Failures: cfg.Circuit.Failures, Cooldown: time.Duration(cfg.Circuit.Cooldown),
			MaxCooldown: time.Duration(cfg.Routing.MaxCooldown)},
		Latency: cfg.Routing.Strategy == "latency",
		Now:     now,
	})
}

// retryOf is the handler's retry policy from the config.
func retryOf(cfg *config.Config) route.Retry {
	r := cfg.Routing
	return route.Retry{MaxAttempts: r.MaxAttempts, Backoff: time.Duration(r.Backoff), MaxBackoff: time.Duration(r.MaxBackoff),
		Deadline: time.Duration(r.Deadline)}.WithDefaults()
}

// firstByte is the handler's per-model first-byte timeout: nil when the
// config sets none (the providers' idle_timeout applies), so the request
// path does not look for one.
func firstByte(cfg *config.Config) func(string) time.Duration {
	if cfg.Routing.FirstByteTimeout == 0 {
		set := false
		for _, m := range cfg.Models {
			set = set || m.FirstByteTimeout != nil
		}
		if !set {
			return nil
		}
	}
	byModel := map[string]time.Duration{}
	for _, m := range cfg.Models {
		if m.FirstByteTimeout != nil {
			byModel[m.ID] = time.Duration(*m.FirstByteTimeout)
		}
	}
	all := time.Duration(cfg.Routing.FirstByteTimeout)
	return func(model string) time.Duration {
		if d, ok := byModel[model]; ok {
			return d
		}
		return all
	}
}

// circuits reads the current router's providers' circuits for the metrics.
func (a *App) circuits() func() []telemetry.Circuit {
	return func() []telemetry.Circuit {
		hs := a.live.Load().router.Health()
		out := make([]telemetry.Circuit, len(hs))
		for i, h := range hs {
			out[i] = telemetry.Circuit{Provider: h.Name, State: int(h.Circuit), Trips: h.Trips, KeysOut: h.DeadKeys, KeyFaults: h.KeyFaults}
		}
		return out
	}
}
