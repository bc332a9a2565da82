package app

import (
	"net/url"
	"slices"
	"strings"

	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/provider/openaicompat"
)

// Endpoint is the URL a provider's chat requests go to, with the parts that
// vary per request as placeholders ({model}, {deployment}); `modelgate config
// check` prints it so an operator sees where traffic goes before any request
// is made. It never holds the API key (keys travel in headers; user info and
// query values other than api-version are masked).
func Endpoint(p config.Provider) string {
	if p.Type == "demo" {
		return "built in, no network"
	}
	raw, err := p.CanonicalBaseURL()
	if err != nil {
		return "(invalid base_url)"
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "(invalid base_url)"
	}
	base := RedactURL(u)
	switch p.Type {
	case "openai":
		return base + "/chat/completions"
	case "azure":
		v := p.APIVersion
		if v == "" {
			v = openaicompat.DefaultAzureAPIVersion
		}
		return base + "/openai/deployments/{deployment}/chat/completions?api-version=" + url.QueryEscape(v)
	case "anthropic":
		return base + "/v1/messages"
	case "gemini":
		return base + "/models/{model}:generateContent"
	}
	return base
}

// RedactURL renders u for logs and printed output without credentials: user
// info becomes *** and every query value except api-version and alt (which
// say which API was called) becomes ***, so a key written into a URL never
// reaches a log line.
func RedactURL(u *url.URL) string {
	var b strings.Builder
	b.WriteString(u.Scheme)
	b.WriteString("://")
	if u.User != nil {
		b.WriteString("***@")
	}
	b.WriteString(u.Host)
	b.WriteString(u.EscapedPath())
	if u.RawQuery != "" {
		q := u.Query()
		keys := make([]string, 0, len(q))
		for k := range q {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		sep := "?"
		for _, k := range keys {
			for _, v := range q[k] {
				if k != "api-version" && k != "alt" {
					v = "***"
				} else {
					v = url.QueryEscape(v)
				}
				b.WriteString(sep + url.QueryEscape(k) + "=" + v)
				sep = "&"
			}
		}
	}
	return b.String()
}
