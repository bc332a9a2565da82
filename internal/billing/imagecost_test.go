package billing

import (
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/modelgate/modelgate/internal/money"
)

// gptImage1 is OpenAI's list price of gpt-image-1 per million tokens.
var gptImage1 = ImageTokenPrice{Text: 5_000_000, CachedText: 1_250_000, Image: 10_000_000, CachedImage: 2_500_000, Output: 40_000_000}

func TestImageCostTable(t *testing.T) {
	tests := []struct {
		name  string
		p     ImageTokenPrice
		t     ImageTokens
		ratio int64
		want  money.Micros
	}{
		{"nothing", gptImage1, ImageTokens{}, money.PPM, 0},
		// The spec's example usage: 10 text and 40 image tokens in, 50 out:
		// 10 × 5 + 40 × 10 + 50 × 40 micro-units.
		{"spec example", gptImage1, ImageTokens{Text: 10, Image: 40, Output: 50}, money.PPM, 2450},
		{"one high 1024x1024 image", gptImage1, ImageTokens{Text: 20, Output: 4160}, money.PPM, 166_500},
		{"16 input images and a 28 KB prompt", gptImage1, ImageTokens{Text: 7000, Image: 16 * 323, Output: 6240},
			money.PPM, 35_000 + 51_680 + 249_600},
		{"cached parts at their prices", gptImage1, ImageTokens{Text: 1000, CachedText: 1000, Image: 1000, CachedImage: 400}, money.PPM,
			1_250 + 6_000 + 1_000},
		{"cached defaults to the full price", ImageTokenPrice{Text: 1_000_000, Image: 2_000_000, Output: 1},
			ImageTokens{Text: 10, CachedText: 10, Image: 10, CachedImage: 10}, money.PPM, 30},
		{"cached capped at its total", gptImage1, ImageTokens{Text: 1, CachedText: 5, Image: 1, CachedImage: 9}, money.PPM, 4}, // 1.25 + 2.5
		{"text output at its own price", ImageTokenPrice{Output: 40_000_000, TextOutput: 10_000_000}, ImageTokens{Output: 100, TextOutput: 100}, money.PPM, 5_000},
		{"text output defaults to the image output price", ImageTokenPrice{Output: 40_000_000}, ImageTokens{TextOutput: 100}, money.PPM, 4_000},
		{"group ratio, rounded once", gptImage1, ImageTokens{Text: 1, Image: 1, Output: 1}, 500_000, 28}, // (5+10+40)×0.5 = 27.5
	}
	for _, tc := range tests {
		got, err := ImageCost(tc.p, tc.t, tc.ratio)
		if want := exactImage(tc.p, tc.t, tc.ratio); want != tc.want {
			t.Errorf("%s: the table's want %v is not the exact %v", tc.name, tc.want, want)
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: ImageCost = %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
}

// exactImage computes the cost with big.Rat, the reference.
func exactImage(p ImageTokenPrice, t ImageTokens, ratio int64) money.Micros {
	ct, ci := min(t.CachedText, t.Text), min(t.CachedImage, t.Image)
	sum := new(big.Int)
	add := func(n int64, price money.Micros) {
		sum.Add(sum, new(big.Int).Mul(big.NewInt(n), big.NewInt(int64(price))))
	}
	add(t.Text-ct, p.Text)
	add(ct, orPrice(p.CachedText, p.Text))
	add(t.Image-ci, p.Image)
	add(ci, orPrice(p.CachedImage, p.Image))
	add(t.Output, p.Output)
	add(t.TextOutput, orPrice(p.TextOutput, p.Output))
	r := new(big.Rat).SetFrac(new(big.Int).Mul(sum, big.NewInt(ratio)), big.NewInt(perMillion))
	r.Add(r, big.NewRat(1, 2))
	return money.Micros(new(big.Int).Quo(r.Num(), r.Denom()).Int64())
}

// Over random inputs: equal to the exact computation, and monotonic in
// every count.
func TestImageCostProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	price := func() money.Micros { return money.Micros(rng.Int64N(100_000_000)) }
	for i := 0; i < 20000; i++ {
		p := ImageTokenPrice{Text: price(), CachedText: price(), Image: price(), CachedImage: price(), Output: price(), TextOutput: price()}
		tk := ImageTokens{Text: rng.Int64N(1_000_000), Image: rng.Int64N(200_000), Output: rng.Int64N(100_000), TextOutput: rng.Int64N(10_000)}
		tk.CachedText, tk.CachedImage = rng.Int64N(tk.Text+1), rng.Int64N(tk.Image+1)
		ratio := rng.Int64N(3 * money.PPM)
		got, err := ImageCost(p, tk, ratio)
		if err != nil {
			t.Fatalf("ImageCost(%+v, %+v, %d): %v", p, tk, ratio, err)
		}
		if want := exactImage(p, tk, ratio); got != want {
			t.Fatalf("ImageCost(%+v, %+v, %d) = %v, exact %v", p, tk, ratio, got, want)
		}
		for _, more := range []ImageTokens{{Text: 1}, {Image: 1}, {Output: 1}, {TextOutput: 1}} {
			m := tk
			m.Text, m.Image, m.Output, m.TextOutput = m.Text+more.Text, m.Image+more.Image, m.Output+more.Output, m.TextOutput+more.TextOutput
			if c2, _ := ImageCost(p, m, ratio); c2 < got {
				t.Fatalf("not monotonic in %+v: %v then %v", more, got, c2)
			}
		}
	}
}

func TestImageCostRefuses(t *testing.T) {
	for name, tc := range map[string]struct {
		p     ImageTokenPrice
		t     ImageTokens
		ratio int64
	}{
		"huge product":    {ImageTokenPrice{Output: money.Max}, ImageTokens{Output: 1 << 40}, money.PPM},
		"negative tokens": {gptImage1, ImageTokens{Image: -1}, money.PPM},
		"negative price":  {ImageTokenPrice{Text: -1}, ImageTokens{Text: 1}, money.PPM},
		"negative ratio":  {gptImage1, ImageTokens{Text: 1}, -1},
	} {
		if _, err := ImageCost(tc.p, tc.t, tc.ratio); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
}
