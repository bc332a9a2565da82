package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

// legacyChunk is how many usage_records rows convertLegacyUsage moves per
// transaction.
const legacyChunk = 4096

// convertLegacyUsage moves the records of usage_records, written before
// 0009_usage_blocks.sql, into usage blocks with their charges, legacyChunk
// rows per transaction, oldest rowid first. Each transaction inserts the
// blocks and deletes the rows it moved, so a crash in the middle loses and
// duplicates nothing, and the next start goes on where it stopped.
func (s *Store) convertLegacyUsage(ctx context.Context) error {
	var total int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM usage_records`).Scan(&total); err != nil {
		return fmt.Errorf("count usage records to move: %w", err)
	}
	if total == 0 {
		return nil
	}
	start := time.Now()
	s.log.Info("sqlstore: moving usage records into blocks (once, after the upgrade to schema 9; about 17 s per million here)",
		"records", total)
	for moved := 0; ; {
		var n int
		err := s.withTx(ctx, func(tx *sql.Tx) (err error) {
			n, err = convertLegacyChunk(ctx, tx)
			return err
		})
		if err != nil {
			return fmt.Errorf("move usage records to blocks (%d moved): %w", moved, err)
		}
		if n == 0 {
			s.log.Info("sqlstore: usage records moved into blocks", "records", moved, "took", time.Since(start).Round(time.Millisecond))
			return nil
		}
		moved += n
		if moved/100_000 != (moved-n)/100_000 {
			s.log.Info("sqlstore: moving usage records into blocks", "moved", moved, "of", total)
		}
	}
}

// convertLegacyChunk moves up to legacyChunk rows of usage_records into
// blocks in tx and returns how many it moved.
func convertLegacyChunk(ctx context.Context, tx *sql.Tx) (int, error) {
	rows, err := tx.QueryContext(ctx, `SELECT rowid, request_id, time, account_id, key_id, endpoint, model,
		provider, upstream_model, stream, prompt_tokens, completion_tokens, latency_us, ttft_us, status,
		error_code, cost, cached_tokens, reasoning_tokens, estimated, COALESCE(charge_id, 0), balance_after
		FROM usage_records ORDER BY rowid LIMIT ?`, legacyChunk)
	if err != nil {
		return 0, err
	}
	var (
		recs    []store.UsageRecord
		charges []charge
		last    int64
	)
	for rows.Next() {
		var (
			u                 store.UsageRecord
			c                 charge
			at, latency, ttft int64
			balance           money.Micros
		)
		if err := rows.Scan(&last, &u.RequestID, &at, &u.AccountID, &u.KeyID, &u.Endpoint, &u.Model,
			&u.Provider, &u.UpstreamModel, &u.Stream, &u.PromptTokens, &u.CompletionTokens,
			&latency, &ttft, &u.Status, &u.ErrorCode, &u.Cost, &u.CachedTokens, &u.ReasoningTokens,
			&u.Estimated, &c.id, &balance); err != nil {
			rows.Close()
			return 0, err
		}
		u.Time = fromMicros(at)
		u.Latency, u.TTFT = time.Duration(latency)*time.Microsecond, time.Duration(ttft)*time.Microsecond
		c.balanceAfter = balance
		recs, charges = append(recs, u), append(charges, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(recs) == 0 {
		return 0, err
	}
	b := newBatchTx(ctx, tx)
	defer b.close()
	if err := insertBlocks(b, recs, charges); err != nil {
		return 0, err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM usage_records WHERE rowid <= ?`, last); err != nil {
		return 0, err
	}
	return len(recs), nil
}
