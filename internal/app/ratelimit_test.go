package app_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/ratelimit"
	"github.com/modelgate/modelgate/internal/store"
)

// limitedPayer is newPayer with the key's own rate limits set.
func (g *gateway) limitedPayer(group string, credit money.Micros, l store.KeyLimits) payer {
	g.t.Helper()
	p := g.newPayer(group, credit, 0, time.Time{})
	if l != (store.KeyLimits{}) {
		if _, err := g.app.Store().SetKeyLimits(context.Background(), p.keyID, l); err != nil {
			g.t.Fatal(err)
		}
	}
	return p
}

// limitedChat sends one chat request and returns the response (its
// headers) and the error.
func limitedChat(ctx context.Context, g *gateway, p payer, model string, maxTokens int64) (*http.Response, error) {
	params := oai.ChatCompletionNewParams{Model: model, Messages: []oai.ChatCompletionMessageParamUnion{oai.UserMessage("hi")}}
	if maxTokens > 0 {
		params.MaxTokens = oai.Int(maxTokens)
	}
	var resp *http.Response
	c := g.client(p.secret)
	_, err := c.Chat.Completions.New(ctx, params, option.WithResponseInto(&resp))
	return resp, err
}

// TestRateLimits: a key's requests per minute, from its group or its own
// override, are answered until the limit and then refused with OpenAI's
// 429 (code rate_limit_exceeded, Retry-After, the x-ratelimit headers on
// every answer); a key over both its rate limit and its balance gets the
// rate limit's 429; refusals are counted per key, not recorded.
func TestRateLimits(t *testing.T) {
	g := startGateway(t, func(c *config.Config) {
		c.Groups["limited"] = config.Group{Models: []string{"*"}, PriceRatio: c.Groups["default"].PriceRatio,
			Limits: config.GroupLimits{RPM: 2}}
	})
	ctx := context.Background()
	own := g.limitedPayer("default", 10*money.Unit, store.KeyLimits{RPM: 3})
	byGroup := g.limitedPayer("limited", 10*money.Unit, store.KeyLimits{})
	override := g.limitedPayer("limited", 10*money.Unit, store.KeyLimits{RPM: 4})
	broke := g.limitedPayer("default", 0, store.KeyLimits{RPM: 1})
	free := g.newPayer("default", 10*money.Unit, 0, time.Time{})

	for _, tc := range []struct {
		name string
		p    payer
		rpm  int
	}{{"own limit", own, 3}, {"group's limit", byGroup, 2}, {"own limit overrides the group's", override, 4}} {
		t.Run(tc.name, func(t *testing.T) {
			for i := range tc.rpm {
				resp, err := limitedChat(ctx, g, tc.p, "gpt-4o-mini", 0)
				if err != nil {
					t.Fatalf("request %d of %d: %v", i+1, tc.rpm, err)
				}
				h := resp.Header
				if h.Get("x-ratelimit-limit-requests") != strconv.Itoa(tc.rpm) ||
					h.Get("x-ratelimit-remaining-requests") != strconv.Itoa(tc.rpm-i-1) || h.Get("x-ratelimit-reset-requests") == "" {
					t.Errorf("request %d: headers %v", i+1, h)
				}
				if h.Get("x-ratelimit-limit-tokens") != "" {
					t.Errorf("token headers without a token limit: %v", h)
				}
			}
			resp, err := limitedChat(ctx, g, tc.p, "gpt-4o-mini", 0)
			e := apiError(t, err, http.StatusTooManyRequests, "rate_limit_exceeded")
			if e.Type != "requests" || !strings.Contains(e.Message, "requests per minute") {
				t.Errorf("429 %q %q", e.Type, e.Message)
			}
			h := resp.Header
			// A unit is held a Window after its 100 ms bucket: at most 60.1 s.
			if ra, err := strconv.Atoi(h.Get("Retry-After")); err != nil || ra < 1 || ra > 61 {
				t.Errorf("Retry-After %q", h.Get("Retry-After"))
			}
			reset, err := time.ParseDuration(h.Get("x-ratelimit-reset-requests"))
			if h.Get("x-ratelimit-limit-requests") != strconv.Itoa(tc.rpm) || h.Get("x-ratelimit-remaining-requests") != "0" ||
				err != nil || reset <= 0 || reset > time.Minute+ratelimit.Resolution {
				t.Errorf("429 headers %v", h)
			}
		})
	}
	t.Run("a key without limits has no headers", func(t *testing.T) {
		resp, err := limitedChat(ctx, g, free, "gpt-4o-mini", 0)
		if err != nil || resp.Header.Get("x-ratelimit-limit-requests") != "" {
			t.Fatalf("%v %v", err, resp.Header)
		}
	})
	t.Run("over both the rate limit and the balance: the rate limit's 429", func(t *testing.T) {
		_, err := limitedChat(ctx, g, broke, "gpt-4o-mini", 0)
		apiError(t, err, http.StatusTooManyRequests, "insufficient_quota")
		_, err = limitedChat(ctx, g, broke, "gpt-4o-mini", 0)
		apiError(t, err, http.StatusTooManyRequests, "rate_limit_exceeded")
	})

	recs := g.usage()
	answered := map[string]int{}
	for _, r := range recs {
		if r.Status == http.StatusTooManyRequests {
			t.Errorf("a refused request left a usage record: %+v", r)
		}
		answered[r.KeyID]++
	}
	for _, c := range []struct {
		p payer
		n int
	}{{own, 3}, {byGroup, 2}, {override, 4}, {broke, 0}} {
		if answered[c.p.keyID] != c.n {
			t.Errorf("key %s: %d usage records, want %d", c.p.keyID, answered[c.p.keyID], c.n)
		}
	}
	counts, err := g.app.Store().ListRefusals(ctx, store.RefusalFilter{})
	if err != nil {
		t.Fatal(err)
	}
	limited := map[string]int64{}
	for _, c := range counts {
		limited[c.KeyID+" "+c.Reason] += c.Count
	}
	for _, c := range []struct {
		p      payer
		reason string
	}{{own, "rate_limit_exceeded"}, {byGroup, "rate_limit_exceeded"}, {override, "rate_limit_exceeded"},
		{broke, "rate_limit_exceeded"}, {broke, "insufficient_quota"}} {
		if n := limited[c.p.keyID+" "+c.reason]; n != 1 {
			t.Errorf("key %s: %d refusals %s, want 1 (all: %v)", c.p.keyID, n, c.reason, limited)
		}
	}
}

// TestRateLimitTokensAndConcurrency: a token limit counts each request's
// prompt and output bound while it runs and only its real usage once it
// ends; a concurrency limit refuses a second request while the first runs.
// The slow upstream model never answers until its client leaves, so
// neither depends on timing.
func TestRateLimitTokensAndConcurrency(t *testing.T) {
	t.Run("in memory", func(t *testing.T) { testTokensAndConcurrency(t, startGateway(t)) })
	t.Run("in Redis", func(t *testing.T) {
		url := os.Getenv("MODELGATE_TEST_REDIS")
		if url == "" {
			t.Skip("MODELGATE_TEST_REDIS not set (e.g. redis://127.0.0.1:6379/15): skipping the limits in Redis")
		}
		testTokensAndConcurrency(t, startGateway(t, func(c *config.Config) { c.Redis = url }))
	})
}

// testTokensAndConcurrency is TestRateLimitTokensAndConcurrency on g.
func testTokensAndConcurrency(t *testing.T, g *gateway) {
	ctx := context.Background()

	// inFlight starts a request to the slow model and returns once the
	// upstream has it; cancel ends it.
	inFlight := func(t *testing.T, p payer, maxTokens int64) (cancel func()) {
		t.Helper()
		before := len(g.upstream.Received())
		cctx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			_, err := limitedChat(cctx, g, p, "slow", maxTokens)
			done <- err
		}()
		for deadline := time.Now().Add(10 * time.Second); len(g.upstream.Received()) == before; {
			if time.Now().After(deadline) {
				t.Fatal("the slow request never reached the upstream")
			}
			time.Sleep(5 * time.Millisecond)
		}
		return func() {
			stop()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Errorf("slow request ended with %v, want cancelled", err)
			}
		}
	}
	// eventually retries f until it succeeds: a cancelled request gives
	// its slot back when the gateway has ended it, a moment after.
	eventually := func(t *testing.T, f func() error) {
		t.Helper()
		var err error
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if err = f(); err == nil {
				return
			}
		}
		t.Fatalf("never succeeded: %v", err)
	}

	t.Run("tokens per minute", func(t *testing.T) {
		const tpm = 600
		p := g.limitedPayer("default", 10*money.Unit, store.KeyLimits{TPM: tpm})
		// Two answered requests of a bound above half the limit: each
		// gives back what it did not use when it ends.
		for i := range 2 {
			resp, err := limitedChat(ctx, g, p, "gpt-4o-mini", 400)
			if err != nil {
				t.Fatalf("request %d: %v (the first one's unused tokens were not given back?)", i+1, err)
			}
			rem, _ := strconv.Atoi(resp.Header.Get("x-ratelimit-remaining-tokens"))
			if resp.Header.Get("x-ratelimit-limit-tokens") != strconv.Itoa(tpm) || rem <= 0 || rem > tpm-400 ||
				resp.Header.Get("x-ratelimit-reset-tokens") == "" {
				t.Errorf("request %d: token headers %v", i+1, resp.Header)
			}
		}
		cancel := inFlight(t, p, 400)
		resp, err := limitedChat(ctx, g, p, "gpt-4o-mini", 400)
		e := apiError(t, err, http.StatusTooManyRequests, "rate_limit_exceeded")
		if e.Type != "tokens" || !strings.Contains(e.Message, "tokens per minute") || resp.Header.Get("Retry-After") == "" {
			t.Errorf("429 %q %q %v", e.Type, e.Message, resp.Header)
		}
		cancel()
		// The cancelled request used nothing: its tokens come back.
		eventually(t, func() error { _, err := limitedChat(ctx, g, p, "gpt-4o-mini", 400); return err })
	})

	t.Run("each request's tokens counted once", func(t *testing.T) {
		// With room for many requests, a shared limiter takes each one's
		// tokens ahead at admission: the next request's remaining tokens
		// are the limit less what the first used and its own bound, as
		// when they are taken once the body is read.
		p := g.limitedPayer("default", 10*money.Unit, store.KeyLimits{TPM: 100000})
		c := g.client(p.secret)
		params := oai.ChatCompletionNewParams{Model: "gpt-4o-mini", MaxTokens: oai.Int(400),
			Messages: []oai.ChatCompletionMessageParamUnion{oai.UserMessage("hi")}}
		var rem [4]int
		var used [4]int64
		for i := range rem {
			var resp *http.Response
			out, err := c.Chat.Completions.New(ctx, params, option.WithResponseInto(&resp))
			if err != nil {
				t.Fatalf("request %d: %v", i+1, err)
			}
			rem[i], _ = strconv.Atoi(resp.Header.Get("x-ratelimit-remaining-tokens"))
			used[i] = out.Usage.TotalTokens
		}
		for i := 1; i < len(rem); i++ {
			if got := int64(rem[i-1] - rem[i]); got != used[i-1] {
				t.Errorf("request %d: %d tokens remaining after %d, a difference of %d; want request %d's %d used",
					i+1, rem[i], rem[i-1], got, i, used[i-1])
			}
		}
	})

	t.Run("tokens per minute of legacy completions", func(t *testing.T) {
		p := g.limitedPayer("default", 10*money.Unit, store.KeyLimits{TPM: 600})
		c := g.client(p.secret)
		params := oai.CompletionNewParams{Model: "gpt-4o-mini", Prompt: oai.CompletionNewParamsPromptUnion{OfString: oai.String("Say this is a test")},
			MaxTokens: oai.Int(400)}
		// Each bound is above half the limit: the second passes only as the
		// first one's unused tokens came back when it ended.
		for i := range 2 {
			var resp *http.Response
			if _, err := c.Completions.New(ctx, params, option.WithResponseInto(&resp)); err != nil {
				t.Fatalf("completion %d: %v", i+1, err)
			}
			rem, _ := strconv.Atoi(resp.Header.Get("x-ratelimit-remaining-tokens"))
			if resp.Header.Get("x-ratelimit-limit-tokens") != "600" || rem <= 0 || rem > 200 {
				t.Errorf("completion %d: token headers %v", i+1, resp.Header)
			}
		}
	})

	t.Run("concurrent requests", func(t *testing.T) {
		p := g.limitedPayer("default", 10*money.Unit, store.KeyLimits{Concurrency: 1})
		cancel := inFlight(t, p, 0)
		_, err := limitedChat(ctx, g, p, "gpt-4o-mini", 0)
		e := apiError(t, err, http.StatusTooManyRequests, "rate_limit_exceeded")
		if !strings.Contains(e.Message, "concurrent requests") {
			t.Errorf("429 message %q", e.Message)
		}
		cancel()
		eventually(t, func() error { _, err := limitedChat(ctx, g, p, "gpt-4o-mini", 0); return err })
	})
}
