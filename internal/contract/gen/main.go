// Command gen compiles the request rules of the official OpenAI OpenAPI
// description into internal/contract/schemas_gen.go:
//
//	go generate ./internal/contract     # or: go run ./internal/contract/gen
//
// It reads the description the tests already use
// (internal/oapitest/testdata/openai-openapi.yaml, MIT) and overlay.yaml in
// this directory (rules the description states only in prose), resolves
// every $ref, merges allOf, finds the member that tells the branches of each
// union apart, and writes the result as a table of nodes. The output is
// deterministic and a test fails when the committed file is stale, so a new
// description is picked up by regenerating, never by editing rules by hand.
// A validation keyword the generator does not know stops it with an error
// rather than being skipped.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
)

// Endpoint is one request body the gateway accepts.
type Endpoint struct {
	Const   string // the contract.Body constant
	Path    string // the OpenAPI path
	Content string // the request content type
}

// Endpoints are the bodies compiled, in output order.
var Endpoints = []Endpoint{
	{"ChatCompletions", "/chat/completions", "application/json"},
	{"Completions", "/completions", "application/json"},
	{"Embeddings", "/embeddings", "application/json"},
	{"ImageGenerations", "/images/generations", "application/json"},
	{"ImageEdits", "/images/edits", "multipart/form-data"},
	{"Transcriptions", "/audio/transcriptions", "multipart/form-data"},
	{"Responses", "/responses", "application/json"},
}

func main() {
	dir := flag.String("dir", "", "the internal/contract directory (default: found from the working directory)")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("contract/gen: ")
	if *dir == "" {
		*dir = findDir()
	}
	out, err := Generate(*dir)
	if err != nil {
		log.Fatal(err)
	}
	path := filepath.Join(*dir, "schemas_gen.go")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		log.Fatalf("write %s: %v", path, err)
	}
	log.Printf("wrote %s (%d bytes)", path, len(out))
}

// findDir finds internal/contract from the directories go generate and go
// run are usually started in.
func findDir() string {
	for _, d := range []string{".", "..", filepath.Join("internal", "contract")} {
		if _, err := os.Stat(filepath.Join(d, "gen", "overlay.yaml")); err == nil {
			return d
		}
	}
	return "."
}

// Generate returns the source of schemas_gen.go for the contract directory dir.
func Generate(dir string) ([]byte, error) {
	spec, err := os.ReadFile(filepath.Join(dir, "..", "oapitest", "testdata", "openai-openapi.yaml"))
	if err != nil {
		return nil, fmt.Errorf("read the description: %w", err)
	}
	overlay, err := os.ReadFile(filepath.Join(dir, "gen", "overlay.yaml"))
	if err != nil {
		return nil, fmt.Errorf("read the overlay: %w", err)
	}
	doc, err := load(spec, overlay)
	if err != nil {
		return nil, err
	}
	c := newCompiler(doc)
	roots := make([]*schema, len(Endpoints))
	for i, e := range Endpoints {
		if roots[i], err = c.body(e); err != nil {
			return nil, fmt.Errorf("%s %s: %w", e.Path, e.Content, err)
		}
	}
	return emit(roots)
}
