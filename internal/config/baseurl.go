package config

import (
	"errors"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// Default base URLs of the native vendor types, filled in when base_url is empty.
const (
	DefaultAnthropicBaseURL = "https://api.anthropic.com"
	DefaultGeminiBaseURL    = "https://generativelanguage.googleapis.com/v1beta"
)

// vendorHost is what modelgate knows about one vendor's public API host,
// so a bare host gets the documented path and models: patterns know whose
// catalog models to expand.
type vendorHost struct {
	domain string // the host or any subdomain of it names the vendor
	vendor string // the catalog's owned_by for the vendor's models
	api    string // the vendor's OpenAI-compatible API host (exact)
	// path is added to a bare api host (https://api.groq.com →
	// https://api.groq.com/openai/v1); "" when the API has no path.
	path string
	// strict warns when the api host is given another path, which the
	// vendor would answer with 404.
	strict bool
	// upstreamPrefix turns a catalog id into the vendor's own id for
	// models expanded from a pattern (Fireworks names models
	// accounts/fireworks/models/ID).
	upstreamPrefix string
}

// vendorHosts is the read-only table of well-known OpenAI-compatible
// vendors; paths are the ones the vendors document for their OpenAI SDK
// compatibility.
var vendorHosts = []vendorHost{
	{domain: "openai.com", vendor: "openai", api: "api.openai.com", path: "/v1", strict: true},
	// DeepSeek documents https://api.deepseek.com, .../v1 and .../beta.
	{domain: "deepseek.com", vendor: "deepseek", api: "api.deepseek.com"},
	{domain: "groq.com", vendor: "groq", api: "api.groq.com", path: "/openai/v1", strict: true},
	{domain: "mistral.ai", vendor: "mistral", api: "api.mistral.ai", path: "/v1", strict: true},
	{domain: "x.ai", vendor: "xai", api: "api.x.ai", path: "/v1", strict: true},
	{domain: "openrouter.ai", vendor: "openrouter", api: "openrouter.ai", path: "/api/v1", strict: true},
	{domain: "together.xyz", vendor: "together", api: "api.together.xyz", path: "/v1", strict: true},
	{domain: "together.ai", vendor: "together", api: "api.together.ai", path: "/v1", strict: true},
	{domain: "fireworks.ai", vendor: "fireworks", api: "api.fireworks.ai", path: "/inference/v1", strict: true,
		upstreamPrefix: "accounts/fireworks/models/"},
	{domain: "moonshot.ai", vendor: "moonshot", api: "api.moonshot.ai", path: "/v1"},
	{domain: "moonshot.cn", vendor: "moonshot", api: "api.moonshot.cn", path: "/v1"},
	{domain: "perplexity.ai", vendor: "perplexity"}, // https://api.perplexity.ai has no version path
	{domain: "cerebras.ai", vendor: "cerebras", api: "api.cerebras.ai", path: "/v1"},
	{domain: "minimax.io", vendor: "minimax", api: "api.minimax.io", path: "/v1"},
	{domain: "minimaxi.com", vendor: "minimax", api: "api.minimaxi.com", path: "/v1"},
	{domain: "bigmodel.cn", vendor: "zhipu", api: "open.bigmodel.cn", path: "/api/paas/v4"},
	{domain: "z.ai", vendor: "zhipu", api: "api.z.ai", path: "/api/paas/v4"},
	{domain: "cohere.ai", vendor: "cohere", api: "api.cohere.ai", path: "/compatibility/v1"},
	{domain: "cohere.com", vendor: "cohere", api: "api.cohere.com", path: "/compatibility/v1"},
	{domain: "voyageai.com", vendor: "voyage", api: "api.voyageai.com", path: "/v1"},
	// The native vendors' own OpenAI-compatible endpoints, used with type openai.
	{domain: "anthropic.com", vendor: "anthropic", api: "api.anthropic.com", path: "/v1"},
	{domain: "googleapis.com", vendor: "google", api: "generativelanguage.googleapis.com", path: "/v1beta/openai"},
}

// hostOf returns the lower-cased host of a URL, or "".
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Hostname())
}

// lookupHost finds the vendor behind a base URL's host.
func lookupHost(raw string) (vendorHost, bool) {
	host := hostOf(raw)
	if host == "" {
		return vendorHost{}, false
	}
	for _, v := range vendorHosts {
		if host == v.domain || strings.HasSuffix(host, "."+v.domain) {
			return v, true
		}
	}
	return vendorHost{}, false
}

// VendorFromURL names the vendor behind a well-known OpenAI-compatible base
// URL with the catalog's owned_by label (api.openai.com → openai,
// api.groq.com → groq, ...), or "" for a host it does not know (a local
// vLLM, a private proxy).
func VendorFromURL(baseURL string) string {
	v, _ := lookupHost(baseURL)
	return v.vendor
}

// endpointSuffixes are OpenAI endpoint paths an operator may paste along
// with the base URL; longer ones first so /chat/completions wins over /completions.
var endpointSuffixes = []string{
	"/chat/completions", "/images/generations", "/images/edits", "/audio/transcriptions",
	"/audio/translations", "/audio/speech", "/completions", "/embeddings", "/responses",
}

// geminiVersion matches a Gemini API version path segment: v1, v1beta, v1alpha, v2beta3, ...
var geminiVersion = regexp.MustCompile(`^v[0-9]+((alpha|beta)[0-9]*)?$`)

// isGeminiVersion reports whether a path segment names a Gemini API version
// (v1, v1beta, v1alpha, ...). The gemini adapter has the same rule, so it can
// tell a canonical base URL from a bare host.
func isGeminiVersion(seg string) bool { return geminiVersion.MatchString(seg) }

// errBaseURL is the one message for a base_url that is not a URL at all. The
// URL itself is never repeated in messages: it may carry credentials.
var errBaseURL = errors.New("base_url must be an http:// or https:// URL with a host (e.g. https://api.openai.com/v1)")

// normalBase is a base_url in the form its adapter expects.
type normalBase struct {
	url string
	// apiVersion is the api-version of a pasted Azure URL, used when the
	// provider sets no api_version.
	apiVersion string
	warning    string
}

// normalizeBaseURL turns every documented way of writing a vendor's base
// URL into the one form its adapter expects:
//
//	openai     scheme://host/path, no trailing slash, without a pasted endpoint
//	           (/chat/completions, /embeddings, ...); a bare well-known host gets
//	           its documented path (api.openai.com → /v1, api.groq.com → /openai/v1)
//	azure      the resource root https://NAME.openai.azure.com (anything from
//	           /openai on is dropped; the api-version of a pasted URL is kept)
//	anthropic  the bare host https://api.anthropic.com (/v1 and /v1/messages dropped)
//	gemini     scheme://host[/prefix]/VERSION: the version written (v1beta, v1,
//	           v1alpha, ...) or v1beta; a pasted /models/... is dropped
//
// It is idempotent. Errors never quote the URL.
func normalizeBaseURL(typ, raw string) (normalBase, error) {
	if raw == "" {
		switch typ {
		case "anthropic":
			return normalBase{url: DefaultAnthropicBaseURL}, nil
		case "gemini":
			return normalBase{url: DefaultGeminiBaseURL}, nil
		}
		return normalBase{}, nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return normalBase{}, errBaseURL
	}
	if u.Fragment != "" || strings.HasSuffix(raw, "#") {
		return normalBase{}, errors.New("base_url must not have a #fragment")
	}
	q := u.Query()
	segs := pathSegments(u.Path)
	var out normalBase
	switch typ {
	case "azure":
		if err := azureQuery(q, &out); err != nil {
			return normalBase{}, err
		}
		// https://NAME.openai.azure.com/openai/deployments/D/chat/completions → the resource root.
		if i := slices.IndexFunc(segs, func(s string) bool { return strings.EqualFold(s, "openai") }); i >= 0 {
			segs = segs[:i]
		}
	case "anthropic":
		if err := noQuery(q); err != nil {
			return normalBase{}, err
		}
		segs = trimTail(segs, "v1", "messages")
		if n := len(segs); n > 0 && segs[n-1] == "v1" {
			segs = segs[:n-1]
		}
	case "gemini":
		if err := noQuery(q); err != nil {
			return normalBase{}, err
		}
		// A pasted .../v1beta/models/gemini-2.0-flash:generateContent or .../models.
		if i := slices.Index(segs, "models"); i >= 0 && i >= len(segs)-2 {
			segs = segs[:i]
		}
		for i, s := range segs {
			if s == "openai" && (i == len(segs)-1 || (i > 0 && isGeminiVersion(segs[i-1]))) {
				return normalBase{}, errors.New("base_url is Gemini's OpenAI-compatible endpoint (/v1beta/openai); " +
					"use it with type openai, or drop /openai to use the native Gemini API with type gemini")
			}
		}
		if len(segs) == 0 || !isGeminiVersion(segs[len(segs)-1]) {
			segs = append(segs, "v1beta")
		}
	default: // openai
		if err := noQuery(q); err != nil {
			return normalBase{}, err
		}
		p := joinSegments(segs)
		for _, suf := range endpointSuffixes {
			if strings.HasSuffix(p, suf) {
				segs = pathSegments(strings.TrimSuffix(p, suf))
				break
			}
		}
		if vh, ok := lookupHost(raw); ok && strings.EqualFold(u.Hostname(), vh.api) {
			switch p := joinSegments(segs); {
			case p == "" && vh.path != "":
				segs = pathSegments(vh.path)
			case vh.strict && p != vh.path:
				out.warning = "base_url path " + p + " is not " + vh.vendor + "'s documented " + vh.path +
					" (https://" + vh.api + vh.path + "); requests will likely fail with 404"
			}
		}
	}
	out.url = (&url.URL{Scheme: u.Scheme, User: u.User, Host: u.Host, Path: joinSegments(segs)}).String()
	return out, nil
}

// pathSegments splits a URL path into its non-empty segments, so trailing and doubled slashes disappear.
func pathSegments(p string) []string {
	return strings.FieldsFunc(p, func(r rune) bool { return r == '/' })
}

func joinSegments(segs []string) string {
	if len(segs) == 0 {
		return ""
	}
	return "/" + strings.Join(segs, "/")
}

// trimTail drops tail from the end of segs when segs ends with it.
func trimTail(segs []string, tail ...string) []string {
	if len(segs) >= len(tail) && slices.Equal(segs[len(segs)-len(tail):], tail) {
		return segs[:len(segs)-len(tail)]
	}
	return segs
}

// noQuery refuses a query string, naming only its parameter names.
func noQuery(q url.Values) error {
	if len(q) == 0 {
		return nil
	}
	if err := keyInQuery(q); err != nil {
		return err
	}
	return errors.New("base_url must not have a query string (?...)")
}

// keyInQuery refuses an API key written into the URL: it belongs in api_key,
// where it is sent in a header and never logged.
func keyInQuery(q url.Values) error {
	for _, k := range []string{"key", "api_key", "api-key", "apikey"} {
		if q.Has(k) {
			return errors.New("base_url must not carry the API key (?" + k + "=...); put it in api_key")
		}
	}
	return nil
}

// azureQuery accepts only api-version in an Azure URL (a pasted deployment URL has it).
func azureQuery(q url.Values, out *normalBase) error {
	if err := keyInQuery(q); err != nil {
		return err
	}
	for k := range q {
		if k != "api-version" {
			return errors.New("base_url may carry only api-version in its query string")
		}
	}
	out.apiVersion = q.Get("api-version")
	return nil
}

// CanonicalBaseURL returns the provider's base_url in the one form its
// adapter expects (the type's default when empty), as ApplyDefaults sets it;
// app wiring calls it too, so a config built in code reaches the adapters in
// the same form. The error never quotes the URL.
func (p Provider) CanonicalBaseURL() (string, error) {
	if !hasBaseURL(p.Type) {
		return p.BaseURL, nil
	}
	b, err := normalizeBaseURL(p.Type, p.BaseURL)
	return b.url, err
}
