package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/catalog"
	"github.com/modelgate/modelgate/internal/console/web"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/route"
)

// testTimeout bounds the admin page's "send a test request".
const testTimeout = 20 * time.Second

// operator shows the configuration to the console's admin pages and sends
// their test requests straight to a provider's adapter.
type operator struct {
	live     func() *live // the current config
	currency string
}

func (o *operator) Providers() []web.AdminProvider {
	l := o.live()
	health := map[string]route.ProviderHealth{}
	for _, h := range l.router.Health() {
		health[h.Name] = h
	}
	out := make([]web.AdminProvider, 0, len(l.cfg.Providers))
	for _, p := range l.cfg.Providers {
		n := 0
		for _, d := range l.deps {
			if d.Provider == p.Name {
				n++
			}
		}
		h := health[p.Name]
		out = append(out, web.AdminProvider{Name: p.Name, Type: p.Type, BaseURL: p.BaseURL, Models: n,
			Circuit: h.Circuit.String(), CircuitUntil: h.Until, Keys: h.Keys, KeysOut: h.DeadKeys})
	}
	return out
}

func (o *operator) Models() []web.AdminModel {
	l := o.live()
	seen := map[string]bool{}
	var out []web.AdminModel
	for _, d := range l.deps {
		if seen[d.Model] {
			continue
		}
		seen[d.Model] = true
		m, _ := l.cat.Lookup(d.Model)
		out = append(out, web.AdminModel{ID: d.Model, Kind: string(m.Modality), Provider: d.Provider, Price: o.price(m)})
	}
	slices.SortFunc(out, func(a, b web.AdminModel) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// price is a model's price in a few words.
func (o *operator) price(m catalog.Model) string {
	p := func(v money.Micros) string { return web.Money(v, o.currency) }
	switch m.Modality {
	case catalog.Chat, catalog.Completion:
		if m.Input == 0 && m.Output == 0 {
			return "free"
		}
		return fmt.Sprintf("%s in / %s out per 1M tokens", p(m.Input), p(m.Output))
	case catalog.Embedding:
		return fmt.Sprintf("%s per 1M tokens", p(m.Input))
	case catalog.Audio:
		return fmt.Sprintf("%s per second", p(m.AudioPerSecond))
	case catalog.Video:
		return fmt.Sprintf("%s per second", p(m.VideoPerSecond))
	case catalog.Image:
		if m.TokenPricedImages() {
			return fmt.Sprintf("%s text / %s image in, %s image out per 1M tokens", p(m.Input), p(m.ImageInput), p(m.ImageOutput))
		}
		if len(m.Images) > 0 {
			return fmt.Sprintf("from %s per image", p(m.Images[0].Price))
		}
	}
	return "not priced"
}

func (o *operator) Groups() []web.AdminGroup {
	l := o.live()
	out := make([]web.AdminGroup, 0, len(l.cfg.Groups))
	for name, g := range l.cfg.Groups {
		out = append(out, web.AdminGroup{Name: name, Models: g.Models, Ratio: money.FormatRatio(int64(g.PriceRatio))})
	}
	slices.SortFunc(out, func(a, b web.AdminGroup) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// TestProvider asks the provider's first chat model for one short reply.
func (o *operator) TestProvider(ctx context.Context, name string) web.TestResult {
	res := web.TestResult{Provider: name}
	l := o.live()
	var dep *route.Deployment
	for i, d := range l.deps {
		if m, ok := l.cat.Lookup(d.Model); d.Provider == name && ok && m.Modality == catalog.Chat {
			dep = &l.deps[i]
			break
		}
	}
	if dep == nil {
		res.Message = "This provider serves no chat model, so there is nothing to test with a chat request."
		return res
	}
	res.Model = dep.Model
	ctx, cancel := context.WithTimeout(ctx, testTimeout)
	defer cancel()
	body := fmt.Appendf(nil, `{"model":%q,"messages":[{"role":"user","content":"Reply with the word OK."}],"max_tokens":16}`, dep.Model)
	start := time.Now()
	resp, err := dep.Chatter.Chat(ctx, &provider.ChatRequest{PublicModel: dep.Model, UpstreamModel: dep.Upstream, Body: body, MaxOutput: 16})
	res.Latency = time.Since(start)
	if err != nil {
		res.Message = testFailure(err)
		return res
	}
	res.OK = true
	res.Message = firstWords(resp.Body)
	return res
}

// testFailure is what the operator reads of a failed test: the vendor's
// or the connection's own words (the cause: "provider x: HTTP 529:
// overloaded_error Overloaded", "dial tcp …: connection refused"), not
// the gateway's answer to a client.
func testFailure(err error) string {
	var e *apierr.Error
	if errors.As(err, &e) && e.Err != nil {
		return e.Err.Error()
	}
	return err.Error()
}

// firstWords is the start of a chat completion's answer, for the test
// result.
func firstWords(body []byte) string {
	var r struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if json.Unmarshal(body, &r) != nil || len(r.Choices) == 0 {
		return "The provider answered, but not with a chat completion."
	}
	s := strings.TrimSpace(r.Choices[0].Message.Content)
	if rs := []rune(s); len(rs) > 120 {
		s = string(rs[:120]) + "…"
	}
	return "Answered: " + s
}
