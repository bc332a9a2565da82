package app_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

// startMeteredImageGateway serves gpt-image-1 from the fake's
// gpt-image-counted scenario (usage counted from the request, as OpenAI
// reports it) and gpt-image-1-mini from gpt-image-unmetered (no usage).
func startMeteredImageGateway(t *testing.T) *imageGateway {
	return startImageGateway(t, func(c *config.Config) {
		for i, m := range c.Providers[0].Models {
			if m.ID == "gpt-image-1" {
				c.Providers[0].Models[i].Upstream = "gpt-image-counted"
			}
		}
		c.Providers[0].Models = append(c.Providers[0].Models, config.ModelRef{ID: "gpt-image-1-mini", Upstream: "gpt-image-unmetered"})
	})
}

// gptImage1Cost is what usage costs at OpenAI's list prices for
// gpt-image-1 ($5 text in, $10 image in, $40 image out per million
// tokens), in micro-units: n tokens at $X per million cost n × X µ.
func gptImage1Cost(u oai.ImagesResponseUsage) money.Micros {
	return money.Micros(5*u.InputTokensDetails.TextTokens + 10*u.InputTokensDetails.ImageTokens + 40*u.OutputTokens)
}

// A GPT image model is charged the vendor's reported usage at the
// catalog's token prices, for generations and for edits whatever the
// number of input images and the length of the prompt; the balance drops
// by exactly that.
func TestImagesChargedFromUsage(t *testing.T) {
	g := startMeteredImageGateway(t)
	p := g.newPayer("default", 10*money.Unit, 0, time.Time{})
	c := g.client(p.secret)
	ctx := context.Background()
	var total money.Micros
	charged := func(t *testing.T, resp *http.Response, u oai.ImagesResponseUsage) money.Micros {
		t.Helper()
		if u.OutputTokens == 0 || u.InputTokens != u.InputTokensDetails.TextTokens+u.InputTokensDetails.ImageTokens {
			t.Fatalf("the fake reported no usable usage: %+v", u)
		}
		want := gptImage1Cost(u)
		if got := resp.Header.Get("X-Modelgate-Cost"); got != want.String() {
			t.Fatalf("X-Modelgate-Cost %s, want %s (usage %+v)", got, want, u)
		}
		total += want
		return want
	}

	t.Run("generation", func(t *testing.T) {
		var resp *http.Response
		res, err := c.Images.Generate(ctx, oai.ImageGenerateParams{Model: "gpt-image-1", Prompt: "a red square on white",
			Size: "1024x1536", Quality: "high", N: oai.Int(2)}, option.WithResponseInto(&resp))
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Data) != 2 || res.Usage.OutputTokens != 2*6240 {
			t.Fatalf("%d images, usage %+v", len(res.Data), res.Usage)
		}
		charged(t, resp, res.Usage) // 2 × 6,240 × $40/M ≈ $0.50, not 2 × $0.25 per image
	})

	t.Run("16 input images and a 28 KB prompt", func(t *testing.T) {
		img := testPNG(t, 64, 64, false)
		files := make([]io.Reader, 16)
		for i := range files {
			files[i] = oai.File(bytes.NewReader(img), "in.png", "image/png")
		}
		prompt := strings.Repeat("paint it in the style of each image; ", 28_000/37+1)[:28_000]
		var resp *http.Response
		res, err := c.Images.Edit(ctx, oai.ImageEditParams{Image: oai.ImageEditParamsImageUnion{OfFileArray: files},
			Prompt: prompt, Model: "gpt-image-1", Size: "1024x1024", Quality: "low", InputFidelity: "high"},
			option.WithResponseInto(&resp))
		if err != nil {
			t.Fatal(err)
		}
		// Per image, the gateway used to charge $0.011 for this; the input
		// images alone (194 + 4,160 tokens each at high fidelity, $10/M)
		// cost the operator $0.70.
		if cost := charged(t, resp, res.Usage); cost < 16*(194+4160)*10 {
			t.Fatalf("cost %s: the input images and the prompt were not charged", cost)
		}
	})

	recs := g.usage()
	var spent money.Micros
	for _, r := range recs {
		if r.AccountID == p.accountID {
			spent += r.Cost
			if r.Estimated || r.PromptTokens == 0 || r.CompletionTokens == 0 {
				t.Errorf("record %+v: want the vendor's token counts", r)
			}
		}
	}
	if spent != total {
		t.Errorf("records cost %s, want %s", spent, total)
	}
	if bal := audit(t, g.app.Store(), p.accountID); bal != 10*money.Unit-total {
		t.Fatalf("balance %s, want %s", bal, 10*money.Unit-total)
	}
}

// A request billed by token reserves its bound before the vendor is
// called: n images of the largest output the size and quality allow, and
// for an edit every input image and the prompt; what the balance cannot
// cover is refused with no vendor call and no charge.
func TestImageTokenReservation(t *testing.T) {
	g := startMeteredImageGateway(t)
	ctx := context.Background()
	cent := g.newPayer("default", 10_000, 0, time.Time{}) // $0.01
	c := g.client(cent.secret)
	_, err := c.Images.Generate(ctx, oai.ImageGenerateParams{Model: "gpt-image-1", Prompt: "a red square",
		Size: "1536x1024", Quality: "high", N: oai.Int(4)})
	apiError(t, err, 429, "insufficient_quota")

	// $0.05 paid for a low-quality square image per image ($0.011); the
	// sixteen input images (up to 6,821 tokens each at $10/M) and the 28 KB
	// prompt are far beyond it.
	poor := g.newPayer("default", 50_000, 0, time.Time{})
	img := testPNG(t, 64, 64, false)
	parts := []part{textPart("model", "gpt-image-1"), textPart("prompt", strings.Repeat("x", 28_000)),
		textPart("size", "1024x1024"), textPart("quality", "low")}
	for range 16 {
		parts = append(parts, filePart("image[]", "in.png", "image/png", img))
	}
	ct, body := multipartBody(t, parts...)
	resp, b := g.post("/v1/images/edits", ct, poor.secret, bytes.NewReader(body))
	checkError(t, resp, b, 429, "", "insufficient_quota", "or lower n")
	if n := len(g.upstream.Received()); n != 0 {
		t.Fatalf("the vendor was called %d times", n)
	}
	g.usage()
	for _, a := range []payer{cent, poor} {
		if bal, err := g.app.Store().AccountByID(ctx, a.accountID); err != nil || bal.Spent != 0 {
			t.Fatalf("account %s: %+v, %v: charged for a refused request", a.accountID, bal, err)
		}
	}
}

// Without a usage report a model billed by token is charged what was
// reserved for the images it returned: never nothing.
func TestImagesWithoutUsage(t *testing.T) {
	g := startMeteredImageGateway(t)
	p := g.newPayer("default", money.Unit, 0, time.Time{})
	c := g.client(p.secret)
	const prompt = "a red square"
	var resp *http.Response
	res, err := c.Images.Generate(context.Background(), oai.ImageGenerateParams{Model: "gpt-image-1-mini", Prompt: prompt,
		Size: "1024x1024", Quality: "low", N: oai.Int(3)}, option.WithResponseInto(&resp))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Data) != 3 || res.JSON.Usage.Valid() {
		t.Fatalf("the fake answered %d images, usage %s", len(res.Data), res.Usage.RawJSON())
	}
	// gpt-image-1-mini: $2 text, $8 image output per million: the prompt's
	// bytes and the 64 tokens OpenAI may add, and 3 × 272 output tokens.
	want := money.Micros((len(prompt)+64)*2 + 3*272*8)
	if got := resp.Header.Get("X-Modelgate-Cost"); got != want.String() {
		t.Fatalf("X-Modelgate-Cost %s, want %s", got, want)
	}
	recs := g.usage()
	var rec store.UsageRecord
	for _, r := range recs {
		if r.AccountID == p.accountID {
			rec = r
		}
	}
	if rec.Cost != want || !rec.Estimated || rec.CompletionTokens != 3*272 {
		t.Fatalf("record %+v", rec)
	}
	if bal := audit(t, g.app.Store(), p.accountID); bal != money.Unit-want {
		t.Fatalf("balance %s, want %s", bal, money.Unit-want)
	}
}
