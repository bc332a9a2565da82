package providertest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"
)

// Images in the fakes come from the recorded answers under
// openai/image_*.json and imagen/*.json, whose one image is repeated
// to the number asked for.

// imageRequest is the part of an image request the OpenAI fake reads.
type imageRequest struct {
	Model          string  `json:"model"`
	N              *int    `json:"n"`
	ResponseFormat *string `json:"response_format"`
	Prompt         string  `json:"prompt"`
	Size           string  `json:"size"`
	Quality        string  `json:"quality"`
	InputFidelity  string  `json:"input_fidelity"`
	inputs         int     // an edit's files: its images and mask
}

// serveImages answers POST /v1/images/generations (JSON) and
// /v1/images/edits (multipart, which must come with an exact
// Content-Length) and reports whether r was one. Scenarios by model:
// err-NNN as for chat; gpt-image-* answers base64 with usage, size and
// quality, and refuses response_format as OpenAI does (gpt-image-counted
// and gpt-image-unmetered with the usage of imageusage.go); other models
// answer a URL, or base64 for response_format b64_json.
func (f *OpenAI) serveImages(w http.ResponseWriter, r *http.Request) bool {
	edit := r.URL.Path == "/v1/images/edits"
	if r.Method != http.MethodPost || (!edit && r.URL.Path != "/v1/images/generations") {
		return false
	}
	body, _ := io.ReadAll(r.Body)
	var req imageRequest
	var err error
	if edit {
		req, err = editRequest(r, body)
	} else {
		err = json.Unmarshal(body, &req)
	}
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":{"message":%q,"type":"invalid_request_error"}}`, "fake upstream: "+err.Error())
		return true
	}
	f.add(Received{Header: r.Header.Clone(), Body: body, Model: req.Model})
	if code, ok := strings.CutPrefix(req.Model, "err-"); ok {
		f.fail(w, code)
		return true
	}
	gpt := strings.HasPrefix(req.Model, "gpt-image-")
	name := "openai/image_url.json"
	switch {
	case gpt && req.ResponseFormat != nil:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write(Fixture(f.t, "openai/image_error_response_format.json"))
		return true
	case req.Model == "gpt-image-counted" || req.Model == "gpt-image-unmetered":
		f.meteredImages(w, req)
		return true
	case gpt:
		name = "openai/image_gpt.json"
	case req.ResponseFormat != nil && *req.ResponseFormat == "b64_json":
		name = "openai/image_b64.json"
	}
	n := 1
	if req.N != nil {
		n = *req.N
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(repeatImages(Fixture(f.t, name), "data", n))
	return true
}

// editRequest reads the fields of an edit form and checks its framing.
func editRequest(r *http.Request, body []byte) (imageRequest, error) {
	var req imageRequest
	if r.ContentLength != int64(len(body)) {
		return req, fmt.Errorf("Content-Length %d, body %d bytes", r.ContentLength, len(body))
	}
	form, err := ParseForm(r.Header.Get("Content-Type"), body)
	if err != nil {
		return req, err
	}
	images := 0
	for _, p := range form {
		if p.Filename != "" {
			req.inputs++
		}
		switch {
		case p.Filename != "" && (p.Field == "image" || p.Field == "image[]"):
			images++
		case p.Field == "model":
			req.Model = string(p.Data)
		case p.Field == "n":
			n, err := strconv.Atoi(string(p.Data))
			if err != nil {
				return req, fmt.Errorf("n: %w", err)
			}
			req.N = &n
		case p.Field == "response_format":
			s := string(p.Data)
			req.ResponseFormat = &s
		case p.Field == "prompt":
			req.Prompt = string(p.Data)
		case p.Field == "size":
			req.Size = string(p.Data)
		case p.Field == "quality":
			req.Quality = string(p.Data)
		case p.Field == "input_fidelity":
			req.InputFidelity = string(p.Data)
		}
	}
	if images == 0 {
		return req, fmt.Errorf("no image file")
	}
	return req, nil
}

// FormPart is one part of a multipart form a fake received.
type FormPart struct {
	Field, Filename, ContentType string
	Data                         []byte
}

// ParseForm reads a multipart/form-data body.
func ParseForm(contentType string, body []byte) ([]FormPart, error) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return nil, fmt.Errorf("content type %q is not multipart/form-data with a boundary", contentType)
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	var parts []FormPart
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return parts, nil
		}
		if err != nil {
			return nil, err
		}
		data, err := io.ReadAll(p)
		if err != nil {
			return nil, err
		}
		parts = append(parts, FormPart{Field: p.FormName(), Filename: p.FileName(), ContentType: p.Header.Get("Content-Type"), Data: data})
	}
}

// repeatImages repeats the first element of the array member of a
// recorded answer n times.
func repeatImages(fixture []byte, member string, n int) []byte {
	var top map[string]json.RawMessage
	var items []json.RawMessage
	if json.Unmarshal(fixture, &top) != nil || json.Unmarshal(top[member], &items) != nil || len(items) == 0 {
		return fixture
	}
	out := make([]json.RawMessage, max(n, 1))
	for i := range out {
		out[i] = items[0]
	}
	top[member], _ = json.Marshal(out)
	b, _ := json.Marshal(top)
	return b
}

// imagenRequest is Imagen's predict body with the parameter names
// google.golang.org/genai sends; anything else is refused, as a strict
// upstream would.
type imagenRequest struct {
	Instances []struct {
		Prompt string `json:"prompt"`
	} `json:"instances"`
	Parameters struct {
		SampleCount             int             `json:"sampleCount"`
		AspectRatio             string          `json:"aspectRatio"`
		NegativePrompt          string          `json:"negativePrompt"`
		GuidanceScale           float64         `json:"guidanceScale"`
		Seed                    int             `json:"seed"`
		SafetySetting           string          `json:"safetySetting"`
		PersonGeneration        string          `json:"personGeneration"`
		IncludeSafetyAttributes bool            `json:"includeSafetyAttributes"`
		IncludeRaiReason        bool            `json:"includeRaiReason"`
		Language                string          `json:"language"`
		OutputOptions           json.RawMessage `json:"outputOptions"`
		AddWatermark            bool            `json:"addWatermark"`
		SampleImageSize         string          `json:"sampleImageSize"`
		EnhancePrompt           bool            `json:"enhancePrompt"`
	} `json:"parameters"`
}

// serveImagen answers POST /v1beta/models/{model}:predict (Imagen) and
// reports whether r was one. Scenarios by model: imagen-filtered (every
// image removed by the safety filter), err-429 and err-400 as for
// generateContent; others the recorded image, repeated sampleCount times.
func (f *Gemini) serveImagen(w http.ResponseWriter, r *http.Request) bool {
	rest, ok := strings.CutPrefix(r.URL.Path, "/v1beta/models/")
	model, found := strings.CutSuffix(rest, ":predict")
	if r.Method != http.MethodPost || !ok || !found {
		return false
	}
	body, _ := io.ReadAll(r.Body)
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var req imagenRequest
	if err := dec.Decode(&req); err != nil || len(req.Instances) != 1 || req.Instances[0].Prompt == "" {
		f.fail(w, http.StatusBadRequest, fmt.Sprintf(`{"error":{"code":400,"message":%q,"status":"INVALID_ARGUMENT"}}`, fmt.Sprint("fake imagen: bad request: ", err)))
		return true
	}
	f.add(Received{Header: r.Header.Clone(), Body: body, Model: model})
	if r.Header.Get("X-Goog-Api-Key") == "" {
		f.fail(w, http.StatusForbidden, `{"error":{"code":403,"message":"Method doesn't allow unregistered callers.","status":"PERMISSION_DENIED"}}`)
		return true
	}
	switch model {
	case "err-429":
		f.fail(w, http.StatusTooManyRequests, string(Fixture(f.t, "gemini/error_429.json")))
	case "err-400":
		f.fail(w, http.StatusBadRequest, string(Fixture(f.t, "gemini/error_400.json")))
	case "imagen-filtered":
		f.json(w, "imagen/filtered.json")
	default:
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		_, _ = w.Write(repeatImages(Fixture(f.t, "imagen/predict.json"), "predictions", req.Parameters.SampleCount))
	}
	return true
}
