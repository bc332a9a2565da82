package console

import (
	"cmp"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/modelgate/modelgate/internal/console/web"
	"github.com/modelgate/modelgate/internal/money"
)

// maxModelQuery bounds the Models page's search text, in characters.
const maxModelQuery = 100

// modelSorts are the Models page's orders: by id, or by the input or
// output price per million tokens, cheapest first.
var modelSorts = []string{"id", "input", "output"}

// modelsPage is GET /console/models: the models the reader's groups serve
// at the price of one group, filtered by vendor, modality and a part of
// the id, sorted by id or price. Signed out it is the signup groups'
// price list when console.public_models is on, else the sign-in page.
func (c *Console) modelsPage(w http.ResponseWriter, r *http.Request) {
	v, ok := c.priceViewer(r)
	if !ok {
		http.Redirect(w, r, "/console/", http.StatusFound)
		return
	}
	groups, err := c.openGroups(r.Context(), v)
	if err != nil {
		c.internal(w, r, err)
		return
	}
	q := r.URL.Query()
	page := web.Models{Groups: groups, Public: !v.signedIn,
		Filter: web.ModelFilter{Group: q.Get("group"), Vendor: q.Get("vendor"), Modality: q.Get("modality"),
			Q: strings.TrimSpace(q.Get("q")), Sort: q.Get("sort")}}
	if v.signedIn {
		page.Layout = c.layout(r, v.s, v.a, "title.models", "models")
	} else {
		page.Layout = c.bare(r)
		page.Title, page.Active, page.Currency = c.text(r, "title.models"), "models", c.Currency
	}
	status := http.StatusOK
	refuse := func(key string) {
		status = http.StatusBadRequest
		page.Flash = &web.Flash{Kind: "error", Message: c.text(r, key)}
	}
	f := &page.Filter
	switch {
	case f.Group == "":
		f.Group = firstOr(groups)
	case !slices.Contains(groups, f.Group):
		refuse("err.models_group")
		f.Group = firstOr(groups)
	}
	switch {
	case f.Sort == "":
		f.Sort = "id"
	case !slices.Contains(modelSorts, f.Sort):
		refuse("err.models_sort")
		f.Sort = "id"
	}
	if utf8.RuneCountInString(f.Q) > maxModelQuery || !utf8.ValidString(f.Q) {
		refuse("err.models_query")
		f.Q = ""
	}
	var all []web.ModelRow
	if f.Group != "" {
		for _, m := range c.visiblePrices([]string{f.Group}) {
			all = append(all, rowOf(m))
		}
	}
	page.Total = len(all)
	for _, m := range all {
		if !slices.Contains(page.Vendors, m.OwnedBy) {
			page.Vendors = append(page.Vendors, m.OwnedBy)
		}
		if !slices.Contains(page.Modalities, m.Modality) {
			page.Modalities = append(page.Modalities, m.Modality)
		}
	}
	slices.Sort(page.Vendors)
	slices.Sort(page.Modalities)
	page.Rows = filterModels(all, *f)
	c.Pages.Render(w, status, "models", page)
}

// rowOf is m at the price of its only group (visiblePrices cut it to one).
func rowOf(m ModelPrice) web.ModelRow {
	row := web.ModelRow{ID: m.ID, OwnedBy: m.OwnedBy, Modality: m.Modality, ContextWindow: m.ContextWindow,
		MaxOutput: m.MaxOutput, Capabilities: m.Capabilities, Free: m.Free}
	if len(m.Groups) > 0 {
		g := m.Groups[0]
		row.Input, row.CachedInput, row.Output = web.PriceOf(g.Input), web.PriceOf(g.CachedInput), web.PriceOf(g.Output)
		row.Image, row.PerSecond = web.PriceOf(g.Image), web.PriceOf(g.PerSecond)
	}
	return row
}

// filterModels keeps the rows f's vendor, modality and search text match
// (the search is a case-insensitive part of the id) and sorts them by f's
// order; a model without the price sorted by comes last, and ties go by id.
func filterModels(rows []web.ModelRow, f web.ModelFilter) []web.ModelRow {
	q := strings.ToLower(f.Q)
	var out []web.ModelRow
	for _, m := range rows {
		if (f.Vendor == "" || m.OwnedBy == f.Vendor) && (f.Modality == "" || m.Modality == f.Modality) &&
			strings.Contains(strings.ToLower(m.ID), q) {
			out = append(out, m)
		}
	}
	key := func(m web.ModelRow) web.Price {
		switch f.Sort {
		case "input":
			return m.Input
		case "output":
			return m.Output
		}
		return web.Price{}
	}
	slices.SortStableFunc(out, func(a, b web.ModelRow) int {
		pa, pb := key(a), key(b)
		switch {
		case pa.Set && !pb.Set:
			return -1
		case !pa.Set && pb.Set:
			return 1
		case pa.Set && pa.Amount != pb.Amount:
			return cmp.Compare[money.Micros](pa.Amount, pb.Amount)
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out
}
