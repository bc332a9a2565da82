package openaicompat

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/openai/openai-go/v3/responses"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/provider/providertest"
)

// TestCancelResponse: a background response is cancelled with a POST
// without body or query; the answer is the cancelled Response object with
// its usage and the public model; unknown ids stay 404, finished ones are
// the vendor's 400.
func TestCancelResponse(t *testing.T) {
	f := providertest.NewOpenAI(t)
	c := newClient(t, f)
	ctx := context.Background()
	res, err := c.Respond(ctx, &provider.ResponsesRequest{PublicModel: "deep", UpstreamModel: providertest.BackgroundNever,
		Body: []byte(`{"model":"deep","input":"think","background":true}`)})
	if err != nil {
		t.Fatal(err)
	}
	var queued responses.Response
	if err := json.Unmarshal(res.Body, &queued); err != nil || queued.Status != "queued" || res.HasUsage || queued.Model != "deep" {
		t.Fatalf("created: %s %v (usage %v), %v", queued.Status, queued.Model, res.HasUsage, err)
	}
	got, err := c.CancelResponse(ctx, &provider.ResponseGet{ID: queued.ID, Query: url.Values{"include[]": {"x"}},
		Public: "deep", Upstream: providertest.BackgroundNever})
	if err != nil {
		t.Fatal(err)
	}
	var r responses.Response
	if err := json.Unmarshal(got.Body, &r); err != nil || r.Status != "cancelled" || r.Model != "deep" {
		t.Fatalf("cancelled: %s %s, %v", r.Status, r.Model, err)
	}
	if !got.HasUsage || got.Usage.PromptTokens != providertest.BackgroundInput || got.Usage.CompletionTokens != providertest.BackgroundCancelledOutput {
		t.Errorf("usage %+v (%v)", got.Usage, got.HasUsage)
	}
	if want := "POST /v1/responses/" + queued.ID + "/cancel"; string(f.Last().Body) != want {
		t.Errorf("sent %q, want %q", f.Last().Body, want)
	}
	if n := f.BackgroundCancels(queued.ID); n != 1 {
		t.Errorf("%d cancels upstream", n)
	}
	_, err = c.CancelResponse(ctx, &provider.ResponseGet{ID: "resp_nope"})
	if e := apierr.From(err); e.Status != http.StatusNotFound || e.Code != apierr.CodeNotFound {
		t.Errorf("unknown id: %v", err)
	}

	done, err := c.Respond(ctx, &provider.ResponsesRequest{PublicModel: "m", UpstreamModel: "gpt-4o-mini", Body: []byte(`{"model":"m","input":"x","background":true}`)})
	if err != nil {
		t.Fatal(err)
	}
	id := responseIDOf(t, done.Body)
	for range 2 {
		if _, err := c.GetResponse(ctx, &provider.ResponseGet{ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	_, err = c.CancelResponse(ctx, &provider.ResponseGet{ID: id})
	if e := apierr.From(err); e.Status != http.StatusBadRequest {
		t.Errorf("cancel of a completed response: %v", err)
	}
}

func responseIDOf(t *testing.T, body []byte) string {
	t.Helper()
	var r struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(body, &r); err != nil || r.ID == "" {
		t.Fatalf("no id in %s: %v", body, err)
	}
	return r.ID
}
