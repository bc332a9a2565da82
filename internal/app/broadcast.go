package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/modelgate/modelgate/internal/ratelimit/redislimit"
)

// reloadChannel is the Redis channel on which the replicas of one
// database announce config reloads: named after the database, so that
// gateways sharing a Redis but not a database (tests, two clusters) do not
// hear each other.
func reloadChannel(database string) string {
	sum := sha256.Sum256([]byte(database))
	return redislimit.DefaultPrefix + "reload:" + hex.EncodeToString(sum[:8])
}

// ReloadRequests returns the config reloads the other replicas announce
// (AnnounceReload), as their instance ids, until ctx ends: each replica
// then rereads its own config file, so that one SIGHUP reloads them all.
// It subscribes before it returns. Without Redis it returns nil (a
// channel that never delivers).
func (a *App) ReloadRequests(ctx context.Context) (<-chan string, error) {
	if a.redis == nil {
		return nil, nil
	}
	ch := reloadChannel(a.cfg.Database)
	ps := a.redis.Subscribe(ctx, ch)
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := ps.Receive(sctx); err != nil { // the subscription's confirmation
		_ = ps.Close()
		return nil, fmt.Errorf("redis: subscribe to the replicas' reloads: %w", err)
	}
	out := make(chan string, 1)
	go func() {
		defer func() { _ = ps.Close() }()
		msgs := ps.Channel() // go-redis resubscribes after a lost connection
		for {
			select {
			case <-ctx.Done():
				return
			case m, ok := <-msgs:
				if !ok {
					return
				}
				if m.Payload == a.instance {
					continue // its own announcement
				}
				select {
				case out <- m.Payload:
				default: // a reload is pending already: it will read the newest file
				}
			}
		}
	}()
	return out, nil
}

// AnnounceReload tells the other replicas of this database that this one
// reloaded its config file (nothing without Redis).
func (a *App) AnnounceReload(ctx context.Context) error {
	if a.redis == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := a.redis.Publish(ctx, reloadChannel(a.cfg.Database), a.instance).Err(); err != nil {
		return fmt.Errorf("redis: announce the reload: %w", err)
	}
	return nil
}
