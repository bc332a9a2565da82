package identity

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/oauth2"
)

// fakeGitHub implements the parts of GitHub's OAuth and REST API a sign-in
// uses. Codes are registered with their PKCE challenge by the test (playing
// the authorize step); each code works once.
type fakeGitHub struct {
	*httptest.Server
	hits atomic.Int64

	mu         sync.Mutex
	challenges map[string]string // code → S256 challenge
	userStatus int
	user       string // /user JSON
	emails     string // /user/emails JSON
}

const (
	ghClientID     = "gh-client"
	ghClientSecret = "gh-secret"
)

func newFakeGitHub(t *testing.T) *fakeGitHub {
	g := &fakeGitHub{challenges: map[string]string{}, userStatus: http.StatusOK}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /login/oauth/access_token", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("Accept") != "application/json" {
			http.Error(w, "want Accept: application/json", http.StatusNotAcceptable)
			return
		}
		fail := func(code string) { // GitHub answers errors with 200
			_ = json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": code})
		}
		if r.PostFormValue("client_id") != ghClientID || r.PostFormValue("client_secret") != ghClientSecret {
			fail("incorrect_client_credentials")
			return
		}
		g.mu.Lock()
		challenge, ok := g.challenges[r.PostFormValue("code")]
		delete(g.challenges, r.PostFormValue("code"))
		g.mu.Unlock()
		if !ok || r.PostFormValue("redirect_uri") != ghRedirect {
			fail("bad_verification_code")
			return
		}
		if s256(r.PostFormValue("code_verifier")) != challenge {
			fail("invalid_grant")
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]string{"access_token": "gho_good", "token_type": "bearer", "scope": "read:user,user:email"})
	})
	api := func(body func() (int, string)) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer gho_good" {
				http.Error(w, `{"message":"Bad credentials"}`, http.StatusUnauthorized)
				return
			}
			status, b := body()
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = w.Write([]byte(b))
		}
	}
	mux.HandleFunc("GET /api/v3/user", api(func() (int, string) {
		g.mu.Lock()
		defer g.mu.Unlock()
		return g.userStatus, g.user
	}))
	mux.HandleFunc("GET /api/v3/user/emails", api(func() (int, string) {
		g.mu.Lock()
		defer g.mu.Unlock()
		return http.StatusOK, g.emails
	}))
	g.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.hits.Add(1)
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(g.Close)
	return g
}

const ghRedirect = "https://gw.example.com/console/callback/github"

func TestGitHubSignIn(t *testing.T) {
	const (
		octo  = `{"id": 42, "login": "octocat", "name": "The Octocat", "email": "public@example.com"}`
		noPub = `{"id": 42, "login": "octocat", "name": null, "email": null}`
		both  = `[{"email":"other@example.com","primary":false,"verified":true},
		          {"email":"public@example.com","primary":false,"verified":true},
		          {"email":"primary@example.com","primary":true,"verified":true}]`
	)
	tests := []struct {
		name       string
		user       string
		userStatus int
		emails     string
		code       func(code string) string  // what the callback brings
		edit       func(f *Flow)             // tampering with the kept flow
		state      func(state string) string // nil: the right state
		want       Claims                    // when wantErr is nil
		wantErr    error
		noNetwork  bool
	}{
		{name: "public verified email", user: octo, emails: both,
			want: Claims{Provider: "github", Subject: "42", Login: "octocat", Name: "The Octocat", Email: "public@example.com", EmailVerified: true}},
		{name: "no public email: primary verified", user: noPub, emails: both,
			want: Claims{Provider: "github", Subject: "42", Login: "octocat", Email: "primary@example.com", EmailVerified: true}},
		{name: "public email unverified: primary verified", user: octo,
			emails: `[{"email":"public@example.com","primary":false,"verified":false},{"email":"primary@example.com","primary":true,"verified":true}]`,
			want:   Claims{Provider: "github", Subject: "42", Login: "octocat", Name: "The Octocat", Email: "primary@example.com", EmailVerified: true}},
		{name: "no verified email", user: noPub, emails: `[{"email":"primary@example.com","primary":true,"verified":false}]`,
			want: Claims{Provider: "github", Subject: "42", Login: "octocat"}},
		{name: "token endpoint refuses the code", user: octo, emails: both,
			code: func(string) string { return "bogus" }, wantErr: ErrExchange},
		{name: "wrong PKCE verifier", user: octo, emails: both,
			edit: func(f *Flow) { f.Verifier = randomString() }, wantErr: ErrExchange},
		{name: "/user 401", user: `{"message":"Bad credentials"}`, userStatus: http.StatusUnauthorized, emails: both, wantErr: ErrProfile},
		{name: "/user without id", user: `{"login":"octocat"}`, emails: both, wantErr: ErrProfile},
		{name: "/user not JSON", user: `<html>`, emails: both, wantErr: ErrProfile},
		{name: "state mismatch", user: octo, emails: both,
			state: func(s string) string { return s[:len(s)-1] }, wantErr: ErrState, noNetwork: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newFakeGitHub(t)
			g.user, g.emails = tt.user, tt.emails
			if tt.userStatus != 0 {
				g.userStatus = tt.userStatus
			}
			p, err := New(Config{Name: "github", Type: TypeGitHub, ClientID: ghClientID, ClientSecret: ghClientSecret,
				AuthURL: g.URL + "/login/oauth/authorize", TokenURL: g.URL + "/login/oauth/access_token", APIURL: g.URL + "/api/v3/"}, g.Client())
			if err != nil {
				t.Fatal(err)
			}
			f, authURL, err := p.Begin(context.Background(), ghRedirect)
			if err != nil {
				t.Fatal(err)
			}
			q := mustQuery(t, authURL)
			for k, want := range map[string]string{
				"client_id": ghClientID, "redirect_uri": ghRedirect, "state": f.State, "scope": "read:user user:email",
				"code_challenge": s256(f.Verifier), "code_challenge_method": "S256", "response_type": "code",
			} {
				if got := q.Get(k); got != want {
					t.Errorf("authorization URL %s = %q, want %q", k, got, want)
				}
			}
			if f.Nonce != "" {
				t.Errorf("GitHub flow has a nonce")
			}
			// Play the authorize step: GitHub would redirect with this code.
			code := "code-" + randomString()
			g.mu.Lock()
			g.challenges[code] = q.Get("code_challenge")
			g.mu.Unlock()

			state := f.State
			if tt.state != nil {
				state = tt.state(state)
			}
			if tt.code != nil {
				code = tt.code(code)
			}
			if tt.edit != nil {
				tt.edit(&f)
			}
			got, err := p.Finish(context.Background(), f, ghRedirect, code, state)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				if got != (Claims{}) {
					t.Errorf("claims on refusal = %+v", got)
				}
			} else if err != nil {
				t.Fatal(err)
			} else if got != tt.want {
				t.Errorf("claims = %+v, want %+v", got, tt.want)
			}
			if n := g.hits.Load(); tt.noNetwork && n != 0 {
				t.Errorf("%d requests to GitHub, want 0", n)
			}
		})
	}
}

func TestGitHubExchangeErrorWrapsCause(t *testing.T) {
	g := newFakeGitHub(t)
	p, err := New(Config{Name: "gh", Type: TypeGitHub, ClientID: ghClientID, ClientSecret: "wrong",
		TokenURL: g.URL + "/login/oauth/access_token", APIURL: g.URL + "/api/v3"}, g.Client())
	if err != nil {
		t.Fatal(err)
	}
	f, _, _ := p.Begin(context.Background(), ghRedirect)
	_, err = p.Finish(context.Background(), f, ghRedirect, "c", f.State)
	if !errors.Is(err, ErrExchange) {
		t.Fatalf("err = %v, want ErrExchange", err)
	}
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.ErrorCode != "incorrect_client_credentials" {
		t.Errorf("cause not wrapped: %v", err)
	}
}
