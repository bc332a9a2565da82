package payment

import (
	"fmt"
	"math"
	"strings"

	"github.com/modelgate/modelgate/internal/money"
)

// minorUnit says how Stripe writes amounts of one currency: exp is the
// number of decimals of its API's minor unit, step the multiple of minor
// units an amount must be (Stripe wants three-decimal currencies rounded
// to tens, and ISK, though zero-decimal, written with two zero decimals).
type minorUnit struct {
	exp  int
	step int64
}

// minorUnits lists the currencies that are not plain two-decimal ones
// (https://docs.stripe.com/currencies#zero-decimal, #three-decimal,
// #special-cases). Every other currency has two decimals.
var minorUnits = map[string]minorUnit{
	// Zero-decimal.
	"bif": {0, 1}, "clp": {0, 1}, "djf": {0, 1}, "gnf": {0, 1}, "jpy": {0, 1},
	"kmf": {0, 1}, "krw": {0, 1}, "mga": {0, 1}, "pyg": {0, 1}, "rwf": {0, 1},
	"ugx": {0, 1}, "vnd": {0, 1}, "vuv": {0, 1}, "xaf": {0, 1}, "xof": {0, 1},
	"xpf": {0, 1},
	// Three-decimal, charged in multiples of ten.
	"bhd": {3, 10}, "jod": {3, 10}, "kwd": {3, 10}, "omr": {3, 10}, "tnd": {3, 10},
	// Zero-decimal in fact, two decimals in the API.
	"isk": {2, 100},
}

func unitOf(currency string) minorUnit {
	if u, ok := minorUnits[strings.ToLower(currency)]; ok {
		return u
	}
	return minorUnit{2, 1}
}

// microsPer returns how many micro-units one API minor unit is.
func (u minorUnit) microsPer() int64 {
	n := int64(money.Unit)
	for range u.exp {
		n /= 10
	}
	return n
}

// ToMinor converts amount to Stripe's minor units of currency exactly. It
// refuses (ErrAmount) an amount that is not positive or not a whole number
// of the currency's chargeable minor units: no rounding, ever.
func ToMinor(amount money.Micros, currency string) (int64, error) {
	if amount <= 0 || amount > money.Max {
		return 0, fmt.Errorf("%w: %d micro-units is not a positive amount", ErrAmount, amount)
	}
	u := unitOf(currency)
	per := u.microsPer()
	if int64(amount)%(per*u.step) != 0 {
		return 0, fmt.Errorf("%w: %s %s is not a whole number of %s minor units",
			ErrAmount, amount.String(), strings.ToUpper(currency), strings.ToUpper(currency))
	}
	return int64(amount) / per, nil
}

// FromMinor converts an amount Stripe reports in minor units of currency
// back to micro-units.
func FromMinor(minor int64, currency string) (money.Micros, error) {
	per := unitOf(currency).microsPer()
	if minor < 0 || minor > math.MaxInt64/per || money.Micros(minor*per) > money.Max {
		return 0, fmt.Errorf("%w: %d minor units of %s out of range", ErrAmount, minor, strings.ToUpper(currency))
	}
	return money.Micros(minor * per), nil
}
