package charge

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/billing"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
	"github.com/modelgate/modelgate/internal/tokenize"
)

type source struct{ balance money.Micros }

func (s *source) AccountByID(context.Context, string) (store.Account, error) {
	return store.Account{Balance: s.balance}, nil
}
func (s *source) KeyByID(context.Context, string) (store.Key, error) { return store.Key{}, nil }

func newBilling(balance money.Micros) *Billing {
	prices := map[string]billing.ModelPrice{
		"video": {VideoPerSecond: 100_000},
		"free":  {Free: true},
		"bare":  {},
	}
	return &Billing{
		Prices:   func(m, _ string) (billing.ModelPrice, bool) { p, ok := prices[m]; return p, ok },
		Ratio:    func(string) int64 { return 2 * money.PPM },
		Reserver: billing.NewReserver(&source{balance: balance}, billing.Options{Refresh: time.Hour}),
		Tokens:   tokenize.NewSet(),
	}
}

func perSecond(mp billing.ModelPrice) bool { return mp.VideoPerSecond > 0 }

func TestStart(t *testing.T) {
	b := newBilling(1_000_000)
	for _, tc := range []struct {
		model     string
		notPriced bool
	}{{"video", false}, {"free", false}, {"bare", true}, {"unknown", true}} {
		c, err := b.Start(billing.Payer{AccountID: "a"}, "g", tc.model, "up", perSecond)
		if got := errors.Is(err, ErrNotPriced); got != tc.notPriced {
			t.Errorf("%s: not priced %v, want %v (err %v)", tc.model, got, tc.notPriced, err)
		}
		var np *NotPricedError
		if tc.notPriced && (!errors.As(err, &np) || np.Model != tc.model || np.Upstream != "up") {
			t.Errorf("%s: error %v does not name the model", tc.model, err)
		}
		if !tc.notPriced && c.Ratio != 2*money.PPM {
			t.Errorf("%s: ratio %d", tc.model, c.Ratio)
		}
	}
}

func TestLifecycle(t *testing.T) {
	ctx := context.Background()
	b := newBilling(1_000_000) // $1
	c, err := b.Start(billing.Payer{AccountID: "a"}, "g", "video", "up", perSecond)
	if err != nil {
		t.Fatal(err)
	}
	cost, err := c.FlatCost(c.Price.VideoPerSecond, 4) // 4 s × $0.10 × 2
	if err != nil || cost != 800_000 {
		t.Fatalf("cost %v, %v; want 0.8", cost, err)
	}
	if err := c.Reserve(ctx, cost, "duration"); err != nil {
		t.Fatal(err)
	}
	if c.Held() != cost {
		t.Errorf("held %v, want %v", c.Held(), cost)
	}
	c2, _ := b.Start(billing.Payer{AccountID: "a"}, "g", "video", "up", perSecond)
	err = c2.Reserve(ctx, cost, "duration")
	var re *RefusedError
	if !errors.As(err, &re) || !errors.Is(err, billing.ErrInsufficient) || re.Param != "duration" || re.Amount != cost {
		t.Fatalf("second reservation: %v, want a RefusedError for duration", err)
	}
	if got := c.SettleCost(600_000); got != 600_000 {
		t.Errorf("settled %v", got)
	}
	if got := c.SettleCost(1); got != 0 {
		t.Errorf("settled twice: %v", got)
	}
}

// TestNilAndFree checks that billing off and free models charge nothing
// and accept every call.
func TestNilAndFree(t *testing.T) {
	ctx := context.Background()
	var off *Billing
	c, err := off.Start(billing.Payer{}, "g", "video", "up", perSecond)
	if c != nil || err != nil {
		t.Fatalf("billing off: %v, %v", c, err)
	}
	free, err := newBilling(0).Start(billing.Payer{AccountID: "a"}, "g", "free", "up", perSecond)
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]*Charge{"nil": nil, "free": free} {
		if err := c.Reserve(ctx, 100, "n"); err != nil {
			t.Errorf("%s: reserve: %v", name, err)
		}
		if v, _ := c.FlatCost(100, 3); v != 0 {
			t.Errorf("%s: flat cost %v", name, v)
		}
		if v := c.SettleCost(100); v != 0 {
			t.Errorf("%s: settled %v", name, v)
		}
		c.Release()
		c.Persist()
		if !c.Free() || c.Held() != 0 {
			t.Errorf("%s: free %v held %v", name, c.Free(), c.Held())
		}
	}
}
