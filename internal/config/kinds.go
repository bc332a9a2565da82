package config

import (
	"slices"
	"strings"
)

// need says whether a provider type requires, allows or forbids a setting.
type need int

const (
	optional need = iota
	required
	forbidden
)

// providerKind is what the config checks need to know about one provider type.
type providerKind struct {
	baseURL need // base_url
	apiKey  need // api_key
	models  need // a non-empty models list
	// warnNoKey warns about an empty api_key where most deployments need one.
	warnNoKey bool
}

// providerKinds is the read-only table of known provider types; adding a
// vendor (anthropic, gemini, azure, ...) is one entry here.
var providerKinds = map[string]providerKind{
	// Any OpenAI-compatible vendor, including local servers (Ollama, vLLM)
	// that need no key, hence a warning rather than an error.
	"openai": {baseURL: required, apiKey: optional, models: required, warnNoKey: true},
	// Native vendor APIs; anthropic and gemini default to the vendor's
	// public endpoint.
	"anthropic": {baseURL: optional, apiKey: optional, models: required, warnNoKey: true},
	"gemini":    {baseURL: optional, apiKey: optional, models: required, warnNoKey: true},
	// Azure OpenAI needs the resource's endpoint.
	"azure": {baseURL: required, apiKey: optional, models: required, warnNoKey: true},
	// The built-in offline provider: no network, no secrets, and an empty
	// models list means all of its models.
	"demo": {baseURL: forbidden, apiKey: forbidden, models: optional},
}

// knownTypes lists the provider types for messages, sorted.
func knownTypes() string {
	names := make([]string, 0, len(providerKinds))
	for name := range providerKinds {
		names = append(names, name)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}
