package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/store"
)

// versioned is a store that reports its schema's version.
type versioned interface {
	SchemaVersion(ctx context.Context) (int, error)
}

// migrateCmd brings the configured database's schema up to date and says
// which version it is at. serve does the same on start (under an advisory
// lock on PostgreSQL); running it first lets a deployment migrate once,
// before rolling out replicas. Running it again changes nothing.
func migrateCmd(args []string, e env) int {
	fs, path := newFlags("migrate", e)
	rest, err := parseFlags(fs, args)
	if err != nil {
		return 2
	}
	if len(rest) > 0 {
		fmt.Fprintf(e.stderr, "modelgate migrate: unexpected argument %q\n", rest[0])
		return 2
	}
	return withStore(*path, e, func(ctx context.Context, cfg *config.Config, st store.Store) error {
		v, ok := st.(versioned)
		if !ok {
			return errors.New("migrate: this database does not report its schema version")
		}
		n, err := v.SchemaVersion(ctx)
		if err != nil {
			return err
		}
		kind, _, _ := cfg.DatabaseKind()
		fmt.Fprintf(e.stdout, "%s schema is at version %d\n", kind, n)
		return nil
	})
}
