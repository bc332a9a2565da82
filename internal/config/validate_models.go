package config

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/modelgate/modelgate/internal/catalog"
	"github.com/modelgate/modelgate/internal/money"
)

var (
	currencyRe  = regexp.MustCompile(`^[A-Z]{3}$`)
	imageSizeRe = regexp.MustCompile(`^[1-9][0-9]{0,4}x[1-9][0-9]{0,4}$`)
)

// maxPriceRatio is the largest group price_ratio (100×), far above any real
// markup, so a misplaced decimal point is caught.
const maxPriceRatio = 100 * money.PPM

// billing checks the billing section.
func (v *validator) billing() {
	c := v.c
	if !currencyRe.MatchString(c.Billing.Currency) {
		v.errorf(c.line("billing.currency", c.line("billing", 0)), "billing.currency must be a 3-letter uppercase code like USD or EUR; got %q", c.Billing.Currency)
	}
	if c.Billing.DemoCredit < 0 {
		v.errorf(c.line("billing.demo_credit", c.line("billing", 0)), "billing.demo_credit must be 0 or more, got %s", catalog.FormatPrice(money.Micros(c.Billing.DemoCredit)))
	}
}

// catalogModels checks the models section (catalog overrides and additions).
func (v *validator) catalogModels() {
	c := v.c
	first := map[string]int{}
	for i, m := range c.Models {
		base := "models." + strconv.Itoa(i)
		line := m.Line
		if line == 0 {
			line = c.line(base, c.line("models", 0))
		}
		at := func(key string) int { return c.line(base+"."+key, line) }
		label := fmt.Sprintf("model #%d", i+1)
		switch {
		case m.ID == "":
			v.errorf(line, "%s: id is required", label)
		case strings.IndexFunc(m.ID, isSpaceOrControl) >= 0:
			v.errorf(at("id"), "%s: id %q must not contain spaces or control characters", label, m.ID)
		default:
			label = fmt.Sprintf("model %q", m.ID)
			if prev, dup := first[m.ID]; dup {
				v.errorf(at("id"), "%s: duplicate id (first listed at line %d)", label, prev)
			} else {
				first[m.ID] = at("id")
			}
		}
		if m.Modality != nil && !catalog.Modality(*m.Modality).Valid() {
			v.errorf(at("modality"), "%s: modality must be one of %s; got %q", label, modalityList(), *m.Modality)
		}
		for _, n := range []struct {
			key string
			val *int64
		}{{"context_window", m.ContextWindow}, {"max_output", m.MaxOutput}} {
			if n.val != nil && *n.val < 0 {
				v.errorf(at(n.key), "%s: %s must be 0 (unknown) or more, got %d", label, n.key, *n.val)
			}
		}
		if m.ContextWindow != nil && m.MaxOutput != nil && *m.ContextWindow > 0 && *m.MaxOutput > *m.ContextWindow {
			v.warnf(at("max_output"), "%s: max_output (%d) is larger than context_window (%d)", label, *m.MaxOutput, *m.ContextWindow)
		}
		for _, p := range []struct {
			key string
			val *Amount
		}{{"input", m.Input}, {"output", m.Output}, {"cached_input", m.CachedInput},
			{"audio_per_second", m.AudioPerSecond}, {"video_per_second", m.VideoPerSecond}} {
			if p.val != nil && *p.val < 0 {
				v.errorf(at(p.key), "%s: %s must not be negative, got %s", label, p.key, catalog.FormatPrice(money.Micros(*p.val)))
			}
		}
		v.images(m, label, base, at)
	}
}

// images checks one model's per-image prices.
func (v *validator) images(m ModelConfig, label, base string, at func(string) int) {
	seen := map[[2]string]bool{}
	for j, p := range m.Images {
		il := v.c.line(base+".images."+strconv.Itoa(j), at("images"))
		switch {
		case p.Size == "":
			v.errorf(il, "%s: image price #%d needs a size like 1024x1024", label, j+1)
		case !imageSizeRe.MatchString(p.Size):
			v.errorf(v.c.line(base+".images."+strconv.Itoa(j)+".size", il), "%s: image size %q must look like 1024x1024", label, p.Size)
		case seen[[2]string{p.Size, p.Quality}]:
			v.errorf(il, "%s: duplicate image price for size %s quality %q", label, p.Size, p.Quality)
		}
		seen[[2]string{p.Size, p.Quality}] = true
		if p.Price < 0 {
			v.errorf(v.c.line(base+".images."+strconv.Itoa(j)+".price", il), "%s: image price must not be negative, got %s", label, catalog.FormatPrice(money.Micros(p.Price)))
		}
	}
}

// priceRatio checks one group's price_ratio.
func (v *validator) priceRatio(name string, g Group, gl int) {
	if g.PriceRatio <= 0 || int64(g.PriceRatio) > maxPriceRatio {
		v.errorf(v.c.line("groups."+name+".price_ratio", gl), "group %q: price_ratio must be more than 0 and at most 100, got %s", name, money.FormatRatio(int64(g.PriceRatio)))
	}
}

func modalityList() string {
	names := make([]string, 0, len(catalog.Modalities))
	for _, m := range catalog.Modalities {
		names = append(names, string(m))
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}
