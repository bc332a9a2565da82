package openaicompat

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/provider/providertest"
)

func TestEmbedPassThrough(t *testing.T) {
	tests := []struct {
		name, public, upstream, body string
		wantSent                     string // what the vendor must receive, byte for byte
		wantTokens                   int64
		base64                       bool
		dims                         int
	}{
		{"same id untouched", "text-embedding-3-small", "text-embedding-3-small",
			`{"model":"text-embedding-3-small","input":"hello there world","x_vendor":{"a":1}}`,
			`{"model":"text-embedding-3-small","input":"hello there world","x_vendor":{"a":1}}`, 3, false, 8},
		{"model patched, rest kept", "emb", "text-embedding-3-large",
			`{"input":[[1,2,3],[4]],"model":"emb","encoding_format":"base64","dimensions":4,"user":"u-1"}`,
			`{"input":[[1,2,3],[4]],"model":"text-embedding-3-large","encoding_format":"base64","dimensions":4,"user":"u-1"}`, 4, true, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := providertest.NewOpenAI(t)
			c := newClient(t, f)
			res, err := c.Embed(context.Background(), &provider.EmbedRequest{PublicModel: tt.public, UpstreamModel: tt.upstream, Body: []byte(tt.body)})
			if err != nil {
				t.Fatal(err)
			}
			last := f.Last()
			if string(last.Body) != tt.wantSent || last.Header.Get("Authorization") != "Bearer sk-up" || last.Header.Get("X-Title") != "mg" {
				t.Errorf("vendor got %s with %v", last.Body, last.Header)
			}
			if !res.HasUsage || res.Usage.PromptTokens != tt.wantTokens || res.Usage.TotalTokens != tt.wantTokens {
				t.Errorf("usage %+v (has %v), want %d", res.Usage, res.HasUsage, tt.wantTokens)
			}
			// The official SDK accepts the answer (and decodes base64 itself).
			var r oai.CreateEmbeddingResponse
			if err := json.Unmarshal(res.Body, &r); err != nil {
				t.Fatal(err)
			}
			if r.Model != tt.public || len(r.Data) == 0 || len(r.Data[0].Embedding) != tt.dims {
				t.Errorf("answer %s", res.Body)
			}
			if got := strings.Contains(string(res.Body), `"embedding":"`); got != tt.base64 {
				t.Errorf("base64 %v in %s", got, res.Body)
			}
		})
	}
}

func TestEmbedAzure(t *testing.T) {
	f := providertest.NewOpenAI(t)
	var seen string
	az := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = r.URL.RequestURI() + " key=" + r.Header.Get("Api-Key")
		r.URL.Path, r.URL.RawQuery = "/v1/embeddings", ""
		f.ServeHTTP(w, r)
	}))
	t.Cleanup(az.Close)
	c, err := New(Options{Name: "az", BaseURL: az.URL, APIKey: "az-key", Azure: true, Timeout: 2 * time.Second, IdleTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Embed(context.Background(), &provider.EmbedRequest{PublicModel: "emb", UpstreamModel: "emb-prod",
		Body: []byte(`{"model":"emb","input":["a","b"]}`)})
	if err != nil {
		t.Fatal(err)
	}
	if want := "/openai/deployments/emb-prod/embeddings?api-version=2024-10-21 key=az-key"; seen != want {
		t.Errorf("azure saw %q, want %q", seen, want)
	}
	if !strings.Contains(string(res.Body), `"model":"emb"`) || res.Usage.PromptTokens != 2 {
		t.Errorf("answer %s usage %+v", res.Body, res.Usage)
	}
}

func TestEmbedErrors(t *testing.T) {
	tests := []struct {
		upstream string
		status   int
		code     string
	}{
		{"err-400", 400, "string_above_max_length"},
		{"err-401", 502, apierr.CodeUpstreamAuth},
		{"err-429", 429, apierr.CodeRateLimitExceeded},
		{"err-500", 502, apierr.CodeUpstreamError},
		{"malformed", 502, apierr.CodeBadUpstreamResponse},
	}
	for _, tt := range tests {
		t.Run(tt.upstream, func(t *testing.T) {
			f := providertest.NewOpenAI(t)
			c := newClient(t, f)
			_, err := c.Embed(context.Background(), &provider.EmbedRequest{PublicModel: "p", UpstreamModel: tt.upstream,
				Body: []byte(`{"model":"p","input":"x"}`)})
			var e *apierr.Error
			if !errors.As(err, &e) || e.Status != tt.status || e.Code != tt.code {
				t.Fatalf("got %v, want %d %s", err, tt.status, tt.code)
			}
		})
	}
}

// embedAnswer is checked on recorded and hand-made answers.
func TestEmbedAnswer(t *testing.T) {
	c, _ := New(Options{Name: "v", BaseURL: "http://x"})
	tests := []struct {
		name, body string
		usage      int64 // 0: no usage
		code       string
	}{
		{"recorded float", string(providertest.Fixture(t, "openai/embeddings.json")), 9, ""},
		{"recorded base64", string(providertest.Fixture(t, "openai/embeddings_base64.json")), 5, ""},
		{"no usage", `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[1]}],"model":"u"}`, 0, ""},
		{"zero usage is no usage", `{"object":"list","data":[],"model":"u","usage":{"prompt_tokens":0,"total_tokens":0}}`, 0, ""},
		{"error in a 200", `{"error":{"message":"boom","type":"server_error"}}`, 0, apierr.CodeUpstreamError},
		{"no data", `{"object":"list","model":"u"}`, 0, apierr.CodeBadUpstreamResponse},
		{"data not array", `{"object":"list","data":{},"model":"u"}`, 0, apierr.CodeBadUpstreamResponse},
		{"not json", `{"object":`, 0, apierr.CodeBadUpstreamResponse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := c.embedAnswer([]byte(tt.body), http.Header{}, "public")
			if tt.code != "" {
				var e *apierr.Error
				if !errors.As(err, &e) || e.Code != tt.code {
					t.Fatalf("got %v, want %s", err, tt.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.HasUsage != (tt.usage > 0) || res.Usage.PromptTokens != tt.usage {
				t.Errorf("usage %+v has %v, want %d", res.Usage, res.HasUsage, tt.usage)
			}
			var m struct{ Model string }
			if json.Unmarshal(res.Body, &m) != nil || m.Model != "public" {
				t.Errorf("model not patched: %s", res.Body)
			}
		})
	}
}
