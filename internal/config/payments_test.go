package config

import (
	"reflect"
	"testing"
)

func TestPaymentsSection(t *testing.T) {
	// lines 1-4; payments: is line 5
	base := "providers:\n  - {name: demo, type: demo}\nconsole:\n  oauth: [{name: github, type: github, client_id: id, client_secret: \"${GH_SECRET}\"}]\n"
	stripe := "  stripe:\n    secret_key: ${STRIPE_KEY}\n    webhook_secret: ${STRIPE_WH}\n"
	tests := []struct {
		name, yaml string
		want       []want
		payments   *Payments // checked when no problem is wanted
	}{
		{name: "absent", yaml: base},
		{name: "defaults", yaml: base + "payments:\n" + stripe,
			payments: &Payments{MinTopUp: 1_000_000, MaxTopUp: 10_000_000_000,
				Stripe: &StripeConf{SecretKey: "sk_test_1", WebhookSecret: "whsec_1", Methods: []string{"card", "alipay"}}}},
		{name: "all set", yaml: base + "payments:\n  min_topup: 5\n  max_topup: 500.5\n  first_topup_bonus: {percent: 10, max: 20}\n" + stripe +
			"    methods: [alipay]\n    api_base: http://localhost:12111\n",
			payments: &Payments{MinTopUp: 5_000_000, MaxTopUp: 500_500_000, FirstTopUpBonus: TopUpBonus{Percent: 10_000_000, Max: 20_000_000},
				Stripe: &StripeConf{SecretKey: "sk_test_1", WebhookSecret: "whsec_1", Methods: []string{"alipay"}, APIBase: "http://localhost:12111"}}},
		{name: "codes only", yaml: base + "payments: {first_topup_bonus: {percent: 5}}\n",
			payments: &Payments{MinTopUp: 1_000_000, MaxTopUp: 10_000_000_000, FirstTopUpBonus: TopUpBonus{Percent: 5_000_000}}},
		{name: "zero min", yaml: base + "payments:\n  min_topup: 0\n", want: []want{{6, false, "payments.min_topup must be more than 0"}}},
		{name: "max below min", yaml: base + "payments:\n  min_topup: 10\n  max_topup: 5\n", want: []want{{7, false, "payments.max_topup (5) must be at least min_topup (10)"}}},
		{name: "bonus over 100", yaml: base + "payments:\n  first_topup_bonus: {percent: 150}\n", want: []want{{6, false, "percent must be from 0 to 100"}}},
		{name: "unknown method", yaml: base + "payments:\n" + stripe + "    methods: [card, paypal]\n", want: []want{{9, false, `unknown method "paypal"`}}},
		{name: "duplicate method", yaml: base + "payments:\n" + stripe + "    methods: [card, card]\n", want: []want{{9, false, `"card" is listed twice`}}},
		{name: "no webhook secret", yaml: base + "payments:\n  stripe:\n    secret_key: ${STRIPE_KEY}\n", want: []want{{6, false, "payments.stripe.webhook_secret is empty"}}},
		{name: "literal secret", yaml: base + "payments:\n  stripe:\n    secret_key: sk_test_lit\n    webhook_secret: ${STRIPE_WH}\n",
			want: []want{{7, true, "payments.stripe.secret_key is written literally"}}},
		{name: "bad api base", yaml: base + "payments:\n" + stripe + "    api_base: localhost:12111\n", want: []want{{9, false, "payments.stripe.api_base must be an http(s) origin"}}},
		{name: "no console", yaml: "providers:\n  - {name: demo, type: demo}\npayments: {}\n", want: []want{{3, true, "there is no console: section"}}},
		{name: "unknown key", yaml: base + "payments:\n  min_top_up: 2\n", want: []want{{6, false, `unknown key "min_top_up" in payments (did you mean min_topup?)`}}},
	}
	env := envOf(map[string]string{"GH_SECRET": "s", "STRIPE_KEY": "sk_test_1", "STRIPE_WH": "whsec_1"})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, ps, err := parse([]byte(tt.yaml), env)
			if err != nil {
				t.Fatal(err)
			}
			checkProblems(t, ps, tt.want)
			if tt.want == nil && !reflect.DeepEqual(c.Payments, tt.payments) {
				t.Errorf("payments = %+v, want %+v", c.Payments, tt.payments)
			}
		})
	}
}
