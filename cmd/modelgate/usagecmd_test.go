package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

func TestUsageSummary(t *testing.T) {
	c := newCLI(t, "")
	now := time.Now().UTC()
	var acct store.Account
	c.withDB(func(ctx context.Context, st store.Store) {
		acct = store.Account{ID: "acct_acme", Name: "acme", CreatedAt: now}
		if err := st.CreateAccount(ctx, acct); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Post(ctx, store.LedgerEntry{AccountID: acct.ID, Kind: store.KindTopUp, Amount: 10 * money.Unit, Time: now}); err != nil {
			t.Fatal(err)
		}
		var recs []store.UsageRecord
		for i, d := range []time.Duration{0, time.Hour, 50 * time.Hour, 40 * 24 * time.Hour} {
			recs = append(recs, store.UsageRecord{RequestID: "req_" + string(rune('a'+i)), Time: now.Add(-d), AccountID: acct.ID,
				KeyID: "key_1", Model: []string{"gpt-4o", "gpt-4o", "claude", "gpt-4o"}[i], PromptTokens: 10, CompletionTokens: 5,
				Cost: 1000, Status: 200})
		}
		if err := st.InsertUsage(ctx, recs); err != nil {
			t.Fatal(err)
		}
	})
	tests := []struct {
		args     []string
		code     int
		requests int64 // the total over the days
		err      string
	}{
		{args: []string{"usage", "--summary", "--account", "acme", "--json"}, requests: 3}, // 30 days: the 40-day-old one is out
		{args: []string{"usage", "--summary", "--account", "acme", "--since", "90d", "--json"}, requests: 4},
		{args: []string{"usage", "--summary"}, code: 2, err: "--account is required"},
		{args: []string{"usage", "--summary", "--account", "nobody"}, code: 1, err: `account "nobody"`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, out, errOut := c.run(tt.args...)
			if code != tt.code || !strings.Contains(errOut, tt.err) {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			if code != 0 {
				return
			}
			var got map[string][]struct {
				Key      string
				Requests int64
				Cost     string
			}
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			for _, part := range []string{"daily", "by_model", "by_key"} {
				var n int64
				for _, r := range got[part] {
					n += r.Requests
				}
				if n != tt.requests {
					t.Errorf("%s: %d requests, want %d (%s)", part, n, tt.requests, out)
				}
			}
		})
	}
	code, out, _ := c.run("usage", "--summary", "--account", "acme")
	if code != 0 || !strings.Contains(out, "DAY (UTC)") || !strings.Contains(out, "claude") || !strings.Contains(out, "total") {
		t.Errorf("table: %d %s", code, out)
	}
}

func TestUsageRefused(t *testing.T) {
	c := newCLI(t, "")
	now := time.Now().UTC().Truncate(time.Minute)
	c.withDB(func(ctx context.Context, st store.Store) {
		for _, a := range []string{"acme", "other"} {
			if err := st.CreateAccount(ctx, store.Account{ID: "acct_" + a, Name: a, CreatedAt: now}); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.AddRefusals(ctx, []store.RefusalCount{
			{AccountID: "acct_acme", KeyID: "key_1", Minute: now, Endpoint: "chat.completions", Reason: "insufficient_quota", Status: 429, Count: 3000},
			{AccountID: "acct_acme", KeyID: "key_1", Minute: now.Add(-48 * time.Hour), Endpoint: "responses", Reason: "conversation", Status: 400, Count: 2},
			{AccountID: "acct_other", KeyID: "key_9", Minute: now, Endpoint: "chat.completions", Reason: "model_not_found", Status: 404, Count: 1},
		}); err != nil {
			t.Fatal(err)
		}
	})
	tests := []struct {
		args []string
		code int
		want string // the rows, "error_code×count" newest first
		err  string
	}{
		{args: []string{"usage", "--refused", "--json"}, want: "insufficient_quota×3000 model_not_found×1 conversation×2"},
		{args: []string{"usage", "--refused", "--account", "acme", "--since", "24h", "--json"}, want: "insufficient_quota×3000"},
		{args: []string{"usage", "--refused", "--account", "nobody"}, code: 1, err: `account "nobody"`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, out, errOut := c.run(tt.args...)
			if code != tt.code || !strings.Contains(errOut, tt.err) {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			if code != 0 {
				return
			}
			var rows []refusalJSON
			if err := json.Unmarshal([]byte(out), &rows); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			var got []string
			for _, r := range rows {
				got = append(got, r.Reason+"×"+strconv.FormatInt(r.Count, 10))
			}
			if strings.Join(got, " ") != tt.want {
				t.Errorf("rows %v, want %s", got, tt.want)
			}
		})
	}
	code, out, _ := c.run("usage", "--refused")
	if code != 0 || !strings.Contains(out, "MINUTE") || !strings.Contains(out, "insufficient_quota") || !strings.Contains(out, "3000") {
		t.Errorf("table: %d %s", code, out)
	}
}

// usage --json lists each record's upstream tries: the stored ones, the
// implied one of a record of one successful try, [] (not null) when no
// upstream was tried; "error" only when there is one.
func TestUsageJSONAttempts(t *testing.T) {
	c := newCLI(t, "")
	now := time.Now().UTC().Truncate(time.Second)
	c.withDB(func(ctx context.Context, st store.Store) {
		rec := func(id string, ago time.Duration) store.UsageRecord {
			return store.UsageRecord{RequestID: id, Time: now.Add(-ago), AccountID: "acct_x", Model: "gpt-4o",
				Provider: "openai", Status: 200, Latency: 12500 * time.Microsecond}
		}
		once := rec("req_once", 3*time.Second)
		retried := rec("req_retried", 2*time.Second)
		retried.Attempts = []store.Attempt{
			{Provider: "azure", Status: 0, Error: "dial tcp: connection refused", Duration: 1500 * time.Microsecond},
			{Provider: "openai", Status: 200, Duration: 11 * time.Millisecond},
		}
		refused := rec("req_refused", time.Second)
		refused.Provider, refused.Status, refused.ErrorCode = "", 400, "invalid_request_error"
		if err := st.InsertUsage(ctx, []store.UsageRecord{once, retried, refused}); err != nil {
			t.Fatal(err)
		}
	})
	code, out, errOut := c.run("usage", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var recs []struct {
		RequestID string          `json:"request_id"`
		Attempts  json.RawMessage `json:"attempts"`
	}
	if err := json.Unmarshal([]byte(out), &recs); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	want := map[string]string{
		"req_refused": `[]`,
		"req_retried": `[{"provider":"azure","status":0,"error":"dial tcp: connection refused","ms":1.5},{"provider":"openai","status":200,"ms":11}]`,
		"req_once":    `[{"provider":"openai","status":200,"ms":12.5}]`,
	}
	if len(recs) != len(want) {
		t.Fatalf("%d records: %s", len(recs), out)
	}
	for _, r := range recs {
		var compact bytes.Buffer
		if err := json.Compact(&compact, r.Attempts); err != nil {
			t.Fatalf("%s: attempts %q: %v", r.RequestID, r.Attempts, err)
		}
		if compact.String() != want[r.RequestID] {
			t.Errorf("%s: attempts %s, want %s", r.RequestID, compact.String(), want[r.RequestID])
		}
	}
}
