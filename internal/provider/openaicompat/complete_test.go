package openaicompat

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/provider/providertest"
)

const completionBody = `{"model":"instruct","prompt":"Say this is a test","max_tokens":7,"echo":false,"unknown":{"kept":[1,2]}}`

func TestComplete(t *testing.T) {
	f := providertest.NewOpenAI(t)
	c := newClient(t, f)
	res, err := c.Complete(context.Background(), &provider.CompletionRequest{PublicModel: "instruct",
		UpstreamModel: "gpt-3.5-turbo-instruct", Body: []byte(completionBody)})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Object, Model string
		Choices       []struct{ Text string }
	}
	if err := json.Unmarshal(res.Body, &got); err != nil {
		t.Fatal(err)
	}
	if got.Object != "text_completion" || got.Model != "instruct" || len(got.Choices) != 1 || got.Choices[0].Text != "\n\nThis is indeed a test." {
		t.Errorf("answer %s", res.Body)
	}
	if !res.HasUsage || res.Usage.PromptTokens != 5 || res.Usage.CompletionTokens != 8 || res.Usage.TotalTokens != 13 {
		t.Errorf("usage %+v %v", res.Usage, res.HasUsage)
	}
	last := f.Last()
	want := strings.Replace(completionBody, `"instruct"`, `"gpt-3.5-turbo-instruct"`, 1)
	if string(last.Body) != want {
		t.Errorf("upstream body\n got %s\nwant %s", last.Body, want)
	}
	if last.Header.Get("Authorization") != "Bearer sk-up" || last.Header.Get("Accept") != "application/json" {
		t.Errorf("upstream headers %v", last.Header)
	}
}

func TestCompleteStream(t *testing.T) {
	for _, includeUsage := range []bool{false, true} {
		f := providertest.NewOpenAI(t)
		c := newClient(t, f)
		body := `{"model":"instruct","prompt":"Say this is a test","stream":true}`
		if includeUsage {
			body = `{"model":"instruct","prompt":"Say this is a test","stream":true,"stream_options":{"include_usage":true}}`
		}
		s, err := c.CompleteStream(context.Background(), &provider.CompletionRequest{PublicModel: "instruct",
			UpstreamModel: "gpt-3.5-turbo-instruct", Body: []byte(body), Stream: true, IncludeUsage: includeUsage})
		if err != nil {
			t.Fatal(err)
		}
		chunks, err := readStream(t, s)
		if err != nil {
			t.Fatal(err)
		}
		u, hasUsage := s.Usage()
		// The fake always sends usage, since it is always asked for upstream.
		if !strings.Contains(string(f.Last().Body), `"stream_options":{"include_usage":true}`) {
			t.Errorf("upstream body %s", f.Last().Body)
		}
		if !hasUsage || u.PromptTokens != 5 || u.CompletionTokens != 8 {
			t.Errorf("usage %+v %v", u, hasUsage)
		}
		want := 8 // seven text chunks and the finish
		if includeUsage {
			want = 9
		}
		if len(chunks) != want {
			t.Fatalf("include_usage %v: %d chunks: %q", includeUsage, len(chunks), chunks)
		}
		var text strings.Builder
		for i, ch := range chunks {
			var v struct {
				Object, Model string
				Choices       []struct{ Text string }
				Usage         json.RawMessage
			}
			if err := json.Unmarshal([]byte(ch), &v); err != nil {
				t.Fatal(err)
			}
			if v.Object != "text_completion" || v.Model != "instruct" {
				t.Errorf("chunk %d: %s", i, ch)
			}
			if !includeUsage && strings.Contains(ch, `"usage"`) {
				t.Errorf("chunk %d carries a usage member the client did not ask for: %s", i, ch)
			}
			if v.Usage != nil && string(v.Usage) != "null" && i != len(chunks)-1 {
				t.Errorf("chunk %d carries usage before the end: %s", i, ch)
			}
			for _, c := range v.Choices {
				text.WriteString(c.Text)
			}
		}
		if text.String() != "\n\nThis is indeed a test." {
			t.Errorf("text %q", text.String())
		}
	}
}

func TestCompleteErrors(t *testing.T) {
	f := providertest.NewOpenAI(t)
	c := newClient(t, f)
	for _, tc := range []struct {
		upstream string
		stream   bool
		status   int
	}{
		{"err-400", false, 400},
		{"err-429", false, 429},
		{"err-500", true, 502},
		{"midstream-error", true, 502},
	} {
		body := `{"model":"m","prompt":"hi","stream":` + map[bool]string{false: "false", true: "true"}[tc.stream] + `}`
		req := &provider.CompletionRequest{PublicModel: "m", UpstreamModel: tc.upstream, Body: []byte(body), Stream: tc.stream}
		var err error
		if tc.stream {
			var s provider.CompletionStream
			if s, err = c.CompleteStream(context.Background(), req); err == nil {
				_, err = readStream(t, s)
			}
		} else {
			_, err = c.Complete(context.Background(), req)
		}
		if e := apierr.From(err); err == nil || e.Status != tc.status {
			t.Errorf("%s: %v, want status %d", tc.upstream, err, tc.status)
		}
	}
}

// Azure serves legacy completions per deployment, like chat.
func TestCompleteAzure(t *testing.T) {
	f := providertest.NewOpenAI(t)
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.URL.Path+"?"+r.URL.RawQuery)
		r.URL.Path, r.URL.RawQuery = "/v1/completions", ""
		f.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	c, err := New(Options{Name: "azure", BaseURL: srv.URL, APIKey: "k", Azure: true, Timeout: 2 * time.Second, IdleTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	req := &provider.CompletionRequest{PublicModel: "instruct", UpstreamModel: "my instruct", Body: []byte(completionBody)}
	if _, err := c.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	// The chat URL of the same client is unchanged (the answer does not
	// matter: this fake serves only completions).
	_, _ = c.Chat(context.Background(), &provider.ChatRequest{PublicModel: "m", UpstreamModel: "my chat",
		Body: []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`)})
	want := []string{"/openai/deployments/my instruct/completions?api-version=" + DefaultAzureAPIVersion,
		"/openai/deployments/my chat/chat/completions?api-version=" + DefaultAzureAPIVersion}
	if strings.Join(seen, " | ") != strings.Join(want, " | ") {
		t.Errorf("paths %q, want %q", seen, want)
	}
}
