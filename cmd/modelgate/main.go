// Command modelgate is the gateway's single binary: it serves the API and
// manages keys, configuration and usage from the command line. This file
// only dispatches; flags, configuration loading and wiring live beside it,
// and everything else lives in internal packages.
package main

import (
	"fmt"
	"io"
	"os"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// env is how commands read the environment; tests pass their own.
type env struct {
	stdout, stderr io.Writer
	getenv         func(string) (string, bool)
}

func main() {
	os.Exit(run(os.Args[1:], env{stdout: os.Stdout, stderr: os.Stderr, getenv: os.LookupEnv}))
}

const usageText = `modelgate: one OpenAI-compatible API in front of many model vendors.

Usage:
  modelgate serve [--config FILE] [--listen ADDR]
  modelgate config check [--config FILE]
  modelgate migrate [--config FILE]
  modelgate models [--group G] [--json]
  modelgate keys create --group G [--account NAME] [--name LABEL] [--spend-cap AMOUNT] [--expires 30d]
  modelgate keys list [--json]
  modelgate keys revoke ID|PREFIX
  modelgate accounts credit NAME AMOUNT [--note TEXT] [--kind topup|bonus|refund|adjustment] [--ref ID]
  modelgate accounts show NAME [--json]
  modelgate accounts list [--json]
  modelgate usage [--account NAME] [--since 24h|2026-01-02] [--limit N] [--json] [--summary]
  modelgate admin login-link [--account NAME] [--url BASE]
  modelgate admin revoke ACCOUNT
  modelgate version

Every command takes --config FILE (or MODELGATE_CONFIG); without one the
built-in zero-configuration setup is used (SQLite in ./modelgate-data, the
offline demo provider, one group "default" with every model).
`

// run executes one command and returns the process exit code.
func run(args []string, e env) int {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, usageText)
		return 2
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "serve":
		return serveCmd(rest, e)
	case "config":
		return configCmd(rest, e)
	case "migrate":
		return migrateCmd(rest, e)
	case "models":
		return modelsCmd(rest, e)
	case "keys":
		return keysCmd(rest, e)
	case "usage":
		return usageCmd(rest, e)
	case "accounts":
		return accountsCmd(rest, e)
	case "admin":
		return adminCmd(rest, e)
	case "version", "--version", "-v":
		fmt.Fprintln(e.stdout, "modelgate", version)
		return 0
	case "help", "--help", "-h":
		fmt.Fprint(e.stdout, usageText)
		return 0
	default:
		fmt.Fprintf(e.stderr, "modelgate: unknown command %q\n\n%s", cmd, usageText)
		return 2
	}
}
