package console

import (
	"encoding/base64"
	"encoding/csv"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/store"
)

// Bounds of the usage and stats calls.
const (
	defaultUsageLimit = 50
	maxUsageLimit     = 500
	maxCSVRows        = 100_000
	defaultStatsDays  = 30
	maxStatsDays      = 366
	day               = 24 * time.Hour
)

type usageJSON struct {
	RequestID        string    `json:"request_id"`
	CreatedAt        time.Time `json:"created_at"`
	Model            string    `json:"model"`
	Endpoint         string    `json:"endpoint"`
	KeyID            string    `json:"key_id"`
	PromptTokens     int64     `json:"prompt_tokens"`
	CompletionTokens int64     `json:"completion_tokens"`
	Cost             string    `json:"cost"`
	Status           int       `json:"status"`
	ErrorCode        string    `json:"error_code,omitempty"`
}

func usageOf(u store.UsageRecord) usageJSON {
	return usageJSON{RequestID: u.RequestID, CreatedAt: u.Time.UTC(), Model: u.Model, Endpoint: u.Endpoint, KeyID: u.KeyID,
		PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, Cost: u.Cost.String(), Status: u.Status,
		ErrorCode: u.ErrorCode}
}

// usageQuery reads the filters of /console/api/usage (and the usage page)
// for account a. from and to are dates (to inclusive) or RFC 3339 times
// (to exclusive); limit is 1..500 (default 50, csv: every row up to
// 100,000); cursor is the next_cursor of a previous page.
func usageQuery(q url.Values, accountID string, csvRows bool) (store.UsageFilter, *apierr.Error) {
	f := store.UsageFilter{AccountID: accountID, Model: q.Get("model"), KeyID: q.Get("key"), Limit: defaultUsageLimit}
	if csvRows {
		f.Limit = maxCSVRows
	}
	var err *apierr.Error
	if f.Since, err = timeParam(q, "from", false); err != nil {
		return f, err
	}
	if f.Until, err = timeParam(q, "to", true); err != nil {
		return f, err
	}
	switch s := store.UsageStatus(q.Get("status")); s {
	case store.UsageAny, store.UsageOK, store.UsageError:
		f.Status = s
	default:
		return f, apierr.Invalid("status", "status must be ok or error.")
	}
	max := maxUsageLimit
	if csvRows {
		max = maxCSVRows
	}
	if f.Limit, err = limitParam(q, f.Limit, max); err != nil {
		return f, err
	}
	if f.After, err = usageCursorParam(q); err != nil {
		return f, err
	}
	if len(f.Model) > 200 || len(f.KeyID) > 100 {
		return f, apierr.Invalid("model", "model and key must be at most 200 characters.")
	}
	return f, nil
}

// timeParam reads a date ("2026-11-01", UTC) or an RFC 3339 time. A date
// given as the end of a range means the end of that day.
func timeParam(q url.Values, name string, end bool) (time.Time, *apierr.Error) {
	v := q.Get(name)
	if v == "" {
		return time.Time{}, nil
	}
	if d, err := time.Parse(time.DateOnly, v); err == nil {
		if end {
			d = d.Add(day)
		}
		return d, nil
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t.UTC(), nil
	}
	return time.Time{}, apierr.Invalid(name, "%s must be a date like 2026-11-01 or an RFC 3339 time.", name)
}

func encodeCursor(u store.UsageRecord) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(u.Time.UnixNano(), 10) + "|" + u.RequestID))
}

func decodeCursor(s string) (store.UsageCursor, bool) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return store.UsageCursor{}, false
	}
	ns, id, ok := strings.Cut(string(b), "|")
	n, err := strconv.ParseInt(ns, 10, 64)
	if !ok || err != nil || id == "" {
		return store.UsageCursor{}, false
	}
	return store.UsageCursor{Time: time.Unix(0, n).UTC(), RequestID: id}, true
}

// usagePage lists one page of f and the cursor of the next ("" at the end).
func (c *Console) usagePage(r *http.Request, f store.UsageFilter) ([]store.UsageRecord, string, error) {
	want := f.Limit
	f.Limit++ // one more tells whether there is a next page
	recs, err := c.Store.ListUsage(r.Context(), f)
	if err != nil {
		return nil, "", err
	}
	if len(recs) <= want {
		return recs, "", nil
	}
	recs = recs[:want]
	return recs, encodeCursor(recs[len(recs)-1]), nil
}

func (c *Console) usage(w http.ResponseWriter, r *http.Request, _ store.Session, a store.Account) {
	f, e := usageQuery(r.URL.Query(), a.ID, false)
	if e != nil {
		fail(w, e)
		return
	}
	recs, next, err := c.usagePage(r, f)
	if err != nil {
		fail(w, apierr.Internal(err))
		return
	}
	data := make([]usageJSON, 0, len(recs))
	for _, u := range recs {
		data = append(data, usageOf(u))
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": data, "next_cursor": cursorOrNil(next)})
}

// csvHeader is the first line of usage.csv.
var csvHeader = []string{"request_id", "created_at", "model", "endpoint", "key_id", "prompt_tokens", "completion_tokens", "cost", "status", "error_code"}

func (c *Console) usageCSV(w http.ResponseWriter, r *http.Request, _ store.Session, a store.Account) {
	f, e := usageQuery(r.URL.Query(), a.ID, true)
	if e != nil {
		fail(w, e)
		return
	}
	recs, err := c.Store.ListUsage(r.Context(), f)
	if err != nil {
		fail(w, apierr.Internal(err))
		return
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="usage-%s.csv"`, c.now().Format("20060102-150405")))
	cw := csv.NewWriter(w)
	_ = cw.Write(csvHeader)
	for _, u := range recs {
		_ = cw.Write([]string{u.RequestID, u.Time.UTC().Format(time.RFC3339Nano), csvSafe(u.Model), u.Endpoint, u.KeyID,
			strconv.FormatInt(u.PromptTokens, 10), strconv.FormatInt(u.CompletionTokens, 10), u.Cost.String(),
			strconv.Itoa(u.Status), u.ErrorCode})
	}
	cw.Flush()
}

// csvSafe keeps a spreadsheet from reading a cell as a formula (a model id
// is the client's text).
func csvSafe(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// --- statistics ---

type totalsJSON struct {
	Requests         int64  `json:"requests"`
	PromptTokens     int64  `json:"prompt_tokens"`
	CompletionTokens int64  `json:"completion_tokens"`
	Cost             string `json:"cost"`
}

func totalsOf(t store.UsageTotals) totalsJSON {
	return totalsJSON{Requests: t.Requests, PromptTokens: t.PromptTokens, CompletionTokens: t.CompletionTokens, Cost: t.Cost.String()}
}

type dayJSON struct {
	Date string `json:"date"`
	totalsJSON
}

type modelStatJSON struct {
	Model string `json:"model"`
	totalsJSON
}

type keyStatJSON struct {
	KeyID string `json:"key_id"`
	Name  string `json:"name"`
	totalsJSON
}

// statsRange is the last days UTC days, today included: [since, until).
func (c *Console) statsRange(days int) (since, until time.Time) {
	today := c.now().Truncate(day)
	return today.Add(-time.Duration(days-1) * day), today.Add(day)
}

// statsDays reads the days query parameter.
func statsDays(q url.Values) (int, *apierr.Error) {
	v := q.Get("days")
	if v == "" {
		return defaultStatsDays, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > maxStatsDays {
		return 0, apierr.Invalid("days", "days must be a whole number from 1 to %d.", maxStatsDays)
	}
	return n, nil
}

// dailyFilled is st.Daily with a zero entry for every day without usage.
func dailyFilled(st store.UsageStats, since time.Time, days int) []store.UsageGroup {
	by := make(map[string]store.UsageTotals, len(st.Daily))
	for _, d := range st.Daily {
		by[d.Key] = d.UsageTotals
	}
	out := make([]store.UsageGroup, days)
	for i := range out {
		k := since.Add(time.Duration(i) * day).Format(time.DateOnly)
		out[i] = store.UsageGroup{Key: k, UsageTotals: by[k]}
	}
	return out
}

func (c *Console) stats(w http.ResponseWriter, r *http.Request, _ store.Session, a store.Account) {
	days, e := statsDays(r.URL.Query())
	if e != nil {
		fail(w, e)
		return
	}
	since, until := c.statsRange(days)
	st, err := c.Store.UsageStats(r.Context(), a.ID, since, until)
	if err != nil {
		fail(w, apierr.Internal(err))
		return
	}
	names, err := c.keyNames(r, a)
	if err != nil {
		fail(w, apierr.Internal(err))
		return
	}
	daily := []dayJSON{}
	for _, d := range dailyFilled(st, since, days) {
		daily = append(daily, dayJSON{Date: d.Key, totalsJSON: totalsOf(d.UsageTotals)})
	}
	byModel := []modelStatJSON{}
	for _, g := range st.ByModel {
		if g.Key != "" { // records without a model have no row
			byModel = append(byModel, modelStatJSON{Model: g.Key, totalsJSON: totalsOf(g.UsageTotals)})
		}
	}
	byKey := []keyStatJSON{}
	for _, g := range st.ByKey {
		byKey = append(byKey, keyStatJSON{KeyID: g.Key, Name: names[g.Key], totalsJSON: totalsOf(g.UsageTotals)})
	}
	writeJSON(w, http.StatusOK, map[string]any{"days": days, "from": since.Format(time.DateOnly),
		"to": until.Add(-day).Format(time.DateOnly), "daily": daily, "by_model": byModel, "by_key": byKey})
}

// ownKeys lists the account's keys, newest first.
func (c *Console) ownKeys(r *http.Request, a store.Account) ([]store.Key, error) {
	own, err := c.Store.KeysOf(r.Context(), a.ID)
	if err != nil {
		return nil, err
	}
	slices.Reverse(own)
	return own, nil
}

// keyNames maps the account's key ids to their names (the prefix when a
// key has none).
func (c *Console) keyNames(r *http.Request, a store.Account) (map[string]string, error) {
	keys, err := c.ownKeys(r, a)
	if err != nil {
		return nil, err
	}
	m := make(map[string]string, len(keys))
	for _, k := range keys {
		m[k.ID] = keyLabel(k)
	}
	return m, nil
}

func keyLabel(k store.Key) string {
	if k.Name != "" {
		return k.Name
	}
	return k.Prefix
}

// limitParam is the query's limit: def when absent, else a whole number
// from 1 to max (400 with param limit otherwise).
func limitParam(q url.Values, def, max int) (int, *apierr.Error) {
	l := q.Get("limit")
	if l == "" {
		return def, nil
	}
	n, err := strconv.Atoi(l)
	if err != nil || n < 1 || n > max {
		return 0, apierr.Invalid("limit", "limit must be a whole number from 1 to %d.", max)
	}
	return n, nil
}

// usageCursorParam is the query's usage cursor (zero when absent; 400 with
// param cursor when it is not a next_cursor of a usage listing).
func usageCursorParam(q url.Values) (store.UsageCursor, *apierr.Error) {
	cs := q.Get("cursor")
	if cs == "" {
		return store.UsageCursor{}, nil
	}
	cur, ok := decodeCursor(cs)
	if !ok {
		return cur, apierr.Invalid("cursor", "cursor must be the next_cursor of a previous page.")
	}
	return cur, nil
}
