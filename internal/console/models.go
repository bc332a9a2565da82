package console

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

// PriceList is the gateway's price list as the Models page and
// GET /console/api/models show it: what each model costs in each group.
type PriceList interface {
	// PriceList is every model the configured groups serve, sorted by id,
	// each with its price in every group that serves it (the group's
	// price_ratio applied as billing applies it).
	PriceList() []ModelPrice
}

// ModelPrice is one model of the price list.
type ModelPrice struct {
	ID       string
	OwnedBy  string // the vendor, as /v1/models says
	Modality string // chat, completion, embedding, image, audio or video
	// ContextWindow and MaxOutput are in tokens; 0 unknown.
	ContextWindow, MaxOutput int64
	// Capabilities are what the catalogue knows the model does: "tools",
	// "vision", "reasoning", "web_search", "audio_in", "audio_out".
	Capabilities []string
	Free         bool         // explicitly free (the demo models)
	Groups       []GroupPrice // by group name
}

// GroupPrice is a model's price in one group. A nil price is one the model
// is not billed by: Input, CachedInput and Output are per million tokens
// (CachedInput nil: cached tokens cost Input), Image per image of the
// model's default size and quality, PerSecond per second of audio or video.
type GroupPrice struct {
	Group                                        string
	Input, CachedInput, Output, Image, PerSecond *money.Micros
}

// modelJSON is a model of GET /console/api/models.
type modelJSON struct {
	ID            string           `json:"id"`
	OwnedBy       string           `json:"owned_by"`
	Modality      string           `json:"modality"`
	ContextWindow *int64           `json:"context_window"` // null: unknown
	MaxOutput     *int64           `json:"max_output"`
	Capabilities  []string         `json:"capabilities"`
	Free          bool             `json:"free,omitempty"`
	Groups        []groupPriceJSON `json:"groups"`
}

// groupPriceJSON is a model's price in one group: decimal strings with six
// places, omitted where the model is not billed so.
type groupPriceJSON struct {
	Group       string  `json:"group"`
	Input       *string `json:"input,omitempty"`
	CachedInput *string `json:"cached_input,omitempty"`
	Output      *string `json:"output,omitempty"`
	Image       *string `json:"image,omitempty"`
	PerSecond   *string `json:"per_second,omitempty"`
}

func priceText(m *money.Micros) *string {
	if m == nil {
		return nil
	}
	s := m.String()
	return &s
}

func positive(n int64) *int64 {
	if n <= 0 {
		return nil
	}
	return &n
}

// viewer is who reads the price list: a signed-in user, or nobody when
// console.public_models lets anyone read it.
type viewer struct {
	signedIn bool
	s        store.Session
	a        store.Account
}

// priceViewer finds the request's user; without one it answers 401 (false)
// unless the price list is public.
func (c *Console) priceViewer(r *http.Request) (viewer, bool) {
	s, a, err := c.session(r)
	if err == nil {
		return viewer{signedIn: true, s: s, a: a}, true
	}
	if !errors.Is(err, store.ErrNotFound) && !errors.Is(err, errNoSession) && !errors.Is(err, errExpired) {
		c.log().ErrorContext(r.Context(), "console: session lookup", "err", err)
	}
	return viewer{}, c.PublicModels
}

// openGroups are the groups whose prices v may see: the signup groups, then
// the groups of the user's keys that are not revoked (a key an operator
// bound to another group), each once.
func (c *Console) openGroups(ctx context.Context, v viewer) ([]string, error) {
	groups := slices.Clone(c.Groups)
	if !v.signedIn {
		return groups, nil
	}
	keys, err := c.Store.KeysOf(ctx, v.a.ID)
	if err != nil {
		return nil, err
	}
	var extra []string
	for _, k := range keys {
		if !k.Revoked() && k.Group != "" && !slices.Contains(groups, k.Group) && !slices.Contains(extra, k.Group) {
			extra = append(extra, k.Group)
		}
	}
	slices.Sort(extra)
	return append(groups, extra...), nil
}

// visiblePrices is the price list cut to groups: each model keeps only
// those of its groups, in the order of groups; a model none of them
// serves is left out.
func (c *Console) visiblePrices(groups []string) []ModelPrice {
	if c.Prices == nil {
		return nil
	}
	var out []ModelPrice
	for _, m := range c.Prices.PriceList() {
		var gs []GroupPrice
		for _, g := range groups {
			if i := slices.IndexFunc(m.Groups, func(p GroupPrice) bool { return p.Group == g }); i >= 0 {
				gs = append(gs, m.Groups[i])
			}
		}
		if len(gs) > 0 {
			m.Groups = gs
			out = append(out, m)
		}
	}
	slices.SortFunc(out, func(a, b ModelPrice) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// models answers GET /console/api/models: the models the groups open to
// the user serve, with the price the user would pay in each.
func (c *Console) models(w http.ResponseWriter, r *http.Request) {
	v, ok := c.priceViewer(r)
	if !ok {
		fail(w, notSignedIn())
		return
	}
	groups, err := c.openGroups(r.Context(), v)
	if err != nil {
		fail(w, apierr.Internal(err))
		return
	}
	data := []modelJSON{}
	for _, m := range c.visiblePrices(groups) {
		j := modelJSON{ID: m.ID, OwnedBy: m.OwnedBy, Modality: m.Modality, ContextWindow: positive(m.ContextWindow),
			MaxOutput: positive(m.MaxOutput), Capabilities: m.Capabilities, Free: m.Free}
		if j.Capabilities == nil {
			j.Capabilities = []string{}
		}
		for _, g := range m.Groups {
			j.Groups = append(j.Groups, groupPriceJSON{Group: g.Group, Input: priceText(g.Input), CachedInput: priceText(g.CachedInput),
				Output: priceText(g.Output), Image: priceText(g.Image), PerSecond: priceText(g.PerSecond)})
		}
		data = append(data, j)
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": data, "currency": c.Currency})
}
