package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strings"

	"github.com/modelgate/modelgate/internal/catalog"
	"github.com/modelgate/modelgate/internal/money"
)

// vendors are the genai-prices providers the catalog takes models from, with
// the owned_by label each gets. The order is the precedence when two vendors
// list the same id: the model's maker first, then clouds and hosts that
// resell it. Left out: openrouter (aggregated resale of the others),
// aws/bedrock (duplicates under other ids), huggingface_* and small hosts.
var vendors = []struct{ id, label string }{
	{"openai", "openai"},
	{"anthropic", "anthropic"},
	{"google", "google"},
	{"deepseek", "deepseek"},
	{"mistral", "mistral"},
	{"x-ai", "xai"},
	{"moonshotai", "moonshot"},
	{"zhipuai", "zhipu"},
	{"minimax", "minimax"},
	{"cohere", "cohere"},
	{"perplexity", "perplexity"},
	{"voyageai", "voyage"},
	{"groq", "groq"},
	{"cerebras", "cerebras"},
	{"fireworks", "fireworks"},
	{"together", "together"},
	{"azure", "azure"},
}

// resold are id prefixes a vendor lists for another maker's models under
// different ids (Claude on Vertex AI); the maker's own entries cover them.
var resold = map[string][]string{"google": {"claude-"}}

// The data set's JSON, as far as the generator reads it.
type (
	gpProvider struct {
		ID     string    `json:"id"`
		Models []gpModel `json:"models"`
	}
	gpModel struct {
		ID            string          `json:"id"`
		ContextWindow int64           `json:"context_window"`
		Deprecated    bool            `json:"deprecated"`
		Prices        json.RawMessage `json:"prices"`
	}
	gpConditional struct {
		Constraint *struct {
			StartDate string `json:"start_date"`
			StartTime string `json:"start_time"`
			EndTime   string `json:"end_time"`
		} `json:"constraint"`
		Prices map[string]any `json:"prices"`
	}
)

// stats counts what the generator did, for its log.
type stats struct {
	byVendor   map[string]int
	byModality map[catalog.Modality]int
	skipped    map[string]int // reason → count
	tiered     int            // models whose tiered prices were cut to the base tier
	rounded    int            // prices with more than 6 decimals, rounded half up
	extra      int            // hand-written entries
}

func (s *stats) log(logf func(string, ...any)) {
	for _, k := range slices.Sorted(maps.Keys(s.byVendor)) {
		logf("vendor %-10s %4d models", k, s.byVendor[k])
	}
	for _, k := range slices.Sorted(maps.Keys(s.byModality)) {
		logf("modality %-10s %4d models", k, s.byModality[k])
	}
	for _, k := range slices.Sorted(maps.Keys(s.skipped)) {
		logf("skipped %4d: %s", s.skipped[k], k)
	}
	logf("%d hand-written entries, %d models priced at their base tier, %d prices rounded to 6 decimals", s.extra, s.tiered, s.rounded)
}

// generate builds builtin.json from the genai-prices JSON; it is pure, so
// the staleness test can run it in memory.
func generate(data []byte) ([]byte, *stats, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // prices stay decimal text, never float64
	var providers []gpProvider
	if err := dec.Decode(&providers); err != nil {
		return nil, nil, fmt.Errorf("decode genai-prices: %w", err)
	}
	byID := map[string]gpProvider{}
	for _, p := range providers {
		byID[p.ID] = p
	}
	st := &stats{byVendor: map[string]int{}, byModality: map[catalog.Modality]int{}, skipped: map[string]int{}}

	// The largest context window any vendor states for an id fills in for
	// entries that state none.
	contexts := map[string]int64{}
	for _, v := range vendors {
		for _, m := range byID[v.id].Models {
			contexts[m.ID] = max(contexts[m.ID], m.ContextWindow)
		}
	}

	seen := map[string]bool{}
	var models []catalog.Model
	for _, v := range vendors {
		p, ok := byID[v.id]
		if !ok {
			return nil, nil, fmt.Errorf("vendor %q is not in the data", v.id)
		}
		for _, gm := range p.Models {
			if reason := skipReason(v.id, gm); reason != "" {
				st.skipped[reason]++
				continue
			}
			if seen[gm.ID] {
				st.skipped["listed by a vendor earlier in the precedence order"]++
				continue
			}
			m, err := convert(v.label, gm, contexts[gm.ID], st)
			if err != nil {
				return nil, nil, fmt.Errorf("%s/%s: %w", v.id, gm.ID, err)
			}
			if !m.Priced() {
				st.skipped["no usable price for its modality"]++
				continue
			}
			seen[gm.ID] = true
			models = append(models, m)
		}
	}
	for _, m := range extraModels() {
		st.extra++
		models = slices.DeleteFunc(models, func(x catalog.Model) bool { return x.ID == m.ID })
		models = append(models, m)
	}
	slices.SortFunc(models, func(a, b catalog.Model) int { return strings.Compare(a.ID, b.ID) })
	for _, m := range models {
		st.byVendor[m.OwnedBy]++
		st.byModality[m.Modality]++
	}
	out, err := catalog.Encode(models)
	if err != nil {
		return nil, nil, err
	}
	return out, st, nil
}

// skipReason says why a data-set entry is left out, or "" to keep it.
func skipReason(vendor string, m gpModel) string {
	switch {
	case m.Deprecated:
		return "deprecated"
	case strings.Contains(m.ID, ":") || strings.HasSuffix(m.ID, "-") || strings.Contains(m.ID, ".ft-"):
		// "ft:gpt-4o", "mistral-nemo:free", "gpt-4o:extended": fine-tune
		// and tier variants, not ids a client sends.
		return "variant ids (fine-tunes, :free, :extended)"
	}
	for _, prefix := range resold[vendor] {
		if strings.HasPrefix(m.ID, prefix) {
			return "resold under another id (Claude on Vertex AI)"
		}
	}
	return ""
}

// convert turns one data-set entry into a catalog model.
func convert(owner string, gm gpModel, context int64, st *stats) (catalog.Model, error) {
	prices, err := pickPrices(gm.Prices)
	if err != nil {
		return catalog.Model{}, err
	}
	m := catalog.Model{ID: gm.ID, OwnedBy: owner, ContextWindow: context}
	tiered := false
	for key, dst := range map[string]*money.Micros{"input_mtok": &m.Input, "output_mtok": &m.Output, "cache_read_mtok": &m.CachedInput} {
		v, ok := prices[key]
		if !ok {
			continue
		}
		n, isTiered, err := baseNumber(v)
		if err != nil {
			return m, fmt.Errorf("%s: %w", key, err)
		}
		tiered = tiered || isTiered
		if *dst, err = micros(n, st); err != nil {
			return m, fmt.Errorf("%s: %w", key, err)
		}
	}
	if tiered {
		st.tiered++
	}
	derive(&m)
	if m.Modality == catalog.Chat {
		for key, dst := range map[string]*money.Micros{"input_audio_mtok": &m.AudioInput, "output_audio_mtok": &m.AudioOutput} {
			v, ok := prices[key]
			if !ok {
				continue
			}
			n, _, err := baseNumber(v)
			if err != nil {
				return m, fmt.Errorf("%s: %w", key, err)
			}
			if *dst, err = micros(n, st); err != nil {
				return m, fmt.Errorf("%s: %w", key, err)
			}
		}
		surcharges(&m)
	}
	return m, nil
}

// pickPrices chooses one price set from a model's prices. A plain object is
// used as is. From a list of conditional prices: the latest entry whose
// start_date is on or before snapshotDate (later entries win, as in the
// schema), else the unconditional one; but an entry limited to a daily time
// window covering at least half the day is the vendor's standard price (the
// rest is an off-peak discount, as at DeepSeek) and wins, so the gateway
// never bills the discount around the clock.
func pickPrices(raw json.RawMessage) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '[' {
		var p map[string]any
		if err := dec.Decode(&p); err != nil {
			return nil, fmt.Errorf("prices: %w", err)
		}
		return p, nil
	}
	var list []gpConditional
	if err := dec.Decode(&list); err != nil {
		return nil, fmt.Errorf("conditional prices: %w", err)
	}
	var chosen map[string]any
	for _, c := range list {
		switch {
		case c.Constraint == nil:
			if chosen == nil {
				chosen = c.Prices
			}
		case c.Constraint.StartDate != "":
			if c.Constraint.StartDate <= snapshotDate {
				chosen = c.Prices
			}
		}
	}
	for _, c := range list {
		if c.Constraint != nil && c.Constraint.StartTime != "" && windowHours(c.Constraint.StartTime, c.Constraint.EndTime) >= 12 {
			chosen = c.Prices
		}
	}
	if chosen == nil {
		return nil, errors.New("no applicable price in the conditional list")
	}
	return chosen, nil
}

// windowHours is the length of a daily window "HH:MM:SSZ".."HH:MM:SSZ" in
// whole hours, wrapping past midnight; -1 when unreadable.
func windowHours(start, end string) int {
	var sh, sm, eh, em int
	if _, err := fmt.Sscanf(start, "%d:%d", &sh, &sm); err != nil {
		return -1
	}
	if _, err := fmt.Sscanf(end, "%d:%d", &eh, &em); err != nil {
		return -1
	}
	mins := (eh*60 + em) - (sh*60 + sm)
	if mins < 0 {
		mins += 24 * 60
	}
	return mins / 60
}

// baseNumber returns a price value's number: the value itself, or the base
// (lowest) tier of a tiered price. Tiers above the base apply only to long
// prompts (over 128k-512k tokens); the gateway bills the base tier and says so
// in docs/billing.md.
func baseNumber(v any) (json.Number, bool, error) {
	switch v := v.(type) {
	case json.Number:
		return v, false, nil
	case map[string]any:
		n, ok := v["base"].(json.Number)
		if !ok {
			return "", false, errors.New("tiered price without a numeric base")
		}
		return n, true, nil
	}
	return "", false, fmt.Errorf("unexpected price value %v", v)
}

// micros converts a price's decimal text exactly. More than six decimals
// (or an exponent) cannot be represented in micro-units; such a price is
// rounded half up to the nearest micro-unit here, once, and counted.
func micros(n json.Number, st *stats) (money.Micros, error) {
	if m, err := money.Parse(n.String()); err == nil {
		if m < 0 {
			return 0, fmt.Errorf("negative price %s", n)
		}
		return m, nil
	}
	r, ok := new(big.Rat).SetString(n.String())
	if !ok || r.Sign() < 0 {
		return 0, fmt.Errorf("not a non-negative decimal: %s", n)
	}
	r.Mul(r, big.NewRat(int64(money.Unit), 1))
	// Round half up: floor(r + 1/2).
	r.Add(r, big.NewRat(1, 2))
	q := new(big.Int).Quo(r.Num(), r.Denom())
	if !q.IsInt64() || q.Int64() > int64(money.Max) {
		return 0, fmt.Errorf("price too large: %s", n)
	}
	st.rounded++
	return money.Micros(q.Int64()), nil
}
