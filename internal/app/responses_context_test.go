package app_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/provider/providertest"
	"github.com/modelgate/modelgate/internal/store"
)

// A request that continues a stored response (previous_response_id) makes
// the vendor bill that response's whole context again as input. Each
// chained request reserves it: the size the gateway recorded when the
// earlier answer ended, so an account that cannot pay for the context is
// refused before the vendor is asked. (Before, only the body was reserved:
// a key with cents could chain requests the vendor billed dollars for.)
func TestChainedResponsesReserveTheirContext(t *testing.T) {
	g, up := startBilled(t)
	gpt41 := listPrice(t, "gpt-4.1")
	ctx := context.Background()
	p := g.newPayer("default", money.Unit, 0, time.Time{})
	c := g.client(p.secret)

	// The parent: 20,000 output tokens, its context recorded when it ends.
	up.Set(func(f *providertest.Billed) { f.Output = 20_000 })
	parent, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4.1",
		Input: responses.ResponseNewParamsInputUnion{OfString: oai.String("Write a long story.")}})
	if err != nil {
		t.Fatal(err)
	}
	up.Set(func(f *providertest.Billed) { f.Output = 50 })
	// A child with a small body: the vendor bills the parent's 20,000+
	// tokens again, and the gateway reserved them.
	child, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4.1", PreviousResponseID: oai.String(parent.ID),
		MaxOutputTokens: oai.Int(50), Input: responses.ResponseNewParamsInputUnion{OfString: oai.String("Go on.")}})
	if err != nil {
		t.Fatal(err)
	}
	if child.Usage.InputTokens < 20_000 {
		t.Fatalf("the fake billed %d input tokens for the child; want its parent's context", child.Usage.InputTokens)
	}

	// An account that can pay for a child's body but not its context.
	poor := g.newPayer("default", 30_000, 0, time.Time{}) // $0.03: the context alone is ~$0.04
	const id = "resp_poor_parent"
	storeResponse(t, g, up, poor.accountID, id, store.StoredResponse{Sized: true, InputTokens: 10, OutputTokens: 20_000}, 20_010)
	before := len(up.Received())
	pc := g.client(poor.secret)
	_, err = pc.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4.1", PreviousResponseID: oai.String(id),
		MaxOutputTokens: oai.Int(50), Input: responses.ResponseNewParamsInputUnion{OfString: oai.String("Go on.")}})
	apiError(t, err, http.StatusTooManyRequests, "insufficient_quota")
	if len(up.Received()) != before {
		t.Error("a chained request the account cannot pay for reached the vendor")
	}

	// A parent whose size is not known yet (its answer has not ended, or
	// its size was lost): the child reserves the parent's bound.
	const unsized = "resp_in_flight"
	storeResponse(t, g, up, poor.accountID, unsized, store.StoredResponse{Bound: 100_000}, 100)
	_, err = pc.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4.1", PreviousResponseID: oai.String(unsized),
		MaxOutputTokens: oai.Int(50), Input: responses.ResponseNewParamsInputUnion{OfString: oai.String("Go on.")}})
	apiError(t, err, http.StatusTooManyRequests, "insufficient_quota")
	if len(up.Received()) != before {
		t.Error("a request continuing an unsized response it cannot cover reached the vendor")
	}

	recs := recordsOf(g, p.accountID)
	if len(recs) != 2 {
		t.Fatalf("%d records; want parent and child", len(recs))
	}
	for _, r := range recs {
		if want := costOf(t, gpt41.Price, r, 0, 0, 0); r.Cost != want || r.Estimated {
			t.Errorf("%s: charged %v for %d+%d tokens; want the vendor's usage at list price, %v", r.RequestID, r.Cost,
				r.PromptTokens, r.CompletionTokens, want)
		}
	}
	if got := audit(t, g.app.Store(), p.accountID); got != money.Unit-recs[0].Cost-recs[1].Cost {
		t.Errorf("balance %v after charges of %v and %v", got, recs[0].Cost, recs[1].Cost)
	}
	// The parent's recorded size is what the vendor reported.
	sr, err := g.app.Store().StoredResponse(ctx, parent.ID)
	if err != nil || !sr.Sized || sr.InputTokens != parent.Usage.InputTokens || sr.OutputTokens != 20_000 || sr.Bound == 0 {
		t.Errorf("stored parent = %+v, %v; want the vendor's counts and a bound", sr, err)
	}
}

// A stream's response is saved with its bound when its first event shows
// its id, and sized when its answer ends (in this process at once, in the
// store by the time the gateway has stopped).
func TestStreamedResponseSized(t *testing.T) {
	g, up := startBilled(t)
	ctx := context.Background()
	p := g.newPayer("default", money.Unit, 0, time.Time{})
	up.Set(func(f *providertest.Billed) { f.Output = 30_000 })
	c := g.client(p.secret)
	st := c.Responses.NewStreaming(ctx, responses.ResponseNewParams{Model: "gpt-4.1",
		Input: responses.ResponseNewParamsInputUnion{OfString: oai.String("Write a long story.")}})
	var parent responses.Response
	for st.Next() {
		if ev := st.Current(); ev.Type == "response.completed" {
			parent = ev.Response
		}
	}
	if err := st.Err(); err != nil || parent.ID == "" {
		t.Fatalf("stream: %v (id %q)", err, parent.ID)
	}
	up.Set(func(f *providertest.Billed) { f.Output = 16 })
	if _, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4.1",
		PreviousResponseID: oai.String(parent.ID), MaxOutputTokens: oai.Int(16),
		Input: responses.ResponseNewParamsInputUnion{OfString: oai.String("Go on.")}}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(up.Last().Body, []byte(parent.ID)) {
		t.Errorf("the child did not reach the vendor with its previous_response_id")
	}
	g.usage() // stops the gateway: pending sizes are written
	sr, err := g.app.Store().StoredResponse(ctx, parent.ID)
	if err != nil || !sr.Sized || sr.InputTokens != parent.Usage.InputTokens || sr.OutputTokens != 30_000 ||
		sr.Bound < sr.InputTokens+sr.OutputTokens {
		t.Errorf("stored parent = %+v, %v; want its bound and the vendor's counts (%d in, 30000 out)", sr, err, parent.Usage.InputTokens)
	}
}

// Input the vendor bills that the gateway cannot size (a conversation, a
// stored prompt, an item reference, a file by id or URL) is refused with a
// 400 naming it, before any vendor call or charge; a group the operator
// allows it for reserves its responses.reserve on top.
func TestUnsizedContextRefused(t *testing.T) {
	g, up := startBilled(t)
	p := g.newPayer("default", money.Unit, 0, time.Time{})
	cases := []struct {
		name, path, body, param string
	}{
		{"conversation", "/v1/responses", `{"model":"gpt-4.1","conversation":"conv_123","input":"hi"}`, "conversation"},
		{"conversation object", "/v1/responses", `{"model":"gpt-4.1","conversation":{"id":"conv_123"},"input":"hi"}`, "conversation"},
		{"stored prompt", "/v1/responses", `{"model":"gpt-4.1","prompt":{"id":"pmpt_123","version":"2"}}`, "prompt"},
		{"item reference", "/v1/responses", `{"model":"gpt-4.1","input":[{"role":"user","content":"hi"},{"type":"item_reference","id":"msg_1"}]}`, "input[1]"},
		{"file by id", "/v1/responses", `{"model":"gpt-4.1","input":[{"role":"user","content":[{"type":"input_text","text":"sum up"},{"type":"input_file","file_id":"file-abc"}]}]}`,
			"input[0].content[1].file_id"},
		{"file by URL", "/v1/responses", `{"model":"gpt-4.1","input":[{"role":"user","content":[{"type":"input_file","file_url":"https://example.com/a.pdf"}]}]}`,
			"input[0].content[0].file_url"},
		{"file in a tool output", "/v1/responses", `{"model":"gpt-4.1","input":[{"type":"function_call_output","call_id":"c1","output":[{"type":"input_file","file_id":"file-abc"}]}]}`,
			"input[0].output[0].file_id"},
		{"chat file by id", "/v1/chat/completions", `{"model":"gpt-4.1","messages":[{"role":"user","content":[{"type":"text","text":"sum up"},{"type":"file","file":{"file_id":"file-abc"}}]}]}`,
			"messages[0].content[1].file.file_id"},
	}
	for _, tc := range cases {
		resp, body := g.post(tc.path, "application/json", p.secret, strings.NewReader(tc.body))
		if resp.StatusCode != http.StatusBadRequest || !bytes.Contains(body, []byte(`"param":"`+tc.param+`"`)) {
			t.Errorf("%s: %d %s; want 400 naming %s", tc.name, resp.StatusCode, body, tc.param)
		}
	}
	if n := len(up.Received()); n != 0 {
		t.Errorf("the vendor got %d requests; want none", n)
	}

	// The unsized group: allowed, with $2 reserved on top of the body.
	low := g.newPayer("unsized", money.Unit, 0, time.Time{})
	resp, body := g.post("/v1/responses", "application/json", low.secret, strings.NewReader(cases[2].body))
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("unsized request on $1 with a $2 reserve: %d %s; want 429", resp.StatusCode, body)
	}
	rich := g.newPayer("unsized", 5*money.Unit, 0, time.Time{})
	resp, body = g.post("/v1/responses", "application/json", rich.secret, strings.NewReader(cases[2].body))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("unsized request on $5: %d %s", resp.StatusCode, body)
	}
	recs := recordsOf(g, rich.accountID)
	if len(recs) != 1 || recs[0].PromptTokens < 50_000 || recs[0].Cost != costOf(t, listPrice(t, "gpt-4.1").Price, recs[0], 0, 0, 0) {
		t.Errorf("records %+v; want one charged for the vendor's 50,000+ hidden input tokens", recs)
	}
	if got := audit(t, g.app.Store(), p.accountID); got != money.Unit {
		t.Errorf("refused requests changed the balance to %v", got)
	}
}
