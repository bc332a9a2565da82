package app_test

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"

	"github.com/modelgate/modelgate/internal/console"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/payment/stripefake"
)

// The whole user journey over HTTP: sign-in, key, top-ups with the bonus,
// requests, usage, CSV and statistics agreeing to the micro-unit.
func TestConsoleFlowJourney(t *testing.T) {
	e := startConsole(t)
	u := e.signIn(ghUser{ID: 583231, Login: "octocat", Email: "octocat@example.com"})

	acct := e.account("github:octocat")
	me := u.me()
	if me.Account != "github:octocat" || me.Name != "octocat" || me.Email != "octocat@example.com" || me.Role != "user" ||
		me.Currency != "USD" || mustMoney(t, me.Balance) != 0 || !slices.Equal(me.Groups, []string{"default", "basic"}) {
		t.Fatalf("me = %+v", me)
	}
	if acct.Balance != 0 || acct.Admin {
		t.Fatalf("new account = %+v", acct)
	}
	// Signing in again is the same account.
	again := e.signIn(ghUser{ID: 583231, Login: "octocat", Email: "octocat@example.com"})
	if again.id != acct.ID {
		t.Fatalf("second sign-in made account %s, want %s", again.id, acct.ID)
	}

	key := u.createKey("laptop", "default")
	if ks := u.keys(); len(ks) != 1 || ks[0].ID != key.ID || ks[0].Status != "active" || ks[0].LastUsedAt != nil || ks[0].Key != "" {
		t.Fatalf("keys = %+v", ks)
	}

	// No balance yet: the key is refused for quota.
	_, err := e.chat(key.Key)
	apiError(t, err, http.StatusTooManyRequests, "insufficient_quota")

	// First top-up: 10 + 10% bonus.
	first := u.topUp("10", "card")
	if mustMoney(t, first.Amount) != units(10) || first.Method != "card" {
		t.Fatalf("top-up = %+v", first)
	}
	sess, ok := e.pay.Session(sessionID(first.CheckoutURL))
	if !ok || sess.AmountTotal != 1000 || sess.Currency != "usd" || !slices.Equal(sess.PaymentMethodTypes, []string{"card"}) ||
		sess.Metadata["account_id"] != acct.ID || sess.SuccessURL != e.g.URL+"/console/?topup=done" ||
		sess.CancelURL != e.g.URL+"/console/?topup=cancelled" {
		t.Fatalf("fake session = %+v", sess)
	}
	if got := e.balance(acct.Name); got != 0 {
		t.Fatalf("balance before paying = %s", got)
	}
	e.payAt(first.CheckoutURL)
	if got := e.balance(acct.Name); got != units(11) {
		t.Fatalf("balance after the first top-up = %s, want 11", got)
	}
	// The overview the browser lands on shows it.
	if st, page, _ := u.get("/console/?topup=done"); st != 200 || !strings.Contains(page, "$11.00") {
		t.Fatalf("overview after paying: %d, no $11.00", st)
	}

	// A second top-up, as a JSON number and by Alipay: no second bonus.
	second := u.topUp(300, "alipay")
	e.payAt(second.CheckoutURL)
	if got := e.balance(acct.Name); got != units(311) {
		t.Fatalf("balance after the second top-up = %s, want 311", got)
	}
	tus := u.topUps()
	if len(tus) != 2 || tus[0].ID != second.ID || tus[0].Status != "paid" || mustMoney(t, tus[0].Amount) != units(300) ||
		mustMoney(t, tus[0].Bonus) != 0 || tus[1].ID != first.ID || tus[1].Status != "paid" || mustMoney(t, tus[1].Bonus) != units(1) ||
		tus[1].CheckoutURL != "" {
		t.Fatalf("top-ups = %+v", tus)
	}

	// Requests: the credit is spendable at once, although the refused
	// request above left a copy of the zero balance in the reserver.
	const n = 3
	for i := range n {
		c, err := e.chat(key.Key)
		if err != nil {
			var ae *oai.Error
			if errors.As(err, &ae) {
				t.Fatalf("chat %d: %v: %s", i, err, ae.RawJSON())
			}
			t.Fatalf("chat %d: %v", i, err)
		}
		if len(c.Choices) == 0 || c.Choices[0].Message.Content == "" {
			t.Fatalf("chat %d: %+v", i, c)
		}
	}
	// n answered requests have records; the one refused for quota above
	// is counted (a row per key, reason and minute), and shown apart.
	var recs []conUsage
	eventually(t, "usage records", func() bool { recs = u.usage(""); return len(recs) == n })
	var refused []conRefusal
	eventually(t, "refusal counts", func() bool { refused = u.refusals(""); return len(refused) == 1 })
	if r := refused[0]; r.Status != 429 || r.Code != "insufficient_quota" || r.Count != 1 || r.KeyID != key.ID ||
		r.Endpoint != "chat.completions" || r.Minute.Second() != 0 {
		t.Fatalf("refusal count %+v", r)
	}
	if got := u.refusals("?key=key_other"); len(got) != 0 {
		t.Fatalf("another key's refusals: %+v", got)
	}
	if st, page, _ := u.get("/console/usage"); st != 200 || !strings.Contains(page, "Refused before reaching a model") ||
		!strings.Contains(page, "insufficient_quota") {
		t.Fatalf("usage page: %d, no refused requests", st)
	}
	var total money.Micros
	for _, r := range recs {
		if r.Model != "demo-chat" || r.KeyID != key.ID || r.Status != 200 || r.PromptTokens <= 0 || r.CompletionTokens <= 0 ||
			r.Endpoint == "" || r.RequestID == "" || mustMoney(t, r.Cost) <= 0 {
			t.Fatalf("usage record %+v", r)
		}
		total += mustMoney(t, r.Cost)
	}
	if got := e.balance(acct.Name); got != units(311)-total {
		t.Fatalf("balance %s after spending %s of 311", got, total)
	}
	// Filters: by key, by model, status.
	if got := u.usage("?key=" + key.ID + "&model=demo-chat&status=ok"); len(got) != n {
		t.Fatalf("filtered usage: %d records", len(got))
	}
	if got := u.usage("?status=error"); len(got) != 0 {
		t.Fatalf("error records: %+v", got)
	}
	if got := u.usage("?key=key_other"); len(got) != 0 {
		t.Fatalf("another key's records: %+v", got)
	}
	if got := u.usage("?limit=2"); len(got) != 2 {
		t.Fatalf("limit=2: %d records", len(got))
	}

	// usage.csv has the same rows.
	st, body := u.do("GET", "/console/api/usage.csv", nil, nil)
	if st != 200 {
		t.Fatalf("usage.csv: %d %s", st, body)
	}
	rows, err := csv.NewReader(strings.NewReader(string(body))).ReadAll()
	if err != nil {
		t.Fatalf("usage.csv: %v\n%s", err, body)
	}
	wantHeader := []string{"request_id", "created_at", "model", "endpoint", "key_id", "prompt_tokens", "completion_tokens", "cost", "status", "error_code"}
	if len(rows) != len(recs)+1 || !slices.Equal(rows[0], wantHeader) {
		t.Fatalf("usage.csv rows:\n%s", body)
	}
	for i, r := range recs {
		row := rows[i+1]
		at, err := time.Parse(time.RFC3339Nano, row[1])
		want := []string{r.RequestID, row[1], r.Model, r.Endpoint, r.KeyID, fmt.Sprint(r.PromptTokens), fmt.Sprint(r.CompletionTokens),
			r.Cost, fmt.Sprint(r.Status), r.ErrorCode}
		if err != nil || !at.Equal(r.CreatedAt) || !slices.Equal(row, want) {
			t.Fatalf("csv row %d = %q, want %q (time %v)", i, row, want, r.CreatedAt)
		}
	}

	// Statistics: daily totals equal the records, to the micro-unit.
	var stats struct {
		Days  int
		From  string
		To    string
		Daily []struct {
			Date             string
			Requests         int64
			PromptTokens     int64 `json:"prompt_tokens"`
			CompletionTokens int64 `json:"completion_tokens"`
			Cost             string
		}
		ByModel []struct {
			Model    string
			Requests int64
			Cost     string
		} `json:"by_model"`
		ByKey []struct {
			KeyID    string `json:"key_id"`
			Name     string
			Requests int64
			Cost     string
		} `json:"by_key"`
	}
	u.wantJSON("GET", "/console/api/stats?days=7", nil, 200, &stats)
	type tot struct {
		req, in, out int64
		cost         money.Micros
	}
	want := map[string]tot{}
	for _, r := range recs {
		d := r.CreatedAt.UTC().Format(time.DateOnly)
		x := want[d]
		x.req++
		x.in += r.PromptTokens
		x.out += r.CompletionTokens
		x.cost += mustMoney(t, r.Cost)
		want[d] = x
	}
	if stats.Days != 7 || len(stats.Daily) != 7 || stats.To != time.Now().UTC().Format(time.DateOnly) {
		t.Fatalf("stats range: %d days, %d entries, to %s", stats.Days, len(stats.Daily), stats.To)
	}
	var seen int64
	for _, d := range stats.Daily {
		w := want[d.Date]
		if d.Requests != w.req || d.PromptTokens != w.in || d.CompletionTokens != w.out || mustMoney(t, d.Cost) != w.cost {
			t.Fatalf("stats for %s = %+v, records say %+v", d.Date, d, w)
		}
		seen += d.Requests
	}
	if seen != int64(len(recs)) || len(stats.ByModel) != 1 || stats.ByModel[0].Model != "demo-chat" || mustMoney(t, stats.ByModel[0].Cost) != total ||
		len(stats.ByKey) != 1 || stats.ByKey[0].KeyID != key.ID || stats.ByKey[0].Name != "laptop" || stats.ByKey[0].Requests != int64(len(recs)) {
		t.Fatalf("stats = %+v", stats)
	}
	for _, q := range []string{"?days=0", "?days=367", "?days=x"} {
		if st, body := u.do("GET", "/console/api/stats"+q, nil, nil); st != 400 {
			t.Errorf("stats%s: %d %s", q, st, body)
		}
	}

	// The key's last use is recorded.
	eventually(t, "last_used_at", func() bool { ks := u.keys(); return len(ks) == 1 && ks[0].LastUsedAt != nil })
	if lu := *u.keys()[0].LastUsedAt; time.Since(lu) > time.Minute || time.Until(lu) > time.Second {
		t.Fatalf("last_used_at = %v", lu)
	}

	// The HTML pages agree.
	if st, page, _ := u.get("/console/usage"); st != 200 || strings.Count(page, "demo-chat") < n {
		t.Fatalf("usage page: %d, %d mentions of demo-chat", st, strings.Count(page, "demo-chat"))
	}
	if st, page, _ := u.get("/console/stats"); st != 200 || !strings.Contains(page, "<svg") {
		t.Fatalf("stats page: %d", st)
	}
	if st, page, _ := u.get("/console/keys"); st != 200 || !strings.Contains(page, "laptop") || !strings.Contains(page, key.Prefix) ||
		strings.Contains(page, key.Key) {
		t.Fatalf("keys page: %d (must list the key by prefix, never the secret)", st)
	}

	// Signing out ends the session.
	if st, loc, _ := u.form("/console/logout", nil, true); st != http.StatusSeeOther || loc != "/console/" {
		t.Fatalf("logout: %d to %q", st, loc)
	}
	if st, body := u.do("GET", "/console/api/me", nil, nil); st != 401 || errCode(body) != "not_signed_in" {
		t.Fatalf("me after logout: %d %s", st, body)
	}
}

// Bad input is refused with nothing changed: amounts, methods, key names,
// CSRF, and webhooks that are forged, unknown, replayed or out of order.
func TestConsoleFlowRefusals(t *testing.T) {
	e := startConsole(t)
	u := e.signIn(ghUser{ID: 7, Login: "mallory", Email: "m@example.com"})
	key := u.createKey("k1", "default")

	t.Run("top-up input", func(t *testing.T) {
		tests := []struct {
			amount any
			method string
			code   string
		}{
			{"0.5", "card", "invalid_amount"},
			{0.5, "card", "invalid_amount"},
			{"0", "card", "invalid_amount"},
			{"10000000", "card", "invalid_amount"},
			{"10000.01", "card", "invalid_amount"},
			{"-5", "card", "invalid_amount"},
			{-5, "card", "invalid_amount"},
			{"abc", "card", "invalid_amount"},
			{"", "card", "invalid_amount"},
			{"1e3", "card", "invalid_amount"},
			{"10.001", "card", "invalid_amount"}, // not whole cents
			{true, "card", "invalid_amount"},
			{nil, "card", "invalid_amount"},
			{"10", "paypal", "invalid_method"},
			{"10", "", "invalid_method"},
			{"10", "CARD", "invalid_method"},
		}
		for _, tt := range tests {
			before := len(e.pay.Sessions())
			st, body := u.api("POST", "/console/api/topups", map[string]any{"amount": tt.amount, "method": tt.method})
			if st != 400 || errCode(body) != tt.code {
				t.Errorf("top-up %#v by %q: %d %s, want 400 %s", tt.amount, tt.method, st, body, tt.code)
			}
			if after := len(e.pay.Sessions()); after != before {
				t.Errorf("top-up %#v by %q created a Stripe session", tt.amount, tt.method)
			}
		}
		// Not JSON, or with unknown members.
		for _, body := range []string{`{"amount":"10","method":"card","bonus":"100"}`, `amount=10`, `{"amount":"10"} {}`} {
			if st, b := u.api("POST", "/console/api/topups", body); st != 400 {
				t.Errorf("top-up body %s: %d %s", body, st, b)
			}
		}
		// The form says why on the overview page.
		st, _, page := u.form("/console/topups", url.Values{"amount": {"0.5"}, "method": {"card"}}, true)
		if st != 400 || !strings.Contains(page, "Enter an amount from $1.00 to $10000.00") {
			t.Errorf("top-up form 0.5: %d", st)
		}
		if len(e.pay.Sessions()) != 0 || len(u.topUps()) != 0 {
			t.Fatalf("refused top-ups left %d sessions, %d top-ups", len(e.pay.Sessions()), len(u.topUps()))
		}
	})

	t.Run("key names", func(t *testing.T) {
		long := strings.Repeat("x", 10<<10)
		if st, body := u.api("POST", "/console/api/keys", map[string]string{"name": long, "group": "default"}); st != 400 {
			t.Errorf("10 KB name: %d %s", st, body)
		}
		if st, body := u.api("POST", "/console/api/keys", map[string]string{"name": strings.Repeat("é", 101), "group": "default"}); st != 400 {
			t.Errorf("101-character name: %d %s", st, body)
		}
		if st, _, _ := u.form("/console/keys", url.Values{"name": {long}, "group": {"default"}}, true); st != 400 {
			t.Errorf("10 KB name by form: %d", st)
		}
		if st, body := u.api("POST", "/console/api/keys", map[string]string{"name": "k", "group": "admins"}); st != 400 {
			t.Errorf("unknown group: %d %s", st, body)
		}
		if st, body := u.api("POST", "/console/api/keys", `{"name":"`+strings.Repeat("y", 70<<10)+`","group":"default"}`); st != 413 {
			t.Errorf("70 KB body: %d %.200s", st, body)
		}
		if ks := u.keys(); len(ks) != 1 {
			t.Fatalf("refused names created keys: %+v", ks)
		}
		// Exactly 100 characters is fine.
		u.createKey(strings.Repeat("é", 100), "basic")
	})

	t.Run("csrf", func(t *testing.T) {
		other := e.signIn(ghUser{ID: 8, Login: "eve", Email: "eve@example.com"})
		keysBefore := u.keys()
		calls := []struct {
			name        string
			method      string
			path        string
			body        string
			contentType string
		}{
			{"api create key", "POST", "/console/api/keys", `{"name":"x","group":"default"}`, "application/json"},
			{"api revoke key", "DELETE", "/console/api/keys/" + key.ID, "", ""},
			{"api top-up", "POST", "/console/api/topups", `{"amount":"10","method":"card"}`, "application/json"},
			{"api redeem", "POST", "/console/api/redeem", `{"code":"MG-AAAA-AAAA-AAAA-AAAA-AAAA"}`, "application/json"},
			{"form create key", "POST", "/console/keys", "name=x&group=default", "application/x-www-form-urlencoded"},
			{"form revoke key", "POST", "/console/keys/" + key.ID + "/revoke", "", "application/x-www-form-urlencoded"},
			{"form top-up", "POST", "/console/topups", "amount=10&method=card", "application/x-www-form-urlencoded"},
			{"form redeem", "POST", "/console/redeem", "code=MG-AAAA", "application/x-www-form-urlencoded"},
			{"logout", "POST", "/console/logout", "", "application/x-www-form-urlencoded"},
		}
		for _, c := range calls {
			for _, forge := range []struct {
				name   string
				header string // X-CSRF-Token
				field  string // csrf_token
			}{
				{"missing", "", ""},
				{"forged header", "forged-token", ""},
				{"forged field", "", "forged-token"},
				{"another session's token", other.csrf, ""},
				{"another session's token in the field", "", other.csrf},
			} {
				body := c.body
				if forge.field != "" {
					if body != "" {
						body += "&"
					}
					body += "csrf_token=" + url.QueryEscape(forge.field)
				}
				h := map[string]string{"Origin": "http://evil.example"}
				if c.contentType != "" {
					h["Content-Type"] = c.contentType
				}
				if forge.header != "" {
					h[console.CSRFHeader] = forge.header
				}
				var rb any
				if body != "" {
					rb = body
				}
				st, b := u.do(c.method, c.path, rb, h)
				if st != http.StatusForbidden {
					t.Errorf("%s, %s: %d %.200s, want 403", c.name, forge.name, st, b)
				}
			}
		}
		if ks := u.keys(); !slices.EqualFunc(ks, keysBefore, func(a, b conKey) bool { return a.ID == b.ID && a.Status == b.Status }) {
			t.Errorf("keys changed by refused requests: %+v, was %+v", ks, keysBefore)
		}
		if len(e.pay.Sessions()) != 0 || len(u.topUps()) != 0 {
			t.Errorf("refused requests started top-ups")
		}
		u.me()                    // still signed in
		_, err := e.chat(key.Key) // alive, only short of quota
		apiError(t, err, http.StatusTooManyRequests, "insufficient_quota")
	})

	t.Run("webhooks", func(t *testing.T) {
		acct := u.id
		pending := u.topUp("10", "card")
		sid := sessionID(pending.CheckoutURL)
		payload := e.pay.Event("checkout.session.completed", sid, nil)
		good := e.pay.Sign(payload)
		tampered := []byte(strings.Replace(string(payload), `"amount_total":1000`, `"amount_total":1000000`, 1))
		if string(tampered) == string(payload) {
			t.Fatal("could not tamper with the payload")
		}
		bad := []struct {
			name    string
			payload []byte
			sig     string
		}{
			{"no signature", payload, ""},
			{"wrong secret", payload, stripefake.SignAt(payload, "whsec_wrong", time.Now())},
			{"tampered amount", tampered, good},
			{"stale timestamp", payload, stripefake.SignAt(payload, conWebhookSecret, time.Now().Add(-time.Hour))},
			{"garbage header", payload, "t=1,v1=00"},
			{"signed non-event", []byte(`not json`), e.pay.Sign([]byte(`not json`))},
		}
		for _, b := range bad {
			if st := e.pay.SendRaw(b.payload, b.sig); st != 400 {
				t.Errorf("%s: %d, want 400", b.name, st)
			}
		}
		if got := e.balance(u.account); got != 0 {
			t.Fatalf("balance after refused webhooks: %s", got)
		}
		if tus := u.topUps(); len(tus) != 1 || tus[0].Status != "pending" {
			t.Fatalf("top-ups after refused webhooks: %+v", tus)
		}

		// A signed event for a session the gateway did not create, even
		// naming this account, credits nothing.
		st := e.pay.Send("checkout.session.completed", "cs_unknown", func(ev map[string]any) {
			o := stripefake.Object(ev)
			o["payment_status"], o["amount_total"], o["currency"] = "paid", 500000, "usd"
			o["client_reference_id"] = acct
			o["metadata"] = map[string]any{"account_id": acct, "topup_id": pending.ID}
		})
		if st != 200 {
			t.Fatalf("unknown session: %d", st)
		}
		if got := e.balance(u.account); got != 0 {
			t.Fatalf("balance after an unknown session's event: %s", got)
		}

		// The same event delivered twice (each delivery freshly signed):
		// credited once, with the first-top-up bonus.
		for i := range 2 {
			if st := e.pay.SendRaw(payload, e.pay.Sign(payload)); st != 200 {
				t.Fatalf("delivery %d: %d", i, st)
			}
		}
		if got := e.balance(u.account); got != units(11) {
			t.Fatalf("balance after a replayed event: %s, want 11", got)
		}
		// Another event id for the same paid session changes nothing.
		if st := e.pay.Send("checkout.session.async_payment_succeeded", sid, nil); st != 200 {
			t.Fatalf("late async event: %d", st)
		}
		if got := e.balance(u.account); got != units(11) {
			t.Fatalf("balance after a second event for a paid session: %s", got)
		}

		// Out of order: async_payment_succeeded before completed.
		later := u.topUp("20", "alipay")
		lsid := sessionID(later.CheckoutURL)
		if st := e.pay.Send("checkout.session.async_payment_succeeded", lsid, nil); st != 200 {
			t.Fatalf("async succeeded: %d", st)
		}
		if st := e.pay.Send("checkout.session.completed", lsid, nil); st != 200 {
			t.Fatalf("completed: %d", st)
		}
		if got := e.balance(u.account); got != units(31) {
			t.Fatalf("balance after out-of-order events: %s, want 31", got)
		}
		// Expired after paid: still paid; the fake refuses to pay it again.
		if st := e.pay.Send("checkout.session.expired", lsid, nil); st != 200 {
			t.Fatalf("expired: %d", st)
		}
		tus := u.topUps()
		if len(tus) != 2 || tus[0].Status != "paid" || mustMoney(t, tus[0].Bonus) != 0 || tus[1].Status != "paid" ||
			mustMoney(t, tus[1].Bonus) != units(1) {
			t.Fatalf("top-ups = %+v", tus)
		}
		// An unpaid session that expires never credits, even if a paid
		// event arrives afterwards.
		gone := u.topUp("50", "card")
		gsid := sessionID(gone.CheckoutURL)
		if st := e.pay.Send("checkout.session.expired", gsid, nil); st != 200 {
			t.Fatalf("expired: %d", st)
		}
		if st := e.pay.Send("checkout.session.completed", gsid, nil); st != 200 {
			t.Fatalf("completed after expiry: %d", st)
		}
		if got := e.balance(u.account); got != units(31) {
			t.Fatalf("balance after paying an expired session: %s, want 31", got)
		}
		if tus := u.topUps(); tus[0].Status != "expired" {
			t.Fatalf("expired top-up shows %+v", tus[0])
		}
		// The ledger agrees with the balance.
		sum, err := e.g.app.Store().LedgerSum(context.Background(), acct)
		if err != nil || sum != units(31) {
			t.Fatalf("ledger sum %s, %v", sum, err)
		}
	})
}

// One user cannot touch or see another's keys, usage or top-ups; a revoked
// key stops working at once (auth cache TTL 1 ns in tests).
func TestConsoleFlowIsolationAndRevoke(t *testing.T) {
	e := startConsole(t)
	alice := e.signIn(ghUser{ID: 100, Login: "alice", Email: "alice@example.com"})
	bob := e.signIn(ghUser{ID: 200, Login: "bob", Email: "bob@example.com"})
	if alice.id == bob.id || bob.account != "github:bob" {
		t.Fatalf("accounts %s and %s", alice.account, bob.account)
	}
	key := alice.createKey("alice-key", "default")
	e.payAt(alice.topUp("10", "card").CheckoutURL)
	if _, err := e.chat(key.Key); err != nil {
		t.Fatal(err)
	}
	eventually(t, "alice's usage", func() bool { return len(alice.usage("")) == 1 })

	// Bob cannot revoke Alice's key, by API or form, nor learn it exists.
	st, body := bob.api("DELETE", "/console/api/keys/"+key.ID, nil)
	if st != 404 || errCode(body) != "not_found" {
		t.Fatalf("bob revokes alice's key: %d %s", st, body)
	}
	if st, body := bob.api("DELETE", "/console/api/keys/key_doesnotexist", nil); st != 404 || errCode(body) != "not_found" {
		t.Fatalf("bob revokes a missing key: %d %s", st, body)
	}
	if st, _, _ := bob.form("/console/keys/"+key.ID+"/revoke", nil, true); st != 404 {
		t.Fatalf("bob revokes alice's key by form: %d", st)
	}
	if _, err := e.chat(key.Key); err != nil {
		t.Fatalf("alice's key after bob's attempts: %v", err)
	}
	// Bob sees nothing of Alice's.
	if ks := bob.keys(); len(ks) != 0 {
		t.Fatalf("bob's keys: %+v", ks)
	}
	for _, q := range []string{"", "?key=" + key.ID, "?model=demo-chat"} {
		if got := bob.usage(q); len(got) != 0 {
			t.Fatalf("bob's usage%s: %+v", q, got)
		}
	}
	if tus := bob.topUps(); len(tus) != 0 {
		t.Fatalf("bob's top-ups: %+v", tus)
	}
	if st, body := bob.do("GET", "/console/api/usage.csv?key="+key.ID, nil, nil); st != 200 || strings.Count(string(body), "\n") != 1 {
		t.Fatalf("bob's usage.csv: %d %s", st, body)
	}
	var stats struct {
		ByKey []any `json:"by_key"`
	}
	bob.wantJSON("GET", "/console/api/stats", nil, 200, &stats)
	if len(stats.ByKey) != 0 {
		t.Fatalf("bob's stats: %+v", stats)
	}
	for _, p := range []string{"/console/usage", "/console/keys", "/console/", "/console/stats"} {
		if st, page, _ := bob.get(p); st != 200 || strings.Contains(page, "alice-key") || strings.Contains(page, key.Prefix) {
			t.Fatalf("bob's %s shows alice's key (%d)", p, st)
		}
	}
	// Signed out, nothing.
	anon := e.newBrowser()
	for _, p := range []string{"/console/api/keys", "/console/api/usage", "/console/api/topups", "/console/api/stats", "/console/api/usage.csv"} {
		if st, body := anon.do("GET", p, nil, nil); st != 401 {
			t.Fatalf("signed out %s: %d %s", p, st, body)
		}
	}
	if st, _, final := anon.get("/console/keys"); st != 200 || final != "/console/" {
		t.Fatalf("signed out /console/keys: %d at %s", st, final)
	}

	// Alice revokes by API: the next request fails.
	if st, body := alice.api("DELETE", "/console/api/keys/"+key.ID, nil); st != 204 {
		t.Fatalf("revoke: %d %s", st, body)
	}
	_, err := e.chat(key.Key)
	apiError(t, err, 401, "invalid_api_key")
	if ks := alice.keys(); len(ks) != 1 || ks[0].Status != "revoked" {
		t.Fatalf("keys after revoking: %+v", ks)
	}
	// And by form.
	k2 := alice.createKey("second", "basic")
	if _, err := e.chat(k2.Key); err != nil {
		t.Fatal(err)
	}
	if st, loc, _ := alice.form("/console/keys/"+k2.ID+"/revoke", nil, true); st != http.StatusSeeOther || loc != "/console/keys?done=revoked" {
		t.Fatalf("revoke by form: %d to %q", st, loc)
	}
	_, err = e.chat(k2.Key)
	apiError(t, err, 401, "invalid_api_key")
}

var codeRE = regexp.MustCompile(`MG-[A-Z2-9]{4}-[A-Z2-9]{4}-[A-Z2-9]{4}-[A-Z2-9]{4}-[A-Z2-9]{4}`)
