package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/openai/openai-go/v3/responses"

	"github.com/modelgate/modelgate/internal/provider/providertest"
)

// Issue 11, finding 8: GET /v1/responses/{id} forwards only the query
// parameters the gateway checked, each once, in its own encoding; a
// duplicated one is refused before the vendor is asked.
func TestResponsesGetQuery(t *testing.T) {
	g := startGateway(t)
	key := g.keys["default"]
	ctx := context.Background()
	if _, err := respAPI(g, key).New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini", Input: textInput("hi")}); err != nil {
		t.Fatal(err)
	}
	id := providertest.StoredResponseID
	lastGet := func() string { return string(g.upstream.Last().Body) }

	resp, b := getRaw(t, g, "/v1/responses/"+id+"?model=gpt-4o-mini&include[]=reasoning.encrypted_content"+
		"&include=reasoning.encrypted_content&stream=false&starting_after=03&include_obfuscation=false", key)
	if resp.StatusCode != 200 {
		t.Fatalf("GET: %d %s", resp.StatusCode, b)
	}
	want := "/v1/responses/" + id + "?include%5B%5D=reasoning.encrypted_content&include_obfuscation=false&starting_after=3"
	if got := lastGet(); got != want {
		t.Errorf("the vendor got\n%s\nwant\n%s", got, want)
	}

	// The official SDK's own encoding of include.
	_, err := respAPI(g, key).Get(ctx, id, responses.ResponseGetParams{
		Include: []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent, responses.ResponseIncludableMessageOutputTextLogprobs}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := lastGet(), "/v1/responses/"+id+"?include%5B%5D=reasoning.encrypted_content&include%5B%5D=message.output_text.logprobs"; got != want {
		t.Errorf("SDK include: the vendor got %s, want %s", got, want)
	}

	gets, _ := upstreamCalls(g)
	for _, tc := range []struct{ query, param string }{
		{"stream=false&stream=true", "stream"},
		{"stream=true&stream=false", "stream"},
		{"model=gpt-4o-mini&model=gpt-4o-mini", "model"},
		{"starting_after=1&starting_after=2", "starting_after"},
		{"include[]=all", "include"},
		{"api-version=2025-04-01-preview", "api-version"},
	} {
		resp, b := getRaw(t, g, "/v1/responses/"+id+"?"+tc.query, key)
		var e struct {
			Error struct{ Param string } `json:"error"`
		}
		_ = json.Unmarshal(b, &e)
		if resp.StatusCode != http.StatusBadRequest || e.Error.Param != tc.param {
			t.Errorf("?%s: %d %s", tc.query, resp.StatusCode, b)
		}
	}
	if after, _ := upstreamCalls(g); after != gets {
		t.Errorf("refused queries reached the vendor %d times", after-gets)
	}
}
