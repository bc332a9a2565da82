package money

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Micros
		ok   bool
	}{
		{"12", 12 * Unit, true},
		{"0.000250", 250, true},
		{".5", 500_000, true},
		{"-3.25", -3_250_000, true},
		{"+1", Unit, true},
		{" 7.1 ", 7_100_000, true},
		{"1.0000001", 0, false}, // seven decimals
		{"1e3", 0, false},
		{"", 0, false},
		{".", 0, false},
		{"1.", 0, false},
		{"abc", 0, false},
		{"1,5", 0, false},
		{"1000000000001", 0, false}, // above Max
	} {
		got, err := Parse(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("Parse(%q) = %v, %v; want %v ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestStringRoundTrips(t *testing.T) {
	for _, m := range []Micros{0, 1, 250, Unit, -Unit - 5, 123_456_789_012} {
		got, err := Parse(m.String())
		if err != nil || got != m {
			t.Errorf("Parse(%q) = %v, %v", m.String(), got, err)
		}
	}
	if s := Micros(250).String(); s != "0.000250" {
		t.Errorf("String = %q", s)
	}
	if s := FormatRatio(800_000); s != "0.8" {
		t.Errorf("FormatRatio = %q", s)
	}
}

func TestStringDigits(t *testing.T) {
	for _, tc := range []struct {
		m    Micros
		want string
	}{
		{0, "0.000000"},
		{1, "0.000001"},
		{-1, "-0.000001"},
		{999_999, "0.999999"},
		{Unit, "1.000000"},
		{-Unit - 5, "-1.000005"},
		{123_456_789_012, "123456.789012"},
		{math.MaxInt64, "9223372036854.775807"},
		{math.MinInt64, "-9223372036854.775808"},
	} {
		if got := tc.m.String(); got != tc.want {
			t.Errorf("Micros(%d).String() = %q, want %q", int64(tc.m), got, tc.want)
		}
	}
}

func TestParseRatio(t *testing.T) {
	if v, err := ParseRatio("0.8"); err != nil || v != 800_000 {
		t.Errorf("ParseRatio(0.8) = %d, %v", v, err)
	}
	if _, err := ParseRatio("-1"); err == nil {
		t.Error("negative ratio accepted")
	}
}

func TestMulDivMatchesBigRounding(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 50000; i++ {
		a, b, d := rng.Int64N(1<<62), rng.Int64N(1<<40), rng.Int64N(1<<50)+1
		got, ok := MulDiv(a, b, d)
		p := new(big.Int).Mul(big.NewInt(a), big.NewInt(b))
		p.Add(p, big.NewInt(d/2))
		q := p.Quo(p, big.NewInt(d))
		if !q.IsInt64() {
			if ok {
				t.Fatalf("MulDiv(%d,%d,%d) = %d, want overflow", a, b, d, got)
			}
			continue
		}
		if !ok || got != q.Int64() {
			t.Fatalf("MulDiv(%d,%d,%d) = %d %v, want %d", a, b, d, got, ok, q.Int64())
		}
	}
}
