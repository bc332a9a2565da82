package app_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"

	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

// TestKeyRefusalsAreCountedNotRecorded: requests of an authenticated key
// that the gateway refuses before any upstream call (no balance, an
// unknown model, a bad parameter) leave one count per key, reason and
// minute instead of a usage record each (a $0 key flooding the gateway
// once left a record per request, kept 400 days). What reached the vendor
// (its 400, an answered request) still leaves a record each.
func TestKeyRefusalsAreCountedNotRecorded(t *testing.T) {
	g := startGateway(t)
	broke := g.newPayer("default", 0, 0, time.Time{})
	rich := g.newPayer("default", 10*money.Unit, 0, time.Time{})
	ctx := context.Background()
	chat := func(p payer, model string, badOptions bool) error {
		params := oai.ChatCompletionNewParams{Model: model, Messages: []oai.ChatCompletionMessageParamUnion{oai.UserMessage("hi")}}
		if badOptions { // stream_options without stream: the gateway's 400
			params.StreamOptions = oai.ChatCompletionStreamOptionsParam{IncludeUsage: oai.Bool(true)}
		}
		c := g.client(p.secret)
		_, err := c.Chat.Completions.New(ctx, params)
		return err
	}
	const flood = 300
	for range flood {
		apiError(t, chat(broke, "gpt-4o-mini", false), http.StatusTooManyRequests, "insufficient_quota")
	}
	for range 7 {
		apiError(t, chat(rich, "no-such-model", false), http.StatusNotFound, "model_not_found")
	}
	apiError(t, chat(rich, "gpt-4o-mini", true), http.StatusBadRequest, "invalid_request_error")
	// The vendor's own 400 reached the upstream: a record, as before.
	_ = apiError(t, chat(rich, "err-400", false), http.StatusBadRequest, "string_above_max_length")
	if err := chat(rich, "gpt-4o-mini", false); err != nil {
		t.Fatal(err)
	}

	recs := g.usage() // stops the gateway: every record and count is written
	byAccount := map[string][]string{}
	for _, r := range recs {
		byAccount[r.AccountID] = append(byAccount[r.AccountID], fmt.Sprintf("%s %d %s", r.Model, r.Status, r.ErrorCode))
	}
	if got := byAccount[broke.accountID]; len(got) != 0 {
		t.Errorf("the flooding key left %d usage records (%v...), want 0", len(got), got[0])
	}
	got := byAccount[rich.accountID]
	slices.Sort(got)
	if strings.Join(got, "; ") != "err-400 400 string_above_max_length; gpt-4o-mini 200 " {
		t.Errorf("records of the vendor's answers: %s", got)
	}
	counts, err := g.app.Store().ListRefusals(ctx, store.RefusalFilter{})
	if err != nil {
		t.Fatal(err)
	}
	sums := map[string]int64{}
	rows := 0
	for _, c := range counts {
		if c.AccountID == broke.accountID && c.KeyID != broke.keyID || c.AccountID == rich.accountID && c.KeyID != rich.keyID {
			t.Errorf("count %+v under the wrong key", c)
		}
		sums[fmt.Sprintf("%s %s %d", c.AccountID, c.Reason, c.Status)] += c.Count
		rows++
	}
	want := map[string]int64{
		broke.accountID + " insufficient_quota 429": flood,
		rich.accountID + " model_not_found 404":     7,
	}
	for k, n := range want {
		if sums[k] != n {
			t.Errorf("refusals %q = %d, want %d (all: %v)", k, sums[k], n, sums)
		}
	}
	if len(sums) != 3 { // the third: stream_options without stream
		t.Errorf("refusal kinds %v, want 3", sums)
	}
	if rows > 2*len(sums) { // a minute may turn during the test
		t.Errorf("%d rows for %d kinds: counts are not folded per minute", rows, len(sums))
	}
	if bal := audit(t, g.app.Store(), broke.accountID); bal != 0 {
		t.Errorf("the flooding key's balance moved to %v", bal)
	}
}

// refusalCounts stops the gateway (writing every count) and sums its
// refusal counts by "endpoint status reason".
func refusalCounts(g *gateway) map[string]int64 {
	g.t.Helper()
	if err := g.stop(); err != nil {
		g.t.Fatalf("stop: %v", err)
	}
	counts, err := g.app.Store().ListRefusals(context.Background(), store.RefusalFilter{})
	if err != nil {
		g.t.Fatal(err)
	}
	out := map[string]int64{}
	for _, c := range counts {
		out[fmt.Sprintf("%s %d %s", c.Endpoint, c.Status, c.Reason)] += c.Count
	}
	return out
}
