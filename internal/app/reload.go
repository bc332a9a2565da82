package app

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/modelgate/modelgate/internal/background"
	"github.com/modelgate/modelgate/internal/billing"
	"github.com/modelgate/modelgate/internal/catalog"
	"github.com/modelgate/modelgate/internal/charge"
	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/gate"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/route"
	"github.com/modelgate/modelgate/internal/video"
)

// live is the part of the gateway a config reload replaces whole:
// providers and their deployments, the router (its health starts afresh,
// refused keys back in rotation), prices, groups and routing. Requests
// read it once (the handler they run in holds its router and policy), so
// one in flight during a reload finishes on what it started with.
type live struct {
	cfg        *config.Config
	cat        *catalog.Catalog
	deps       []route.Deployment
	router     *route.Router
	bill       *charge.Billing                // this config's prices and ratios
	makers     map[string]provider.VideoMaker // by provider name
	responders map[string]provider.Responder  // native Responses adapters, by provider name
}

// newLive builds the reloadable part from cfg.
func (a *App) newLive(cfg *config.Config) (*live, error) {
	cat, err := Catalog(cfg)
	if err != nil {
		return nil, err
	}
	deps, err := deployments(cfg, cat, a.tokens, a.opts)
	if err != nil {
		return nil, err
	}
	describe(deps, cat)
	l := &live{cfg: cfg, cat: cat, deps: deps, router: newRouter(cfg, deps, a.now),
		bill: newBilling(cfg, cat, a.reserver, a.tokens), makers: map[string]provider.VideoMaker{},
		responders: map[string]provider.Responder{}}
	for _, d := range deps {
		if vm, ok := d.Chatter.(provider.VideoMaker); ok {
			l.makers[d.Provider] = vm
		}
		if rs, ok := d.Chatter.(provider.Responder); ok && rs.NativeResponses() {
			l.responders[d.Provider] = rs
		}
	}
	return l, nil
}

// liveBilling is the billing every part of the gateway shares: its prices
// and group ratios are the current config's.
func (a *App) liveBilling() *charge.Billing {
	return &charge.Billing{
		Prices: func(public, upstream string) (billing.ModelPrice, bool) {
			return a.live.Load().bill.Prices(public, upstream)
		},
		Ratio:    func(group string) int64 { return a.live.Load().bill.Ratio(group) },
		Reserver: a.reserver,
		Tokens:   a.tokens,
	}
}

// liveMakers and liveResponders find a provider's adapters in the current
// config (a video task or background response made before a reload is
// polled with its provider's adapter after it, when the provider is still
// there).
func (a *App) liveMakers() video.Makers {
	return func(name string) (provider.VideoMaker, bool) {
		vm, ok := a.live.Load().makers[name]
		return vm, ok
	}
}

func (a *App) liveResponders() background.Responders {
	return func(name string) (provider.Responder, bool) {
		rs, ok := a.live.Load().responders[name]
		return rs, ok
	}
}

// handlerFor is the /v1 handler of l: the app's handler with l's router,
// policy and routing (in a copy of its lifecycle core: requests in flight
// keep the one they started with).
func (a *App) handlerFor(l *live) http.Handler {
	h := *a.handler
	core := *h.Core
	core.Router = l.router
	core.Policy = gate.NewPolicy(groupPatterns(l.cfg), modelIDs(l.router)).WithRules(groupRules(l.cfg))
	core.Retry = retryOf(l.cfg)
	core.FirstByte = firstByte(l.cfg)
	h.Core = &core
	return a.mux(&h, l.cfg)
}

// serveHTTP serves every request with the current mux.
func (a *App) serveHTTP(w http.ResponseWriter, r *http.Request) {
	(*a.current.Load()).ServeHTTP(w, r)
}

// Reload applies cfg (loaded, defaults applied and validated by the
// caller) to the running gateway: providers, groups, models and prices,
// routing and circuit settings. Requests in flight finish on the config
// they started with; new ones see cfg. The settings that shape the process
// (listen, database, timeouts, usage, console, payments, metrics,
// telemetry, ...) need a restart: they are kept, and named in the
// warnings Reload returns for the log.
func (a *App) Reload(cfg *config.Config) (warnings []string, err error) {
	if ps := cfg.Validate(); config.HasErrors(ps) {
		var msgs []string
		for _, p := range ps {
			if !p.Warning {
				msgs = append(msgs, p.String())
			}
		}
		return nil, fmt.Errorf("config: %s", strings.Join(msgs, "; "))
	}
	l, err := a.newLive(cfg)
	if err != nil {
		return nil, err
	}
	warnings = restartOnly(a.live.Load().cfg, cfg)
	a.live.Store(l)
	h := a.handlerFor(l)
	a.current.Store(&h)
	a.log.Info("config reloaded", "providers", len(cfg.Providers), "models", len(l.router.Models()), "groups", len(cfg.Groups))
	return warnings, nil
}

// restartOnly names the settings that differ between old and new but only
// take effect on a restart.
func restartOnly(old, new *config.Config) []string {
	var out []string
	check := func(name string, changed bool) {
		if changed {
			out = append(out, name+" changed: it takes effect on a restart")
		}
	}
	check("listen", old.Listen != new.Listen)
	check("database", old.Database != new.Database)
	check("redis", old.Redis != new.Redis)
	check("metrics", (old.Metrics == nil) != (new.Metrics == nil) || old.Metrics != nil && *old.Metrics != *new.Metrics)
	check("telemetry", old.Telemetry.Enabled() != new.Telemetry.Enabled() ||
		old.Telemetry.Enabled() && *old.Telemetry != *new.Telemetry)
	check("console", (old.Console == nil) != (new.Console == nil))
	check("shutdown_timeout", old.ShutdownTimeout != new.ShutdownTimeout)
	check("usage", old.Usage != new.Usage)
	for name := range old.Groups {
		if _, ok := new.Groups[name]; !ok {
			out = append(out, "group "+name+" was removed: its keys can use no model until it is back")
		}
	}
	return out
}
