package console

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/store/sqlstore"
)

// revealRequest is a GET carrying the session cookie (if any) and cookies.
func revealRequest(session string, cookies ...*http.Cookie) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/console/keys", nil)
	if session != "" {
		r.AddCookie(&http.Cookie{Name: SessionCookie, Value: session})
	}
	for _, c := range cookies {
		r.AddCookie(c)
	}
	return r
}

func revealCookieOf(t *testing.T, w *httptest.ResponseRecorder) *http.Cookie {
	t.Helper()
	for _, c := range w.Result().Cookies() {
		if c.Name == RevealCookie {
			return c
		}
	}
	t.Fatal("no reveal cookie set")
	return nil
}

func TestReveal(t *testing.T) {
	now := time.Date(2026, 12, 28, 10, 0, 0, 0, time.UTC)
	clk := &now
	st, err := sqlstore.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "mg.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	c := &Console{Store: st, CookieKey: bytes.Repeat([]byte{7}, 32), Now: func() time.Time { return *clk }}
	big := bytes.Repeat([]byte("MG-ABCD-EFGH-IJKL-MNOP-QRST-UV\n"), 1000) // a batch of 1000 codes
	tamper := func(ck *http.Cookie) *http.Cookie {
		v := []byte(ck.Value)
		v[len(v)/2] ^= 1
		return &http.Cookie{Name: ck.Name, Value: string(v)}
	}
	cases := []struct {
		name    string
		payload []byte
		session string // session cookie of the reading request
		kind    string
		mutate  func(*http.Cookie) *http.Cookie
		later   time.Duration
		want    bool
		cleared bool // the read clears the cookie
	}{
		{name: "same session and kind", payload: []byte("sk-mg-secret"), session: "sess-a", kind: RevealKey, want: true, cleared: true},
		{name: "large payload from the store", payload: big, session: "sess-a", kind: RevealKey, want: true, cleared: true},
		{name: "another session", payload: []byte("sk-mg-secret"), session: "sess-b", kind: RevealKey, cleared: true},
		{name: "no session", payload: []byte("sk-mg-secret"), session: "", kind: RevealKey, cleared: true},
		{name: "another kind is left alone", payload: []byte("sk-mg-secret"), session: "sess-a", kind: RevealCodes},
		{name: "tampered", payload: []byte("sk-mg-secret"), session: "sess-a", kind: RevealKey, mutate: tamper, cleared: true},
		{name: "expired", payload: []byte("sk-mg-secret"), session: "sess-a", kind: RevealKey, later: revealTTL, cleared: true},
		{name: "large expired", payload: big, session: "sess-a", kind: RevealKey, later: revealTTL + time.Second, cleared: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			now = time.Date(2026, 12, 28, 10, 0, 0, 0, time.UTC)
			w := httptest.NewRecorder()
			if err := c.reveal(w, revealRequest("sess-a"), RevealKey, tc.payload); err != nil {
				t.Fatal(err)
			}
			ck := revealCookieOf(t, w)
			if !ck.HttpOnly || ck.Path != "/console/" || ck.MaxAge != 120 || ck.SameSite != http.SameSiteStrictMode {
				t.Errorf("cookie attributes: %+v", ck)
			}
			if len(ck.Value) > 3500 {
				t.Errorf("cookie is %d bytes", len(ck.Value))
			}
			if strings.Contains(ck.Value, "secret") || strings.Contains(ck.Value, "MG-ABCD") {
				t.Error("cookie shows the payload in clear")
			}
			if tc.mutate != nil {
				ck = tc.mutate(ck)
			}
			now = now.Add(tc.later)
			w = httptest.NewRecorder()
			got, ok := c.revealed(w, revealRequest(tc.session, ck), tc.kind)
			if ok != tc.want || ok && !bytes.Equal(got, tc.payload) {
				t.Errorf("revealed = %d bytes, %v; want %v", len(got), ok, tc.want)
			}
			cleared := false
			for _, x := range w.Result().Cookies() {
				cleared = cleared || x.Name == RevealCookie && x.MaxAge < 0
			}
			if cleared != tc.cleared {
				t.Errorf("cleared = %v, want %v", cleared, tc.cleared)
			}
			if tc.want {
				// The same cookie replayed (a reload racing the clear) gets
				// the large payload only once.
				_, again := c.revealed(httptest.NewRecorder(), revealRequest(tc.session, ck), tc.kind)
				if again && len(tc.payload) > maxRevealInline {
					t.Error("a stashed payload was revealed twice")
				}
			}
		})
	}
	// Another replica (another Console on the same store and cookie key)
	// shows a large payload the first one stashed, once.
	other := &Console{Store: st, CookieKey: c.CookieKey, Now: c.Now}
	w := httptest.NewRecorder()
	if err := c.reveal(w, revealRequest("sess-a"), RevealCodes, big); err != nil {
		t.Fatal(err)
	}
	ck := revealCookieOf(t, w)
	if got, ok := other.revealed(httptest.NewRecorder(), revealRequest("sess-a", ck), RevealCodes); !ok || !bytes.Equal(got, big) {
		t.Errorf("another replica revealed %d bytes, %v", len(got), ok)
	}
	if _, ok := c.revealed(httptest.NewRecorder(), revealRequest("sess-a", ck), RevealCodes); ok {
		t.Error("the stashed payload was revealed a second time")
	}
	// Another cookie key cannot open what the store holds.
	if err := c.reveal(w, revealRequest("sess-a"), RevealCodes, big); err != nil {
		t.Fatal(err)
	}
	stranger := &Console{Store: st, CookieKey: bytes.Repeat([]byte{9}, 32), Now: c.Now}
	if _, ok := stranger.revealed(httptest.NewRecorder(), revealRequest("sess-a", revealCookieOf(t, w)), RevealCodes); ok {
		t.Error("a console with another cookie key revealed the payload")
	}
	if err := c.reveal(httptest.NewRecorder(), revealRequest(""), RevealKey, []byte("x")); err == nil {
		t.Error("reveal without a session succeeded")
	}
}
