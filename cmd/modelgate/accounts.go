package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

func accountsCmd(args []string, e env) int {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, "usage: modelgate accounts credit|show|list ...\n")
		return 2
	}
	switch args[0] {
	case "credit":
		return accountsCredit(args[1:], e)
	case "show":
		return accountsShow(args[1:], e)
	case "list":
		return accountsList(args[1:], e)
	default:
		fmt.Fprintf(e.stderr, "modelgate accounts: unknown subcommand %q (credit, show, list)\n", args[0])
		return 2
	}
}

// accountsCredit posts one ledger entry: a top-up by default; a negative
// amount is an adjustment.
func accountsCredit(args []string, e env) int {
	fs, path := newFlags("accounts credit", e)
	note := fs.String("note", "", "why, for the ledger")
	kind := fs.String("kind", "", "topup, bonus, refund or adjustment (default: topup, or adjustment for a negative amount)")
	ref := fs.String("ref", "", "idempotency key, e.g. a payment id: the same ref is never posted twice")
	pos, err := parseFlags(fs, negativeAmountArgs(fs, args))
	if err != nil {
		return 2
	}
	if len(pos) != 2 {
		fmt.Fprintln(e.stderr, "usage: modelgate accounts credit NAME AMOUNT [--note TEXT] [--kind K] [--ref ID]")
		return 2
	}
	amount, err := money.Parse(pos[1])
	if err != nil || amount == 0 {
		fmt.Fprintf(e.stderr, "modelgate accounts credit: AMOUNT: want a non-zero amount with at most 6 decimals (like 10 or 0.000250), got %q\n", pos[1])
		return 2
	}
	k := store.LedgerKind(*kind)
	switch {
	case *kind == "" && amount < 0:
		k = store.KindAdjustment
	case *kind == "":
		k = store.KindTopUp
	case !k.Valid() || k == store.KindCharge:
		fmt.Fprintf(e.stderr, "modelgate accounts credit: --kind: want topup, bonus, refund or adjustment, got %q\n", *kind)
		return 2
	case amount < 0 && k != store.KindAdjustment:
		fmt.Fprintln(e.stderr, "modelgate accounts credit: a negative amount must be --kind adjustment")
		return 2
	}
	return withStore(*path, e, func(ctx context.Context, cfg *config.Config, st store.Store) error {
		a, err := findAccount(ctx, st, pos[0])
		if err != nil {
			return err
		}
		entry, err := st.Post(ctx, store.LedgerEntry{AccountID: a.ID, Kind: k, Amount: amount, Ref: *ref,
			Note: *note, Time: time.Now().UTC()})
		if errors.Is(err, store.ErrConflict) {
			return fmt.Errorf("ref %q was posted before; nothing changed", *ref)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "%s %s %s to %q; balance %s %s\n", k, amount, cfg.Billing.Currency, a.Name, entry.BalanceAfter, cfg.Billing.Currency)
		return nil
	})
}

// negativeAmountArgs lets a negative AMOUNT ("-5") through package flag,
// which would take it for an undefined flag: it puts "--" before the first
// argument that looks like a negative number and is not a flag's value.
func negativeAmountArgs(fs *flag.FlagSet, args []string) []string {
	for i, a := range args {
		if a == "--" {
			return args
		}
		if len(a) < 2 || a[0] != '-' || !(a[1] >= '0' && a[1] <= '9' || a[1] == '.') {
			continue
		}
		if i > 0 && takesValue(fs, args[i-1]) {
			continue
		}
		out := make([]string, 0, len(args)+1)
		return append(append(append(out, args[:i]...), "--"), args[i:]...)
	}
	return args
}

// takesValue reports whether arg is a flag of fs whose value is the next argument.
func takesValue(fs *flag.FlagSet, arg string) bool {
	name, ok := strings.CutPrefix(arg, "-")
	if !ok || strings.Contains(name, "=") {
		return false
	}
	f := fs.Lookup(strings.TrimPrefix(name, "-"))
	if f == nil {
		return false
	}
	b, isBool := f.Value.(interface{ IsBoolFlag() bool })
	return !isBool || !b.IsBoolFlag()
}

type accountJSON struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Currency  string    `json:"currency"`
	Balance   string    `json:"balance"`
	Reserved  string    `json:"reserved,omitempty"`  // show only
	Held      string    `json:"held,omitempty"`      // show only: open video tasks and background responses
	Available string    `json:"available,omitempty"` // show only
	Spent     string    `json:"spent"`
	LedgerSum string    `json:"ledger_sum,omitempty"` // show only
	CreatedAt time.Time `json:"created_at"`
}

func accountsShow(args []string, e env) int {
	fs, path := newFlags("accounts show", e)
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return 2
	}
	if len(pos) != 1 {
		fmt.Fprintln(e.stderr, "usage: modelgate accounts show NAME [--json]")
		return 2
	}
	return withStore(*path, e, func(ctx context.Context, cfg *config.Config, st store.Store) error {
		a, err := findAccount(ctx, st, pos[0])
		if err != nil {
			return err
		}
		reserved, err := st.Reserved(ctx, a.ID)
		if err != nil {
			return err
		}
		sum, err := st.LedgerSum(ctx, a.ID)
		if err != nil {
			return err
		}
		cur := cfg.Billing.Currency
		j := accountJSON{ID: a.ID, Name: a.Name, Currency: cur, Balance: a.Balance.String(), Reserved: reserved.String(),
			Held: a.Held.String(), Available: (a.Balance - reserved - a.Held).String(), Spent: a.Spent.String(),
			LedgerSum: sum.String(), CreatedAt: a.CreatedAt}
		if *asJSON {
			enc := json.NewEncoder(e.stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(j)
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "account\t%s (%s)\n", a.Name, a.ID)
		fmt.Fprintf(tw, "balance\t%s %s\n", j.Balance, cur)
		fmt.Fprintf(tw, "reserved\t%s %s\t(requests in flight)\n", j.Reserved, cur)
		fmt.Fprintf(tw, "held\t%s %s\t(open video tasks and background responses)\n", j.Held, cur)
		fmt.Fprintf(tw, "available\t%s %s\n", j.Available, cur)
		fmt.Fprintf(tw, "spent\t%s %s\n", j.Spent, cur)
		if sum != a.Balance {
			fmt.Fprintf(tw, "WARNING\tledger sum %s differs from the balance\n", j.LedgerSum)
		}
		return tw.Flush()
	})
}

func accountsList(args []string, e env) int {
	fs, path := newFlags("accounts list", e)
	asJSON := fs.Bool("json", false, "print JSON")
	if _, err := parseFlags(fs, args); err != nil {
		return 2
	}
	return withStore(*path, e, func(ctx context.Context, cfg *config.Config, st store.Store) error {
		accts, err := st.ListAccounts(ctx)
		if err != nil {
			return err
		}
		if *asJSON {
			out := make([]accountJSON, 0, len(accts))
			for _, a := range accts {
				out = append(out, accountJSON{ID: a.ID, Name: a.Name, Currency: cfg.Billing.Currency, Balance: a.Balance.String(),
					Spent: a.Spent.String(), CreatedAt: a.CreatedAt})
			}
			enc := json.NewEncoder(e.stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(out)
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "NAME\tID\tBALANCE (%s)\tSPENT\tCREATED\n", cfg.Billing.Currency)
		for _, a := range accts {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", a.Name, a.ID, a.Balance, a.Spent, a.CreatedAt.Format(time.DateTime))
		}
		return tw.Flush()
	})
}

// findAccount finds an account by name, with a hint when there is none.
func findAccount(ctx context.Context, st store.Store, name string) (store.Account, error) {
	a, err := st.AccountByName(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return a, fmt.Errorf("no account named %q (see modelgate accounts list)", name)
	}
	return a, err
}
