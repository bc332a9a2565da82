package console

import (
	"context"
	"encoding/csv"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

// seedUsage stores n records for the account over the last days: every
// third fails, models alternate, keys alternate between k1 and k2.
func seedUsage(t *testing.T, e *env, accountID string, n int) []store.UsageRecord {
	t.Helper()
	now := e.clock.Now()
	recs := make([]store.UsageRecord, n)
	for i := range recs {
		r := store.UsageRecord{RequestID: fmt.Sprintf("req_%03d", i), Time: now.Add(-time.Duration(i) * 7 * time.Hour).Truncate(time.Second),
			AccountID: accountID, KeyID: []string{"k1", "k2"}[i%2], Endpoint: "chat.completions", Model: []string{"gpt-4o", "=cmd"}[i%2],
			PromptTokens: int64(10 + i), CompletionTokens: int64(i), Cost: money.Micros(1234 * (i + 1)), Status: 200}
		if i%3 == 0 {
			r.Status, r.ErrorCode, r.Cost = 429, "rate_limit_exceeded", 0
		}
		recs[i] = r
	}
	if err := e.st.InsertUsage(context.Background(), recs); err != nil {
		t.Fatal(err)
	}
	return recs
}

func TestUsageAPI(t *testing.T) {
	e := newEnv(t)
	b := e.browser()
	me := b.signIn("github")
	acct, err := e.st.AccountByName(context.Background(), me.Account)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.st.CreateAccount(context.Background(), store.Account{ID: "acct_other", Name: "other", CreatedAt: e.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	recs := seedUsage(t, e, acct.ID, 60)
	// Someone else's usage never shows.
	if err := e.st.InsertUsage(context.Background(), []store.UsageRecord{{RequestID: "req_other", Time: e.clock.Now(),
		AccountID: "acct_other", Model: "gpt-4o", Status: 200, Cost: 5}}); err != nil {
		t.Fatal(err)
	}
	count := func(pred func(store.UsageRecord) bool) int {
		n := 0
		for _, r := range recs {
			if pred(r) {
				n++
			}
		}
		return n
	}
	from := e.clock.Now().Add(-3 * 24 * time.Hour)
	tests := []struct {
		name, query string
		want        int
	}{
		{"all", "", len(recs)},
		{"model", "model=gpt-4o", count(func(r store.UsageRecord) bool { return r.Model == "gpt-4o" })},
		{"key", "key=k2", count(func(r store.UsageRecord) bool { return r.KeyID == "k2" })},
		{"errors", "status=error", count(func(r store.UsageRecord) bool { return r.Status >= 400 })},
		{"ok", "status=ok", count(func(r store.UsageRecord) bool { return r.Status < 400 })},
		{"since", "from=" + url.QueryEscape(from.Format(time.RFC3339)), count(func(r store.UsageRecord) bool { return !r.Time.Before(from) })},
		{"another user's key", "key=k_of_other", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Walk the pages 7 at a time: every record exactly once.
			seen := map[string]bool{}
			cursor := ""
			for pages := 0; ; pages++ {
				q := tt.query + "&limit=7"
				if cursor != "" {
					q += "&cursor=" + cursor
				}
				r := b.do("GET", "/console/api/usage?"+q, "", nil)
				var page struct {
					Data       []usageJSON
					NextCursor *string `json:"next_cursor"`
				}
				r.json(t, &page)
				if r.status != 200 || len(page.Data) > 7 || pages > 20 {
					t.Fatalf("%s: %d %s", q, r.status, r.body)
				}
				for _, u := range page.Data {
					if seen[u.RequestID] || u.RequestID == "req_other" {
						t.Fatalf("%s listed twice or foreign", u.RequestID)
					}
					seen[u.RequestID] = true
				}
				if page.NextCursor == nil {
					break
				}
				cursor = *page.NextCursor
			}
			if len(seen) != tt.want {
				t.Errorf("%d records, want %d", len(seen), tt.want)
			}
			// The CSV has the same rows, formula-looking cells defused.
			r := b.do("GET", "/console/api/usage.csv?"+tt.query, "", nil)
			rows, err := csv.NewReader(strings.NewReader(string(r.body))).ReadAll()
			if err != nil || r.header.Get("Content-Type") != "text/csv; charset=utf-8" {
				t.Fatalf("csv: %v %s", err, r.header)
			}
			if len(rows) != tt.want+1 || strings.Join(rows[0], ",") != strings.Join(csvHeader, ",") {
				t.Fatalf("csv has %d rows, want %d + header", len(rows), tt.want)
			}
			for _, row := range rows[1:] {
				if !seen[row[0]] || strings.HasPrefix(row[2], "=") {
					t.Fatalf("csv row %v", row)
				}
			}
		})
	}
	bad := []struct{ query, param string }{
		{"status=maybe", "status"}, {"limit=0", "limit"}, {"limit=501", "limit"}, {"limit=x", "limit"},
		{"from=yesterday", "from"}, {"to=2026-13-01", "to"}, {"cursor=%25%25", "cursor"}, {"cursor=bm9waXBl", "cursor"},
	}
	for _, tt := range bad {
		r := b.do("GET", "/console/api/usage?"+tt.query, "", nil)
		if r.status != 400 || !strings.Contains(string(r.body), `"param":"`+tt.param+`"`) {
			t.Errorf("%s: %d %s", tt.query, r.status, r.body)
		}
	}
}

func TestStatsAPI(t *testing.T) {
	e := newEnv(t)
	b := e.browser()
	me := b.signIn("github")
	acct, _ := e.st.AccountByName(context.Background(), me.Account)
	recs := seedUsage(t, e, acct.ID, 200) // 7 h apart: about 58 days
	for _, days := range []int{1, 7, 30, 90} {
		t.Run(fmt.Sprint(days), func(t *testing.T) {
			r := b.do("GET", fmt.Sprintf("/console/api/stats?days=%d", days), "", nil)
			var st struct {
				Daily   []dayJSON
				ByModel []modelStatJSON `json:"by_model"`
				ByKey   []keyStatJSON   `json:"by_key"`
			}
			r.json(t, &st)
			if r.status != 200 || len(st.Daily) != days {
				t.Fatalf("%d %d days: %s", r.status, len(st.Daily), r.body)
			}
			since, _ := time.Parse(time.DateOnly, st.Daily[0].Date)
			var want store.UsageTotals
			for _, u := range recs {
				if !u.Time.Before(since) {
					want.Requests++
					want.PromptTokens += u.PromptTokens
					want.CompletionTokens += u.CompletionTokens
					want.Cost += u.Cost
				}
			}
			sum := func(ts []totalsJSON) store.UsageTotals {
				var s store.UsageTotals
				for _, x := range ts {
					c, err := money.Parse(x.Cost)
					if err != nil {
						t.Fatal(err)
					}
					s.Requests, s.PromptTokens, s.CompletionTokens, s.Cost = s.Requests+x.Requests, s.PromptTokens+x.PromptTokens,
						s.CompletionTokens+x.CompletionTokens, s.Cost+c
				}
				return s
			}
			var d, m, k []totalsJSON
			for _, x := range st.Daily {
				d = append(d, x.totalsJSON)
			}
			for _, x := range st.ByModel {
				m = append(m, x.totalsJSON)
			}
			for _, x := range st.ByKey {
				k = append(k, x.totalsJSON)
			}
			for name, got := range map[string]store.UsageTotals{"daily": sum(d), "by model": sum(m), "by key": sum(k)} {
				if got != want {
					t.Errorf("%s totals %+v, want %+v", name, got, want)
				}
			}
		})
	}
	for _, q := range []string{"days=0", "days=367", "days=x"} {
		if r := b.do("GET", "/console/api/stats?"+q, "", nil); r.status != 400 {
			t.Errorf("%s: %d", q, r.status)
		}
	}
}

// TestStatsFreeRequests: requests that cost nothing are usage all the
// same, and a record without a model (as /v1/models once stored) makes no
// blank row or filter choice.
func TestStatsFreeRequests(t *testing.T) {
	e := newEnv(t)
	b := e.browser()
	me := b.signIn("github")
	acct, _ := e.st.AccountByName(context.Background(), me.Account)
	var recs []store.UsageRecord
	for i := range 10 {
		model := "demo-free"
		if i == 0 {
			model = ""
		}
		recs = append(recs, store.UsageRecord{RequestID: fmt.Sprintf("free_%d", i), Time: e.clock.Now().Add(-time.Duration(i) * time.Minute),
			AccountID: acct.ID, Model: model, Endpoint: "chat.completions", Status: 200})
	}
	if err := e.st.InsertUsage(context.Background(), recs); err != nil {
		t.Fatal(err)
	}
	page := string(b.do("GET", "/console/stats", "", nil).body)
	if strings.Contains(page, "No usage in this period") || !strings.Contains(page, "every request was free") ||
		!strings.Contains(page, `<p class="tile-value">10</p>`) {
		t.Error("statistics say there was no usage beside 10 requests")
	}
	if strings.Contains(page, `title=""`) {
		t.Error("a blank model row")
	}
	usage := string(b.do("GET", "/console/usage", "", nil).body)
	if !strings.Contains(usage, `<option value="">All models</option>`) || strings.Count(usage, `<option value="">`) != 2 {
		t.Error("the model filter has a blank choice (or lost All models / All keys)")
	}
	var st struct {
		ByModel []modelStatJSON `json:"by_model"`
	}
	b.do("GET", "/console/api/stats", "", nil).json(t, &st)
	if len(st.ByModel) != 1 || st.ByModel[0].Model != "demo-free" || st.ByModel[0].Requests != 9 {
		t.Errorf("by_model %+v", st.ByModel)
	}
}
