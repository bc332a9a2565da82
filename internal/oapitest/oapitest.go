// Package oapitest checks the gateway's answers against the official OpenAI
// OpenAPI description (testdata/openai-openapi.yaml, MIT, copied from
// github.com/openai/openai-openapi with its LICENSE). Tests call
// CheckResponse on the raw bytes a client received; a body that the
// official schema rejects fails the test with kin-openapi's reason.
package oapitest

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

//go:embed testdata/openai-openapi.yaml
var specYAML []byte

// server is the spec's server URL; requests are matched against it.
const server = "https://api.openai.com/v1"

var (
	once    sync.Once
	doc     *openapi3.T
	router  routers.Router
	loadErr error
)

// load parses the spec once per test binary. The 3.1 document still
// carries some 3.0 `nullable: true` members next to `type`; JSON Schema
// 2020-12 ignores them, so a null the spec means to allow would be
// rejected. fixNullable turns them into type lists first.
func load() (routers.Router, error) {
	once.Do(func() {
		loader := openapi3.NewLoader()
		var err error
		doc, err = loader.LoadFromData(specYAML)
		if err != nil {
			loadErr = fmt.Errorf("oapitest: load spec: %w", err)
			return
		}
		fixNullable(doc)
		router, loadErr = gorillamux.NewRouter(doc)
		if loadErr != nil {
			loadErr = fmt.Errorf("oapitest: build router: %w", loadErr)
		}
	})
	return router, loadErr
}

// fixNullable rewrites every schema with nullable: true so that null is
// one of its types, the 3.1 way.
func fixNullable(doc *openapi3.T) {
	seen := map[*openapi3.Schema]bool{}
	var visit func(*openapi3.SchemaRef)
	visit = func(ref *openapi3.SchemaRef) {
		if ref == nil || ref.Value == nil || seen[ref.Value] {
			return
		}
		s := ref.Value
		seen[s] = true
		if s.Nullable && s.Type != nil && len(*s.Type) > 0 && !s.Type.Includes(openapi3.TypeNull) {
			t := append(openapi3.Types{}, *s.Type...)
			t = append(t, openapi3.TypeNull)
			s.Type = &t
		}
		for _, p := range s.Properties {
			visit(p)
		}
		visit(s.Items)
		for _, l := range []openapi3.SchemaRefs{s.OneOf, s.AnyOf, s.AllOf} {
			for _, x := range l {
				visit(x)
			}
		}
		visit(s.Not)
		if s.AdditionalProperties.Schema != nil {
			visit(s.AdditionalProperties.Schema)
		}
	}
	for _, s := range doc.Components.Schemas {
		visit(s)
	}
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			if op.Responses == nil {
				continue
			}
			for _, r := range op.Responses.Map() {
				if r.Value == nil {
					continue
				}
				for _, mt := range r.Value.Content {
					visit(mt.Schema)
				}
			}
		}
	}
}

// CheckResponse fails t unless body is a valid answer, per the official
// spec, to method on path (e.g. "/embeddings", "/images/generations", or
// "/v1/embeddings": a leading /v1 is allowed) with the given status and
// content type.
func CheckResponse(t testing.TB, method, path string, status int, contentType string, body []byte) {
	t.Helper()
	if err := Check(method, path, status, contentType, body); err != nil {
		t.Errorf("%s %s answer does not match the OpenAI spec: %v\nbody: %.2000s", method, path, err, body)
	}
}

// Check is CheckResponse returning the reason instead of failing a test.
func Check(method, path string, status int, contentType string, body []byte) error {
	r, err := load()
	if err != nil {
		return err
	}
	path = strings.TrimPrefix(path, "/v1")
	req := httptest.NewRequest(method, server+path, nil)
	route, params, err := r.FindRoute(req)
	if err != nil {
		return fmt.Errorf("no operation for %s %s in the spec: %w", method, path, err)
	}
	h := http.Header{}
	h.Set("Content-Type", contentType)
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}},
		Status: status, Header: h, Body: io.NopCloser(bytes.NewReader(body)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	return openapi3filter.ValidateResponse(context.Background(), in)
}

// CheckComponent fails t unless body is valid against the spec's component
// schema name (e.g. "CreateChatCompletionStreamResponse" for a stream
// chunk, "ResponseStreamEvent" for a Responses event).
func CheckComponent(t testing.TB, name string, body []byte) {
	t.Helper()
	if err := Component(name, body); err != nil {
		t.Errorf("does not match the OpenAI spec's %s: %v\nbody: %.2000s", name, err, body)
	}
}

// Component is CheckComponent returning the reason.
func Component(name string, body []byte) error {
	if _, err := load(); err != nil {
		return err
	}
	ref, ok := doc.Components.Schemas[name]
	if !ok || ref.Value == nil {
		return fmt.Errorf("the spec has no schema %q", name)
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	return ref.Value.VisitJSON(v, openapi3.EnableJSONSchema2020(), openapi3.MultiErrors())
}
