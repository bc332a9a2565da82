package web

import (
	"strconv"
	"strings"

	"github.com/modelgate/modelgate/internal/money"
)

// Models is the Models page (/console/models): the price list of one
// group, filtered and sorted by the query.
type Models struct {
	Layout
	// Public is a signed-out reader (console.public_models): the page
	// shows a call to sign in instead of the account.
	Public bool
	// Groups are the groups open to the reader; a select when there are
	// more than one.
	Groups     []string
	Vendors    []string // the vendor filter's choices
	Modalities []string // the modality filter's choices
	Filter     ModelFilter
	Rows       []ModelRow
	Total      int // models in the group before the vendor, modality and search filters
}

// ModelFilter is the Models page's query.
type ModelFilter struct {
	Group    string
	Vendor   string // "": all
	Modality string // "": all
	Q        string // part of the id, "": all
	Sort     string // "id", "input" or "output"
}

// Active reports whether a filter narrows the list (the reset link shows).
func (f ModelFilter) Active() bool { return f.Vendor != "" || f.Modality != "" || f.Q != "" }

// ModelRow is one model at the selected group's prices.
type ModelRow struct {
	ID       string
	OwnedBy  string
	Modality string
	// ContextWindow and MaxOutput are in tokens; 0 unknown.
	ContextWindow, MaxOutput int64
	Capabilities             []string // "tools", "vision", "reasoning", "web_search", "audio_in", "audio_out"
	Free                     bool
	// Input, CachedInput and Output are per million tokens; Image per
	// image; PerSecond per second of audio or video.
	Input, CachedInput, Output, Image, PerSecond Price
}

// Price is a price the model may not have (Set false: shown as a dash).
type Price struct {
	Amount money.Micros
	Set    bool
}

// PriceOf is p as a Price (nil: not set).
func PriceOf(p *money.Micros) Price {
	if p == nil {
		return Price{}
	}
	return Price{Amount: *p, Set: true}
}

// Tokens shows a token count compactly: 128000 → "128K", 1048576 →
// "1.05M", 8192 → "8,192", 0 → "—".
func Tokens(n int64) string {
	trim := func(v float64) string {
		s := strconv.FormatFloat(v, 'f', 2, 64)
		s = strings.TrimRight(s, "0")
		return strings.TrimSuffix(s, ".")
	}
	switch {
	case n <= 0:
		return "—"
	case n >= 1_000_000:
		return trim(float64(n)/1e6) + "M"
	case n >= 10_000 && n%1000 == 0:
		return trim(float64(n)/1e3) + "K"
	}
	return Int(n)
}
