package config

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/modelgate/modelgate/internal/catalog"
	"github.com/modelgate/modelgate/internal/money"
)

var currencyRe = regexp.MustCompile(`^[A-Z]{3}$`)

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
			{"audio_per_second", m.AudioPerSecond}, {"video_per_second", m.VideoPerSecond},
			{"audio_input", m.AudioInput}, {"audio_output", m.AudioOutput},
			{"image_input", m.ImageInput}, {"cached_image_input", m.CachedImageInput}, {"image_output", m.ImageOutput}} {
			if p.val != nil && *p.val < 0 {
				v.errorf(at(p.key), "%s: %s must not be negative, got %s", label, p.key, catalog.FormatPrice(money.Micros(*p.val)))
				if p.key == "video_per_second" {
					v.flag(i, catalog.SetVideoPerSecond)
				}
			}
		}
		v.images(m, label, base, at)
		v.videoFields(i, m, label, base, at)
		v.surcharges(m, label, base, at)
	}
}

// surcharges checks one model's service tier and tool call prices.
func (v *validator) surcharges(m ModelConfig, label, base string, at func(string) int) {
	c := v.c
	for _, name := range slices.Sorted(maps.Keys(m.Tiers)) {
		t := m.Tiers[name]
		line := c.line(base+".tiers."+name, at("tiers"))
		switch {
		case name == "default" || name == "auto" || name == "":
			v.errorf(line, "%s: tiers: %q is the model's own price (input, output); list only other tiers, like priority or flex", label, name)
		case t.Input < 0 || t.Output < 0 || t.CachedInput < 0:
			v.errorf(line, "%s: tiers: the prices of %s must not be negative", label, name)
		case t.Input == 0 && t.Output == 0:
			v.errorf(line, "%s: tiers: %s needs an input or output price (a tier is never served free)", label, name)
		}
	}
	for _, tool := range slices.Sorted(maps.Keys(m.ToolCalls)) {
		if p := m.ToolCalls[tool]; p < 0 || tool == "" {
			v.errorf(c.line(base+".tool_calls."+tool, at("tool_calls")), "%s: tool_calls: the price of %q must be 0 (free) or more, got %s",
				label, tool, catalog.FormatPrice(p.Micros()))
		}
	}
}

// videoKeys are the models-section keys of the catalog fields a
// catalog.VideoIssue can name.
var videoKeys = map[catalog.OverrideFields]string{
	catalog.SetVideoDurations:   "video_durations",
	catalog.SetImageSizes:       "sizes",
	catalog.SetVideoDurationMap: "video_duration_map",
	catalog.SetVideoPrices:      "video_prices",
	catalog.SetVideoPerSecond:   "video_per_second",
}

// flag records that model entry i has a field already reported as written
// wrong, so videoModels does not report it again in other words.
func (v *validator) flag(i int, f catalog.OverrideFields) {
	if v.reported == nil {
		v.reported = map[int]catalog.OverrideFields{}
	}
	v.reported[i] |= f
}

// videoFields checks the form of one model entry's sizes and video
// settings, whatever the model's modality; whether they fit together is
// videoModels' business.
func (v *validator) videoFields(i int, m ModelConfig, label, base string, at func(string) int) {
	c := v.c
	for j, size := range m.Sizes {
		if !catalog.ValidSize(size) {
			v.errorf(c.line(base+".sizes."+strconv.Itoa(j), at("sizes")), "%s: size %q must look like 1280x720", label, size)
			v.flag(i, catalog.SetImageSizes)
		}
	}
	for j, d := range m.VideoDurations {
		if d < 1 || d > catalog.MaxVideoSeconds {
			v.errorf(c.line(base+".video_durations."+strconv.Itoa(j), at("video_durations")),
				"%s: video_durations: %d must be from 1 to %d seconds", label, d, catalog.MaxVideoSeconds)
			v.flag(i, catalog.SetVideoDurations)
		}
	}
	for _, size := range slices.Sorted(maps.Keys(m.VideoPrices)) {
		line := c.line(base+".video_prices."+size, at("video_prices"))
		if !catalog.ValidSize(size) {
			v.errorf(line, "%s: video_prices: size %q must look like 1280x720", label, size)
			v.flag(i, catalog.SetVideoPrices)
		}
		if p := m.VideoPrices[size]; p < 0 {
			v.errorf(line, "%s: video_prices: the price of %s must not be negative, got %s", label, size, catalog.FormatPrice(money.Micros(p)))
			v.flag(i, catalog.SetVideoPrices|catalog.SetVideoPerSecond)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(m.VideoDurationMap)) {
		if d := m.VideoDurationMap[k]; k < 1 || k > catalog.MaxVideoSeconds || d < 1 || d > catalog.MaxVideoSeconds {
			v.errorf(c.line(base+".video_duration_map."+strconv.Itoa(k), at("video_duration_map")),
				"%s: video_duration_map: %d: %d: seconds must be from 1 to %d", label, k, d, catalog.MaxVideoSeconds)
			v.flag(i, catalog.SetVideoDurationMap)
		}
	}
}

// videoModels checks every video model a configured provider serves, as
// the effective catalog has it (built in, overridden or added), against
// catalog.VideoIssues: durations, sizes, a price per second or free, and a
// duration map into the durations. An issue is reported at the models
// entry's key when the model has one, else at the provider's model.
func (v *validator) videoModels(cat *catalog.Catalog, served [][]ModelRef) {
	c := v.c
	if cat == nil {
		return
	}
	type origin struct {
		provider string
		line     int
	}
	from := map[string]origin{}
	var ids []string
	add := func(id string, o origin) {
		if _, ok := from[id]; !ok {
			from[id] = o
			ids = append(ids, id)
		}
	}
	for i, p := range c.Providers {
		name := p.Name
		if name == "" {
			name = fmt.Sprintf("#%d", i+1)
		}
		for _, m := range served[i] {
			line := m.Line
			if line == 0 {
				line = c.line(fmt.Sprintf("providers.%d.models", i), p.Line)
			}
			add(m.ID, origin{name, line})
		}
		if p.Type == "demo" && len(p.Models) == 0 { // every demo model
			for _, m := range cat.All() {
				if m.OwnedBy == "demo" {
					add(m.ID, origin{name, p.Line})
				}
			}
		}
	}
	entry := map[string]int{}
	for i, m := range c.Models {
		if _, dup := entry[m.ID]; !dup && m.ID != "" {
			entry[m.ID] = i
		}
	}
	for _, id := range ids {
		m, ok := cat.Lookup(id)
		if !ok || m.Modality != catalog.Video {
			continue
		}
		o := from[id]
		i, configured := entry[id]
		for _, is := range m.VideoIssues() {
			key := videoKeys[is.Field]
			if !configured {
				v.errorf(o.line, "provider %q: video model %q: %s: %s", o.provider, id, key, is.Message)
				continue
			}
			if v.reported[i]&is.Field != 0 {
				continue
			}
			base := "models." + strconv.Itoa(i)
			line := c.Models[i].Line
			if line == 0 {
				line = c.line(base, c.line("models", 0))
			}
			v.errorf(c.line(base+"."+key, line), "model %q (video, served by provider %q): %s: %s", id, o.provider, key, is.Message)
		}
	}
}

// imageTokenModels checks the models entries that leave an image model
// with image token prices (image_input, cached_image_input, image_output)
// as the effective catalog has them: billed by token, such a model needs
// input, image_input and image_output above zero, or a part of what the
// vendor bills would be charged at zero (or, with per-image prices too,
// the images endpoints would silently bill per image). Image token prices
// on a model of another modality are unused: a warning.
func (v *validator) imageTokenModels(cat *catalog.Catalog) {
	if cat == nil {
		return
	}
	c := v.c
	for i, mc := range c.Models {
		m, ok := cat.Lookup(mc.ID)
		if !ok || m.Free || (m.ImageInput <= 0 && m.CachedImageInput <= 0 && m.ImageOutput <= 0) {
			continue
		}
		base := "models." + strconv.Itoa(i)
		line := mc.Line
		if line == 0 {
			line = c.line(base, c.line("models", 0))
		}
		if m.Modality != catalog.Image {
			if mc.ImageInput != nil || mc.CachedImageInput != nil || mc.ImageOutput != nil {
				v.warnf(line, "model %q: image_input, cached_image_input and image_output price image models only; this one is a %s model", mc.ID, m.Modality)
			}
			continue
		}
		var missing []string
		for _, p := range []struct {
			key   string
			price money.Micros
		}{{"input", m.Input}, {"image_input", m.ImageInput}, {"image_output", m.ImageOutput}} {
			if p.price <= 0 {
				missing = append(missing, p.key)
			}
		}
		if len(missing) > 0 {
			v.errorf(line, "model %q: an image model priced per token needs input (text), image_input and image_output above 0; missing: %s",
				mc.ID, strings.Join(missing, ", "))
		}
	}
}

// freePrices warns of a models entry that prices a free model (a demo
// model) without free: false and without a price its modality is billed
// by: the model stays free, and the price would be ignored unsaid. (A price
// that can bill the model makes it paid: see catalog.Override.)
func (v *validator) freePrices(cat *catalog.Catalog) {
	if cat == nil {
		return
	}
	c := v.c
	for i, mc := range c.Models {
		m, ok := cat.Lookup(mc.ID)
		if !ok || !m.Free || mc.Free != nil || !mc.prices() {
			continue
		}
		line := mc.Line
		if line == 0 {
			line = c.line("models."+strconv.Itoa(i), c.line("models", 0))
		}
		v.warnf(line, "model %q is free and stays free: none of the prices given bills a model of modality %s (that takes %s); give those, or free: true to silence this",
			mc.ID, m.Modality, billedBy(m.Modality))
	}
}

// prices reports whether the entry gives any price.
func (mc ModelConfig) prices() bool {
	for _, p := range []*Amount{mc.Input, mc.Output, mc.CachedInput, mc.AudioPerSecond, mc.VideoPerSecond,
		mc.AudioInput, mc.AudioOutput, mc.ImageInput, mc.CachedImageInput, mc.ImageOutput} {
		if p != nil {
			return true
		}
	}
	return mc.Images != nil || mc.VideoPrices != nil
}

// billedBy names the prices that bill a model of modality m.
func billedBy(m catalog.Modality) string {
	switch m {
	case catalog.Image:
		return "images, or input, image_input and image_output"
	case catalog.Audio:
		return "audio_per_second"
	case catalog.Video:
		return "video_per_second or video_prices"
	}
	return "input or output"
}

// images checks one model's per-image prices.
func (v *validator) images(m ModelConfig, label, base string, at func(string) int) {
	seen := map[[2]string]bool{}
	for j, p := range m.Images {
		il := v.c.line(base+".images."+strconv.Itoa(j), at("images"))
		switch {
		case p.Size == "":
			v.errorf(il, "%s: image price #%d needs a size like 1024x1024", label, j+1)
		case !catalog.ValidSize(p.Size):
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
