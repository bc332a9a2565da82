package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/store"
)

type usageJSON struct {
	RequestID        string        `json:"request_id"`
	Time             time.Time     `json:"time"`
	AccountID        string        `json:"account_id"`
	KeyID            string        `json:"key_id"`
	Endpoint         string        `json:"endpoint"`
	Model            string        `json:"model"`
	Provider         string        `json:"provider"`
	UpstreamModel    string        `json:"upstream_model"`
	Stream           bool          `json:"stream"`
	PromptTokens     int64         `json:"prompt_tokens"`
	CompletionTokens int64         `json:"completion_tokens"`
	CachedTokens     int64         `json:"cached_tokens"`
	ReasoningTokens  int64         `json:"reasoning_tokens"`
	Estimated        bool          `json:"estimated"` // token counts are the gateway's, not the vendor's
	Cost             string        `json:"cost"`      // currency units, six decimals
	LatencyMS        float64       `json:"latency_ms"`
	TTFTMS           float64       `json:"ttft_ms"`
	Status           int           `json:"status"`
	ErrorCode        string        `json:"error_code"`
	Attempts         []attemptJSON `json:"attempts"` // never null: [] when no upstream was tried
}

// attemptJSON is one upstream try of a record (store.AttemptsOf).
type attemptJSON struct {
	Provider string  `json:"provider"`
	Status   int     `json:"status"` // 0: no answer came
	Error    string  `json:"error,omitempty"`
	MS       float64 `json:"ms"`
}

// attemptsJSON is r's tries, the implied one of a record without stored
// attempts included; an empty slice, not nil, when there were none.
func attemptsJSON(r *store.UsageRecord) []attemptJSON {
	as := store.AttemptsOf(r)
	out := make([]attemptJSON, 0, len(as))
	for _, a := range as {
		out = append(out, attemptJSON{Provider: a.Provider, Status: a.Status, Error: a.Error, MS: ms(a.Duration)})
	}
	return out
}

// parseSince accepts a duration back from now ("24h", "30m", "7d") or a
// date or RFC 3339 time.
func parseSince(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if n, err := strconv.Atoi(s[:len(s)-1]); err == nil && s[len(s)-1] == 'd' {
		return now.AddDate(0, 0, -n), nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		return now.Add(-d), nil
	}
	for _, layout := range []string{time.RFC3339, time.DateTime, time.DateOnly} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("--since %q: use a duration (24h, 7d) or a date (2026-01-02)", s)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func usageCmd(args []string, e env) int {
	fs, path := newFlags("usage", e)
	account := fs.String("account", "", "account name (default: all accounts)")
	since := fs.String("since", "", "only records newer than this: 24h, 7d, 2026-01-02 or RFC 3339")
	limit := fs.Int("limit", 100, "at most this many records, newest first (0: all)")
	asJSON := fs.Bool("json", false, "print JSON")
	summary := fs.Bool("summary", false, "totals by UTC day, model and key of one --account (default --since 30d)")
	refused := fs.Bool("refused", false, "counts of requests keys had refused before any vendor call, per minute, endpoint and error code")
	if _, err := parseFlags(fs, args); err != nil {
		return 2
	}
	from, err := parseSince(*since, time.Now())
	if err != nil {
		fmt.Fprintf(e.stderr, "modelgate usage: %v\n", err)
		return 2
	}
	if *refused {
		return usageRefused(*path, e, *account, from, *limit, *asJSON)
	}
	if *summary {
		if *account == "" {
			fmt.Fprintln(e.stderr, "modelgate usage --summary: --account is required")
			return 2
		}
		if *since == "" {
			from = time.Now().AddDate(0, 0, -30)
		}
		return usageSummary(*path, e, *account, from, *asJSON)
	}
	return withStore(*path, e, func(ctx context.Context, _ *config.Config, st store.Store) error {
		f := store.UsageFilter{Since: from, Limit: *limit}
		if *account != "" {
			a, err := st.AccountByName(ctx, *account)
			if err != nil {
				return fmt.Errorf("account %q: %w", *account, err)
			}
			f.AccountID = a.ID
		}
		recs, err := st.ListUsage(ctx, f)
		if err != nil {
			return fmt.Errorf("list usage: %w", err)
		}
		if *asJSON {
			out := make([]usageJSON, 0, len(recs))
			for i := range recs {
				r := &recs[i]
				out = append(out, usageJSON{RequestID: r.RequestID, Time: r.Time, AccountID: r.AccountID, KeyID: r.KeyID,
					Endpoint: r.Endpoint, Model: r.Model, Provider: r.Provider, UpstreamModel: r.UpstreamModel,
					Stream: r.Stream, PromptTokens: r.PromptTokens, CompletionTokens: r.CompletionTokens,
					CachedTokens: r.CachedTokens, ReasoningTokens: r.ReasoningTokens, Estimated: r.Estimated, Cost: r.Cost.String(),
					LatencyMS: ms(r.Latency), TTFTMS: ms(r.TTFT), Status: r.Status, ErrorCode: r.ErrorCode,
					Attempts: attemptsJSON(r)})
			}
			enc := json.NewEncoder(e.stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(out)
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TIME\tREQUEST\tMODEL\tPROVIDER\tSTREAM\tSTATUS\tPROMPT\tCOMPLETION\tCOST\tLATENCY\tTTFT\tERROR")
		for _, r := range recs {
			ttft := "-"
			if r.Stream {
				ttft = fmt.Sprintf("%.1fms", ms(r.TTFT))
			}
			completion := strconv.FormatInt(r.CompletionTokens, 10)
			if r.Estimated {
				completion += "~" // counted by the gateway
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%v\t%d\t%d\t%s\t%s\t%.1fms\t%s\t%s\n", r.Time.Local().Format(time.DateTime),
				r.RequestID, r.Model, r.Provider, r.Stream, r.Status, r.PromptTokens, completion, r.Cost, ms(r.Latency), ttft, r.ErrorCode)
		}
		return tw.Flush()
	})
}

// usageSummary prints an account's totals since from by UTC day, model and
// key, read from the hourly rollups (so it stays fast over millions of
// records and covers days past the records' retention).
func usageSummary(path string, e env, account string, from time.Time, asJSON bool) int {
	return withStore(path, e, func(ctx context.Context, _ *config.Config, st store.Store) error {
		a, err := st.AccountByName(ctx, account)
		if err != nil {
			return fmt.Errorf("account %q: %w", account, err)
		}
		stats, err := st.UsageStats(ctx, a.ID, from.UTC().Truncate(time.Hour), time.Now().UTC().Add(time.Hour).Truncate(time.Hour))
		if err != nil {
			return fmt.Errorf("usage stats: %w", err)
		}
		if asJSON {
			type row struct {
				Key              string `json:"key"`
				Requests         int64  `json:"requests"`
				PromptTokens     int64  `json:"prompt_tokens"`
				CompletionTokens int64  `json:"completion_tokens"`
				Cost             string `json:"cost"`
			}
			conv := func(gs []store.UsageGroup) []row {
				out := make([]row, 0, len(gs))
				for _, g := range gs {
					out = append(out, row{g.Key, g.Requests, g.PromptTokens, g.CompletionTokens, g.Cost.String()})
				}
				return out
			}
			enc := json.NewEncoder(e.stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(map[string][]row{"daily": conv(stats.Daily), "by_model": conv(stats.ByModel), "by_key": conv(stats.ByKey)})
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		for _, part := range []struct {
			title string
			rows  []store.UsageGroup
		}{{"DAY (UTC)", stats.Daily}, {"MODEL", stats.ByModel}, {"KEY", stats.ByKey}} {
			fmt.Fprintf(tw, "%s\tREQUESTS\tPROMPT\tCOMPLETION\tCOST\n", part.title)
			var total store.UsageTotals
			for _, g := range part.rows {
				fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\n", g.Key, g.Requests, g.PromptTokens, g.CompletionTokens, g.Cost)
				total.Requests, total.PromptTokens, total.CompletionTokens, total.Cost = total.Requests+g.Requests,
					total.PromptTokens+g.PromptTokens, total.CompletionTokens+g.CompletionTokens, total.Cost+g.Cost
			}
			fmt.Fprintf(tw, "total\t%d\t%d\t%d\t%s\n\n", total.Requests, total.PromptTokens, total.CompletionTokens, total.Cost)
		}
		return tw.Flush()
	})
}
