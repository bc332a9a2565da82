package web

import (
	"embed"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Lang is a language the console speaks: a BCP 47 tag.
type Lang string

// The console's languages. En is the fallback.
const (
	En Lang = "en"
	Zh Lang = "zh-CN"
)

// Langs are the console's languages, in the order the switch shows them.
var Langs = []Lang{En, Zh}

//go:embed locales/*.json
var localeFS embed.FS

// Catalog holds one message catalogue per language: a flat map from a
// key ("keys.create") to its text, loaded from locales/<lang>.json.
// Texts take fmt verbs (%s, %d) filled by T's arguments.
type Catalog struct {
	msgs map[Lang]map[string]string
}

// LoadCatalog reads the embedded catalogues. Both must hold the same keys:
// a key missing in one language is a startup error.
func LoadCatalog() (*Catalog, error) {
	c := &Catalog{msgs: map[Lang]map[string]string{}}
	for _, l := range Langs {
		b, err := localeFS.ReadFile("locales/" + string(l) + ".json")
		if err != nil {
			return nil, fmt.Errorf("console catalogue %s: %w", l, err)
		}
		m := map[string]string{}
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("console catalogue %s: %w", l, err)
		}
		c.msgs[l] = m
	}
	if missing := c.Missing(); len(missing) > 0 {
		return nil, fmt.Errorf("console catalogues differ: %s", strings.Join(missing, ", "))
	}
	return c, nil
}

// Missing lists "lang:key" for every key one catalogue has and another lacks.
func (c *Catalog) Missing() []string {
	var out []string
	for _, l := range Langs {
		for _, o := range Langs {
			for k := range c.msgs[o] {
				if _, ok := c.msgs[l][k]; !ok {
					out = append(out, string(l)+":"+k)
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// Has reports whether key is in the catalogue.
func (c *Catalog) Has(key string) bool {
	_, ok := c.msgs[En][key]
	return ok
}

// T is key's text in l, its verbs filled with args. An unknown language
// falls back to English; an unknown key is an error, so a template that
// names one fails to render (and the tests that render every page fail).
func (c *Catalog) T(l Lang, key string, args ...any) (string, error) {
	m, ok := c.msgs[l]
	if !ok {
		m = c.msgs[En]
	}
	s, ok := m[key]
	if !ok {
		return "", fmt.Errorf("console catalogue: no message %q", key)
	}
	if len(args) > 0 {
		s = fmt.Sprintf(s, args...)
	}
	return s, nil
}

// Text is T for Go code: an unknown key comes back as the key itself.
func (c *Catalog) Text(l Lang, key string, args ...any) string {
	s, err := c.T(l, key, args...)
	if err != nil {
		return key
	}
	return s
}

// ParseLang returns the console language s names ("en", "en-US", "zh",
// "zh-CN", "zh-Hans", case-insensitive); ok is false for any other.
func ParseLang(s string) (Lang, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	switch {
	case s == "en" || strings.HasPrefix(s, "en-"):
		return En, true
	case s == "zh" || s == "zh-cn" || s == "zh-sg" || strings.HasPrefix(s, "zh-hans"):
		return Zh, true
	}
	return "", false
}

// FromAcceptLanguage picks the console language an Accept-Language header
// prefers most (by q, then by order); En when it names none of them.
func FromAcceptLanguage(h string) Lang {
	best, bestQ := En, -1.0
	for _, part := range strings.Split(h, ",") {
		tag, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		q := 1.0
		if v, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				continue
			}
			q = f
		}
		l, ok := ParseLang(tag)
		if !ok && strings.HasPrefix(strings.ToLower(tag), "zh") {
			// zh-TW and zh-HK read Simplified Chinese better than English.
			l, ok = Zh, true
		}
		if ok && q > bestQ && q > 0 {
			best, bestQ = l, q
		}
	}
	return best
}

// dateIn formats t's UTC day the way l writes dates.
func dateIn(l Lang, t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	if l == Zh {
		return t.UTC().Format("2006年1月2日")
	}
	return t.UTC().Format("Jan 2, 2006")
}

// monthDayIn is a short day without the year ("Nov 24", "11月24日").
func monthDayIn(l Lang, t time.Time) string {
	if l == Zh {
		return t.UTC().Format("1月2日")
	}
	return t.UTC().Format("Jan 2")
}
