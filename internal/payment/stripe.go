// Package payment brings money into accounts: top-ups paid through Stripe
// Checkout (card or Alipay), credited only from Stripe's signed webhook
// events, and taken back when Stripe says the payer got the money back.
//
// The rules, in one place:
//   - the amount credited is the Checkout Session's amount_total from a
//     signed event, never an amount from metadata, a URL or the browser;
//   - a session is matched by its id (the top-up's ExternalID), never by
//     metadata: a session the gateway did not create credits nothing;
//   - each top-up is credited once whatever events arrive, in whatever
//     order (store.Console.PayTopUp guarantees it in one transaction);
//   - a refund (charge.refunded) or a dispute (charge.dispute.created)
//     takes back the same share of the top-up and of its bonus, matched
//     through the session's payment_intent, once whatever events arrive
//     (store.Console.ReverseTopUp);
//   - an account may have at most MaxOpenTopUps checkouts open and start
//     MaxTopUpsPerHour an hour, counted in the store;
//   - no global state: each Stripe has its own stripe-go client.
package payment

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/stripe/stripe-go/v82"
	"github.com/stripe/stripe-go/v82/webhook"

	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

// Provider is the store's name for top-ups paid through Stripe.
const Provider = "stripe"

// The payment methods a Stripe may offer.
const (
	MethodCard   = "card"
	MethodAlipay = "alipay"
)

// ProductName is the line item's name on the Checkout page.
const ProductName = "Balance top-up"

var (
	// ErrMethod means the payment method is unknown or not configured
	// (HTTP 400 for the console).
	ErrMethod = errors.New("payment method not available")
	// ErrAmount means an amount is not positive or not a whole number of
	// the currency's minor units (HTTP 400 for the console).
	ErrAmount = errors.New("amount not payable")
	// ErrTooManyTopUps means the account has MaxOpenTopUps checkouts
	// open or started MaxTopUpsPerHour in the last hour; no session was
	// created (HTTP 429 for the console).
	ErrTooManyTopUps = errors.New("too many top-ups started")
	// ErrSignature means a webhook's Stripe-Signature did not verify (bad
	// or missing header, wrong secret, tampered body, timestamp outside
	// the tolerance) or its body is not an event; nothing was changed
	// (HTTP 400 for the webhook endpoint).
	ErrSignature = errors.New("webhook signature not verified")
)

// The top-up limits per account.
const (
	// MaxOpenTopUps bounds the checkouts an account has open at once.
	MaxOpenTopUps = 5
	// MaxTopUpsPerHour bounds the checkouts an account starts in an hour.
	MaxTopUpsPerHour = 10
	// CheckoutTTL is how long a Checkout Session can be paid (Stripe takes
	// 30 minutes to 24 hours); a pending top-up older than this no longer
	// counts as open, even if the expiry event is late.
	CheckoutTTL = time.Hour
)

// Store is what Stripe needs of store.Console.
type Store interface {
	CreateTopUp(ctx context.Context, t store.TopUp, lim store.TopUpLimits) error
	CheckTopUpLimits(ctx context.Context, accountID string, lim store.TopUpLimits) error
	PayTopUp(ctx context.Context, provider, externalID, paymentRef string, amount money.Micros, rule store.BonusRule, at time.Time) (store.TopUp, bool, error)
	ReverseTopUp(ctx context.Context, r store.TopUpReversal, at time.Time) (store.TopUp, money.Micros, error)
	EndTopUp(ctx context.Context, provider, externalID string, status store.TopUpStatus, at time.Time) error
	RecordEvent(ctx context.Context, provider, eventID string, at time.Time) (bool, error)
}

var _ Store = store.Console(nil)

// Stripe takes top-ups through Stripe Checkout. Set its fields, then use
// it from any number of goroutines; do not change them afterwards.
type Stripe struct {
	SecretKey     string // "sk_live_…" or "sk_test_…" (a restricted key with Checkout Sessions write is enough)
	WebhookSecret string // the endpoint's signing secret, "whsec_…"
	APIBase       string // "" for Stripe's API; tests point it at stripe-mock or a fake
	Methods       []string
	Currency      string // ISO 4217, e.g. "USD"; the gateway's money.Micros are in it
	Store         Store
	Now           func() time.Time // nil: time.Now
	Log           *slog.Logger     // nil: slog.Default()
	Bonus         store.BonusRule
	// OnCredit, when set, is told of every balance change a webhook makes
	// (a top-up credited, or taken back): the gateway re-reads the
	// account's balance at once instead of within a second.
	OnCredit func(accountID string)
	// HTTPClient is the client for Stripe's API; nil: stripe-go's default
	// (80 s timeout).
	HTTPClient *http.Client

	once   sync.Once
	client *stripe.Client
}

// Validate reports a configuration Checkout or HandleWebhook cannot work
// with; call it at startup.
func (s *Stripe) Validate() error {
	var errs []error
	if s.SecretKey == "" {
		errs = append(errs, errors.New("stripe: secret key is empty"))
	}
	if s.WebhookSecret == "" {
		errs = append(errs, errors.New("stripe: webhook secret is empty"))
	}
	if len(s.Currency) != 3 || strings.Trim(strings.ToLower(s.Currency), "abcdefghijklmnopqrstuvwxyz") != "" {
		errs = append(errs, fmt.Errorf("stripe: currency %q is not a 3-letter ISO 4217 code", s.Currency))
	}
	if len(s.Methods) == 0 {
		errs = append(errs, errors.New("stripe: no payment methods"))
	}
	for _, m := range s.Methods {
		if m != MethodCard && m != MethodAlipay {
			errs = append(errs, fmt.Errorf("stripe: payment method %q: want %q or %q", m, MethodCard, MethodAlipay))
		}
	}
	if s.Store == nil {
		errs = append(errs, errors.New("stripe: no store"))
	}
	if s.Bonus.PercentPPM < 0 || s.Bonus.Max < 0 {
		errs = append(errs, errors.New("stripe: bonus rule must not be negative"))
	}
	return errors.Join(errs...)
}

func (s *Stripe) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Stripe) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}

func (s *Stripe) currency() string { return strings.ToLower(s.Currency) }

// api returns the instance's own stripe-go client, built once.
func (s *Stripe) api() *stripe.Client {
	s.once.Do(func() {
		cfg := &stripe.BackendConfig{
			EnableTelemetry: stripe.Bool(false),
			HTTPClient:      s.HTTPClient,
			LeveledLogger:   slogLeveled{s.log()},
		}
		if s.APIBase != "" {
			cfg.URL = stripe.String(strings.TrimRight(s.APIBase, "/"))
		}
		s.client = stripe.NewClient(s.SecretKey, stripe.WithBackends(stripe.NewBackendsWithConfig(cfg)))
	})
	return s.client
}

// Checkout starts a top-up of amount for accountID paid by method: it
// creates a Stripe Checkout Session for exactly that amount and stores a
// pending top-up matched to it. The browser goes to the returned URL;
// Stripe sends it back to successURL or cancelURL, which prove nothing:
// the balance moves only when HandleWebhook gets the signed event.
//
// ErrMethod: method not configured; ErrAmount: amount not payable in the
// currency; ErrTooManyTopUps: the account is at a top-up limit (checked
// before Stripe is called, and again, atomically, when the top-up is
// stored: a session that loses that race is expired). Other errors are
// Stripe's or the store's (HTTP 502/500).
func (s *Stripe) Checkout(ctx context.Context, accountID string, amount money.Micros, method, successURL, cancelURL string) (store.TopUp, string, error) {
	if !slices.Contains(s.Methods, method) || (method != MethodCard && method != MethodAlipay) {
		return store.TopUp{}, "", fmt.Errorf("%w: %q (have %s)", ErrMethod, method, strings.Join(s.Methods, ", "))
	}
	minor, err := ToMinor(amount, s.Currency)
	if err != nil {
		return store.TopUp{}, "", err
	}
	if accountID == "" {
		return store.TopUp{}, "", errors.New("stripe checkout: no account")
	}
	now := s.now()
	lim := limits(now)
	if err := s.Store.CheckTopUpLimits(ctx, accountID, lim); err != nil {
		return store.TopUp{}, "", tooMany(err)
	}
	id, err := newID()
	if err != nil {
		return store.TopUp{}, "", err
	}
	params := &stripe.CheckoutSessionCreateParams{
		Mode: stripe.String(string(stripe.CheckoutSessionModePayment)),
		LineItems: []*stripe.CheckoutSessionCreateLineItemParams{{
			PriceData: &stripe.CheckoutSessionCreateLineItemPriceDataParams{
				Currency:   stripe.String(s.currency()),
				UnitAmount: stripe.Int64(minor),
				ProductData: &stripe.CheckoutSessionCreateLineItemPriceDataProductDataParams{
					Name: stripe.String(ProductName),
				},
			},
			Quantity: stripe.Int64(1),
		}},
		PaymentMethodTypes: []*string{stripe.String(method)},
		ClientReferenceID:  stripe.String(accountID),
		SuccessURL:         stripe.String(successURL),
		CancelURL:          stripe.String(cancelURL),
		ExpiresAt:          stripe.Int64(now.Add(CheckoutTTL).Unix()),
	}
	params.AddMetadata("account_id", accountID)
	params.AddMetadata("topup_id", id)
	// stripe-go retries network failures; the key makes a retried create
	// return the same session instead of a second one.
	params.SetIdempotencyKey("modelgate-" + id)
	sess, err := s.api().V1CheckoutSessions.Create(ctx, params)
	if err != nil {
		return store.TopUp{}, "", fmt.Errorf("stripe checkout: create session: %w", err)
	}
	if sess.ID == "" || sess.URL == "" {
		return store.TopUp{}, "", errors.New("stripe checkout: session without id or url")
	}
	t := store.TopUp{
		ID:         id,
		AccountID:  accountID,
		Amount:     amount,
		Method:     method,
		Status:     store.TopUpPending,
		Provider:   Provider,
		ExternalID: sess.ID,
		CreatedAt:  now,
	}
	if err := s.Store.CreateTopUp(ctx, t, lim); err != nil {
		// A session nobody can match would take money and credit nothing:
		// close it so it cannot be paid.
		ectx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if _, xerr := s.api().V1CheckoutSessions.Expire(ectx, sess.ID, nil); xerr != nil {
			s.log().Error("stripe: top-up not stored and its session not expired",
				"topup", id, "session", sess.ID, "account", accountID, "err", xerr)
		}
		if errors.Is(err, store.ErrLimit) {
			return store.TopUp{}, "", tooMany(err)
		}
		return store.TopUp{}, "", fmt.Errorf("stripe checkout: store top-up: %w", err)
	}
	s.log().Info("stripe: checkout started", "topup", id, "session", sess.ID, "account", accountID,
		"amount", amount.String(), "method", method)
	return t, sess.URL, nil
}

// limits are the top-up limits at now.
func limits(now time.Time) store.TopUpLimits {
	return store.TopUpLimits{MaxOpen: MaxOpenTopUps, OpenSince: now.Add(-CheckoutTTL),
		MaxRecent: MaxTopUpsPerHour, RecentSince: now.Add(-time.Hour)}
}

// tooMany turns the store's ErrLimit into ErrTooManyTopUps.
func tooMany(err error) error {
	if errors.Is(err, store.ErrLimit) {
		return fmt.Errorf("%w: %w", ErrTooManyTopUps, err)
	}
	return fmt.Errorf("stripe checkout: count top-ups: %w", err)
}

// HandleWebhook verifies and applies one Stripe webhook delivery: payload
// is the raw request body, signatureHeader the Stripe-Signature header.
//
// It returns an error wrapping ErrSignature (answer 400; nothing changed)
// when the signature does not verify, another error when the store failed
// (answer 500 so Stripe retries), and nil otherwise, including for events
// it ignores or cannot honour (unknown session, paid after expiry: logged),
// which retrying would not fix.
func (s *Stripe) HandleWebhook(ctx context.Context, payload []byte, signatureHeader string) error {
	ev, err := webhook.ConstructEventWithOptions(payload, signatureHeader, s.WebhookSecret, webhook.ConstructEventOptions{
		// Only long-stable fields are read (id, type; the session's id,
		// payment_status, amount_total, currency and payment_intent; the
		// charge's and dispute's amounts, currency and payment_intent), so
		// an endpoint on another API version than stripe-go's still works.
		IgnoreAPIVersionMismatch: true,
	})
	if err != nil {
		return fmt.Errorf("%w: %w", ErrSignature, err)
	}
	if ev.ID == "" || ev.Data == nil {
		return fmt.Errorf("%w: event without id or data", ErrSignature)
	}
	log := s.log().With("event", ev.ID, "type", string(ev.Type))

	if err := s.apply(ctx, ev, log); err != nil {
		return err
	}
	// The event is recorded after it was applied, not before: if applying
	// fails, Stripe's retry of the same event must not be skipped. Applying
	// twice is harmless (PayTopUp and EndTopUp are idempotent), so a
	// replay changes nothing either way.
	fresh, err := s.Store.RecordEvent(ctx, Provider, ev.ID, s.now())
	if err != nil {
		return fmt.Errorf("stripe webhook %s: record event: %w", ev.ID, err)
	}
	if !fresh {
		log.Debug("stripe: event replayed; nothing changed")
	}
	return nil
}

func (s *Stripe) apply(ctx context.Context, ev stripe.Event, log *slog.Logger) error {
	switch ev.Type {
	case stripe.EventTypeCheckoutSessionCompleted,
		stripe.EventTypeCheckoutSessionAsyncPaymentSucceeded,
		stripe.EventTypeCheckoutSessionAsyncPaymentFailed,
		stripe.EventTypeCheckoutSessionExpired:
	case stripe.EventTypeChargeRefunded:
		return s.refunded(ctx, ev, log)
	case stripe.EventTypeChargeDisputeCreated:
		return s.disputed(ctx, ev, log)
	default:
		log.Debug("stripe: event ignored")
		return nil
	}
	var sess stripe.CheckoutSession
	if err := json.Unmarshal(ev.Data.Raw, &sess); err != nil || sess.ID == "" {
		log.Error("stripe: event without a checkout session; ignored", "err", err)
		return nil
	}
	log = log.With("session", sess.ID)

	switch ev.Type {
	case stripe.EventTypeCheckoutSessionCompleted:
		if sess.PaymentStatus != stripe.CheckoutSessionPaymentStatusPaid {
			// Alipay and other delayed methods: async_payment_succeeded
			// or _failed follows.
			log.Info("stripe: checkout completed, payment pending", "payment_status", string(sess.PaymentStatus))
			return nil
		}
		return s.pay(ctx, sess, log)
	case stripe.EventTypeCheckoutSessionAsyncPaymentSucceeded:
		return s.pay(ctx, sess, log)
	case stripe.EventTypeCheckoutSessionAsyncPaymentFailed:
		return s.end(ctx, sess, store.TopUpFailed, log)
	default: // expired
		return s.end(ctx, sess, store.TopUpExpired, log)
	}
}

func (s *Stripe) pay(ctx context.Context, sess stripe.CheckoutSession, log *slog.Logger) error {
	if !strings.EqualFold(string(sess.Currency), s.Currency) {
		log.Error("stripe: paid session in another currency; not credited, settle it by hand",
			"currency", string(sess.Currency), "want", s.Currency, "amount_total", sess.AmountTotal)
		return nil
	}
	amount, err := FromMinor(sess.AmountTotal, s.Currency)
	if err != nil || amount <= 0 {
		log.Error("stripe: paid session with an unusable amount; not credited", "amount_total", sess.AmountTotal, "err", err)
		return nil
	}
	var payment string
	if sess.PaymentIntent != nil {
		payment = sess.PaymentIntent.ID
	}
	t, credited, err := s.Store.PayTopUp(ctx, Provider, sess.ID, payment, amount, s.Bonus, s.now())
	switch {
	case errors.Is(err, store.ErrNotFound):
		log.Warn("stripe: payment for a session this gateway did not create; nothing credited",
			"amount_total", sess.AmountTotal, "client_reference_id", sess.ClientReferenceID)
		return nil
	case errors.Is(err, store.ErrConflict):
		log.Error("stripe: payment for a top-up that already failed or expired; nothing credited, refund or credit by hand",
			"amount", amount.String(), "client_reference_id", sess.ClientReferenceID)
		return nil
	case err != nil:
		return fmt.Errorf("stripe webhook: pay session %s: %w", sess.ID, err)
	case !credited:
		log.Debug("stripe: top-up was paid before; nothing credited", "topup", t.ID)
		s.changed(t.AccountID) // a payment learnt late may have taken back a refund
		return nil
	}
	log.Info("stripe: top-up credited", "topup", t.ID, "account", t.AccountID, "payment_intent", t.PaymentRef,
		"credited", t.Credited.String(), "bonus", t.Bonus.String(), "taken_back", (t.Reversed + t.BonusReversed).String())
	s.changed(t.AccountID)
	return nil
}

// changed tells OnCredit that a webhook moved the account's balance.
func (s *Stripe) changed(accountID string) {
	if s.OnCredit != nil {
		s.OnCredit(accountID)
	}
}

func (s *Stripe) end(ctx context.Context, sess stripe.CheckoutSession, status store.TopUpStatus, log *slog.Logger) error {
	err := s.Store.EndTopUp(ctx, Provider, sess.ID, status, s.now())
	switch {
	case errors.Is(err, store.ErrNotFound):
		log.Warn("stripe: event for a session this gateway did not create; ignored")
		return nil
	case err != nil:
		return fmt.Errorf("stripe webhook: end session %s as %s: %w", sess.ID, status, err)
	}
	log.Info("stripe: top-up ended", "status", string(status))
	return nil
}

func newID() (string, error) {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("top-up id: %w", err)
	}
	return "top_" + hex.EncodeToString(b[:]), nil
}

// slogLeveled routes stripe-go's own logging to slog: its per-request
// chatter at Debug, its warnings and errors at Warn (the caller gets and
// logs the error itself).
type slogLeveled struct{ l *slog.Logger }

func (s slogLeveled) Debugf(format string, v ...any) {
	s.l.Debug("stripe-go: " + fmt.Sprintf(format, v...))
}
func (s slogLeveled) Infof(format string, v ...any) {
	s.l.Debug("stripe-go: " + fmt.Sprintf(format, v...))
}
func (s slogLeveled) Warnf(format string, v ...any) {
	s.l.Warn("stripe-go: " + fmt.Sprintf(format, v...))
}
func (s slogLeveled) Errorf(format string, v ...any) {
	s.l.Warn("stripe-go: " + fmt.Sprintf(format, v...))
}
