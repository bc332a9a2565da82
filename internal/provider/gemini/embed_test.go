package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"

	oai "github.com/openai/openai-go/v3"
	"google.golang.org/genai"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/provider/providertest"
)

// oracleEmbedRequest is BatchEmbedContentsRequest as the official SDK
// writes it (models.go, embedContentParametersPrivateToMldev and
// embedContentConfigToMldev): requests[] of model, content (a
// *genai.Content) and the members of genai.EmbedContentConfig that the
// Gemini API takes, with that type's field types.
type oracleEmbedRequest struct {
	Requests []struct {
		Model                string         `json:"model"`
		Content              *genai.Content `json:"content"`
		TaskType             string         `json:"taskType"`
		Title                string         `json:"title"`
		OutputDimensionality *int32         `json:"outputDimensionality"`
	} `json:"requests"`
}

// checkEmbedOracle fails t unless body decodes strictly into the SDK's
// shape, each request names model and holds one text part.
func checkEmbedOracle(t testing.TB, body []byte, model string, n int) {
	t.Helper()
	var r oracleEmbedRequest
	if err := strict(body, &r); err != nil {
		t.Fatalf("request does not decode into genai types: %v\n%s", err, body)
	}
	if len(r.Requests) != n {
		t.Fatalf("%d requests, want %d", len(r.Requests), n)
	}
	for i, q := range r.Requests {
		if q.Model != "models/"+model || q.Content == nil || len(q.Content.Parts) != 1 || q.Content.Parts[0].Text == "" {
			t.Errorf("request %d: %+v", i, q)
		}
		checkParts(t, q.Content.Parts)
	}
}

func TestEmbedRequestGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		dims int64
	}{{"request", 0}, {"request_dims", 768}} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(embedRequest("gemini-embedding-001", []string{"Hello", "wörld\n"}, tc.dims))
			if err != nil {
				t.Fatal(err)
			}
			checkEmbedOracle(t, b, "gemini-embedding-001", 2)
			golden(t, "testdata/embed/"+tc.name+".golden.json", canonical(t, b))
		})
	}
}

// checkEmbedResponseOracle fails t unless body is a batchEmbedContents
// answer the SDK accepts strictly (genai.EmbedContentResponse, whose
// members decode without custom code) with values in every embedding, or
// Google's error object.
func checkEmbedResponseOracle(t testing.TB, body []byte) {
	t.Helper()
	var e struct {
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Status  string `json:"status"`
		} `json:"error"`
	}
	if strict(body, &e) == nil && e.Error != nil {
		if e.Error.Code == 0 || e.Error.Status == "" {
			t.Errorf("error object without code or status: %s", body)
		}
		return
	}
	var r genai.EmbedContentResponse
	if err := strict(body, &r); err != nil {
		t.Fatalf("embed answer does not decode into genai.EmbedContentResponse: %v\n%s", err, body)
	}
	if len(r.Embeddings) == 0 {
		t.Errorf("no embeddings: %s", body)
	}
	for i, e := range r.Embeddings {
		if e == nil || len(e.Values) == 0 {
			t.Errorf("embedding %d has no values", i)
		}
	}
}

// The recorded answers here are ones the SDK accepts (the fake's are
// checked by TestFakeUpstreamFixturesOracle).
func TestEmbedResponseOracle(t *testing.T) {
	checkEmbedResponseOracle(t, []byte(fixture(t, "embed/response.gemini.json")))
}

func TestEmbed(t *testing.T) {
	for _, tc := range []struct {
		name   string
		base64 bool
		dims   int64
	}{{"float", false, 0}, {"base64", true, 0}, {"dims", false, 4}} {
		t.Run(tc.name, func(t *testing.T) {
			up := newUpstream(t, 200, "application/json", fixture(t, "embed/response.gemini.json"))
			c := testClient(t, up.URL)
			res, err := c.Embed(context.Background(), &provider.EmbedRequest{PublicModel: "pub", UpstreamModel: "gemini-embedding-001",
				Texts: []string{"a", "b"}, Base64: tc.base64, Dimensions: tc.dims})
			if err != nil {
				t.Fatal(err)
			}
			if up.path != "/v1beta/models/gemini-embedding-001:batchEmbedContents" || up.key != "k" {
				t.Errorf("sent to %s with key %q", up.path, up.key)
			}
			checkEmbedOracle(t, []byte(up.body), "gemini-embedding-001", 2)
			if res.HasUsage {
				t.Errorf("usage %+v claimed; Gemini counts nothing", res.Usage)
			}
			golden(t, "testdata/embed/response_"+tc.name+".openai.json", canonical(t, res.Body))
			var r oai.CreateEmbeddingResponse // the official client reads it, base64 included
			if err := json.Unmarshal(res.Body, &r); err != nil || r.Model != "pub" || len(r.Data) != 2 || len(r.Data[1].Embedding) != 4 {
				t.Fatalf("SDK read %+v, %v", r, err)
			}
			want := []float64{0.0062, -0.0188, 0.0301, -0.0009}
			if tc.dims > 0 {
				n := math.Sqrt(0.0062*0.0062 + 0.0188*0.0188 + 0.0301*0.0301 + 0.0009*0.0009)
				for i := range want {
					want[i] /= n
				}
			}
			for i, x := range r.Data[1].Embedding {
				if math.Abs(x-want[i]) > 1e-6 {
					t.Errorf("data[1][%d] = %v, want %v", i, x, want[i])
				}
			}
		})
	}
}

func TestEmbedTokensRefused(t *testing.T) {
	up := newUpstream(t, 200, "application/json", fixture(t, "embed/response.gemini.json"))
	c := testClient(t, up.URL)
	_, err := c.Embed(context.Background(), &provider.EmbedRequest{PublicModel: "pub", UpstreamModel: "m", Tokens: [][]int64{{1, 2}}})
	var e *apierr.Error
	if !errors.As(err, &e) || e.Status != 400 || e.Param != "input" {
		t.Fatalf("got %v", err)
	}
	if up.path != "" {
		t.Errorf("upstream called: %s", up.path)
	}
}

// More than 100 inputs go as several calls, whose answers keep the order.
func TestEmbedBatches(t *testing.T) {
	f := providertest.NewGemini(t)
	c := testClient(t, f.URL)
	texts := make([]string, 250)
	for i := range texts {
		texts[i] = fmt.Sprintf("text %d", i)
	}
	res, err := c.Embed(context.Background(), &provider.EmbedRequest{PublicModel: "pub", UpstreamModel: "gemini-embedding-001", Texts: texts})
	if err != nil {
		t.Fatal(err)
	}
	got := f.Received()
	if len(got) != 3 {
		t.Fatalf("%d calls, want 3", len(got))
	}
	for i, n := range []int{100, 100, 50} {
		checkEmbedOracle(t, got[i].Body, "gemini-embedding-001", n)
	}
	var third oracleEmbedRequest
	_ = json.Unmarshal(got[2].Body, &third)
	if third.Requests[0].Content.Parts[0].Text != "text 200" {
		t.Errorf("third call starts with %q", third.Requests[0].Content.Parts[0].Text)
	}
	var r oai.CreateEmbeddingResponse
	if err := json.Unmarshal(res.Body, &r); err != nil || len(r.Data) != 250 {
		t.Fatalf("%d items, %v", len(r.Data), err)
	}
	for i, d := range r.Data {
		if d.Index != int64(i) {
			t.Fatalf("data[%d].index = %d", i, d.Index)
		}
	}
}

func TestEmbedErrors(t *testing.T) {
	tests := []struct {
		name, body string
		status     int
		wantStatus int
		code       string
	}{
		{"invalid argument", fixture(t, "../../providertest/testdata/gemini/error_400.json"), 400, 400, "invalid_argument"},
		{"quota", fixture(t, "../../providertest/testdata/gemini/error_429.json"), 429, 429, apierr.CodeRateLimitExceeded},
		{"bad key", `{"error":{"code":403,"message":"API key not valid","status":"PERMISSION_DENIED"}}`, 403, 502, apierr.CodeUpstreamAuth},
		{"error in a 200", `{"error":{"code":500,"message":"internal","status":"INTERNAL"}}`, 200, 502, apierr.CodeUpstreamError},
		{"too few embeddings", `{"embeddings":[{"values":[1]}]}`, 200, 502, apierr.CodeBadUpstreamResponse},
		{"empty values", `{"embeddings":[{"values":[1]},{"values":[]}]}`, 200, 502, apierr.CodeBadUpstreamResponse},
		{"malformed", `{"embeddings":[`, 200, 502, apierr.CodeBadUpstreamResponse},
		{"float32 overflow", `{"embeddings":[{"values":[1e99]},{"values":[1]}]}`, 200, 502, apierr.CodeBadUpstreamResponse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := newUpstream(t, tt.status, "application/json", tt.body)
			c := testClient(t, up.URL)
			_, err := c.Embed(context.Background(), &provider.EmbedRequest{PublicModel: "pub", UpstreamModel: "m", Texts: []string{"a", "b"}})
			var e *apierr.Error
			if !errors.As(err, &e) || e.Status != tt.wantStatus || e.Code != tt.code {
				t.Fatalf("got %v (%+v), want %d %s", err, e, tt.wantStatus, tt.code)
			}
		})
	}
}

// The fake refuses what Google refuses, so the batching above is needed.
func TestFakeRefusesBigBatch(t *testing.T) {
	f := providertest.NewGemini(t)
	c := testClient(t, f.URL)
	_, err := c.embedBatch(context.Background(), "m", embedRequest("m", make101(), 0))
	var e *apierr.Error
	if !errors.As(err, &e) || e.Status != http.StatusBadRequest || !strings.Contains(e.Message, "at most 100") {
		t.Fatalf("got %v", err)
	}
}

func make101() []string {
	s := make([]string, 101)
	for i := range s {
		s[i] = "x"
	}
	return s
}
