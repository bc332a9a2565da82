package app

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"time"

	"github.com/modelgate/modelgate/internal/billing"
	"github.com/modelgate/modelgate/internal/catalog"
	"github.com/modelgate/modelgate/internal/charge"
	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
	"github.com/modelgate/modelgate/internal/tokenize"
	"github.com/modelgate/modelgate/internal/usage"
)

// holdsEvery is how often this process publishes its reservations; holds
// not refreshed for holdsStale belong to a process that is gone.
const (
	holdsEvery = time.Second
	holdsStale = 5 * time.Second
)

// Catalog is the built-in model catalog with the config's overrides.
func Catalog(cfg *config.Config) (*catalog.Catalog, error) {
	c, err := catalog.Builtin()
	if err != nil {
		return nil, fmt.Errorf("model catalog: %w", err)
	}
	return c.With(cfg.CatalogOverrides()), nil
}

// lookupModel finds the catalog entry of a deployment: by its public id,
// else by the upstream id it is served under.
func lookupModel(c *catalog.Catalog, public, upstream string) (catalog.Model, bool) {
	if m, ok := c.Lookup(public); ok {
		return m, true
	}
	return c.Lookup(upstream)
}

// newBilling wires the handler's billing from the catalog and the config.
func newBilling(cfg *config.Config, cat *catalog.Catalog, r *billing.Reserver, tokens *tokenize.Set) *charge.Billing {
	ratios := make(map[string]int64, len(cfg.Groups))
	for name, g := range cfg.Groups {
		ratios[name] = g.PriceRatio.PPM()
	}
	return &charge.Billing{
		Prices: func(public, upstream string) (billing.ModelPrice, bool) {
			m, ok := lookupModel(cat, public, upstream)
			if !ok {
				return billing.ModelPrice{}, false
			}
			mp := billing.ModelPrice{
				Price: billing.TokenPrice{Input: m.Input, Output: m.Output, CachedInput: m.CachedInput,
					AudioInput: m.AudioInput, AudioOutput: m.AudioOutput},
				Free: m.Free,
				// A token price, whatever else it has; not the text price of
				// an image model billed by token, which prices only its
				// images' prompts (see ImageTokens).
				Priced:        (m.Input > 0 || m.Output > 0) && !m.TokenPricedImages(),
				ContextWindow: m.ContextWindow, MaxOutput: m.MaxOutput, Tokenizer: m.Tokenizer, Reasoning: m.Reasoning,
				Modality: string(m.Modality), ImageSizes: m.ImageSizes, AudioPerSecond: m.AudioPerSecond, VideoPerSecond: m.VideoPerSecond,
			}
			if m.OutputLimited {
				mp.OutputLimit = m.MaxOutput // published: asking for more is refused
			}
			for name, t := range m.Tiers {
				if mp.Tiers == nil {
					mp.Tiers = make(map[string]billing.TokenPrice, len(m.Tiers))
				}
				mp.Tiers[name] = billing.TokenPrice{Input: t.Input, Output: t.Output, CachedInput: t.CachedInput}
			}
			mp.ToolCalls, mp.Searches = m.ToolCalls, m.Searches // the catalog's maps are never modified
			if m.TokenPricedImages() {
				mp.ImageTokens = billing.ImageTokenPrice{Text: m.Input, CachedText: m.CachedInput, Image: m.ImageInput,
					CachedImage: m.CachedImageInput, Output: m.ImageOutput, TextOutput: m.Output}
			}
			for _, ip := range m.Images {
				mp.Images = append(mp.Images, billing.ImagePrice{Size: ip.Size, Quality: ip.Quality, Price: ip.Price})
			}
			return mp, true
		},
		Ratio: func(group string) int64 {
			if v, ok := ratios[group]; ok && v > 0 {
				return v
			}
			return money.PPM
		},
		Reserver: r,
		Tokens:   tokens,
	}
}

// journalDir is where the usage journal lives: next to an SQLite database,
// else in ./modelgate-data/journal.
func journalDir(cfg *config.Config) string {
	if cfg.Usage.JournalDir != "" {
		return cfg.Usage.JournalDir
	}
	if kind, target, err := cfg.DatabaseKind(); err == nil && kind == "sqlite" {
		return filepath.Join(filepath.Dir(target), "journal")
	}
	return filepath.Join("modelgate-data", "journal")
}

// replayJournal stores what a previous process journaled but did not
// write: usage records and, with them, their charges, each exactly once.
func replayJournal(ctx context.Context, j *usage.Journal, st store.Store, log interface {
	Info(string, ...any)
	Warn(string, ...any)
}) error {
	recs, torn, err := j.Replay()
	if err != nil {
		return err
	}
	if torn > 0 {
		log.Warn("usage journal: skipped lines cut short by a crash", "lines", torn)
	}
	if len(recs) > 0 {
		for i := 0; i < len(recs); i += 256 {
			if err := st.InsertUsage(ctx, recs[i:min(i+256, len(recs))]); err != nil {
				return fmt.Errorf("usage journal: replay: %w", err)
			}
		}
		log.Info("usage journal: stored records an earlier process had not written (charges included, each once)", "records", len(recs))
	}
	return j.Clear()
}

// committed tells the reserver which settled charges reached the store.
func committed(r *billing.Reserver) func([]store.UsageRecord) {
	return func(batch []store.UsageRecord) {
		for i := range batch {
			if batch[i].Cost != 0 {
				r.Committed(batch[i].AccountID, batch[i].KeyID, batch[i].Cost)
			}
		}
	}
}

// publishHolds shows this process's reservations to other processes (the
// CLI's "reserved"), or with leases (PostgreSQL) rewrites and lowers its
// leases, and releases those of processes that stopped without saying so
// (holdsStale), until ctx ends; then it withdraws its own.
func (a *App) publishHolds(ctx context.Context) {
	t := time.NewTicker(holdsEvery)
	defer t.Stop()
	var last map[string]money.Micros
	for {
		select {
		case <-ctx.Done():
			c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_ = a.store.PutHolds(c, a.instance, nil, a.nowUTC())
			cancel()
			return
		case <-t.C:
		}
		now := a.nowUTC()
		if a.reserver.Leased() {
			if err := a.reserver.PublishLeases(ctx); err != nil {
				a.log.Warn("billing: publishing balance leases failed", "err", err)
			}
		} else if cur := a.reserver.Reserved(); len(cur) > 0 || !maps.Equal(cur, last) {
			if err := a.store.PutHolds(ctx, a.instance, cur, now); err != nil {
				a.log.Warn("billing: publishing reservations failed", "err", err)
				continue
			}
			last = cur
		}
		gone, err := a.store.DropHolds(ctx, a.instance, now.Add(-holdsStale))
		if err != nil {
			a.log.Warn("billing: releasing stale reservations failed", "err", err)
			continue
		}
		for acct, amt := range gone {
			a.log.Info("billing: released reservations of a gateway process that stopped", "account", acct, "amount", amt.String())
		}
	}
}
