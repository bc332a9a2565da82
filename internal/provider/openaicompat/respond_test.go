package openaicompat

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3/responses"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/provider/providertest"
)

func TestNativeResponses(t *testing.T) {
	cases := []struct {
		base  string
		azure bool
		want  bool
	}{
		{"https://api.openai.com/v1", false, true},
		{"https://api.x.ai/v1", false, true},
		{"http://127.0.0.1:8000/v1", false, true},
		{"https://api.deepseek.com/v1", false, false},
		{"https://api.mistral.ai/v1", false, false},
		{"https://generativelanguage.googleapis.com/v1beta/openai", false, false},
		{"https://my-res.openai.azure.com", true, true},
	}
	for _, tc := range cases {
		c, err := New(Options{Name: "x", BaseURL: tc.base, Azure: tc.azure})
		if err != nil {
			t.Fatal(err)
		}
		if got := c.NativeResponses(); got != tc.want {
			t.Errorf("%s: NativeResponses = %v", tc.base, got)
		}
	}
}

func TestRespond(t *testing.T) {
	f := providertest.NewOpenAI(t)
	c := newClient(t, f)
	ctx := context.Background()
	res, err := c.Respond(ctx, &provider.ResponsesRequest{PublicModel: "mini", UpstreamModel: "gpt-4o-mini-2024-07-18",
		Body: []byte(`{"model":"mini","input":"hi","future":{"x":[1]}}`)})
	if err != nil {
		t.Fatal(err)
	}
	var r responses.Response
	if err := json.Unmarshal(res.Body, &r); err != nil {
		t.Fatal(err)
	}
	if r.Model != "mini" || r.OutputText() == "" || !res.HasUsage || res.Usage.PromptTokens != 36 || res.Usage.CompletionTokens != 87 ||
		res.Usage.TotalTokens != 123 {
		t.Errorf("result %s %+v", r.Model, res.Usage)
	}
	last := f.Last()
	if string(last.Body) != `{"model":"gpt-4o-mini-2024-07-18","input":"hi","future":{"x":[1]}}` || last.Header.Get("Authorization") != "Bearer sk-up" {
		t.Errorf("upstream got %s %v", last.Body, last.Header)
	}
	_, err = c.Respond(ctx, &provider.ResponsesRequest{PublicModel: "m", UpstreamModel: "err-429", Body: []byte(`{"model":"m"}`)})
	if e := apierr.From(err); e.Status != 429 {
		t.Errorf("429: %v", err)
	}
}

func TestRespondStream(t *testing.T) {
	f := providertest.NewOpenAI(t)
	c := newClient(t, f)
	ctx := context.Background()
	st, err := c.RespondStream(ctx, &provider.ResponsesRequest{PublicModel: "mini", UpstreamModel: "gpt-4o-mini-2024-07-18",
		Body: []byte(`{"model":"mini","input":"hi","stream":true}`), Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var names []string
	var text string
	for st.Next() {
		name, data := st.Event()
		names = append(names, name)
		var ev responses.ResponseStreamEventUnion
		if err := json.Unmarshal(data, &ev); err != nil || ev.Type != name {
			t.Fatalf("event %s: %s (%v)", name, data, err)
		}
		if strings.HasPrefix(name, "response.") && ev.Response.ID != "" && ev.Response.Model != "mini" {
			t.Errorf("%s shows model %q", name, ev.Response.Model)
		}
		text += ev.Delta
	}
	u, ok := st.Usage()
	if err := st.Err(); err != nil || len(names) != 13 || names[0] != "response.created" || names[12] != "response.completed" ||
		text != "Hi there! How can I help?" || !ok || u.TotalTokens != 21 {
		t.Errorf("events %v text %q usage %+v err %v", names, text, u, err)
	}

	for _, tc := range []struct {
		model string
		code  string
		n     int
	}{
		{"midstream-error", apierr.CodeUpstreamError, 5},
		{"cut", apierr.CodeBadUpstreamResponse, 4},
	} {
		st, err := c.RespondStream(ctx, &provider.ResponsesRequest{PublicModel: "m", UpstreamModel: tc.model, Body: []byte(`{"model":"m","stream":true}`), Stream: true})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for st.Next() {
			n++
		}
		if e := apierr.From(st.Err()); n != tc.n || e.Code != tc.code {
			t.Errorf("%s: %d events, err %v", tc.model, n, st.Err())
		}
		st.Close()
	}
	if _, err := c.RespondStream(ctx, &provider.ResponsesRequest{PublicModel: "m", UpstreamModel: "err-400", Body: []byte(`{"model":"m"}`), Stream: true}); apierr.From(err).Status != 400 {
		t.Errorf("400: %v", err)
	}
}

func TestGetResponse(t *testing.T) {
	f := providertest.NewOpenAI(t)
	c := newClient(t, f)
	ctx := context.Background()
	q := url.Values{"include[]": {"message.output_text.logprobs"}}
	cases := []struct {
		name, public, upstream, model string
	}{
		{"model shown as public", "mini", "gpt-4o-mini-2024-07-18", "mini"},
		{"another model left alone", "other", "gpt-4o", "gpt-4o-mini-2024-07-18"},
	}
	for _, tc := range cases {
		res, err := c.GetResponse(ctx, &provider.ResponseGet{ID: providertest.StoredResponseID, Query: q, Public: tc.public, Upstream: tc.upstream})
		if err != nil {
			t.Fatal(err)
		}
		var r responses.Response
		if err := json.Unmarshal(res.Body, &r); err != nil || r.Model != tc.model || r.ID != providertest.StoredResponseID {
			t.Errorf("%s: %s %v", tc.name, r.Model, err)
		}
	}
	if got, want := string(f.Last().Body), "/v1/responses/"+providertest.StoredResponseID+"?include%5B%5D=message.output_text.logprobs"; got != want {
		t.Errorf("GET %s, want %s", got, want)
	}
	_, err := c.GetResponse(ctx, &provider.ResponseGet{ID: "resp_nope"})
	if e := apierr.From(err); e.Status != http.StatusNotFound || e.Code != apierr.CodeNotFound || !strings.Contains(e.Message, "resp_nope") {
		t.Errorf("unknown id: %v", err)
	}
}

// Azure: the v1 Responses API, the deployment name in model, the key in api-key.
func TestRespondAzure(t *testing.T) {
	f := providertest.NewOpenAI(t)
	var (
		mu   sync.Mutex
		seen []string
	)
	az := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.RequestURI()+" "+r.Header.Get("Api-Key"))
		mu.Unlock()
		f.ServeHTTP(w, r)
	}))
	t.Cleanup(az.Close)
	c, err := New(Options{Name: "az", BaseURL: az.URL, APIKey: "az-key", Azure: true, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	res, err := c.Respond(ctx, &provider.ResponsesRequest{PublicModel: "gpt-4o", UpstreamModel: "gpt4o-prod", Body: []byte(`{"model":"gpt-4o","input":"x"}`)})
	if err != nil {
		t.Fatal(err)
	}
	var r responses.Response
	if err := json.Unmarshal(res.Body, &r); err != nil || r.Model != "gpt-4o" || f.Last().Model != "gpt4o-prod" {
		t.Fatalf("respond: %s %v", r.Model, err)
	}
	if _, err := c.GetResponse(ctx, &provider.ResponseGet{ID: providertest.StoredResponseID}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"POST /openai/v1/responses az-key", "GET /openai/v1/responses/" + providertest.StoredResponseID + " az-key"}
	if strings.Join(seen, "|") != strings.Join(want, "|") {
		t.Errorf("azure saw %q", seen)
	}
}
