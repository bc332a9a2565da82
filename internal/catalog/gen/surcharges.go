package main

import (
	"strings"

	"github.com/modelgate/modelgate/internal/catalog"
	"github.com/modelgate/modelgate/internal/money"
)

// What OpenAI charges outside a model's standard token prices, and the data
// set does not hold: service tiers, built-in tool calls and the audio
// prices it has wrong. Prices are OpenAI's list prices (USD) from
// https://platform.openai.com/docs/pricing; the gateway refuses a tier or
// tool the catalog does not price, so a model left out here is safe, only
// less capable.

// tier is one service tier's input, cached input and output price in
// dollars per million tokens, written as on the pricing page.
func tier(input, cached, output string) catalog.TierPrice {
	return catalog.TierPrice{Input: dollars(input), CachedInput: dollars(cached), Output: dollars(output)}
}

// dollars parses a list price; a typo in the tables is a bug in this
// program, caught by the generator's test.
func dollars(s string) money.Micros {
	m, err := money.Parse(s)
	if err != nil {
		panic("catalog/gen: bad price " + s)
	}
	return m
}

// listedTiers are OpenAI's published priority and flex prices per model.
var listedTiers = map[string]map[string]catalog.TierPrice{
	"gpt-5":        {"priority": tier("2.50", "0.25", "20.00"), "flex": tier("0.625", "0.0625", "5.00")},
	"gpt-5.1":      {"priority": tier("2.50", "0.25", "20.00"), "flex": tier("0.625", "0.0625", "5.00")},
	"gpt-5-mini":   {"priority": tier("0.45", "0.045", "3.60"), "flex": tier("0.125", "0.0125", "1.00")},
	"gpt-5-nano":   {"flex": tier("0.025", "0.0025", "0.20")},
	"gpt-4.1":      {"priority": tier("3.50", "0.875", "14.00")},
	"gpt-4.1-mini": {"priority": tier("0.70", "0.175", "2.80")},
	"gpt-4.1-nano": {"priority": tier("0.20", "0.05", "0.80")},
	"gpt-4o":       {"priority": tier("4.25", "2.125", "17.00")},
	"gpt-4o-mini":  {"priority": tier("0.25", "0.125", "1.00")},
	"o3":           {"priority": tier("3.50", "0.875", "14.00"), "flex": tier("1.00", "0.25", "4.00")},
	"o4-mini":      {"priority": tier("2.00", "0.50", "8.00"), "flex": tier("0.55", "0.138", "2.20")},
}

// scaledTiers are the models priced by OpenAI's rule since gpt-5.2:
// priority twice the standard price, flex half of it. Pro models and
// deep research have neither.
var scaledTiers = []rule[bool]{
	{"*-pro", false}, {"*deep-research*", false}, {"*-image*", false},
	{"gpt-5.2*", true}, {"gpt-5.3*", true}, {"gpt-5.4*", true}, {"gpt-5.5*", true}, {"gpt-5.6*", true},
}

// audioPrices correct the data set's audio prices of OpenAI's audio chat
// models (it gives gpt-4o-audio-preview its text price for audio input and
// no audio output price): input and output per million audio tokens.
var audioPrices = map[string][2]money.Micros{
	"gpt-4o-audio-preview":      {dollars("40.00"), dollars("80.00")},
	"gpt-4o-mini-audio-preview": {dollars("10.00"), dollars("20.00")},
	"gpt-audio":                 {dollars("32.00"), dollars("64.00")},
	"gpt-audio-mini":            {dollars("10.00"), dollars("20.00")},
}

// webSearchMiniTokens is the fixed block of input tokens OpenAI bills per
// web search call on gpt-4o-mini and gpt-4.1-mini, folded into their
// per-call price since usage may not show it.
const webSearchMiniTokens = 8000

// perCall is a per-call price of dollars per thousand calls ($10 / 1k
// calls is perCall(10)).
func perCall(perThousand int64) money.Micros { return money.Micros(perThousand) * 1000 }

// anthropicWebSearch is Anthropic's web search tool: $10 / 1k searches,
// billed per search the answer's usage counts
// (usage.server_tool_use.web_search_requests).
var anthropicWebSearch = perCall(10)

// surcharges adds tiers, tool call prices and audio corrections to OpenAI
// chat models, and the web search price to Anthropic's models that take
// tools (what a translated Responses request's web_search tool runs as).
func surcharges(m *catalog.Model) {
	if m.OwnedBy == "anthropic" && m.Modality == catalog.Chat && m.Tools {
		m.ToolCalls = map[string]money.Micros{"web_search": anthropicWebSearch}
		return
	}
	if m.OwnedBy != "openai" || m.Modality != catalog.Chat {
		return
	}
	id := strings.ToLower(m.ID)
	if a, ok := audioPrices[id]; ok {
		m.AudioInput, m.AudioOutput = a[0], a[1]
	}
	if t, ok := listedTiers[id]; ok {
		m.Tiers = t
	} else if lookup(scaledTiers, id, false) {
		m.Tiers = map[string]catalog.TierPrice{
			"priority": {Input: 2 * m.Input, CachedInput: 2 * m.CachedInput, Output: 2 * m.Output},
			"flex":     {Input: m.Input / 2, CachedInput: m.CachedInput / 2, Output: m.Output / 2},
		}
	}
	switch {
	case strings.Contains(id, "search-preview"):
		// Chat search models search on every request ($25 / 1k calls at
		// the lowest context size; $50 at the highest, charged).
		m.ToolCalls, m.Searches = map[string]money.Micros{"web_search": perCall(50)}, true
	case strings.Contains(id, "deep-research"):
		// Deep research runs web searches as it goes ($10 / 1k calls); it
		// is usually run in the background.
		m.ToolCalls = map[string]money.Micros{"web_search": perCall(10), "web_search_preview": perCall(10)}
	case m.Tools && !strings.Contains(id, "realtime") && !strings.Contains(id, "audio"):
		// The Responses API's web search: $10 / 1k calls; the preview
		// tool costs $25 / 1k on models that do not reason.
		search, preview := perCall(10), perCall(25)
		if m.Reasoning {
			preview = perCall(10)
		}
		if id == "gpt-4o-mini" || id == "gpt-4.1-mini" {
			search += m.Input * webSearchMiniTokens / 1_000_000
		}
		m.ToolCalls = map[string]money.Micros{"web_search": search, "web_search_preview": preview}
	}
}
