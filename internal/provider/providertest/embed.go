package providertest

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
)

// Embeddings in both fakes are built from the recorded vectors in
// openai/embeddings.json and gemini/embed.json: input i gets recorded
// vector i mod 2, cut to the requested dimensions. The OpenAI fake then
// renormalizes (OpenAI's vectors are unit length at any size) and counts
// one token per word of text (at least one) or per token id; the Gemini
// fake does neither, as Gemini does not.

// embedRequest is the part of an embeddings request the OpenAI fake reads.
type embedRequest struct {
	Model          string          `json:"model"`
	Input          json.RawMessage `json:"input"`
	EncodingFormat string          `json:"encoding_format"`
	Dimensions     *int            `json:"dimensions"`
}

// serveEmbeddings answers POST /v1/embeddings and reports whether r was
// one. Scenarios by model: err-NNN as for chat, malformed (truncated
// JSON), no-usage (an answer without usage); a dimensions above the
// recorded size (8) gets OpenAI's 400.
func (f *OpenAI) serveEmbeddings(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
		return false
	}
	body, _ := io.ReadAll(r.Body)
	var req embedRequest
	if err := json.Unmarshal(body, &req); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":{"message":"fake upstream: %s","type":"invalid_request_error"}}`, err)
		return true
	}
	f.add(Received{Header: r.Header.Clone(), Body: body, Model: req.Model})
	if code, ok := strings.CutPrefix(req.Model, "err-"); ok {
		f.fail(w, code)
		return true
	}
	w.Header().Set("Content-Type", "application/json")
	if req.Model == "malformed" {
		_, _ = io.WriteString(w, `{"object":"list","data":[{"object":"embedding","index":0,`)
		return true
	}
	tokens, err := embedInputs(req.Input)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":{"message":"'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.","type":"invalid_request_error","param":null,"code":null}}`)
		return true
	}
	recorded := f.recordedVectors()
	if req.Dimensions != nil && (*req.Dimensions < 1 || *req.Dimensions > len(recorded[0])) {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write(Fixture(f.t, "openai/embeddings_error_dimensions.json"))
		return true
	}
	type item struct {
		Object    string `json:"object"`
		Index     int    `json:"index"`
		Embedding any    `json:"embedding"`
	}
	out := struct {
		Object string          `json:"object"`
		Data   []item          `json:"data"`
		Model  string          `json:"model"`
		Usage  *map[string]int `json:"usage,omitempty"`
	}{Object: "list", Model: req.Model}
	total := 0
	for i, n := range tokens {
		v := recorded[i%len(recorded)]
		if req.Dimensions != nil {
			v = unit(v[:*req.Dimensions])
		}
		var e any = v
		if req.EncodingFormat == "base64" {
			e = float32Base64(v)
		}
		out.Data = append(out.Data, item{Object: "embedding", Index: i, Embedding: e})
		total += n
	}
	if req.Model != "no-usage" {
		out.Usage = &map[string]int{"prompt_tokens": total, "total_tokens": total}
	}
	b, _ := json.Marshal(out)
	_, _ = w.Write(b)
	return true
}

// recordedVectors are the vectors of openai/embeddings.json.
func (f *OpenAI) recordedVectors() [][]float32 {
	var rec struct {
		Data []struct {
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
	}
	if err := json.Unmarshal(Fixture(f.t, "openai/embeddings.json"), &rec); err != nil {
		f.t.Fatalf("fixture openai/embeddings.json: %v", err)
	}
	out := make([][]float32, len(rec.Data))
	for i, d := range rec.Data {
		out[i] = d.Embedding
	}
	return out
}

// embedInputs decodes OpenAI's input union into one token count per input.
func embedInputs(raw json.RawMessage) ([]int, error) {
	words := func(s string) int { return max(1, len(strings.Fields(s))) }
	var s string
	if json.Unmarshal(raw, &s) == nil && s != "" {
		return []int{words(s)}, nil
	}
	var ss []string
	if json.Unmarshal(raw, &ss) == nil && len(ss) > 0 {
		out := make([]int, len(ss))
		for i, s := range ss {
			out[i] = words(s)
		}
		return out, nil
	}
	var ids []int64
	if json.Unmarshal(raw, &ids) == nil && len(ids) > 0 {
		return []int{len(ids)}, nil
	}
	var nested [][]int64
	if json.Unmarshal(raw, &nested) == nil && len(nested) > 0 {
		out := make([]int, len(nested))
		for i, ids := range nested {
			out[i] = len(ids)
		}
		return out, nil
	}
	return nil, errors.New("invalid input")
}

// unit is a copy of v scaled to length 1.
func unit(v []float32) []float32 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) / math.Sqrt(s))
	}
	return out
}

// float32Base64 is OpenAI's encoding_format base64: little-endian float32
// bytes, standard base64.
func float32Base64(v []float32) string {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return base64.StdEncoding.EncodeToString(b)
}

// geminiEmbedRequest is a BatchEmbedContentsRequest as the fake reads it.
type geminiEmbedRequest struct {
	Requests []struct {
		Model   string `json:"model"`
		Content struct {
			Parts []struct {
				Text string `json:"text"`
			} `json:"parts"`
		} `json:"content"`
		OutputDimensionality *int `json:"outputDimensionality"`
	} `json:"requests"`
}

// serveEmbed answers POST /v1beta/models/{model}:batchEmbedContents and
// reports whether r was one. It refuses what Google refuses (more than 100
// requests, a request whose model is not models/{model}, no text) and
// shares ServeHTTP's err-429 and err-400 scenarios and key check.
func (f *Gemini) serveEmbed(w http.ResponseWriter, r *http.Request) bool {
	model, ok := strings.CutSuffix(strings.TrimPrefix(r.URL.Path, "/v1beta/models/"), ":batchEmbedContents")
	if r.Method != http.MethodPost || !ok || !strings.HasPrefix(r.URL.Path, "/v1beta/models/") {
		return false
	}
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(r.Body)
	body := buf.Bytes()
	var req geminiEmbedRequest
	if err := json.Unmarshal(body, &req); err != nil || len(req.Requests) == 0 {
		f.fail(w, http.StatusBadRequest, `{"error":{"code":400,"message":"* BatchEmbedContentsRequest.requests: requests is not specified","status":"INVALID_ARGUMENT"}}`)
		return true
	}
	f.add(Received{Header: r.Header.Clone(), Body: body, Model: model})
	if r.Header.Get("X-Goog-Api-Key") == "" {
		f.fail(w, http.StatusForbidden, `{"error":{"code":403,"message":"Method doesn't allow unregistered callers.","status":"PERMISSION_DENIED"}}`)
		return true
	}
	switch {
	case model == "err-429":
		f.fail(w, http.StatusTooManyRequests, string(Fixture(f.t, "gemini/error_429.json")))
		return true
	case model == "err-400":
		f.fail(w, http.StatusBadRequest, string(Fixture(f.t, "gemini/error_400.json")))
		return true
	case len(req.Requests) > 100:
		f.fail(w, http.StatusBadRequest, string(Fixture(f.t, "gemini/embed_error_batch.json")))
		return true
	}
	var rec struct {
		Embeddings []struct {
			Values []float32 `json:"values"`
		} `json:"embeddings"`
	}
	if err := json.Unmarshal(Fixture(f.t, "gemini/embed.json"), &rec); err != nil {
		f.t.Fatalf("fixture gemini/embed.json: %v", err)
	}
	type values struct {
		Values []float32 `json:"values"`
	}
	var out struct {
		Embeddings []values `json:"embeddings"`
	}
	for i, q := range req.Requests {
		if q.Model != "models/"+model || len(q.Content.Parts) == 0 || q.Content.Parts[0].Text == "" {
			f.fail(w, http.StatusBadRequest, fmt.Sprintf(`{"error":{"code":400,"message":"* BatchEmbedContentsRequest.requests[%d]: model or content is invalid","status":"INVALID_ARGUMENT"}}`, i))
			return true
		}
		v := rec.Embeddings[i%len(rec.Embeddings)].Values
		if d := q.OutputDimensionality; d != nil && *d > 0 && *d < len(v) {
			v = v[:*d]
		}
		out.Embeddings = append(out.Embeddings, values{v})
	}
	b, _ := json.Marshal(out)
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	_, _ = w.Write(b)
	return true
}
