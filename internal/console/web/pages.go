package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"path"
	"strings"
	"time"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// PageNames lists the pages Render knows, in the order of views.go.
var PageNames = []string{"signin", "overview", "models", "keys", "playground", "usage", "ledger", "stats", "admin", "admin_account", "adminlink", "error"}

// Pages holds the parsed templates, one set per page and language.
type Pages struct {
	sets map[Lang]map[string]*template.Template
	cat  *Catalog
}

// catalog is the embedded message catalogues, read once (read-only).
var catalog = mustCatalog()

func mustCatalog() *Catalog {
	c, err := LoadCatalog()
	if err != nil {
		panic(err)
	}
	return c
}

// locale is a language and its catalogue: what the templates' t, date and
// chart functions speak.
type locale struct {
	lang Lang
	cat  *Catalog
}

func english() locale { return locale{lang: En, cat: catalog} }

// t is the catalogue's text; an unknown key comes back as the key.
func (lc locale) t(key string, args ...any) string { return lc.cat.Text(lc.lang, key, args...) }

// New parses every template once per language. A template error is a
// startup error.
func New() (*Pages, error) {
	p := &Pages{sets: map[Lang]map[string]*template.Template{}, cat: catalog}
	for _, l := range Langs {
		lc := locale{lang: l, cat: catalog}
		base, err := template.New("base").Funcs(funcs()).Funcs(lc.funcs()).ParseFS(templateFS, "templates/layout.html")
		if err != nil {
			return nil, fmt.Errorf("console templates: %w", err)
		}
		sets := make(map[string]*template.Template, len(PageNames))
		for _, name := range PageNames {
			set, err := base.Clone()
			if err == nil {
				set, err = set.ParseFS(templateFS, "templates/"+name+".html")
			}
			if err != nil {
				return nil, fmt.Errorf("console template %s: %w", name, err)
			}
			if set.Lookup("page") == nil {
				return nil, fmt.Errorf("console template %s: no \"page\" defined", name)
			}
			sets[name] = set
		}
		p.sets[l] = sets
	}
	return p, nil
}

// Catalog is the catalogue the pages speak, for messages made in Go.
func (p *Pages) Catalog() *Catalog { return p.cat }

// Text is key's text in l (see Catalog.Text).
func (p *Pages) Text(l Lang, key string, args ...any) string { return p.cat.Text(l, key, args...) }

// languaged is a view model that says its language (every view embeds
// Layout, which does).
type languaged interface{ Language() Lang }

// Language is the page's language; En when unset.
func (l Layout) Language() Lang {
	if l.Lang == "" {
		return En
	}
	return l.Lang
}

// Render writes the page name with status, in the language data says
// (see Layout.Lang). data is the page's view model (SignIn, Overview,
// Keys, ...). The page is rendered into a buffer first, so a template
// error becomes a plain 500 rather than half a page.
func (p *Pages) Render(w http.ResponseWriter, status int, name string, data any) {
	lang := En
	if d, ok := data.(languaged); ok {
		lang = d.Language()
	}
	sets, ok := p.sets[lang]
	if !ok {
		sets = p.sets[En]
	}
	set := sets[name]
	if set == nil {
		slog.Error("console: unknown page", "page", name)
		http.Error(w, "Internal Server Error", http.StatusInternalServerError)
		return
	}
	var buf bytes.Buffer
	if err := set.ExecuteTemplate(&buf, "page", data); err != nil {
		slog.Error("console: render", "page", name, "err", err)
		http.Error(w, "Internal Server Error", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Length", fmt.Sprint(buf.Len()))
	h.Set("Content-Language", string(lang))
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// asset is an embedded static file.
type asset struct {
	body  []byte
	ctype string
	etag  string
}

// StaticPrefix is where Static is mounted.
const StaticPrefix = "/console/static/"

var assets = loadAssets()

func loadAssets() map[string]asset {
	types := map[string]string{
		".css": "text/css; charset=utf-8",
		".js":  "text/javascript; charset=utf-8",
		".svg": "image/svg+xml",
	}
	m := map[string]asset{}
	entries, err := fs.ReadDir(staticFS, "static")
	if err != nil {
		panic(err)
	}
	for _, e := range entries {
		b, err := staticFS.ReadFile("static/" + e.Name())
		if err != nil {
			panic(err)
		}
		sum := sha256.Sum256(b)
		ct := types[path.Ext(e.Name())]
		if ct == "" {
			ct = "application/octet-stream"
		}
		m[e.Name()] = asset{body: b, ctype: ct, etag: hex.EncodeToString(sum[:6])}
	}
	return m
}

// assetURL is the URL of a static file, versioned by its content so a new
// build is never hidden by the one-hour cache.
func assetURL(name string) string {
	a, ok := assets[name]
	if !ok {
		panic("console: no static asset " + name)
	}
	return StaticPrefix + name + "?v=" + a.etag
}

// Static serves the embedded assets under /console/static/ (console.css,
// console.js, favicon.svg) with a one-hour public cache.
func Static() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
			return
		}
		name, ok := strings.CutPrefix(r.URL.Path, StaticPrefix)
		a, found := assets[name]
		if !ok || !found {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		h.Set("Content-Type", a.ctype)
		h.Set("Cache-Control", "public, max-age=3600")
		h.Set("ETag", `"`+a.etag+`"`)
		http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(a.body))
	})
}
