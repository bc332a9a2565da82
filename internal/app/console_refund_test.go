package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/payment"
	"github.com/modelgate/modelgate/internal/store"
)

// spent is what the account's answered requests cost, once their usage
// records are written.
func (e *consoleEnv) spent(b *conUser, requests int) money.Micros {
	e.t.Helper()
	var total money.Micros
	eventually(e.t, "usage records", func() bool {
		total = 0
		n := 0
		for _, r := range b.usage("?status=ok") {
			total += mustMoney(e.t, r.Cost)
			n++
		}
		return n == requests && e.account(b.account).Spent == total
	})
	return total
}

// A refund or a dispute Stripe signs takes back the same share of the
// top-up and of its first-top-up bonus, once; a balance taken below zero
// refuses billable requests (429 insufficient_quota through the SDK) until
// the account is topped up again.
func TestConsoleRefundsAndDisputes(t *testing.T) {
	e := startConsole(t)
	u := e.signIn(ghUser{ID: 4101, Login: "refunded", Email: "r@example.com"})
	key := u.createKey("k", "default")
	first := u.topUp("10", "card")
	e.payAt(first.CheckoutURL)
	if got := e.balance(u.account); got != units(11) {
		t.Fatalf("balance after paying = %s, want 11 (a 10%% bonus)", got)
	}
	if _, err := e.chat(key.Key); err != nil {
		t.Fatal(err)
	}
	cost := e.spent(u, 1)
	if cost <= 0 {
		t.Fatalf("the request cost %s", cost)
	}

	steps := []struct {
		name     string
		send     func() int
		balance  money.Micros
		reversed money.Micros // the first top-up's, bonus included
	}{
		{"a partial refund takes its share of the bonus too", func() int { return e.pay.Refund(sessionID(first.CheckoutURL), 400) },
			units(11) - cost - units(4.4), units(4.4)},
		{"a refund event with the same running total changes nothing", func() int { return e.pay.Refund(sessionID(first.CheckoutURL), 0) },
			units(11) - cost - units(4.4), units(4.4)},
		{"the rest refunded: below zero", func() int { return e.pay.Refund(sessionID(first.CheckoutURL), 600) },
			-cost, units(11)},
		{"a dispute of what was refunded takes nothing more", func() int { return e.pay.Dispute(sessionID(first.CheckoutURL), 1000) },
			-cost, units(11)},
	}
	for _, st := range steps {
		if status := st.send(); status != http.StatusOK {
			t.Fatalf("%s: webhook answered %d", st.name, status)
		}
		if got := e.balance(u.account); got != st.balance {
			t.Fatalf("%s: balance %s, want %s", st.name, got, st.balance)
		}
		var l struct {
			Data []struct{ ID, Reversed string }
		}
		u.wantJSON("GET", "/console/api/topups", nil, http.StatusOK, &l)
		if len(l.Data) != 1 || mustMoney(t, l.Data[0].Reversed) != st.reversed {
			t.Fatalf("%s: top-ups %+v, want %s reversed", st.name, l.Data, st.reversed)
		}
	}
	if sum, err := e.g.app.Store().LedgerSum(context.Background(), u.id); err != nil || sum != -cost {
		t.Fatalf("ledger sum %s, %v", sum, err)
	}
	if _, page, _ := u.get("/console/"); !strings.Contains(page, ">refunded<") {
		t.Error("the overview does not show the top-up refunded")
	}

	// Below zero: refused until topped up, with no upstream call.
	_, err := e.chat(key.Key)
	apiError(t, err, http.StatusTooManyRequests, "insufficient_quota")
	second := u.topUp("20", "card")
	e.payAt(second.CheckoutURL)
	if got := e.balance(u.account); got != units(20)-cost {
		t.Fatalf("balance after topping up again = %s, want 20 less the first request (no second bonus)", got)
	}
	if _, err := e.chat(key.Key); err != nil {
		t.Fatalf("after topping up again: %v", err)
	}
	cost = e.spent(u, 2)

	// A dispute of the second top-up: taken back whole; refused again.
	if status := e.pay.Dispute(sessionID(second.CheckoutURL), 2000); status != http.StatusOK {
		t.Fatalf("dispute: %d", status)
	}
	if got := e.balance(u.account); got != -cost {
		t.Fatalf("balance after the dispute = %s, want %s", got, -cost)
	}
	_, err = e.chat(key.Key)
	apiError(t, err, http.StatusTooManyRequests, "insufficient_quota")

	entries, err := e.g.app.Store().ListLedger(context.Background(), u.id)
	if err != nil {
		t.Fatal(err)
	}
	var takenBack []string
	for _, en := range entries {
		if en.Amount < 0 && en.Kind != store.KindCharge {
			takenBack = append(takenBack, string(en.Kind)+" "+en.Amount.String())
		}
	}
	want := []string{"topup -4.000000", "bonus -0.400000", "topup -6.000000", "bonus -0.600000", "topup -20.000000"}
	if strings.Join(takenBack, ", ") != strings.Join(want, ", ") {
		t.Errorf("ledger entries taking back: %v, want %v", takenBack, want)
	}
}

// An account starts at most 5 checkouts that are still open and 10 an
// hour: past either, 429 too_many_topups (the /v1 error shape for the JSON
// API, the reason on the page) and Stripe is not called. The counts are
// the store's, so a second gateway on the same database keeps them too.
func TestConsoleTopUpLimits(t *testing.T) {
	e := startConsole(t)
	who := ghUser{ID: 4102, Login: "eager", Email: "eager@example.com"}
	u := e.signIn(who)
	var open []conTopUp
	for range payment.MaxOpenTopUps {
		open = append(open, u.topUp("1", "card"))
	}
	refused := func(b *conUser, why string) {
		t.Helper()
		calls := e.pay.Calls()
		st, body := b.api("POST", "/console/api/topups", map[string]any{"amount": "1", "method": "card"})
		var ae struct {
			Error struct {
				Message string  `json:"message"`
				Type    string  `json:"type"`
				Param   *string `json:"param"`
				Code    string  `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal(body, &ae); err != nil || st != http.StatusTooManyRequests || ae.Error.Code != "too_many_topups" ||
			ae.Error.Type != "rate_limit_error" || ae.Error.Message == "" {
			t.Fatalf("%s: %d %s, want 429 too_many_topups", why, st, body)
		}
		st, _, page := b.form("/console/topups", url.Values{"amount": {"1"}, "method": {"card"}}, true)
		if st != http.StatusTooManyRequests || !strings.Contains(page, "Too many top-ups started") {
			t.Fatalf("%s: the form answered %d", why, st)
		}
		if got := e.pay.Calls(); got != calls {
			t.Fatalf("%s: Stripe was called %d times", why, got-calls)
		}
	}
	refused(u, "a sixth open checkout")

	// Paid checkouts are not open: more may start, up to 10 in the hour.
	for _, tu := range open {
		e.payAt(tu.CheckoutURL)
	}
	for range payment.MaxTopUpsPerHour - payment.MaxOpenTopUps {
		u.topUp("1", "card")
	}
	refused(u, "an eleventh in the hour")
	if n := len(u.topUps()); n != payment.MaxTopUpsPerHour {
		t.Fatalf("%d top-ups, want %d", n, payment.MaxTopUpsPerHour)
	}

	// Another gateway on the same database counts the same top-ups.
	gh := newGHFake(t)
	replica := &consoleEnv{t: t, gh: gh, pay: e.pay}
	replica.g = startGateway(t, withConsole(t, gh, e.pay), func(c *config.Config) {
		c.Database = e.g.cfg.Database
		c.Usage.JournalDir = t.TempDir()
	})
	if r := replica.signIn(who); r.account != u.account {
		t.Fatalf("the replica signed %q in, want %q", r.account, u.account)
	} else {
		refused(r, "an eleventh through a replica")
	}

	// Another account is not limited by this one's.
	other := e.signIn(ghUser{ID: 4103, Login: "other", Email: "other@example.com"})
	other.topUp("1", "card")
}
