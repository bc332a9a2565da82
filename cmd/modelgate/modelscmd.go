package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/modelgate/modelgate/internal/app"
	"github.com/modelgate/modelgate/internal/catalog"
	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/gate"
	"github.com/modelgate/modelgate/internal/money"
)

// modelsCmd implements "models": the effective catalog (built-in plus the
// config's models section) for the models some provider serves, optionally
// only those a group may use, as a table or JSON.
func modelsCmd(args []string, e env) int {
	fs, path := newFlags("models", e)
	group := fs.String("group", "", "only the models this group may use")
	asJSON := fs.Bool("json", false, "print a JSON array instead of a table")
	if pos, err := parseFlags(fs, args); err != nil {
		return 2
	} else if len(pos) > 0 {
		fmt.Fprintf(e.stderr, "modelgate models: unexpected argument %q\nusage: modelgate models [--config FILE] [--group G] [--json]\n", pos[0])
		return 2
	}
	cfg, err := loadConfig(*path, e, false)
	if err != nil {
		return 1
	}
	cat, err := app.Catalog(cfg)
	if err != nil {
		fmt.Fprintf(e.stderr, "modelgate: %v\n", err)
		return 1
	}
	lists, err := app.ProviderModels(cfg, cat)
	if err != nil {
		fmt.Fprintf(e.stderr, "modelgate: %v\n", err)
		return 1
	}
	served := providersByModel(cfg, lists)
	ids := make([]string, 0, len(served))
	for id := range served {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	if *group != "" {
		g, ok := cfg.Groups[*group]
		if !ok {
			fmt.Fprintf(e.stderr, "modelgate models: unknown group %q (configured: %s)\n", *group, strings.Join(groupNames(cfg), ", "))
			return 1
		}
		policy := gate.NewPolicy(map[string][]string{*group: g.Models}, ids)
		ids = slices.DeleteFunc(ids, func(id string) bool { return !policy.Allows(*group, id) })
	}

	rows := make([]modelRow, 0, len(ids))
	for _, id := range ids {
		m, known := cat.Lookup(id)
		if !known {
			m = catalog.Model{ID: id}
		}
		rows = append(rows, modelRow{m: m, known: known, providers: served[id]})
	}
	if *asJSON {
		return writeModelsJSON(e, rows, cfg.Billing.Currency)
	}
	writeModelsTable(e.stdout, rows, cfg.Billing.Currency)
	return 0
}

// providersByModel maps each public model id some provider serves (lists
// is app.ProviderModels) to the providers serving it, in config order.
func providersByModel(cfg *config.Config, lists [][]config.ModelRef) map[string][]string {
	out := map[string][]string{}
	for i, p := range cfg.Providers {
		for _, m := range lists[i] {
			if !slices.Contains(out[m.ID], p.Name) {
				out[m.ID] = append(out[m.ID], p.Name)
			}
		}
	}
	return out
}

// modelRow is one model as the command shows it.
type modelRow struct {
	m         catalog.Model
	known     bool // in the effective catalog
	providers []string
}

// modelJSON is the --json shape: the catalog fields in snake_case, prices
// as exact decimal strings in the configured currency.
type modelJSON struct {
	ID             string           `json:"id"`
	OwnedBy        string           `json:"owned_by"`
	Created        int64            `json:"created"`
	Modality       catalog.Modality `json:"modality"`
	ContextWindow  int64            `json:"context_window"`
	MaxOutput      int64            `json:"max_output"`
	Tools          bool             `json:"tools"`
	Vision         bool             `json:"vision"`
	Reasoning      bool             `json:"reasoning"`
	Tokenizer      string           `json:"tokenizer"`
	Currency       string           `json:"currency"`
	Input          catalog.Price    `json:"input"`
	Output         catalog.Price    `json:"output"`
	CachedInput    catalog.Price    `json:"cached_input"`
	Images         []imageJSON      `json:"images"`
	AudioPerSecond catalog.Price    `json:"audio_per_second"`
	VideoPerSecond catalog.Price    `json:"video_per_second"`
	ImageSizes     []string         `json:"image_sizes"`
	VideoDurations []int            `json:"video_durations"`
	Free           bool             `json:"free"`
	Priced         bool             `json:"priced"`
	InCatalog      bool             `json:"in_catalog"`
	Providers      []string         `json:"providers"`
	// The prices per million image tokens of an image model billed by token.
	ImageInput       catalog.Price `json:"image_input"`
	CachedImageInput catalog.Price `json:"cached_image_input"`
	ImageOutput      catalog.Price `json:"image_output"`
}

type imageJSON struct {
	Size    string        `json:"size"`
	Quality string        `json:"quality"`
	Price   catalog.Price `json:"price"`
}

func writeModelsJSON(e env, rows []modelRow, currency string) int {
	out := make([]modelJSON, 0, len(rows))
	for _, r := range rows {
		m := r.m
		j := modelJSON{ID: m.ID, OwnedBy: m.OwnedBy, Created: m.Created, Modality: m.Modality,
			ContextWindow: m.ContextWindow, MaxOutput: m.MaxOutput, Tools: m.Tools, Vision: m.Vision,
			Reasoning: m.Reasoning, Tokenizer: m.Tokenizer, Currency: currency,
			Input: catalog.Price(m.Input), Output: catalog.Price(m.Output), CachedInput: catalog.Price(m.CachedInput),
			Images: []imageJSON{}, AudioPerSecond: catalog.Price(m.AudioPerSecond), VideoPerSecond: catalog.Price(m.VideoPerSecond),
			ImageSizes: nonNil(m.ImageSizes), VideoDurations: nonNil(m.VideoDurations), Free: m.Free,
			ImageInput: catalog.Price(m.ImageInput), CachedImageInput: catalog.Price(m.CachedImageInput), ImageOutput: catalog.Price(m.ImageOutput),
			Priced: r.known && m.Priced(), InCatalog: r.known, Providers: r.providers}
		for _, p := range m.Images {
			j.Images = append(j.Images, imageJSON{Size: p.Size, Quality: p.Quality, Price: catalog.Price(p.Price)})
		}
		out = append(out, j)
	}
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		fmt.Fprintf(e.stderr, "modelgate: %v\n", err)
		return 1
	}
	return 0
}

// nonNil makes an absent list print as [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func writeModelsTable(w io.Writer, rows []modelRow, currency string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "ID\tOWNED_BY\tMODALITY\tCONTEXT\tMAX_OUT\tIN/1M %[1]s\tOUT/1M %[1]s\tCACHED/1M %[1]s\tMEDIA %[1]s\tFLAGS\n", currency)
	for _, r := range rows {
		m := r.m
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", m.ID, dash(m.OwnedBy), dash(string(m.Modality)),
			tokens(m.ContextWindow), tokens(m.MaxOutput), price(m.Input), price(m.Output), price(m.CachedInput),
			media(m), flags(r))
	}
	_ = tw.Flush()
	if len(rows) == 0 {
		fmt.Fprintln(w, "(no models)")
	}
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// price shows an amount as a short decimal, or "-" for none.
func price(m money.Micros) string {
	if m == 0 {
		return "-"
	}
	return catalog.FormatPrice(m)
}

// tokens shows a token count compactly: 128000 as 128k, 1000000 as 1M.
func tokens(n int64) string {
	switch {
	case n == 0:
		return "-"
	case n%1_000_000 == 0:
		return strconv.FormatInt(n/1_000_000, 10) + "M"
	case n%1000 == 0:
		return strconv.FormatInt(n/1000, 10) + "k"
	}
	return strconv.FormatInt(n, 10)
}

// media summarises per-image and per-second prices.
func media(m catalog.Model) string {
	var parts []string
	if len(m.Images) > 0 {
		lo, hi := m.Images[0].Price, m.Images[0].Price
		for _, p := range m.Images {
			lo, hi = min(lo, p.Price), max(hi, p.Price)
		}
		r := catalog.FormatPrice(lo)
		if hi != lo {
			r += "-" + catalog.FormatPrice(hi)
		}
		parts = append(parts, fmt.Sprintf("%s/image (%d sizes)", r, len(imageSizes(m))))
	}
	if m.ImageOutput > 0 {
		parts = append(parts, fmt.Sprintf("%s/1M image in, %s/1M image out", catalog.FormatPrice(m.ImageInput), catalog.FormatPrice(m.ImageOutput)))
	}
	if m.AudioPerSecond > 0 {
		parts = append(parts, catalog.FormatPrice(m.AudioPerSecond)+"/s audio")
	}
	if m.VideoPerSecond > 0 {
		parts = append(parts, catalog.FormatPrice(m.VideoPerSecond)+"/s video")
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

func imageSizes(m catalog.Model) []string {
	var sizes []string
	for _, p := range m.Images {
		if !slices.Contains(sizes, p.Size) {
			sizes = append(sizes, p.Size)
		}
	}
	return sizes
}

// flags lists capabilities, and says loudly when a model cannot be billed.
func flags(r modelRow) string {
	var f []string
	for _, c := range []struct {
		on   bool
		name string
	}{{r.m.Tools, "tools"}, {r.m.Vision, "vision"}, {r.m.Reasoning, "reasoning"}, {r.m.Free, "free"}} {
		if c.on {
			f = append(f, c.name)
		}
	}
	switch {
	case !r.known:
		f = append(f, "NOT-IN-CATALOG")
	case !r.m.Priced():
		f = append(f, "UNPRICED")
	}
	return dash(strings.Join(f, ","))
}
