package lifecycle

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/billing"
	chg "github.com/modelgate/modelgate/internal/charge"
	"github.com/modelgate/modelgate/internal/gate"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/reqinfo"
	"github.com/modelgate/modelgate/internal/store"
	"github.com/modelgate/modelgate/internal/tokenize"
)

// fundedSource is a billing.Source whose every account holds balance.
type fundedSource struct{ balance money.Micros }

func (s fundedSource) AccountByID(_ context.Context, id string) (store.Account, error) {
	return store.Account{ID: id, Balance: s.balance}, nil
}

func (fundedSource) KeyByID(_ context.Context, id string) (store.Key, error) {
	return store.Key{ID: id}, nil
}

// billedCore is a Core that bills every model at mp (none when !known)
// to accounts holding balance.
func billedCore(mp billing.ModelPrice, known bool, balance money.Micros) *Core {
	return &Core{Billing: &chg.Billing{
		Prices:   func(string, string) (billing.ModelPrice, bool) { return mp, known },
		Ratio:    func(string) int64 { return money.PPM },
		Reserver: billing.NewReserver(fundedSource{balance}, billing.Options{}),
		Tokens:   tokenize.NewSet(),
	}}
}

// AdmitBody reserves the body's bound when the balance covers it, else
// the counted prompt; refuses what neither fits, and models without a
// price; reserves nothing for free models.
func TestAdmitBody(t *testing.T) {
	price := billing.TokenPrice{Input: 2 * money.Unit, Output: 8 * money.Unit}
	priced := billing.ModelPrice{Priced: true, Price: price}
	body := []byte(`{"model":"claude","max_tokens":100,"messages":[{"role":"user","content":"hello there"}]}`)
	const counted = 7
	cost := func(prompt, completion int64) money.Micros {
		m, err := billing.Cost(price, billing.Tokens{Prompt: prompt, Completion: completion}, money.PPM)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	bound := cost(PromptBound(body), 100)
	n := int64(counted)
	if !tokenize.NewSet().For(priced.Tokenizer).Exact() {
		n += n / 4 // the margin for another vendor's tokenizer
	}
	small := cost(n, 100)
	tests := []struct {
		name    string
		mp      billing.ModelPrice
		known   bool
		balance money.Micros
		held    money.Micros
		status  int    // 0: admitted
		code    string // the refusal's code
		counts  int    // calls of count
	}{
		{"the bound fits", priced, true, 10 * money.Unit, bound, 0, "", 0},
		{"only the counted prompt fits", priced, true, small, small, 0, "", 1},
		{"nothing fits", priced, true, small - 1, 0, http.StatusTooManyRequests, apierr.CodeInsufficientQuota, 1},
		{"free", billing.ModelPrice{Free: true}, true, 0, 0, 0, "", 0},
		{"no price", billing.ModelPrice{}, true, 10 * money.Unit, 0, http.StatusServiceUnavailable, apierr.CodeModelNotPriced, 0},
		{"unknown to the catalog", priced, false, 10 * money.Unit, 0, http.StatusServiceUnavailable, apierr.CodeModelNotPriced, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := billedCore(tt.mp, tt.known, tt.balance)
			calls := 0
			count := func() (int64, error) { calls++; return counted, nil }
			info := &reqinfo.Info{}
			p := gate.Principal{AccountID: "acct_" + tt.name, KeyID: "key_1", Group: "default"}
			c, err := h.AdmitBody(context.Background(), info, p, "claude", "claude-up", body, 100, count)
			if tt.status != 0 {
				e := apierr.From(err)
				if err == nil || e.Status != tt.status || e.Code != tt.code {
					t.Fatalf("got %v (%d %s), want %d %s", err, e.Status, e.Code, tt.status, tt.code)
				}
				return
			}
			if err != nil || c == nil {
				t.Fatalf("refused: %v", err)
			}
			defer c.Release()
			if got := c.Held(); got != tt.held {
				t.Errorf("held %v, want %v", got, tt.held)
			}
			if calls != tt.counts {
				t.Errorf("count called %d times, want %d", calls, tt.counts)
			}
		})
	}
}

// Without the vendor's usage, a body-admitted charge settles the prompt
// that count gives and the completion counted; without billing, nothing.
func TestAdmitBodySettlesWithCount(t *testing.T) {
	price := billing.TokenPrice{Input: money.Unit, Output: money.Unit}
	h := billedCore(billing.ModelPrice{Priced: true, Price: price}, true, 10*money.Unit)
	count := func() (int64, error) { return 42, nil }
	c, err := h.AdmitBody(context.Background(), &reqinfo.Info{}, gate.Principal{AccountID: "a", KeyID: "k"}, "m", "m", []byte(`{}`), 10, count)
	if err != nil {
		t.Fatal(err)
	}
	var out Outcome
	var u provider.Usage
	out.Cost = c.Settle(&u, func() int64 { return 5 }, &out)
	want, _ := billing.Cost(price, billing.Tokens{Prompt: 42, Completion: 5}, money.PPM)
	if u.PromptTokens != 42 || u.CompletionTokens != 5 || !out.Estimated || out.Cost != want {
		t.Errorf("settled %+v at %v (estimated %v), want 42+5 at %v", u, out.Cost, out.Estimated, want)
	}
	if got := c.PromptCount(); got.PromptTokens != 42 {
		t.Errorf("PromptCount %+v", got)
	}

	off := &Core{}
	c, err = off.AdmitBody(context.Background(), &reqinfo.Info{}, gate.Principal{}, "m", "m", []byte(`{}`), 10,
		func() (int64, error) { return 0, errors.New("not called") })
	if c != nil || err != nil {
		t.Errorf("billing off: %v, %v", c, err)
	}
}
