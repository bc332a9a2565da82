package sqlstore

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelgate/modelgate/internal/store"
)

// microsPerDay is one UTC day in the stored unit.
const microsPerDay = int64(24 * time.Hour / time.Microsecond)

// usageStatsQuery groups an account's rollups (0007_usage_rollups.sql)
// three ways in one statement, so the three groupings read one snapshot and
// their totals agree. r holds the rows of the range: whole UTC days from
// usage_rollups_daily (day >= ?3 AND day < ?4) and the hours before and
// after them from usage_rollups (hour >= ?2 AND hour < ?3, hour >= ?4 AND
// hour < ?5), each part a range of its table's primary key. The first
// column says which grouping a row belongs to: 'd' by UTC day (the day
// number, floor(at / day), as text), 'm' by model, 'k' by key. Sums are
// SQLite's integer SUM, which fails on overflow instead of rounding.
const usageStatsQuery = `
	WITH r AS (
		SELECT day AS at, key_id, model, requests, prompt_tokens, completion_tokens, cost
		FROM usage_rollups_daily WHERE account_id = ?1 AND day >= ?3 AND day < ?4
		UNION ALL
		SELECT hour, key_id, model, requests, prompt_tokens, completion_tokens, cost
		FROM usage_rollups WHERE account_id = ?1 AND hour >= ?2 AND hour < ?3
		UNION ALL
		SELECT hour, key_id, model, requests, prompt_tokens, completion_tokens, cost
		FROM usage_rollups WHERE account_id = ?1 AND hour >= ?4 AND hour < ?5)
	SELECT 'd', CAST(at / %[1]d - CASE WHEN at %% %[1]d < 0 THEN 1 ELSE 0 END AS TEXT), SUM(requests),
		SUM(prompt_tokens), SUM(completion_tokens), SUM(cost)
	FROM r GROUP BY 2
	UNION ALL
	SELECT 'm', model, SUM(requests), SUM(prompt_tokens), SUM(completion_tokens), SUM(cost)
	FROM r GROUP BY model
	UNION ALL
	SELECT 'k', key_id, SUM(requests), SUM(prompt_tokens), SUM(completion_tokens), SUM(cost)
	FROM r GROUP BY key_id`

// statsBounds splits [since, until), both truncated to the UTC hour, into
// hours [s, ds), whole days [ds, de) and hours [de, u), in Unix
// microseconds; a zero since or until leaves that end open.
func statsBounds(since, until time.Time) (s, ds, de, u int64) {
	s, ds, de, u = math.MinInt64, math.MinInt64, math.MaxInt64, math.MaxInt64
	if !since.IsZero() {
		s = hourOf(toMicros(since))
		if ds = floorTo(s, microsPerDay); ds < s {
			ds += microsPerDay
		}
	}
	if !until.IsZero() {
		u = hourOf(toMicros(until))
		de = floorTo(u, microsPerDay)
	}
	if ds > de { // within one day: hours only
		ds, de = u, u
	}
	return s, ds, de, u
}

// UsageStats groups the usage of accountID with since <= Time < until by
// UTC day, by model and by key; see store.Usage. It reads the rollups, not
// the records: since and until are truncated to the UTC hour, and records
// PurgeUsage deleted still count. A zero since or until leaves that end
// open.
func (s *Store) UsageStats(ctx context.Context, accountID string, since, until time.Time) (store.UsageStats, error) {
	op := fmt.Sprintf("usage stats of %q", accountID)
	from, days, daysEnd, to := statsBounds(since, until)
	q := fmt.Sprintf(usageStatsQuery, microsPerDay)
	all := []any{accountID, from, days, daysEnd, to}
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
