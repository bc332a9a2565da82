package web

import (
	"fmt"
	"html/template"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/modelgate/modelgate/internal/money"
)

// Amount formats m with at least two and at most six decimals, trailing
// zeros beyond the second trimmed and no thousands separators: 12.5 →
// "12.50", 0.000123 → "0.000123", -3 → "-3.00".
func Amount(m money.Micros) string {
	s := m.String() // six decimals
	dot := strings.IndexByte(s, '.')
	end := len(s)
	for end > dot+3 && s[end-1] == '0' {
		end--
	}
	return s[:end]
}

var symbols = map[string]string{"USD": "$", "EUR": "€", "GBP": "£", "CNY": "¥", "JPY": "¥"}

// Money formats an amount with its currency: a symbol for USD, EUR, GBP,
// CNY and JPY ("$12.50", "-€3.00"), else the code after it ("12.50 CHF").
func Money(m money.Micros, currency string) string {
	s := Amount(m)
	sym, ok := symbols[strings.ToUpper(currency)]
	switch {
	case ok && strings.HasPrefix(s, "-"):
		return "-" + sym + s[1:]
	case ok:
		return sym + s
	case currency == "":
		return s
	}
	return s + " " + currency
}

// MoneyShort is Money rounded half away from zero to cents, for headline
// figures ("$13.62"); a non-zero amount under a cent is "< $0.01".
func MoneyShort(m money.Micros, currency string) string {
	const cent = money.Unit / 100
	if m > 0 && m < cent/2 {
		return "< " + Money(cent, currency)
	}
	if m < 0 && m > -cent/2 {
		return "> " + Money(-cent, currency)
	}
	r := (m + cent/2) / cent * cent
	if m < 0 {
		r = (m - cent/2) / cent * cent
	}
	return Money(r, currency)
}

// Date formats t as "Nov 24, 2026" (UTC); the zero time is "—".
func Date(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("Jan 2, 2006")
}

// DateTime formats t as "2026-11-24 19:05 UTC"; the zero time is "—".
func DateTime(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04") + " UTC"
}

// Int formats an integer with thousands separators: 1234567 → "1,234,567".
func Int(v int64) string {
	s := strconv.FormatInt(v, 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func toInt64(v any) int64 {
	switch n := v.(type) {
	case int:
		return int64(n)
	case int64:
		return n
	case int32:
		return int64(n)
	case money.Micros:
		return int64(n)
	}
	panic(fmt.Sprintf("web: not an integer: %T", v))
}

// share is part/total as a percentage with one decimal ("12.5%").
func share(part, total int64) string {
	if total <= 0 {
		return "—"
	}
	return strconv.FormatFloat(float64(part)*100/float64(total), 'f', 1, 64) + "%"
}

// badge is the CSS class of a status badge.
func badge(status string) string {
	switch status {
	case "paid", "active", "ok", "enabled", "closed":
		return "badge-ok"
	case "pending", "errors", "half-open":
		return "badge-warn"
	case "failed", "revoked", "error", "disabled", "open":
		return "badge-bad"
	}
	return "badge-muted"
}

// ledgerBadge is the badge class of a ledger row: credits green, usage
// grey, corrections amber, money taken back red.
func ledgerBadge(kind string, amount money.Micros) string {
	switch {
	case kind == "usage":
		return "badge-muted"
	case amount < 0:
		return "badge-bad"
	case kind == "adjustment":
		return "badge-warn"
	}
	return "badge-ok"
}

var methodLabels = map[string]string{"card": "Card", "alipay": "Alipay", "code": "Redeem code"}

func methodLabel(m string) string {
	if l, ok := methodLabels[m]; ok {
		return l
	}
	if m == "" {
		return "—"
	}
	return strings.ToUpper(m[:1]) + m[1:]
}

func initial(s string) string {
	if i := strings.LastIndexByte(s, ':'); i >= 0 && i+1 < len(s) {
		s = s[i+1:]
	}
	for _, r := range s {
		return strings.ToUpper(string(r))
	}
	return "?"
}

// dict builds a map for passing several values to a sub-template.
func dict(kv ...any) (map[string]any, error) {
	if len(kv)%2 != 0 {
		return nil, fmt.Errorf("dict: odd number of arguments")
	}
	m := make(map[string]any, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		k, ok := kv[i].(string)
		if !ok {
			return nil, fmt.Errorf("dict: key %v is not a string", kv[i])
		}
		m[k] = kv[i+1]
	}
	return m, nil
}

func funcs() template.FuncMap {
	return template.FuncMap{
		"amount":   Amount,
		"money":    Money,
		"money2":   MoneyShort,
		"date":     Date,
		"datetime": DateTime,
		"isodate": func(t time.Time) string {
			if t.IsZero() {
				return ""
			}
			return t.UTC().Format(time.DateOnly)
		},
		"clock": func(t time.Time) string { // "19:05 UTC", the time of day under an isodate
			if t.IsZero() {
				return ""
			}
			return t.UTC().Format("15:04") + " UTC"
		},
		"num":         func(v any) string { return Int(toInt64(v)) },
		"share":       func(part, total any) string { return share(toInt64(part), toInt64(total)) },
		"badge":       badge,
		"ledgerBadge": ledgerBadge,
		"method":      methodLabel,
		"path":        url.PathEscape,
		"asset":       assetURL,
		"initial":     initial,
		"ms": func(d time.Duration) string {
			return Int(d.Milliseconds()) + " ms"
		},
		"dict": dict,
		"list": func(v ...string) []string { return v },
		"title": func(s string) string {
			if s == "" {
				return s
			}
			return strings.ToUpper(s[:1]) + s[1:]
		},
		"cur": func(c string) string { return symbolOr(c) },
		"pct": func(part, total any) float64 {
			p, t := toInt64(part), toInt64(total)
			if t <= 0 || p <= 0 {
				return 0
			}
			return math.Round(float64(p)*1000/float64(t)) / 10
		},
		"httpOK": func(s int) bool { return s > 0 && s < 400 },
		"tokens": Tokens,
	}
}

// funcs are the template functions that speak lc's language: t (a
// catalogue text, an error for an unknown key so a page naming one fails
// to render), lang, date and the charts.
func (lc locale) funcs() template.FuncMap {
	return template.FuncMap{
		"t":    func(key string, args ...any) (string, error) { return lc.cat.T(lc.lang, key, args...) },
		"lang": func() string { return string(lc.lang) },
		// tor is key's text when the catalogue has key, else fallback (a
		// label made from configuration, such as a payment method's).
		"tor": func(key, fallback string) string {
			if lc.cat.Has(key) {
				return lc.t(key)
			}
			return fallback
		},
		"date":    func(t time.Time) string { return dateIn(lc.lang, t) },
		"langs":   func() []Lang { return Langs },
		"langURL": langURL,
		"langName": func(l Lang) string {
			if l == Zh {
				return "中文"
			}
			return "English"
		},
		"costChart":     lc.costChart,
		"requestsChart": lc.requestsChart,
		"tokensChart":   lc.tokensChart,
		"sparkline":     lc.sparkline,
	}
}

// langURL is path (the page's, "" for the console's home) with lang=l
// added to its query.
func langURL(path string, l Lang) string {
	if path == "" {
		path = "/console/"
	}
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	return path + sep + "lang=" + url.QueryEscape(string(l))
}
