package app

import (
	"slices"
	"strings"

	"github.com/modelgate/modelgate/internal/billing"
	"github.com/modelgate/modelgate/internal/catalog"
	"github.com/modelgate/modelgate/internal/console"
	"github.com/modelgate/modelgate/internal/gate"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/route"
)

// prices is the console's price list (console.PriceList) over the live
// config: the models the groups serve, at the prices billing charges.
type prices struct {
	live func() *live // the current config
}

// PriceList lists every public model some group serves and that billing
// can price (a model it cannot price is refused, so it is not offered), in
// id order. A model's price is its catalogue entry's, found the way billing
// finds it (by public id, else by the upstream id of its first
// deployment), times each group's price_ratio with billing.Scale: what a
// million tokens, an image or a second costs a key of that group.
func (p *prices) PriceList() []console.ModelPrice {
	l := p.live()
	ms := l.router.Models()
	ids := make([]string, len(ms))
	for i, m := range ms {
		ids[i] = m.ID
	}
	policy := gate.NewPolicy(groupPatterns(l.cfg), ids)
	groups := make([]string, 0, len(l.cfg.Groups))
	for name := range l.cfg.Groups {
		groups = append(groups, name)
	}
	slices.Sort(groups)
	var out []console.ModelPrice
	for _, rm := range ms {
		cm, ok := catalogEntry(l, rm)
		if !ok || !cm.Priced() || !cm.Modality.Valid() {
			continue
		}
		mp := console.ModelPrice{ID: rm.ID, OwnedBy: rm.OwnedBy, Modality: string(cm.Modality), ContextWindow: cm.ContextWindow,
			MaxOutput: cm.MaxOutput, Capabilities: capabilities(cm), Free: cm.Free}
		for _, g := range groups {
			if policy.Allows(g, rm.ID) {
				mp.Groups = append(mp.Groups, groupPrice(cm, g, l.bill.Ratio(g)))
			}
		}
		if len(mp.Groups) > 0 {
			out = append(out, mp)
		}
	}
	slices.SortFunc(out, func(a, b console.ModelPrice) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// catalogEntry is the catalogue entry billing prices m by: its public id's,
// else the upstream id's of its first deployment.
func catalogEntry(l *live, m route.Model) (catalog.Model, bool) {
	i := slices.IndexFunc(l.deps, func(d route.Deployment) bool { return d.Model == m.ID })
	upstream := m.ID
	if i >= 0 {
		upstream = l.deps[i].Upstream
	}
	return lookupModel(l.cat, m.ID, upstream)
}

// capabilities are what the catalogue says m does, in a fixed order.
func capabilities(m catalog.Model) []string {
	var out []string
	add := func(ok bool, name string) {
		if ok {
			out = append(out, name)
		}
	}
	_, search := m.ToolCalls["web_search"]
	add(m.Tools, "tools")
	add(m.Vision, "vision")
	add(m.Reasoning, "reasoning")
	add(search || m.Searches, "web_search")
	add(m.AudioInput > 0, "audio_in")
	add(m.AudioOutput > 0, "audio_out")
	return out
}

// groupPrice is m's price for a key of group at ratioPPM: per million
// tokens (input, cached input, output; an image model billed by token
// shows its image output tokens as output), per image of its default size
// and quality, per second of audio or video. A free model costs zero in
// what its modality is billed by.
func groupPrice(m catalog.Model, group string, ratioPPM int64) console.GroupPrice {
	g := console.GroupPrice{Group: group}
	at := func(v money.Micros, show bool) *money.Micros {
		if !show {
			return nil
		}
		if m.Free {
			v = 0 // never charged, whatever its list price
		}
		c, err := billing.Scale(v, 1, ratioPPM)
		if err != nil {
			return nil // beyond the arithmetic: billing refuses it too
		}
		return &c
	}
	switch m.Modality {
	case catalog.Chat, catalog.Completion, catalog.Embedding:
		g.Input = at(m.Input, m.Input > 0 || m.Free)
		g.CachedInput = at(m.CachedInput, m.CachedInput > 0)
		g.Output = at(m.Output, m.Output > 0 || m.Free && m.Modality != catalog.Embedding)
	case catalog.Image:
		if m.TokenPricedImages() {
			g.Input = at(m.Input, true)
			g.CachedInput = at(m.CachedInput, m.CachedInput > 0)
			g.Output = at(m.ImageOutput, true)
		}
		img, ok := defaultImagePrice(m)
		g.Image = at(img, ok || m.Free)
	case catalog.Audio:
		g.PerSecond = at(m.AudioPerSecond, m.AudioPerSecond > 0 || m.Free)
	case catalog.Video:
		v := m.VideoPerSecond
		if len(m.ImageSizes) > 0 {
			v = m.VideoPriceFor(m.ImageSizes[0])
		}
		g.PerSecond = at(v, v > 0 || m.Free)
	}
	return g
}

// defaultImagePrice is the price of one image of m's default size (its
// first allowed size, else its first priced one) at the default quality.
func defaultImagePrice(m catalog.Model) (money.Micros, bool) {
	if len(m.Images) == 0 {
		return 0, false
	}
	size := m.Images[0].Size
	if len(m.ImageSizes) > 0 {
		size = m.ImageSizes[0]
	}
	if p, ok := m.ImagePriceFor(size, ""); ok {
		return p, true
	}
	return m.ImagePriceFor(m.Images[0].Size, "")
}
