package sqlite

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelgate/modelgate/internal/store"
)

// microsPerDay is one UTC day in the stored unit.
const microsPerDay = int64(24 * time.Hour / time.Microsecond)

// usageStatsQuery groups an account's records three ways in one statement,
// so the three groupings read one snapshot and their totals agree. The
// first column says which grouping a row belongs to: 'd' by UTC day (the
// day number, floor(time / day), as text), 'm' by model, 'k' by key. Sums
// are SQLite's integer SUM, which fails on overflow instead of rounding.
// The WHERE clause (%[1]s) is the same in each part and walks
// usage_records_account_time.
const usageStatsQuery = `
	SELECT 'd', CAST(time / %[2]d - (time %% %[2]d < 0) AS TEXT), COUNT(*),
		SUM(prompt_tokens), SUM(completion_tokens), SUM(cost)
	FROM usage_records WHERE %[1]s GROUP BY 2
	UNION ALL
	SELECT 'm', model, COUNT(*), SUM(prompt_tokens), SUM(completion_tokens), SUM(cost)
	FROM usage_records WHERE %[1]s GROUP BY model
	UNION ALL
	SELECT 'k', key_id, COUNT(*), SUM(prompt_tokens), SUM(completion_tokens), SUM(cost)
	FROM usage_records WHERE %[1]s GROUP BY key_id`

// UsageStats groups the records of accountID with since <= Time < until by
// UTC day, by model and by key; see store.Usage. A zero since or until
// leaves that end open.
func (s *Store) UsageStats(ctx context.Context, accountID string, since, until time.Time) (store.UsageStats, error) {
	op := fmt.Sprintf("usage stats of %q", accountID)
	where := []string{`account_id = ?`}
	args := []any{accountID}
	if !since.IsZero() {
		where = append(where, `time >= ?`)
		args = append(args, toMicros(since))
	}
	if !until.IsZero() {
		where = append(where, `time < ?`)
		args = append(args, toMicros(until))
	}
	q := fmt.Sprintf(usageStatsQuery, strings.Join(where, ` AND `), microsPerDay)
	all := make([]any, 0, 3*len(args))
	for range 3 {
		all = append(all, args...)
	}
	rows, err := s.db.QueryContext(ctx, q, all...)
	if err != nil {
		return store.UsageStats{}, wrap(op, err)
	}
	defer rows.Close()
	var st store.UsageStats
	for rows.Next() {
		var (
			kind string
			g    store.UsageGroup
		)
		if err := rows.Scan(&kind, &g.Key, &g.Requests, &g.PromptTokens, &g.CompletionTokens, &g.Cost); err != nil {
			return store.UsageStats{}, wrap(op, err)
		}
		switch kind {
		case "d":
			day, err := strconv.ParseInt(g.Key, 10, 64)
			if err != nil {
				return store.UsageStats{}, wrap(op, fmt.Errorf("day %q: %w", g.Key, err))
			}
			g.Key = fromMicros(day * microsPerDay).Format(time.DateOnly)
			st.Daily = append(st.Daily, g)
		case "m":
			st.ByModel = append(st.ByModel, g)
		case "k":
			st.ByKey = append(st.ByKey, g)
		}
	}
	if err := rows.Err(); err != nil {
		return store.UsageStats{}, wrap(op, err)
	}
	// "YYYY-MM-DD" sorts like the day it names for years 0000 to 9999.
	slices.SortFunc(st.Daily, func(a, b store.UsageGroup) int { return strings.Compare(a.Key, b.Key) })
	byCost := func(a, b store.UsageGroup) int {
		return cmp.Or(cmp.Compare(b.Cost, a.Cost), strings.Compare(a.Key, b.Key))
	}
	slices.SortFunc(st.ByModel, byCost)
	slices.SortFunc(st.ByKey, byCost)
	return st, nil
}
