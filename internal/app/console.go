package app

import (
	"crypto/hmac"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/console"
	"github.com/modelgate/modelgate/internal/console/web"
	"github.com/modelgate/modelgate/internal/identity"
	"github.com/modelgate/modelgate/internal/imagestore"
	"github.com/modelgate/modelgate/internal/payment"
	"github.com/modelgate/modelgate/internal/server"
	"github.com/modelgate/modelgate/internal/store"
)

// newConsole builds the web console from cfg.Console (nil when the config
// has no console section: /console/ then stays a 404 like any unknown URL).
//
// The flow cookie's key is derived from the image URL signing key
// (imagestore.LoadKey: images.signing_key when set, else the random key
// file kept next to the images), with a label of its own, so one secret
// serves both without either key being usable for the other, and replicas
// that share images.signing_key (or the images directory) also accept each
// other's sign-in cookies.
func newConsole(cfg *config.Config, st store.Store, op *operator, origin server.Origin, onCredit func(accountID string),
	now func() time.Time, log *slog.Logger) (*console.Console, error) {
	s := cfg.Console
	if s == nil {
		return nil, nil
	}
	root, err := imagestore.LoadKey(imagesDir(cfg), cfg.Images.SigningKey)
	if err != nil {
		return nil, fmt.Errorf("console: %w", err)
	}
	m := hmac.New(sha256.New, root)
	m.Write([]byte("modelgate console flow cookie key"))
	providers := make(map[string]identity.Provider, len(s.OAuth))
	labels := make([]web.Provider, 0, len(s.OAuth))
	for _, o := range s.OAuth {
		p, err := identity.New(o.Identity(), nil)
		if err != nil {
			return nil, fmt.Errorf("console: %w", err)
		}
		providers[o.Name] = p
		labels = append(labels, web.Provider{Name: o.Name, Label: providerLabel(o)})
	}
	pages, err := web.New()
	if err != nil {
		return nil, fmt.Errorf("console: %w", err)
	}
	c := &console.Console{Store: st, Providers: providers, Labels: labels, Groups: s.SignupGroups, Origin: origin,
		SessionTTL: time.Duration(s.SessionTTL), CookieKey: m.Sum(nil), Admins: s.Admins, Pages: pages, Operator: op,
		OnCredit: onCredit, Currency: cfg.Billing.Currency, Now: now, Log: log, PublicModels: s.PublicModels}
	if op != nil {
		c.Prices = &prices{live: op.live}
	}
	if p := cfg.Payments; p != nil {
		c.MinTopUp, c.MaxTopUp = p.MinTopUp.Micros(), p.MaxTopUp.Micros()
		c.Bonus = store.BonusRule{PercentPPM: int64(p.FirstTopUpBonus.Percent) / 100, Max: p.FirstTopUpBonus.Max.Micros()}
		if sc := p.Stripe; sc != nil {
			pay := &payment.Stripe{SecretKey: sc.SecretKey, WebhookSecret: sc.WebhookSecret, APIBase: sc.APIBase, Methods: sc.Methods,
				Currency: cfg.Billing.Currency, Store: st, Now: now, Log: log, Bonus: c.Bonus, OnCredit: onCredit}
			if err := pay.Validate(); err != nil {
				return nil, fmt.Errorf("payments: %w", err)
			}
			c.Payments, c.Methods = pay, sc.Methods
		}
	}
	return c, nil
}

// providerLabel is a sign-in button's provider name.
func providerLabel(o config.OAuthProvider) string {
	switch {
	case o.Type == "github" && o.Name == "github":
		return "GitHub"
	case o.Type == "google" && o.Name == "google":
		return "Google"
	case len(o.Name) <= 4:
		return strings.ToUpper(o.Name)
	}
	return strings.ToUpper(o.Name[:1]) + o.Name[1:]
}

// origin is the base of the links a part of the gateway makes: publicURL
// (its section's public_url, which defaults to the top-level one), else
// the forwarded origin from a trusted proxy, else the listener's address.
func origin(cfg *config.Config, publicURL string) (server.Origin, error) {
	proxies, err := server.ParseProxies(cfg.TrustedProxies)
	if err != nil {
		return server.Origin{}, fmt.Errorf("trusted_proxies: %w", err)
	}
	return server.Origin{PublicURL: publicURL, Listen: cfg.Listen, TrustedProxies: proxies}, nil
}

// mountConsole adds the console's routes to mux when it is configured,
// and sends a browser opening the gateway's root to the console (303). The
// more specific HEAD / probe (app.mux) keeps answering 200.
func mountConsole(mux *http.ServeMux, c *console.Console) {
	if c != nil {
		c.Routes(mux)
		mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/console/", http.StatusSeeOther)
		})
	}
}
