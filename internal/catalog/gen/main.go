// Command gen regenerates internal/catalog/builtin.json from the
// genai-prices data set in this directory (genai-prices.json, MIT, see
// genai-prices.LICENSE) and the gateway's hand-written entries (extra.go):
//
//	go generate ./internal/catalog     # or: go run ./internal/catalog/gen
//
// Facts the data set lacks (max output, capabilities, tokenizer, modality,
// release dates) come from the id-pattern tables in rules.go. The output is
// deterministic, and a test fails when the committed builtin.json is stale.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
)

func main() {
	dir := flag.String("dir", "", "the internal/catalog directory (default: found from the working directory)")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("catalog/gen: ")
	if *dir == "" {
		*dir = findDir()
	}
	if err := run(*dir, log.Printf); err != nil {
		log.Fatal(err)
	}
}

// findDir finds internal/catalog from the directories go generate and go run
// are usually started in.
func findDir() string {
	for _, d := range []string{".", "..", filepath.Join("internal", "catalog")} {
		if _, err := os.Stat(filepath.Join(d, "gen", "genai-prices.json")); err == nil {
			return d
		}
	}
	return "."
}

// run reads the data, builds the catalog and writes builtin.json.
func run(dir string, logf func(string, ...any)) error {
	data, err := os.ReadFile(filepath.Join(dir, "gen", "genai-prices.json"))
	if err != nil {
		return fmt.Errorf("read data: %w", err)
	}
	out, st, err := generate(data)
	if err != nil {
		return err
	}
	st.log(logf)
	path := filepath.Join(dir, "builtin.json")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	logf("wrote %s (%d bytes)", path, len(out))
	return nil
}
