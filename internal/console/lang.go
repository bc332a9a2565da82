package console

import (
	"context"
	"net/http"
	"net/url"

	"github.com/modelgate/modelgate/internal/console/web"
	"github.com/modelgate/modelgate/internal/store"
)

// LangCookie remembers the language picked with ?lang=; it wins over
// Accept-Language from then on.
const LangCookie = "mg_lang"

type langKey struct{}

// withLang picks the request's language: a valid ?lang= (remembered in
// LangCookie), else the cookie, else Accept-Language, else English. An
// unknown ?lang= (?lang=xx) is ignored: the page keeps the language it
// would have had.
func (c *Console) withLang(w http.ResponseWriter, r *http.Request) *http.Request {
	l, ok := web.ParseLang(r.URL.Query().Get("lang"))
	if ok {
		http.SetCookie(w, &http.Cookie{Name: LangCookie, Value: string(l), Path: sessionPath, MaxAge: 365 * 24 * 3600,
			HttpOnly: true, Secure: c.secure(r), SameSite: http.SameSiteLaxMode})
	} else if ck, err := r.Cookie(LangCookie); err == nil {
		l, ok = web.ParseLang(ck.Value)
	}
	if !ok {
		l = web.FromAcceptLanguage(r.Header.Get("Accept-Language"))
	}
	return r.WithContext(context.WithValue(r.Context(), langKey{}, l))
}

// lang is the language withLang picked for r.
func lang(r *http.Request) web.Lang {
	if l, ok := r.Context().Value(langKey{}).(web.Lang); ok {
		return l
	}
	return web.En
}

// text is key's text in r's language; a key not in the catalogue (a
// message made elsewhere, such as an API error's) comes back unchanged.
func (c *Console) text(r *http.Request, key string, args ...any) string {
	return c.Pages.Text(lang(r), key, args...)
}

// pagePath is r's path and query without lang, for the language switch.
func pagePath(r *http.Request) string {
	q := r.URL.Query()
	q.Del("lang")
	u := url.URL{Path: r.URL.Path, RawQuery: q.Encode()}
	return u.String()
}

// bare is the layout of a signed-out page: its language only.
func (c *Console) bare(r *http.Request) web.Layout {
	return web.Layout{Lang: lang(r), Path: pagePath(r)}
}

// layout is what every signed-in page shares; titleKey is the catalogue
// key of the page's title.
func (c *Console) layout(r *http.Request, s store.Session, a store.Account, titleKey, active string) web.Layout {
	return web.Layout{Title: c.text(r, titleKey), Active: active, Account: a.Name, Admin: s.Role == store.RoleAdmin,
		Disabled: a.Disabled(), Balance: a.Balance, Currency: c.Currency, CSRF: s.CSRF, Lang: lang(r), Path: pagePath(r)}
}
