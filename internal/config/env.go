package config

import (
	"fmt"
	gopath "path"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// envExpander replaces ${VAR} and ${VAR:-default} inside string scalar
// values of a parsed document. It runs on the node tree after YAML parsing,
// so a value from the environment always stays one string however much
// YAML syntax (": ", "#", quotes, newlines) it contains, and keys are never
// expanded.
//
// Rules: ${VAR} is the variable's value (an error when it is unset);
// ${VAR:-default} uses default when VAR is unset or empty, and default may
// itself contain references; "$$" and a "$" not followed by "{" are left
// exactly as written (so "pa$$word" and "$5" survive); expanded text is
// never scanned again.
type envExpander struct {
	getenv   func(string) (string, bool)
	expanded map[*yaml.Node]bool
	problems []Problem
	// skip are the key paths (see Unresolved) whose references are left as
	// written.
	skip []string
}

func newEnvExpander(getenv func(string) (string, bool), skip []string) *envExpander {
	if getenv == nil {
		getenv = func(string) (string, bool) { return "", false }
	}
	return &envExpander{getenv: getenv, expanded: map[*yaml.Node]bool{}, skip: skip}
}

// expandTree expands every string scalar in n that is not a mapping key;
// path is n's dotted key path ("" for the root, list items by index).
// Aliases are not followed: the anchored node is expanded where it is
// defined, and every alias shares it.
func (e *envExpander) expandTree(n *yaml.Node, path string) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			e.expandTree(c, path)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			e.expandTree(c, joinPath(path, strconv.Itoa(i)))
		}
	case yaml.MappingNode:
		for i := 1; i < len(n.Content); i += 2 {
			e.expandTree(n.Content[i], joinPath(path, n.Content[i-1].Value)) // values only: keys are never expanded
		}
	case yaml.ScalarNode:
		e.expandScalar(n, path)
	}
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// skipped reports whether path matches one of the skip patterns, whose
// "*" segments match any one key or index.
func (e *envExpander) skipped(path string) bool {
	for _, pat := range e.skip {
		if ok, _ := gopath.Match(pat, path); ok {
			return true
		}
	}
	return false
}

func (e *envExpander) expandScalar(n *yaml.Node, path string) {
	if n.ShortTag() != "!!str" || !strings.Contains(n.Value, "${") {
		return
	}
	if e.skipped(path) {
		e.expanded[n] = true // it is from the environment, only not read now
		return
	}
	out, errs := e.expand(n.Value)
	for _, msg := range errs {
		e.problems = append(e.problems, Problem{Line: n.Line, Message: msg})
	}
	e.expanded[n] = true
	n.Value = out
	if n.Style == 0 {
		n.Tag = retag(out)
	}
}

// retag gives an unquoted, untagged expanded value the type YAML would give
// the same text written inline, so "weight: ${W:-2}" or "requests: ${R:-true}"
// decode as numbers and booleans; string fields still receive the exact
// text. An empty result is null (the setting is left to its default), while
// a value that merely reads as null ("~", "null") stays a string so such a
// secret is not lost. Quote the reference to force a string.
func retag(v string) string {
	if v == "" {
		return "!!null"
	}
	switch tag := (&yaml.Node{Kind: yaml.ScalarNode, Value: v}).ShortTag(); tag {
	case "!!int", "!!float", "!!bool":
		return tag
	}
	return "!!str"
}

// maxEnvNesting bounds ${A:-${B:-...}} nesting, keeping expansion linear in
// the value's length.
const maxEnvNesting = 8

// expand returns s with its references replaced, plus one message per bad
// reference. Messages name variables but never include their values.
func (e *envExpander) expand(s string) (string, []string) {
	return e.expandDepth(s, 0)
}

func (e *envExpander) expandDepth(s string, depth int) (string, []string) {
	if depth > maxEnvNesting {
		return s, []string{fmt.Sprintf("references nested more than %d deep in defaults", maxEnvNesting)}
	}
	var b strings.Builder
	var errs []string
	for i := 0; i < len(s); {
		switch {
		case s[i] != '$':
			b.WriteByte(s[i])
			i++
			continue
		case strings.HasPrefix(s[i:], "$$"):
			b.WriteString("$$")
			i += 2
			continue
		case !strings.HasPrefix(s[i:], "${"):
			b.WriteByte('$')
			i++
			continue
		}
		end := closingBrace(s, i+2)
		if end < 0 {
			errs = append(errs, fmt.Sprintf("unterminated %s: expected ${NAME} or ${NAME:-default}", quoteRef(s[i:])))
			b.WriteString(s[i:])
			break
		}
		ref := s[i : end+1]
		name, def, hasDef := strings.Cut(s[i+2:end], ":-")
		i = end + 1
		if !validEnvName(name) {
			errs = append(errs, fmt.Sprintf("invalid reference %s: expected ${NAME} or ${NAME:-default} with NAME made of letters, digits and _", quoteRef(ref)))
			b.WriteString(ref)
			continue
		}
		val, ok := e.getenv(name)
		switch {
		case ok && (val != "" || !hasDef):
			b.WriteString(val)
		case hasDef:
			d, derrs := e.expandDepth(def, depth+1)
			b.WriteString(d)
			errs = append(errs, derrs...)
		default:
			errs = append(errs, fmt.Sprintf("environment variable %s is not set (set it, or give a default with ${%s:-default})", name, name))
		}
	}
	return b.String(), errs
}

// closingBrace returns the index of the "}" that closes a "${" whose body starts at
// from, allowing nested references in defaults; -1 when there is none.
func closingBrace(s string, from int) int {
	depth := 1
	for j := from; j < len(s); j++ {
		switch {
		case s[j] == '$' && j+1 < len(s) && s[j+1] == '{':
			depth++
			j++
		case s[j] == '}':
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

func validEnvName(name string) bool {
	if name == "" {
		return false
	}
	for i, r := range name {
		letter := r == '_' || (r >= 'A' && r <= 'Z') || (r >= 'a' && r <= 'z')
		if !letter && (i == 0 || r < '0' || r > '9') {
			return false
		}
	}
	return true
}

// quoteRef shows a reference from the file (never a value from the environment), shortened.
func quoteRef(s string) string {
	if len(s) > 40 {
		s = s[:37] + "..."
	}
	return fmt.Sprintf("%q", s)
}
