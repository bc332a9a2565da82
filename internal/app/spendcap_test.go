package app_test

import (
	"context"
	"strings"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"
)

// A key whose cap is not reached but has less left than a request's
// maximum cost is told so, as the balance is (the maximum cost, what is
// left, lower max_tokens), with the cap's 429 insufficient_quota; a
// smaller request then fits, and a cap really reached keeps its message.
func TestSpendCapShortOfReservation(t *testing.T) {
	g := startGateway(t, withBudgetModel)
	ctx := context.Background()
	capped := g.newPayer("default", 100*budgetCost, budgetCost*3/2, time.Time{}) // a cap of 1.5 requests
	c := g.client(capped.secret)
	p := streamParams("budget-model", false)
	p.MaxTokens = oai.Int(20) // at most 0.02: more than the cap's 0.015, on the first call
	_, err := c.Chat.Completions.New(ctx, p)
	e := apiError(t, err, 429, "insufficient_quota")
	for _, want := range []string{"spend cap (0.015000)", "maximum cost (0.020", "lower max_tokens"} {
		if !strings.Contains(e.Message, want) {
			t.Errorf("message %q lacks %q", e.Message, want)
		}
	}
	if strings.Contains(e.Message, "has reached its spend cap") {
		t.Errorf("a cap not reached is told it is: %q", e.Message)
	}
	p.MaxTokens = oai.Int(10) // 0.01: fits
	if _, err := c.Chat.Completions.New(ctx, p); err != nil {
		t.Fatalf("a request within the cap: %v", err)
	}
	p.MaxTokens = oai.Int(10) // 0.01, with 0.005 left
	_, err = c.Chat.Completions.New(ctx, p)
	if e := apiError(t, err, 429, "insufficient_quota"); !strings.Contains(e.Message, "spend cap (0.005000)") {
		t.Errorf("second refusal: %q", e.Message)
	}
	p.MaxTokens = oai.Int(5) // 0.005: the rest of the cap
	if _, err := c.Chat.Completions.New(ctx, p); err != nil {
		t.Fatalf("the rest of the cap: %v", err)
	}
	p.MaxTokens = oai.Int(1)
	_, err = c.Chat.Completions.New(ctx, p)
	if e := apiError(t, err, 429, "insufficient_quota"); e.Message != "This API key has reached its spend cap." {
		t.Errorf("cap reached: %q", e.Message)
	}
}
