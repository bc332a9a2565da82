package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"github.com/modelgate/modelgate/internal/app"
	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/store"
)

// errReported means the problem was already printed.
var errReported = errors.New("reported")

// newFlags makes a flag set that reports to stderr and knows --config.
func newFlags(name string, e env) (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	path := fs.String("config", "", "configuration file (default $MODELGATE_CONFIG, else the zero-config setup)")
	return fs, path
}

// parseFlags parses args, allowing flags after positional arguments
// ("keys revoke key_1 --config x.yaml").
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// loadConfig reads --config, else $MODELGATE_CONFIG, else the defaults, and
// prints every problem. It fails when any problem is an error. Only serve
// reads the secrets of payments and sign-in providers (secrets true); every
// other command leaves their ${VAR} references unresolved (config.Secrets),
// so it runs where those variables are not set.
func loadConfig(path string, e env, secrets bool) (*config.Config, error) {
	if path == "" {
		path, _ = e.getenv("MODELGATE_CONFIG")
	}
	if path == "" {
		return config.ZeroConfig(), nil
	}
	var opts []config.LoadOption
	if !secrets {
		opts = append(opts, config.Unresolved(config.Secrets()...))
	}
	cfg, problems, err := config.Load(path, e.getenv, opts...)
	if err != nil {
		fmt.Fprintf(e.stderr, "modelgate: %v\n", err)
		return nil, errReported
	}
	for _, p := range problems {
		fmt.Fprintln(e.stderr, formatProblem(path, p))
	}
	if config.HasErrors(problems) {
		fmt.Fprintf(e.stderr, "modelgate: %s has errors; run 'modelgate config check --config %s'\n", path, path)
		return nil, errReported
	}
	return cfg, nil
}

// withStore loads the config, opens its store, and runs f.
func withStore(path string, e env, f func(ctx context.Context, cfg *config.Config, st store.Store) error) int {
	cfg, err := loadConfig(path, e, false)
	if err != nil {
		return 1
	}
	ctx := context.Background()
	st, err := app.OpenStore(ctx, cfg, newLogger(cfg, e.stderr))
	if err != nil {
		fmt.Fprintf(e.stderr, "modelgate: open database: %v\n", err)
		return 1
	}
	defer st.Close()
	if err := f(ctx, cfg, st); err != nil {
		if !errors.Is(err, errReported) {
			fmt.Fprintf(e.stderr, "modelgate: %v\n", err)
		}
		return 1
	}
	return 0
}

func newLogger(cfg *config.Config, w io.Writer) *slog.Logger {
	var level slog.Level
	if err := level.UnmarshalText([]byte(cfg.Log.Level)); err != nil {
		level = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: level}
	if cfg.Log.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
