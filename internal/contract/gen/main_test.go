package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSchemasUpToDate fails when schemas_gen.go differs from what the
// generator makes of the committed description and overlay.
func TestSchemasUpToDate(t *testing.T) {
	want, err := Generate("..")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("..", "schemas_gen.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("internal/contract/schemas_gen.go is stale: run go generate ./internal/contract and commit the result")
	}
}

// The generator stops on what it cannot compile rather than dropping a rule.
func TestGeneratorRefuses(t *testing.T) {
	spec := func(schema string) []byte {
		return []byte(`openapi: 3.1.0
paths:
  /chat/completions:
    post:
      requestBody:
        content:
          application/json:
            schema: {$ref: "#/components/schemas/Req"}
components:
  schemas:
    Req: ` + schema + "\n")
	}
	tests := []struct {
		name, schema, overlay, want string
	}{
		{"unknown keyword", `{type: object, properties: {a: {type: string, uniqueItems: true}}}`, "[]", `keyword "uniqueItems"`},
		{"non-string enum", `{type: object, properties: {a: {enum: [1, 2]}}}`, "[]", "only strings"},
		{"dangling ref", `{type: object, properties: {a: {$ref: "#/components/schemas/Nope"}}}`, "[]", "no such schema"},
		{"stale overlay", `{type: object}`, "- {at: /components/schemas/Gone, why: x, add: {minItems: 1}}", "no member"},
		{"overlay without why", `{type: object}`, "- {at: /components/schemas/Req, add: {minItems: 1}}", "needs why"},
	}
	for _, tt := range tests {
		doc, err := load(spec(tt.schema), []byte(tt.overlay))
		if err == nil {
			_, err = newCompiler(doc).body(Endpoint{"ChatCompletions", "/chat/completions", "application/json"})
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want an error about %s", tt.name, err, tt.want)
		}
	}
}
