// Package money holds amounts of the operator's currency as integer
// micro-units and the one rounding rule modelgate uses. No float touches an
// amount: prices, balances and costs are int64 micro-units, rates are parts
// per million, and products are computed in 128 bits before rounding half up.
package money

import (
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// Micros is an amount in millionths of a currency unit (1 USD = 1_000_000).
type Micros int64

// Unit is one whole currency unit.
const Unit Micros = 1_000_000

// PPM is one million parts per million: a ratio of exactly 1.
const PPM int64 = 1_000_000

// Max is the largest amount accepted from operators and config (1e12 units),
// far below the int64 limit so sums of many amounts cannot overflow.
const Max Micros = 1_000_000_000_000 * Unit

// ErrSyntax means an amount is not a plain decimal with at most six decimals.
var ErrSyntax = errors.New("not an amount: want a decimal number with at most 6 decimals, like 12.5 or 0.000250")

// Parse reads a decimal amount such as "12", "0.5", "-3.25" or "0.000250"
// exactly (no float). More than six decimals, exponents, or values above Max
// are refused.
func Parse(s string) (Micros, error) {
	v, err := parseFixed6(s)
	if err != nil {
		return 0, fmt.Errorf("%q: %w", s, err)
	}
	return Micros(v), nil
}

// ParseRatio reads a non-negative decimal ratio such as "0.8" or "1.25" as
// parts per million.
func ParseRatio(s string) (int64, error) {
	v, err := parseFixed6(s)
	if err != nil {
		return 0, fmt.Errorf("ratio %q: %w", s, err)
	}
	if v < 0 {
		return 0, fmt.Errorf("ratio %q: must not be negative", s)
	}
	return v, nil
}

func parseFixed6(s string) (int64, error) {
	s = strings.TrimSpace(s)
	neg := false
	if strings.HasPrefix(s, "-") {
		neg, s = true, s[1:]
	} else if strings.HasPrefix(s, "+") {
		s = s[1:]
	}
	whole, frac, dot := strings.Cut(s, ".")
	if whole == "" && frac == "" || dot && frac == "" || len(frac) > 6 || !digits(whole) || !digits(frac) {
		return 0, ErrSyntax
	}
	if whole == "" {
		whole = "0"
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || w > int64(Max/Unit) {
		return 0, fmt.Errorf("larger than %d", Max/Unit)
	}
	f := int64(0)
	if frac != "" {
		f, _ = strconv.ParseInt(frac+strings.Repeat("0", 6-len(frac)), 10, 64)
	}
	v := w*int64(Unit) + f
	if v > int64(Max) {
		return 0, fmt.Errorf("larger than %d", Max/Unit)
	}
	if neg {
		v = -v
	}
	return v, nil
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// String formats m with exactly six decimals, e.g. "0.000250" or "-12.500000".
func (m Micros) String() string {
	var buf [24]byte // "-9223372036854.775808" is 21 bytes
	b := buf[:0]
	u := uint64(m)
	if m < 0 {
		b, u = append(b, '-'), uint64(-m) // -MinInt64 wraps to itself, whose uint64 is right
	}
	b = strconv.AppendUint(b, u/uint64(Unit), 10)
	frac := [7]byte{'.'}
	for i, f := 6, u%uint64(Unit); i > 0; i, f = i-1, f/10 {
		frac[i] = byte('0' + f%10)
	}
	return string(append(b, frac[:]...))
}

// FormatRatio formats parts per million as a short decimal ("0.8", "1").
func FormatRatio(ppm int64) string {
	s := Micros(ppm).String()
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// MulDiv returns a*b/d rounded half up, computed in 128 bits so the product
// cannot overflow. a, b must be ≥ 0 and d > 0; ok is false when the result
// does not fit in an int64.
func MulDiv(a, b, d int64) (r int64, ok bool) {
	if a < 0 || b < 0 || d <= 0 {
		return 0, false
	}
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	// Add d/2 to round half up (d odd: (d-1)/2 + remainder compare below is equivalent).
	lo, carry := bits.Add64(lo, uint64(d)/2, 0)
	hi += carry
	if hi >= uint64(d) {
		return 0, false
	}
	q, _ := bits.Div64(hi, lo, uint64(d))
	if q > 1<<63-1 {
		return 0, false
	}
	return int64(q), true
}
