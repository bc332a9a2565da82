package config

import (
	"fmt"
	"net/url"

	"github.com/modelgate/modelgate/internal/catalog"
	"github.com/modelgate/modelgate/internal/money"
)

// Defaults of the payments section, in currency units.
const (
	defaultMinTopUp = Amount(1 * money.Unit)
	defaultMaxTopUp = Amount(10_000 * money.Unit)
)

// Payments configures how console users add balance: top-ups through
// Stripe Checkout and the first-top-up bonus. Without a payments: mapping
// (or without its stripe: item) the console offers redemption codes only.
type Payments struct {
	MinTopUp        Amount      `yaml:"min_topup"` // default 1
	MaxTopUp        Amount      `yaml:"max_topup"` // default 10000
	FirstTopUpBonus TopUpBonus  `yaml:"first_topup_bonus"`
	Stripe          *StripeConf `yaml:"stripe"`
}

// TopUpBonus is min(Percent % of the amount paid, Max), credited once, on
// an account's first paid top-up. Percent 0: no bonus; Max 0: no cap.
type TopUpBonus struct {
	Percent Amount `yaml:"percent"` // a decimal like 10 or 7.5
	Max     Amount `yaml:"max"`
}

// StripeConf is Stripe Checkout's settings.
type StripeConf struct {
	SecretKey     string   `yaml:"secret_key"`
	WebhookSecret string   `yaml:"webhook_secret"`
	Methods       []string `yaml:"methods"`  // card and/or alipay; default [card, alipay]
	APIBase       string   `yaml:"api_base"` // "" for Stripe; a stripe-mock or fake origin in tests
}

func (c *Config) applyPaymentsDefaults() {
	p := c.Payments
	if p == nil {
		return
	}
	if !c.given("payments.min_topup") {
		p.MinTopUp = defaultMinTopUp
	}
	if !c.given("payments.max_topup") {
		p.MaxTopUp = defaultMaxTopUp
	}
	if s := p.Stripe; s != nil && len(s.Methods) == 0 && !c.given("payments.stripe.methods") {
		s.Methods = []string{"card", "alipay"}
	}
}

// paymentsSettings checks the payments section.
func (v *validator) paymentsSettings() {
	c := v.c
	p := c.Payments
	if p == nil {
		return
	}
	at := func(key string) int { return c.line("payments."+key, c.line("payments", 0)) }
	price := func(a Amount) string { return catalog.FormatPrice(money.Micros(a)) }
	if c.Console == nil {
		v.warnf(at(""), "payments: is set but there is no console: section, so nobody can top up")
	}
	if p.MinTopUp <= 0 {
		v.errorf(at("min_topup"), "payments.min_topup must be more than 0, got %s", price(p.MinTopUp))
	}
	if p.MaxTopUp < p.MinTopUp {
		v.errorf(at("max_topup"), "payments.max_topup (%s) must be at least min_topup (%s)", price(p.MaxTopUp), price(p.MinTopUp))
	}
	if b := p.FirstTopUpBonus; b.Percent < 0 || b.Percent > Amount(100*money.Unit) || b.Max < 0 {
		v.errorf(at("first_topup_bonus"), "payments.first_topup_bonus: percent must be from 0 to 100 and max 0 or more")
	}
	s := p.Stripe
	if s == nil {
		return
	}
	sat := func(key string) int { return c.line("payments.stripe."+key, at("stripe")) }
	if s.SecretKey == "" {
		v.errorf(sat("secret_key"), "payments.stripe.secret_key is empty (set it from the environment: secret_key: ${STRIPE_SECRET_KEY})")
	} else if c.given("payments.stripe.secret_key") && !c.fromEnv("payments.stripe.secret_key") {
		v.warnf(sat("secret_key"), "payments.stripe.secret_key is written literally in the file; secrets should come from the environment (secret_key: ${STRIPE_SECRET_KEY})")
	}
	if s.WebhookSecret == "" {
		v.errorf(sat("webhook_secret"), "payments.stripe.webhook_secret is empty (the signing secret of the webhook endpoint, whsec_…)")
	}
	if len(s.Methods) == 0 {
		v.errorf(sat("methods"), "payments.stripe.methods must list card, alipay or both")
	}
	seen := map[string]bool{}
	for i, m := range s.Methods {
		line := c.line(fmt.Sprintf("payments.stripe.methods.%d", i), sat("methods"))
		switch {
		case m != "card" && m != "alipay":
			v.errorf(line, "payments.stripe.methods: unknown method %q (want card or alipay)", m)
		case seen[m]:
			v.errorf(line, "payments.stripe.methods: %q is listed twice", m)
		}
		seen[m] = true
	}
	if b := s.APIBase; b != "" {
		u, err := url.Parse(b)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			v.errorf(sat("api_base"), "payments.stripe.api_base must be an http(s) origin like http://localhost:12111, got %q", b)
		}
	}
}
