package billing

import (
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/modelgate/modelgate/internal/money"
)

// exact computes the cost with big.Rat: the reference the integer code must match.
func exact(p TokenPrice, t Tokens, ratio int64) money.Micros {
	cached := min(t.Cached, t.Prompt)
	cp := p.CachedInput
	if cp == 0 {
		cp = p.Input
	}
	sum := new(big.Int).Mul(big.NewInt(t.Prompt-cached), big.NewInt(int64(p.Input)))
	sum.Add(sum, new(big.Int).Mul(big.NewInt(cached), big.NewInt(int64(cp))))
	sum.Add(sum, new(big.Int).Mul(big.NewInt(t.Completion), big.NewInt(int64(p.Output))))
	r := new(big.Rat).SetFrac(new(big.Int).Mul(sum, big.NewInt(ratio)), big.NewInt(perMillion))
	// round half up: floor(r + 1/2)
	r.Add(r, big.NewRat(1, 2))
	q := new(big.Int).Quo(r.Num(), r.Denom())
	return money.Micros(q.Int64())
}

func TestCostTable(t *testing.T) {
	gpt4oMini := TokenPrice{Input: 150_000, Output: 600_000, CachedInput: 75_000} // $0.15 / $0.60 / $0.075 per 1M
	tests := []struct {
		name  string
		p     TokenPrice
		t     Tokens
		ratio int64
		want  money.Micros
	}{
		{"nothing", gpt4oMini, Tokens{}, money.PPM, 0},
		{"one prompt token rounds down", gpt4oMini, Tokens{Prompt: 1}, money.PPM, 0},                 // 0.15 µ
		{"four prompt tokens round up", gpt4oMini, Tokens{Prompt: 4}, money.PPM, 1},                  // 0.6 µ
		{"exact half rounds up", TokenPrice{Input: 500_000}, Tokens{Prompt: 1}, money.PPM, 1},        // 0.5 µ
		{"just under half rounds down", TokenPrice{Input: 499_999}, Tokens{Prompt: 1}, money.PPM, 0}, // 0.499999 µ
		{"chat", gpt4oMini, Tokens{Prompt: 19, Completion: 10}, money.PPM, 9},                        // 2.85 + 6 = 8.85 µ
		{"cached tokens at the cached price", gpt4oMini, Tokens{Prompt: 2000, Cached: 1000, Completion: 0}, money.PPM, 225},
		{"cached price defaults to input", TokenPrice{Input: 1_000_000}, Tokens{Prompt: 10, Cached: 10}, money.PPM, 10},
		{"cached capped at prompt", TokenPrice{Input: 1_000_000, CachedInput: 1}, Tokens{Prompt: 1, Cached: 5}, money.PPM, 0},
		{"vip ratio 0.8", gpt4oMini, Tokens{Prompt: 1_000_000, Completion: 1_000_000}, 800_000, 600_000},
		{"ratio rounds once, not per part", TokenPrice{Input: 1_000_000, Output: 1_000_000}, Tokens{Prompt: 1, Completion: 1}, 250_000, 1}, // 0.25+0.25
		{"2M-token prompt at $15/M", TokenPrice{Input: 15_000_000}, Tokens{Prompt: 2_000_000}, money.PPM, 30 * money.Unit},
		// gpt-4o-audio-preview: text $2.50/$10, audio $40/$80 per 1M.
		{"audio tokens at the audio prices", TokenPrice{Input: 2_500_000, Output: 10_000_000, AudioInput: 40_000_000, AudioOutput: 80_000_000},
			Tokens{Prompt: 1_000_000, AudioPrompt: 500_000, Completion: 1_000_000, AudioCompletion: 250_000}, money.PPM,
			1_250_000 + 20_000_000 + 7_500_000 + 20_000_000},
		{"audio without an audio price costs text", TokenPrice{Input: 1_000_000, Output: 2_000_000},
			Tokens{Prompt: 10, AudioPrompt: 10, Completion: 5, AudioCompletion: 5}, money.PPM, 20},
		{"audio counts capped at the totals", TokenPrice{Input: 1_000_000, AudioInput: 9_000_000},
			Tokens{Prompt: 10, AudioPrompt: 50}, money.PPM, 90},
		{"cached tokens are text", TokenPrice{Input: 1_000_000, CachedInput: 100_000, AudioInput: 10_000_000},
			Tokens{Prompt: 100, Cached: 100, AudioPrompt: 60}, money.PPM, 4 + 600},
		{"fees join the tokens before the ratio", TokenPrice{Input: 1_000_000}, Tokens{Prompt: 1, Fees: 10_000}, 500_000, 5_001},
		{"fees round once with the tokens", TokenPrice{Input: 500_000}, Tokens{Prompt: 1, Fees: 1}, 500_000, 1}, // 0.25 + 0.5
	}
	for _, tc := range tests {
		got, err := Cost(tc.p, tc.t, tc.ratio)
		if err != nil || got != tc.want {
			t.Errorf("%s: Cost = %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
}

// Properties over random inputs: equal to the exact rational computation
// rounded half up; monotonic in every token count; never negative; and the
// cost of a request is within one micro-unit of the sum of its parts'
// exact (unrounded) costs.
func TestCostProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		p := TokenPrice{Input: money.Micros(rng.Int64N(100_000_000)), Output: money.Micros(rng.Int64N(200_000_000)),
			CachedInput: money.Micros(rng.Int64N(50_000_000))}
		tk := Tokens{Prompt: rng.Int64N(3_000_000), Completion: rng.Int64N(200_000)}
		tk.Cached = rng.Int64N(tk.Prompt + 1)
		ratio := rng.Int64N(3 * money.PPM)
		got, err := Cost(p, tk, ratio)
		if err != nil {
			t.Fatalf("Cost(%+v, %+v, %d): %v", p, tk, ratio, err)
		}
		if want := exact(p, tk, ratio); got != want || got < 0 {
			t.Fatalf("Cost(%+v, %+v, %d) = %v, exact %v", p, tk, ratio, got, want)
		}
		more := tk
		more.Completion++
		if c2, _ := Cost(p, more, ratio); c2 < got {
			t.Fatalf("not monotonic: %v then %v", got, c2)
		}
	}
}

func TestCostRefusesOverflow(t *testing.T) {
	if _, err := Cost(TokenPrice{Input: money.Max}, Tokens{Prompt: 1 << 40}, money.PPM); err == nil {
		t.Error("huge product accepted")
	}
	if _, err := Cost(TokenPrice{Input: 1}, Tokens{Prompt: -1}, money.PPM); err == nil {
		t.Error("negative tokens accepted")
	}
}

func TestScale(t *testing.T) {
	for _, tc := range []struct {
		amount     money.Micros
		count, ppm int64
		want       money.Micros
	}{
		{40_000, 2, money.PPM, 80_000}, // two $0.04 images
		{40_000, 1, 800_000, 32_000},   // at ratio 0.8
		{100, 7, 333_333, 233},         // 700 × 0.333333 = 233.33
		{1, 1, 500_000, 1},             // 0.5 rounds up
	} {
		if got, err := Scale(tc.amount, tc.count, tc.ppm); err != nil || got != tc.want {
			t.Errorf("Scale(%v, %d, %d) = %v, %v; want %v", tc.amount, tc.count, tc.ppm, got, err, tc.want)
		}
	}
}

func TestTierPrice(t *testing.T) {
	def := TokenPrice{Input: 1_250_000, Output: 10_000_000, AudioInput: 40_000_000}
	pri := TokenPrice{Input: 2_500_000, Output: 20_000_000}
	mp := ModelPrice{Price: def, Tiers: map[string]TokenPrice{"priority": pri}}
	for _, tc := range []struct {
		tier string
		want TokenPrice
		ok   bool
	}{
		{"", def, true}, {"auto", def, true}, {"default", def, true},
		{"priority", TokenPrice{Input: 2_500_000, Output: 20_000_000, AudioInput: 40_000_000}, true}, // audio as the default's
		{"flex", TokenPrice{}, false}, {"scale", TokenPrice{}, false},
	} {
		if got, ok := mp.TierPrice(tc.tier); got != tc.want || ok != tc.ok {
			t.Errorf("TierPrice(%q) = %+v, %v; want %+v, %v", tc.tier, got, ok, tc.want, tc.ok)
		}
	}
}
