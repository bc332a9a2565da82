package deploy

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// yamlFiles lists every YAML file under this folder, sorted.
func yamlFiles(t *testing.T) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if ext := filepath.Ext(path); !d.IsDir() && (ext == ".yaml" || ext == ".yml") {
			out = append(out, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// documents parses every YAML document of the file at path.
func documents(t *testing.T, path string) []*yaml.Node {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs []*yaml.Node
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return docs
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		docs = append(docs, &doc)
	}
}

// decodeStrict decodes one document into v, refusing fields v does not have.
func decodeStrict(doc *yaml.Node, v any) error {
	data, err := yaml.Marshal(doc)
	if err != nil {
		return err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	return dec.Decode(v)
}

// TestEveryYAMLFileParses reads every YAML file here: each holds at least
// one document, and no document is empty (a stray "---" would make one).
func TestEveryYAMLFileParses(t *testing.T) {
	files := yamlFiles(t)
	for _, want := range []string{"docker-compose.yml", "modelgate.yaml", filepath.Join("k8s", "03-deployment.yaml")} {
		found := false
		for _, f := range files {
			found = found || f == want
		}
		if !found {
			t.Errorf("%s is missing (found %v)", want, files)
		}
	}
	for _, f := range files {
		docs := documents(t, f)
		if len(docs) == 0 {
			t.Errorf("%s: no YAML document", f)
		}
		for i, d := range docs {
			if len(d.Content) == 0 || d.Content[0].Kind != yaml.MappingNode {
				t.Errorf("%s: document %d is not a mapping", f, i+1)
			}
		}
	}
}

// subset reports whether every label of sel is in labels with the same
// value, i.e. whether a selector sel picks pods labelled labels.
func subset(sel, labels map[string]string) bool {
	if len(sel) == 0 {
		return false // an empty selector picks everything: never what is meant here
	}
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// isPlaceholder reports whether s is marked as a value to replace.
func isPlaceholder(s string) bool {
	return strings.Contains(s, "CHANGE-ME")
}
