package config

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// source records where things are in the loaded file. Paths are dotted:
// "listen", "log.level", "providers.0.models.1", "groups.basic.models.0".
type source struct {
	lines map[string]int  // path → line of its key (or of the sequence item)
	set   map[string]bool // path → a non-null value was written
	env   map[string]bool // path → the value contained a ${VAR} reference
}

func newSource() *source {
	return &source{lines: map[string]int{}, set: map[string]bool{}, env: map[string]bool{}}
}

// given reports whether the loaded file wrote a non-null value at path.
func (c *Config) given(path string) bool {
	return c.src != nil && c.src.set[path]
}

// line returns the file line of path, or fallback when unknown (configs not loaded from a file).
func (c *Config) line(path string, fallback int) int {
	if c.src != nil {
		if l := c.src.lines[path]; l > 0 {
			return l
		}
	}
	return fallback
}

// fromEnv reports whether the value at path was written as a ${VAR} reference.
func (c *Config) fromEnv(path string) bool {
	return c.src != nil && c.src.env[path]
}

// maxWalk bounds the schema walk, which follows aliases: a document built to
// expand exponentially ("billion laughs") must not make Load hang.
const maxWalk = 100000

// schemaWalker walks the yaml.Node tree along the Go types of Config (via
// their yaml struct tags), reporting keys no field accepts and recording a
// source entry for every key it does know. Top-level keys starting with
// "x-" are extensions and ignored, so shared YAML anchors have a home.
type schemaWalker struct {
	src      *source
	expanded map[*yaml.Node]bool // scalars that contained ${...} before expansion
	problems []Problem
	steps    int
}

var (
	typeModelRef = reflect.TypeFor[ModelRef]()
	typeDuration = reflect.TypeFor[Duration]()
	// sectionNames name a struct in unknown-key messages.
	sectionNames = map[reflect.Type]string{
		reflect.TypeFor[Log]():              "log",
		reflect.TypeFor[Usage]():            "usage",
		reflect.TypeFor[Provider]():         "provider",
		reflect.TypeFor[Group]():            "group",
		typeModelRef:                        "model",
		reflect.TypeFor[Billing]():          "billing",
		reflect.TypeFor[ModelConfig]():      "catalog model",
		reflect.TypeFor[ImagePriceConfig](): "image price",
		reflect.TypeFor[Images]():           "images",
		reflect.TypeFor[ImagesS3]():         "images s3",
		reflect.TypeFor[Fetch]():            "fetch",
		reflect.TypeFor[Video]():            "video",
		reflect.TypeFor[Background]():       "background",
		reflect.TypeFor[Console]():          "console",
		reflect.TypeFor[OAuthProvider]():    "console oauth provider",
		reflect.TypeFor[Payments]():         "payments",
		reflect.TypeFor[Metrics]():          "metrics",
		reflect.TypeFor[Telemetry]():        "telemetry",
		reflect.TypeFor[TopUpBonus]():       "first_topup_bonus",
		reflect.TypeFor[StripeConf]():       "stripe",
	}
)

func (w *schemaWalker) walk(n *yaml.Node, t reflect.Type, path string) {
	n = w.deref(n)
	if n == nil {
		return
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == typeDuration:
		return
	case t.Kind() == reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return // the decoder reports the type mismatch
		}
		w.walkStruct(n, t, path, n)
	case t.Kind() == reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return
		}
		for i, item := range n.Content {
			p := join(path, strconv.Itoa(i))
			w.record(p, item.Line, item)
			w.walk(item, t.Elem(), p)
		}
	case t.Kind() == reflect.Map:
		if n.Kind != yaml.MappingNode {
			return
		}
		w.forEachPair(n, func(k, v *yaml.Node) {
			p := join(path, k.Value)
			w.record(p, k.Line, v)
			w.walk(v, t.Elem(), p)
		})
	}
}

// walkStruct checks the keys of mapping n against struct type t. owner is
// the mapping the keys are reported against (differs from n inside merges).
func (w *schemaWalker) walkStruct(n *yaml.Node, t reflect.Type, path string, owner *yaml.Node) {
	fields := yamlFields(t)
	w.forEachPair(n, func(k, v *yaml.Node) {
		ft, ok := fields[k.Value]
		if !ok && path == "" && strings.HasPrefix(k.Value, "x-") {
			return // top-level extension key, e.g. a home for YAML anchors
		}
		if !ok {
			w.unknownKey(k, t, path, owner, fields)
			return
		}
		p := join(path, k.Value)
		w.record(p, k.Line, v)
		w.walk(v, ft, p)
	})
}

// forEachPair calls fn for each scalar key of mapping n, explicit keys
// first and then those brought in by merge keys (<<: *anchor), matching
// YAML's rule that explicit keys win.
func (w *schemaWalker) forEachPair(n *yaml.Node, fn func(k, v *yaml.Node)) {
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if isMerge(k) {
			merges = append(merges, v)
			continue
		}
		if k.Kind == yaml.ScalarNode {
			fn(k, v)
		}
	}
	for _, m := range merges {
		m = w.deref(m)
		if m == nil {
			continue
		}
		sources := []*yaml.Node{m}
		if m.Kind == yaml.SequenceNode {
			sources = m.Content
		}
		for _, s := range sources {
			if s = w.deref(s); s != nil && s.Kind == yaml.MappingNode {
				w.forEachPair(s, fn)
			}
		}
	}
}

// deref follows aliases and spends one step of the walk budget; nil means stop.
func (w *schemaWalker) deref(n *yaml.Node) *yaml.Node {
	for depth := 0; n != nil && n.Kind == yaml.AliasNode; depth++ {
		if depth > 100 {
			return nil
		}
		n = n.Alias
	}
	w.steps++
	if w.steps > maxWalk {
		return nil
	}
	return n
}

func (w *schemaWalker) record(path string, line int, v *yaml.Node) {
	if _, seen := w.src.lines[path]; seen {
		return // an explicit key already won over a merged one
	}
	w.src.lines[path] = line
	for depth := 0; v != nil && v.Kind == yaml.AliasNode && depth < 100; depth++ {
		v = v.Alias
	}
	if v == nil {
		return
	}
	if !(v.Kind == yaml.ScalarNode && v.ShortTag() == "!!null") {
		w.src.set[path] = true
	}
	if w.expanded[v] {
		w.src.env[path] = true
	}
}

func (w *schemaWalker) unknownKey(k *yaml.Node, t reflect.Type, path string, owner *yaml.Node, fields map[string]reflect.Type) {
	msg := fmt.Sprintf("unknown key %q", k.Value)
	switch name := sectionNames[t]; name {
	case "":
		msg = fmt.Sprintf("unknown top-level key %q", k.Value)
	case "provider":
		if pn := scalarValue(owner, "name"); pn != "" {
			msg += fmt.Sprintf(" in provider %q", pn)
		} else {
			msg += " in provider"
		}
	case "catalog model":
		if id := scalarValue(owner, "id"); id != "" {
			msg += fmt.Sprintf(" in model %q", id)
		} else {
			msg += " in model"
		}
	case "group":
		msg += fmt.Sprintf(" in group %q", path[strings.LastIndexByte(path, '.')+1:])
	default:
		msg += " in " + name
	}
	if hint := closest(k.Value, fields); hint != "" {
		msg += fmt.Sprintf(" (did you mean %s?)", hint)
	}
	w.problems = append(w.problems, Problem{Line: k.Line, Message: msg})
}

// yamlFields maps the YAML key of each decodable field of struct t to its type.
func yamlFields(t reflect.Type) map[string]reflect.Type {
	fields := make(map[string]reflect.Type, t.NumField())
	for f := range t.Fields() {
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = strings.ToLower(f.Name) // yaml.v3's default
		}
		fields[name] = f.Type
	}
	return fields
}

// closest returns the known key most likely meant by a misspelt key: one
// within edit distance 2, or equal once case, '_' and '-' are ignored.
func closest(key string, fields map[string]reflect.Type) string {
	names := make([]string, 0, len(fields))
	for name := range fields {
		names = append(names, name)
	}
	slices.Sort(names)
	best, bestDist := "", 3
	for _, name := range names {
		if normalizeKey(name) == normalizeKey(key) {
			return name
		}
		if d := editDistance(key, name); d < bestDist && d < len(key) {
			best, bestDist = name, d
		}
	}
	return best
}

func normalizeKey(s string) string {
	return strings.NewReplacer("_", "", "-", "").Replace(strings.ToLower(s))
}

// editDistance is the optimal-string-alignment distance (Levenshtein plus
// adjacent transpositions, so "modles" is one edit from "models").
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) > 64 || len(rb) > 64 {
		return 1 << 30 // hints are for typos, not essays
	}
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

// isMerge reports whether k is a YAML merge key (<<), using yaml.v3's own rule.
func isMerge(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && k.Value == "<<" &&
		(k.Tag == "" || k.Tag == "!" || k.ShortTag() == "!!merge")
}

// scalarValue returns the scalar value under key in mapping n, or "".
func scalarValue(n *yaml.Node, key string) string {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key && n.Content[i+1].Kind == yaml.ScalarNode {
			return n.Content[i+1].Value
		}
	}
	return ""
}

func join(path, elem string) string {
	if path == "" {
		return elem
	}
	return path + "." + elem
}
