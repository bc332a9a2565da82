// Package docs holds modelgate's reference documentation. It has no code:
// its test checks that every relative link in README.md and docs/*.md points
// at a file that exists and, when it names a #fragment, at a heading of that
// file, so moving text between pages cannot leave a dead link behind.
package docs

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode"
)

// link is one link target found in a markdown file, with its line number.
type link struct {
	Line   int
	Target string
}

var (
	fenceRE   = regexp.MustCompile("^ {0,3}(```|~~~)")
	headingRE = regexp.MustCompile(`^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*$`)
	closingRE = regexp.MustCompile(`[ \t]+#+$`)
	hrefRE    = regexp.MustCompile(`(?i)<a\s[^>]*\bhref\s*=\s*"([^"]*)"`)
	htmlIDRE  = regexp.MustCompile(`(?i)<a\s[^>]*\b(?:id|name)\s*=\s*"([^"]*)"`)
	refDefRE  = regexp.MustCompile(`^ {0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?`)
	codeRE    = regexp.MustCompile("(`+)[^`]*?(`+)")
	inlineRE  = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	htmlTagRE = regexp.MustCompile(`<[^>]+>`)
)

// proseLines calls fn with every line of src that is outside fenced code
// blocks (``` or ~~~), with its 1-based line number.
func proseLines(src string, fn func(n int, line string)) {
	inFence := false
	var fence string
	for i, line := range strings.Split(src, "\n") {
		if m := fenceRE.FindStringSubmatch(line); m != nil {
			switch {
			case !inFence:
				inFence, fence = true, m[1]
			case m[1] == fence:
				inFence = false
			}
			continue
		}
		if inFence {
			continue
		}
		fn(i+1, line)
	}
}

// stripCode removes inline code spans from one line: a link shown as code is
// not a link.
func stripCode(line string) string {
	return codeRE.ReplaceAllString(line, "")
}

// extractLinks returns the targets of [text](target), ![alt](target),
// reference definitions "[ref]: target" and <a href="target"> in src.
func extractLinks(src string) []link {
	var out []link
	proseLines(src, func(n int, line string) {
		line = stripCode(line)
		if m := refDefRE.FindStringSubmatch(line); m != nil {
			out = append(out, link{n, m[1]})
		}
		open := 0 // unclosed '[' so far: "](" ends a link's text only after one
		for i := 0; i < len(line); i++ {
			switch line[i] {
			case '\\':
				i++ // an escaped character is text
			case '[':
				open++
			case ']':
				if open == 0 {
					continue
				}
				open--
				if strings.HasPrefix(line[i+1:], "(") {
					if t, ok := parseTarget(line[i+2:]); ok {
						out = append(out, link{n, t})
					}
				}
			}
		}
		for _, m := range hrefRE.FindAllStringSubmatch(line, -1) {
			out = append(out, link{n, m[1]})
		}
	})
	return out
}

// parseTarget reads a link destination at the start of s (just after "](").
func parseTarget(s string) (string, bool) {
	s = strings.TrimLeft(s, " \t")
	if strings.HasPrefix(s, "<") {
		end := strings.IndexByte(s, '>')
		if end < 0 {
			return "", false
		}
		return s[1:end], true
	}
	depth := 0
	for i, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth == 0, r == ' ' || r == '\t':
			return s[:i], i > 0
		case r == ')':
			depth--
		}
	}
	return "", false
}

// slug turns a heading's text into its anchor the way GitHub does: the
// rendered text (links reduced to their text, code marks and HTML tags
// removed), lowercased, every character other than a letter, digit, mark,
// '-', '_' or space dropped, and each space replaced by '-'.
func slug(heading string) string {
	text := inlineRE.ReplaceAllString(heading, "$1")
	text = htmlTagRE.ReplaceAllString(text, "")
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors returns every fragment a link into src may name: the slug of each
// heading (a repeated slug gets -1, -2, … as on GitHub) and explicit
// <a id="…"> / <a name="…"> anchors.
func anchors(src string) map[string]bool {
	seen := map[string]int{}
	out := map[string]bool{}
	proseLines(src, func(_ int, line string) {
		for _, m := range htmlIDRE.FindAllStringSubmatch(line, -1) {
			out[m[1]] = true
		}
		m := headingRE.FindStringSubmatch(line)
		if m == nil {
			return
		}
		s := slug(closingRE.ReplaceAllString(m[2], ""))
		if n := seen[s]; n > 0 {
			out[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	})
	return out
}

// external reports whether a target leaves the repository (a URL with a
// scheme such as https: or mailto:).
func external(target string) bool {
	u, err := url.Parse(target)
	return err == nil && u.Scheme != ""
}

// checkLinks checks every relative link of the markdown files (paths relative
// to root) and returns one "file:line: target: problem" per broken link.
func checkLinks(root string, files []string) ([]string, error) {
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	cache := map[string]map[string]bool{}
	anchorsOf := func(path string) (map[string]bool, error) {
		if a, ok := cache[path]; ok {
			return a, nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		cache[path] = anchors(string(src))
		return cache[path], nil
	}
	var problems []string
	for _, f := range files {
		path := filepath.Join(absRoot, f)
		src, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		for _, l := range extractLinks(string(src)) {
			if external(l.Target) {
				continue
			}
			report := func(format string, args ...any) {
				problems = append(problems, fmt.Sprintf("%s:%d: %s: %s", filepath.ToSlash(f), l.Line, l.Target, fmt.Sprintf(format, args...)))
			}
			file, frag, _ := strings.Cut(l.Target, "#")
			file, err1 := url.PathUnescape(file)
			frag, err2 := url.PathUnescape(frag)
			if err1 != nil || err2 != nil {
				report("bad escape")
				continue
			}
			dest := path
			if file != "" {
				if filepath.IsAbs(file) || strings.HasPrefix(file, "/") {
					report("absolute path; use a path relative to the file")
					continue
				}
				dest = filepath.Join(filepath.Dir(path), filepath.FromSlash(file))
				if rel, err := filepath.Rel(absRoot, dest); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
					report("points outside the repository")
					continue
				}
				if _, err := os.Stat(dest); err != nil {
					report("no such file")
					continue
				}
			}
			if frag == "" || !strings.EqualFold(filepath.Ext(dest), ".md") {
				continue
			}
			a, err := anchorsOf(dest)
			if err != nil {
				report("%v", err)
				continue
			}
			if !a[frag] {
				report("no heading with anchor #%s", frag)
			}
		}
	}
	return problems, nil
}

// markdownFiles lists README.md (and any other markdown file at the root) and
// every docs/*.md, relative to the repository root.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	root, err := filepath.Glob("../*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range root {
		files = append(files, filepath.Base(f))
	}
	docs, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range docs {
		files = append(files, "docs/"+f)
	}
	sort.Strings(files)
	return files
}

func TestDocsLinksResolve(t *testing.T) {
	files := markdownFiles(t)
	if !slices.Contains(files, "README.md") || len(files) < 2 {
		t.Fatalf("markdown files found: %v; want README.md and docs/*.md", files)
	}
	problems, err := checkLinks("..", files)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// TestReadmeLinksEveryDoc keeps the README's documentation list complete.
func TestReadmeLinksEveryDoc(t *testing.T) {
	src, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	linked := map[string]bool{}
	for _, l := range extractLinks(string(src)) {
		file, _, _ := strings.Cut(l.Target, "#")
		linked[file] = true
	}
	docs, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		if !linked["docs/"+d] {
			t.Errorf("README.md does not link docs/%s", d)
		}
	}
}

func TestSlug(t *testing.T) {
	for _, tt := range []struct{ heading, want string }{
		{"The two commands", "the-two-commands"},
		{"Responses API: `POST /v1/responses`, `GET /v1/responses/{id}`", "responses-api-post-v1responses-get-v1responsesid"},
		{"Images: `POST /v1/images/generations` and `POST /v1/images/edits`", "images-post-v1imagesgenerations-and-post-v1imagesedits"},
		{"Checking a file: `modelgate config check`", "checking-a-file-modelgate-config-check"},
		{"Native vendors: Anthropic and Gemini", "native-vendors-anthropic-and-gemini"},
		{"Parameters, and their fate per vendor", "parameters-and-their-fate-per-vendor"},
		{"snake_case and dash-case", "snake_case-and-dash-case"},
		{"A [linked](https://example.com) heading", "a-linked-heading"},
		{"**Bold** and *italic*", "bold-and-italic"},
		{"Costs in µs → CPU", "costs-in-µs--cpu"},
		{"Éclair Ünïcode 2", "éclair-ünïcode-2"},
	} {
		if got := slug(tt.heading); got != tt.want {
			t.Errorf("slug(%q) = %q, want %q", tt.heading, got, tt.want)
		}
	}
}

func TestAnchors(t *testing.T) {
	src := "# Title\n\n## Billing\n\n### Billing\n\n## Billing ##\n\n```sh\n# not a heading\n```\n\n<a id=\"custom\"></a>\n"
	got := anchors(src)
	want := map[string]bool{"title": true, "billing": true, "billing-1": true, "billing-2": true, "custom": true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("anchors = %v, want %v", got, want)
	}
}

func TestExtractLinks(t *testing.T) {
	for _, tt := range []struct {
		name string
		src  string
		want []link
	}{
		{"inline", "see [a](a.md) and [b](docs/b.md#x).", []link{{1, "a.md"}, {1, "docs/b.md#x"}}},
		{"title", `[a](a.md "the title")`, []link{{1, "a.md"}}},
		{"angle brackets", "[a](<my file.md>)", []link{{1, "my file.md"}}},
		{"parentheses in target", "[a](a_(b).md)", []link{{1, "a_(b).md"}}},
		{"image inside link", "[![alt](img.png)](page.md)", []link{{1, "img.png"}, {1, "page.md"}}},
		{"code link in text", "[`x.yaml`](x.yaml)", []link{{1, "x.yaml"}}},
		{"html", `<a href="x.md#y">x</a>`, []link{{1, "x.md#y"}}},
		{"reference definition", "[ref]: ./ref.md", []link{{1, "./ref.md"}}},
		{"inline code ignored", "`[a](nope.md)` but [b](yes.md)", []link{{1, "yes.md"}}},
		{"fenced code ignored", "```\n[a](nope.md)\n```\n[b](yes.md)", []link{{4, "yes.md"}}},
		{"tilde fence ignored", "~~~md\n[a](nope.md)\n~~~\n", nil},
		{"not a link", "a ](, f(x) and [x] (y)", nil},
		{"escaped bracket", `\[x](y.md) [z](z.md)`, []link{{1, "z.md"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := extractLinks(tt.src); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("extractLinks(%q) = %v, want %v", tt.src, got, tt.want)
			}
		})
	}
}

// TestCheckLinksFindsBrokenLinks runs the checker on a small tree with
// deliberately broken links: it must report exactly those.
func TestCheckLinksFindsBrokenLinks(t *testing.T) {
	root := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		path := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("example.yaml", "listen: x\n")
	write("README.md", strings.Join([]string{
		"# Project",       // 1
		"## Two commands", // 2
		"[ok](docs/guide.md) [ok](#two-commands)",              // 3
		"[missing file](docs/nope.md)",                         // 4
		"[missing anchor](docs/guide.md#nowhere)",              // 5
		"[ok](docs/guide.md#setup-1) [ok](example.yaml)",       // 6
		"[bad here](#three-commands)",                          // 7
		"[web](https://example.com/x.md) [mail](mailto:a@b.c)", // 8
		"```",                     // 9
		"[in code](nowhere.md)",   // 10
		"```",                     // 11
		"[escape](../outside.md)", // 12
	}, "\n"))
	write("docs/guide.md", strings.Join([]string{
		"# Guide",                           // 1
		"## Setup",                          // 2
		"## Setup",                          // 3
		"[up](../README.md#two-commands)",   // 4
		"[wrong dir](example.yaml)",         // 5
		"[up, bad](../README.md#project-1)", // 6
		"[self](#setup-2) [dir](../docs) [yaml](../example.yaml#x)", // 7
	}, "\n"))
	got, err := checkLinks(root, []string{"README.md", "docs/guide.md"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"README.md:4: docs/nope.md: no such file",
		"README.md:5: docs/guide.md#nowhere: no heading with anchor #nowhere",
		"README.md:7: #three-commands: no heading with anchor #three-commands",
		"README.md:12: ../outside.md: points outside the repository",
		"docs/guide.md:5: example.yaml: no such file",
		"docs/guide.md:6: ../README.md#project-1: no heading with anchor #project-1",
		"docs/guide.md:7: #setup-2: no heading with anchor #setup-2",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("checkLinks problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
