package openaicompat

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/provider/providertest"
)

// fakeAzure checks Azure's URL and auth, then answers like OpenAI.
func fakeAzure(t *testing.T, f *providertest.OpenAI) (*httptest.Server, *[]string) {
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.URL.Path+"?"+r.URL.RawQuery+" key="+r.Header.Get("Api-Key")+" auth="+r.Header.Get("Authorization"))
		r.URL.Path, r.URL.RawQuery = "/v1/chat/completions", ""
		f.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &seen
}

func TestAzure(t *testing.T) {
	for _, tc := range []struct {
		version, want string
	}{
		{"", "/openai/deployments/prod mini/chat/completions?api-version=2024-10-21 key=az-key auth="},
		{"2025-01-01-preview", "/openai/deployments/prod mini/chat/completions?api-version=2025-01-01-preview key=az-key auth="},
	} {
		f := providertest.NewOpenAI(t)
		srv, seen := fakeAzure(t, f)
		c, err := New(Options{Name: "azure", BaseURL: srv.URL, APIKey: "az-key", Azure: true, APIVersion: tc.version,
			Timeout: 2 * time.Second, IdleTimeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		req := &provider.ChatRequest{PublicModel: "gpt-4o-mini", UpstreamModel: "prod mini",
			Body: []byte(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`)}
		res, err := c.Chat(context.Background(), req)
		if err != nil || !res.HasUsage {
			t.Fatalf("Chat: %v", err)
		}
		req.Stream, req.IncludeUsage = true, true
		req.Body = []byte(`{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
		s, err := c.ChatStream(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		chunks, err := readStream(t, s)
		if err != nil || len(chunks) == 0 {
			t.Fatalf("stream: %d chunks, %v", len(chunks), err)
		}
		if len(*seen) != 2 || (*seen)[0] != tc.want || (*seen)[1] != tc.want {
			t.Errorf("requests %q, want %q", *seen, tc.want)
		}
	}
}

func TestURL(t *testing.T) {
	oa, _ := New(Options{Name: "o", BaseURL: "https://api.example.com/v1/"})
	az, _ := New(Options{Name: "a", BaseURL: "https://r.openai.azure.com", Azure: true, APIVersion: "2025-01-01"})
	tests := []struct {
		c              *Client
		path, upstream string
		want           string
	}{
		{oa, "embeddings", "text-embedding-3-small", "https://api.example.com/v1/embeddings"},
		{oa, "/images/edits", "dall-e-2", "https://api.example.com/v1/images/edits"},
		{oa, "responses/resp_1", "", "https://api.example.com/v1/responses/resp_1"},
		{az, "embeddings", "my emb", "https://r.openai.azure.com/openai/deployments/my%20emb/embeddings?api-version=2025-01-01"},
		{az, "audio/transcriptions", "whisper", "https://r.openai.azure.com/openai/deployments/whisper/audio/transcriptions?api-version=2025-01-01"},
		{az, "responses/resp_1", "", "https://r.openai.azure.com/openai/responses/resp_1?api-version=2025-01-01"},
	}
	for _, tt := range tests {
		if got := tt.c.URL(tt.path, tt.upstream); got != tt.want {
			t.Errorf("URL(%q, %q) = %q, want %q", tt.path, tt.upstream, got, tt.want)
		}
	}
}
