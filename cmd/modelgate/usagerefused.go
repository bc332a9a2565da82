package main

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/store"
)

type refusalJSON struct {
	Minute    time.Time `json:"minute"`
	AccountID string    `json:"account_id"`
	KeyID     string    `json:"key_id"`
	Endpoint  string    `json:"endpoint"`
	Status    int       `json:"status"`
	Reason    string    `json:"error_code"`
	Count     int64     `json:"count"`
}

// usageRefused prints the counts of requests keys had refused before any
// upstream call (a row per account, key, minute, endpoint and reason),
// newest first.
func usageRefused(path string, e env, account string, from time.Time, limit int, asJSON bool) int {
	return withStore(path, e, func(ctx context.Context, _ *config.Config, st store.Store) error {
		f := store.RefusalFilter{Since: from, Limit: limit}
		if account != "" {
			a, err := st.AccountByName(ctx, account)
			if err != nil {
				return fmt.Errorf("account %q: %w", account, err)
			}
			f.AccountID = a.ID
		}
		counts, err := st.ListRefusals(ctx, f)
		if err != nil {
			return fmt.Errorf("list refusals: %w", err)
		}
		if asJSON {
			out := make([]refusalJSON, 0, len(counts))
			for _, c := range counts {
				out = append(out, refusalJSON{Minute: c.Minute, AccountID: c.AccountID, KeyID: c.KeyID,
					Endpoint: c.Endpoint, Status: c.Status, Reason: c.Reason, Count: c.Count})
			}
			enc := json.NewEncoder(e.stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(out)
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "MINUTE\tACCOUNT\tKEY\tENDPOINT\tSTATUS\tERROR\tCOUNT")
		for _, c := range counts {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%d\n", c.Minute.Local().Format("2006-01-02 15:04"), c.AccountID, c.KeyID,
				c.Endpoint, c.Status, c.Reason, c.Count)
		}
		return tw.Flush()
	})
}
