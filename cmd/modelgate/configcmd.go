package main

import (
	"fmt"

	"github.com/modelgate/modelgate/internal/app"
	"github.com/modelgate/modelgate/internal/config"
)

// configCmd implements "config check": every problem with its line, then a
// summary; exit status 1 when any problem is an error.
func configCmd(args []string, e env) int {
	if len(args) == 0 || args[0] != "check" {
		fmt.Fprintln(e.stderr, "usage: modelgate config check [--config FILE]")
		return 2
	}
	fs, path := newFlags("config check", e)
	if _, err := parseFlags(fs, args[1:]); err != nil {
		return 2
	}
	p := *path
	if p == "" {
		p, _ = e.getenv("MODELGATE_CONFIG")
	}
	var (
		cfg      *config.Config
		problems []config.Problem
		err      error
	)
	if p == "" {
		p = "(built-in defaults)"
		cfg = config.ZeroConfig()
		problems = cfg.Validate()
	} else if cfg, problems, err = config.Load(p, e.getenv); err != nil {
		fmt.Fprintf(e.stderr, "%v\n", err)
		return 1
	}
	errs := 0
	for _, pr := range problems {
		fmt.Fprintln(e.stdout, formatProblem(p, pr))
		if !pr.Warning {
			errs++
		}
	}
	var served [][]config.ModelRef
	if errs == 0 {
		// Building the adapters catches what only they know (demo model ids).
		if _, derr := app.Deployments(cfg, app.Options{}); derr != nil {
			fmt.Fprintf(e.stdout, "%s: %v\n", p, derr)
			errs++
		} else if served, err = servedModels(cfg); err != nil {
			fmt.Fprintf(e.stdout, "%s: %v\n", p, err)
			errs++
		}
	}
	if errs > 0 {
		fmt.Fprintf(e.stdout, "%s: %d error(s), %d warning(s)\n", p, errs, len(problems)-errs)
		return 1
	}
	// Where each provider's requests go, so a wrong base_url shows before
	// the first request; never the key.
	models := map[string]bool{}
	for i, pv := range cfg.Providers {
		fmt.Fprintf(e.stdout, "%s (%s): %s\n", pv.Name, pv.Type, app.Endpoint(pv))
		for _, m := range served[i] {
			models[m.ID] = true
		}
	}
	fmt.Fprintf(e.stdout, "%s: ok (%d provider(s), %d model(s) served, %d group(s), %d warning(s))\n",
		p, len(cfg.Providers), len(models), len(cfg.Groups), len(problems))
	return 0
}

// formatProblem renders "FILE:LINE: [warning: ]message", the shape editors
// and CI annotations recognise.
func formatProblem(path string, p config.Problem) string {
	kind := ""
	if p.Warning {
		kind = "warning: "
	}
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d: %s%s", path, p.Line, kind, p.Message)
	}
	return fmt.Sprintf("%s: %s%s", path, kind, p.Message)
}

// servedModels is what each provider serves, patterns expanded over the
// effective catalog: the same expansion the gateway uses.
func servedModels(cfg *config.Config) ([][]config.ModelRef, error) {
	cat, err := app.Catalog(cfg)
	if err != nil {
		return nil, err
	}
	return app.ProviderModels(cfg, cat)
}
