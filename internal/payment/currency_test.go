package payment

import (
	"errors"
	"testing"

	"github.com/modelgate/modelgate/internal/money"
)

func TestToMinor(t *testing.T) {
	tests := []struct {
		amount   money.Micros
		currency string
		want     int64
		wantErr  error
	}{
		{10 * money.Unit, "USD", 1000, nil},
		{10 * money.Unit, "usd", 1000, nil},
		{money.Unit / 100, "EUR", 1, nil},             // one cent
		{money.Unit/100 + 1, "EUR", 0, ErrAmount},     // a cent and a micro
		{money.Unit / 1000, "USD", 0, ErrAmount},      // a tenth of a cent
		{500 * money.Unit, "JPY", 500, nil},           // zero-decimal
		{1000 * money.Unit, "KRW", 1000, nil},         // zero-decimal
		{money.Unit / 2, "JPY", 0, ErrAmount},         // half a yen
		{money.Unit / 100, "JPY", 0, ErrAmount},       // a "cent" of yen
		{money.Unit / 100, "KWD", 10, nil},            // three-decimal, multiple of ten
		{money.Unit / 1000, "KWD", 0, ErrAmount},      // one fils: Stripe wants tens
		{100 * money.Unit, "ISK", 10000, nil},         // zero-decimal written with two
		{money.Unit / 2, "ISK", 0, ErrAmount},         // half a króna
		{0, "USD", 0, ErrAmount},                      // nothing
		{-money.Unit, "USD", 0, ErrAmount},            // negative
		{money.Max + money.Unit, "USD", 0, ErrAmount}, // beyond money.Max
	}
	for _, tt := range tests {
		got, err := ToMinor(tt.amount, tt.currency)
		if !errors.Is(err, tt.wantErr) || got != tt.want {
			t.Errorf("ToMinor(%s, %s) = %d, %v; want %d, %v", tt.amount, tt.currency, got, err, tt.want, tt.wantErr)
		}
		if tt.wantErr != nil {
			continue
		}
		back, err := FromMinor(got, tt.currency)
		if err != nil || back != tt.amount {
			t.Errorf("FromMinor(%d, %s) = %s, %v; want %s", got, tt.currency, back, err, tt.amount)
		}
	}
}

func TestFromMinorRefusesOutOfRange(t *testing.T) {
	for _, minor := range []int64{-1, 1 << 62} {
		if _, err := FromMinor(minor, "USD"); !errors.Is(err, ErrAmount) {
			t.Errorf("FromMinor(%d) error = %v, want ErrAmount", minor, err)
		}
	}
}
