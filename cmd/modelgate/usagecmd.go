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
	RequestID        string    `json:"request_id"`
	Time             time.Time `json:"time"`
	AccountID        string    `json:"account_id"`
	KeyID            string    `json:"key_id"`
	Endpoint         string    `json:"endpoint"`
	Model            string    `json:"model"`
	Provider         string    `json:"provider"`
	UpstreamModel    string    `json:"upstream_model"`
	Stream           bool      `json:"stream"`
	PromptTokens     int64     `json:"prompt_tokens"`
	CompletionTokens int64     `json:"completion_tokens"`
	CachedTokens     int64     `json:"cached_tokens"`
	ReasoningTokens  int64     `json:"reasoning_tokens"`
	Estimated        bool      `json:"estimated"` // token counts are the gateway's, not the vendor's
	Cost             string    `json:"cost"`      // currency units, six decimals
	LatencyMS        float64   `json:"latency_ms"`
	TTFTMS           float64   `json:"ttft_ms"`
	Status           int       `json:"status"`
	ErrorCode        string    `json:"error_code"`
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
	if _, err := parseFlags(fs, args); err != nil {
		return 2
	}
	from, err := parseSince(*since, time.Now())
	if err != nil {
		fmt.Fprintf(e.stderr, "modelgate usage: %v\n", err)
		return 2
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
			for _, r := range recs {
				out = append(out, usageJSON{RequestID: r.RequestID, Time: r.Time, AccountID: r.AccountID, KeyID: r.KeyID,
					Endpoint: r.Endpoint, Model: r.Model, Provider: r.Provider, UpstreamModel: r.UpstreamModel,
					Stream: r.Stream, PromptTokens: r.PromptTokens, CompletionTokens: r.CompletionTokens,
					CachedTokens: r.CachedTokens, ReasoningTokens: r.ReasoningTokens, Estimated: r.Estimated, Cost: r.Cost.String(),
					LatencyMS: ms(r.Latency), TTFTMS: ms(r.TTFT), Status: r.Status, ErrorCode: r.ErrorCode})
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
