package app_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/openai/openai-go/v3/option"

	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/money"
)

// A price configured for a demo model bills it, offline: the usage
// record's cost and X-Modelgate-Cost follow the configured price (here $1
// per million prompt tokens and $2 per million completion tokens, so a
// micro-unit per prompt token and two per completion token), and the
// balance pays it.
func TestDemoModelConfiguredPrice(t *testing.T) {
	g := startGateway(t, func(c *config.Config) {
		in, out := config.Amount(money.Unit), config.Amount(2*money.Unit)
		c.Models = append(c.Models, config.ModelConfig{ID: "demo-chat", Input: &in, Output: &out})
	})
	p := g.newPayer("default", money.Unit, 0, time.Time{})
	c := g.client(p.secret)
	var raw *http.Response
	res, err := c.Chat.Completions.New(context.Background(), streamParams("demo-chat", false), option.WithResponseInto(&raw))
	if err != nil {
		t.Fatal(err)
	}
	want := money.Micros(res.Usage.PromptTokens + 2*res.Usage.CompletionTokens)
	if want == 0 {
		t.Fatalf("the demo answer reports no usage: %+v", res.Usage)
	}
	if got := raw.Header.Get("X-Modelgate-Cost"); got != want.String() {
		t.Errorf("X-Modelgate-Cost = %q, want %s", got, want)
	}
	recs := g.usage()
	if len(recs) != 1 || recs[0].Model != "demo-chat" || recs[0].Cost != want {
		t.Fatalf("usage records %+v, want one demo-chat record costing %s", recs, want)
	}
	a, err := g.app.Store().AccountByID(context.Background(), p.accountID)
	if err != nil {
		t.Fatal(err)
	}
	if a.Balance != money.Unit-want {
		t.Errorf("balance %s, want %s", a.Balance, money.Unit-want)
	}
}
