package responses

import (
	"encoding/json"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/provider/oaiwire"
	"github.com/modelgate/modelgate/internal/surcharge"
)

// The web_search tool (and web_search_preview, dated or not) runs the
// vendor's own search: it becomes chat's web_search_options, which the
// Anthropic adapter sends as its web search tool and the Gemini adapter as
// Google Search grounding. Each search the vendor reports is a
// web_search_call item of the Response, placed before the answer's other
// items, and is billed at the catalog's web_search price; a model without
// one, or a vendor without a search, is refused (see WebSearch).

// searchParam is a web_search tool: what chat's options can say of it.
// filters (allowed domains) and external_web_access have no chat
// counterpart and are dropped.
type searchParam struct {
	Type              string  `json:"type"`
	SearchContextSize *string `json:"search_context_size"`
	UserLocation      *struct {
		Type     string  `json:"type"`
		City     *string `json:"city"`
		Country  *string `json:"country"`
		Region   *string `json:"region"`
		Timezone *string `json:"timezone"`
	} `json:"user_location"`
}

// isSearch reports whether a tool type is the web search tool.
func isSearch(typ string) bool {
	switch surcharge.Normalize(typ) {
	case "web_search", "web_search_preview":
		return true
	}
	return false
}

// search notes the request's web search tool.
func (s *toolSet) search(param string, raw json.RawMessage) *apierr.Error {
	if s.searchParam != "" {
		return apierr.Invalid(param, "Invalid '%s': only one web search tool may be given (%s is one).", param, s.searchParam)
	}
	var t searchParam
	if err := json.Unmarshal(raw, &t); err != nil {
		e := typeError(err)
		e.Param = param + "." + e.Param
		return e
	}
	o := &oaiwire.WebSearchOptions{}
	if t.SearchContextSize != nil {
		o.SearchContextSize = *t.SearchContextSize
	}
	if l := t.UserLocation; l != nil {
		loc := &oaiwire.SearchUserLocation{Type: "approximate"}
		for _, f := range []struct {
			dst *string
			src *string
		}{{&loc.Approximate.City, l.City}, {&loc.Approximate.Country, l.Country}, {&loc.Approximate.Region, l.Region},
			{&loc.Approximate.Timezone, l.Timezone}} {
			if f.src != nil {
				*f.dst = *f.src
			}
		}
		o.UserLocation = loc
	}
	s.searchOpts, s.searchParam = o, param+".type"
	return nil
}

// webSearchItem is a web_search_call output item.
type webSearchItem struct {
	Type   string `json:"type"` // web_search_call
	ID     string `json:"id"`
	Status string `json:"status"`
	Action struct {
		Type string `json:"type"` // search
	} `json:"action"`
}

// searchItems are n web_search_call items.
func searchItems(n int64) []any {
	out := make([]any, 0, n)
	for range n {
		it := webSearchItem{Type: "web_search_call", ID: NewID("ws_"), Status: "completed"}
		it.Action.Type = "search"
		out = append(out, it)
	}
	return out
}

// WebSearcher is implemented by the adapters whose vendor has a web search
// of its own that chat's web_search_options turns on.
type WebSearcher interface {
	WebSearch() bool
}

// CanSearch reports whether vendor (an adapter) has a web search of its
// own.
func CanSearch(vendor any) bool {
	ws, ok := vendor.(WebSearcher)
	return ok && ws.WebSearch()
}

// Searches reports whether the request has a web search tool: only
// vendors that CanSearch may serve it.
func (t *Translation) Searches() bool { return t.searchParam != "" }

// WebSearch refuses a request with a web search tool for a vendor that has
// none (vendor is the deployment's adapter): 400 naming the tool.
func (t *Translation) WebSearch(vendor any) *apierr.Error {
	if t.searchParam == "" || CanSearch(vendor) {
		return nil
	}
	return apierr.Invalid(t.searchParam, "The tool type 'web_search' is not supported for the model '%s': its vendor has "+
		"no web search the gateway can use.", t.base.Model)
}

// Rename shows an error about the chat request's web_search_options (the
// catalog has no web search price for the model) as one about the web
// search tool the client sent; other errors are returned as they are.
func (t *Translation) Rename(e *apierr.Error) *apierr.Error {
	if e != nil && e.Param == "web_search_options" && t.searchParam != "" {
		e.Param = t.searchParam
		e.Message = "The tool type 'web_search' is not available for this model through the gateway: it has no price for web searches."
	}
	return e
}
