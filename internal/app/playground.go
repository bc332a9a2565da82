package app

import (
	"net/http"
	"slices"
	"strings"

	"github.com/modelgate/modelgate/internal/catalog"
	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/console/web"
	"github.com/modelgate/modelgate/internal/gate"
	"github.com/modelgate/modelgate/internal/server"
)

// playground is the console's way into the gateway's request path
// (console.Playground): a turn is served by the current /v1 routes as the
// key the console names, through gate.WithKeyID, so it gets exactly what
// a client holding that key's secret gets.
type playground struct {
	app    *App
	origin server.Origin // the gateway's public origin, for the /v1 base URL
}

// Models are the current config's chat models that group's keys may use,
// sorted by id, with the most tokens each may be asked for.
func (p playground) Models(group string) []web.PlaygroundModel {
	l := p.app.live.Load()
	g, ok := l.cfg.Groups[group]
	if !ok {
		return nil
	}
	pol := gate.NewPolicy(map[string][]string{group: g.Models}, modelIDs(l.router))
	var out []web.PlaygroundModel
	for _, m := range l.router.Models() {
		cm, ok := l.cat.Lookup(m.ID)
		if !ok || cm.Modality != catalog.Chat || !pol.Allows(group, m.ID) {
			continue
		}
		out = append(out, web.PlaygroundModel{ID: m.ID, MaxOutput: cm.MaxOutput})
	}
	slices.SortFunc(out, func(a, b web.PlaygroundModel) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// BaseURL is the gateway's /v1 base URL.
func (p playground) BaseURL(r *http.Request) string { return p.origin.Base(r) + "/v1" }

// ServeChat serves r with the current routes as the key keyID. Only the
// path /v1/chat/completions is served: the routes are the public ones.
func (p playground) ServeChat(w http.ResponseWriter, r *http.Request, keyID string) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, "playground: chat completions only", http.StatusInternalServerError)
		return
	}
	r.Header.Del("Authorization")
	(*p.app.current.Load()).ServeHTTP(w, r.WithContext(gate.WithKeyID(r.Context(), keyID)))
}

// wirePlayground gives the console (when on) its playground.
func (a *App) wirePlayground(cfg *config.Config) error {
	if a.con == nil {
		return nil
	}
	o, err := origin(cfg, cfg.PublicURL)
	if err != nil {
		return err
	}
	a.con.Playground = playground{app: a, origin: o}
	return nil
}
