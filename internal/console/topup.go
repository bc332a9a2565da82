package console

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/payment"
	"github.com/modelgate/modelgate/internal/store"
)

// Payments takes top-ups (payment.Stripe implements it).
type Payments interface {
	// Checkout stores a pending top-up and returns it with the URL of the
	// provider's payment page.
	Checkout(ctx context.Context, accountID string, amount money.Micros, method, successURL, cancelURL string) (store.TopUp, string, error)
	// HandleWebhook verifies and applies one webhook delivery; a bad
	// signature is an error wrapping payment.ErrSignature.
	HandleWebhook(ctx context.Context, payload []byte, signatureHeader string) error
}

// maxWebhookBody bounds a webhook delivery (Stripe's events are a few KB).
const maxWebhookBody = 1 << 20

// Error codes of money calls.
const (
	CodeInvalidAmount = "invalid_amount"
	CodeInvalidMethod = "invalid_method"
	CodeInvalidCode   = "invalid_code"
	CodeCodeUsed      = "code_already_used"
	CodeTopUpOff      = "topups_disabled"
	CodeTooManyTopUps = "too_many_topups"
)

type topUpJSON struct {
	ID          string     `json:"id"`
	Amount      string     `json:"amount"`
	Bonus       string     `json:"bonus"`
	Method      string     `json:"method"`
	Status      string     `json:"status"`
	Reversed    string     `json:"reversed"` // taken back after a refund or a dispute, bonus included
	CreatedAt   time.Time  `json:"created_at"`
	PaidAt      *time.Time `json:"paid_at"`
	CheckoutURL string     `json:"checkout_url,omitempty"` // only in the answer to its creation
}

func topUpOf(t store.TopUp) topUpJSON {
	j := topUpJSON{ID: t.ID, Amount: t.Amount.String(), Bonus: t.Bonus.String(), Method: t.Method,
		Status: string(t.Status), Reversed: (t.Reversed + t.BonusReversed).String(), CreatedAt: t.CreatedAt.UTC()}
	if t.Status == store.TopUpPaid {
		j.Amount = t.Credited.String()
		if !t.PaidAt.IsZero() {
			p := t.PaidAt.UTC()
			j.PaidAt = &p
		}
	}
	return j
}

// topUpRequest is POST /console/api/topups. Amount is a JSON string ("10")
// or number (10); either way it is read as an exact decimal.
type topUpRequest struct {
	Amount json.RawMessage `json:"amount"`
	Method string          `json:"method"`
}

// amountText returns the decimal text of a JSON string or number.
func amountText(raw json.RawMessage) (string, bool) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, true
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err == nil {
		return n.String(), true
	}
	return "", false
}

func (c *Console) badAmount() *apierr.Error {
	return &apierr.Error{Status: http.StatusBadRequest, Type: apierr.TypeInvalidRequest, Code: CodeInvalidAmount, Param: "amount",
		Message: "amount must be a number from " + c.MinTopUp.String() + " to " + c.MaxTopUp.String() + " " + c.Currency +
			" in whole cents (or the currency's smallest unit), like \"10\" or \"25.50\"."}
}

// startTopUp validates amount and method and starts a checkout.
func (c *Console) startTopUp(r *http.Request, a store.Account, amount, method string) (store.TopUp, string, *apierr.Error) {
	if c.Payments == nil || len(c.Methods) == 0 {
		return store.TopUp{}, "", &apierr.Error{Status: http.StatusBadRequest, Type: apierr.TypeInvalidRequest, Code: CodeTopUpOff,
			Message: "Top-ups are not enabled on this gateway; ask the operator for a redemption code."}
	}
	v, err := money.Parse(amount)
	if err != nil || v < c.MinTopUp || v > c.MaxTopUp {
		return store.TopUp{}, "", c.badAmount()
	}
	if !slices.Contains(c.Methods, method) {
		return store.TopUp{}, "", &apierr.Error{Status: http.StatusBadRequest, Type: apierr.TypeInvalidRequest, Code: CodeInvalidMethod,
			Param: "method", Message: "method must be one of: " + strings.Join(c.Methods, ", ") + "."}
	}
	base := c.base(r) + "/console/"
	t, url, err := c.Payments.Checkout(r.Context(), a.ID, v, method, base+"?topup=done", base+"?topup=cancelled")
	if errors.Is(err, payment.ErrAmount) {
		return store.TopUp{}, "", c.badAmount()
	}
	if errors.Is(err, payment.ErrTooManyTopUps) {
		c.log().WarnContext(r.Context(), "console: top-up refused", "account", a.Name, "err", err)
		return store.TopUp{}, "", tooManyTopUps()
	}
	if err != nil {
		c.log().ErrorContext(r.Context(), "console: checkout", "account", a.Name, "err", err)
		return store.TopUp{}, "", &apierr.Error{Status: http.StatusBadGateway, Type: apierr.TypeServer, Code: apierr.CodeUpstreamError,
			Message: "The payment provider did not answer; try again in a minute.", Err: err}
	}
	return t, url, nil
}

// tooManyTopUps is the refusal of a top-up past the limits: no checkout
// was started.
func tooManyTopUps() *apierr.Error {
	return &apierr.Error{Status: http.StatusTooManyRequests, Type: apierr.TypeRateLimit, Code: CodeTooManyTopUps,
		Message: fmt.Sprintf("Too many top-ups started: an account may have %d checkouts open and start %d an hour. "+
			"Finish or cancel an open checkout, or try again later.", payment.MaxOpenTopUps, payment.MaxTopUpsPerHour)}
}

func (c *Console) createTopUp(w http.ResponseWriter, r *http.Request, _ store.Session, a store.Account) {
	var req topUpRequest
	if e := decode(w, r, &req); e != nil {
		fail(w, e)
		return
	}
	amount, ok := amountText(req.Amount)
	if !ok {
		fail(w, c.badAmount())
		return
	}
	t, url, e := c.startTopUp(r, a, amount, req.Method)
	if e != nil {
		fail(w, e)
		return
	}
	j := topUpOf(t)
	j.CheckoutURL = url
	writeJSON(w, http.StatusCreated, j)
}

func (c *Console) listTopUps(w http.ResponseWriter, r *http.Request, _ store.Session, a store.Account) {
	ts, err := c.Store.ListTopUps(r.Context(), a.ID)
	if err != nil {
		fail(w, apierr.Internal(err))
		return
	}
	data := make([]topUpJSON, 0, len(ts))
	for _, t := range ts {
		data = append(data, topUpOf(t))
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": data})
}

// webhook receives the payment provider's events. It needs no session:
// the signature is the authentication.
func (c *Console) webhook(w http.ResponseWriter, r *http.Request) {
	if c.Payments == nil {
		fail(w, notFound("Payments are not configured."))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxWebhookBody))
	if err != nil {
		fail(w, apierr.Invalid("", "Could not read the webhook body."))
		return
	}
	err = c.Payments.HandleWebhook(r.Context(), body, r.Header.Get("Stripe-Signature"))
	switch {
	case err == nil:
		writeJSON(w, http.StatusOK, map[string]bool{"received": true})
	case errors.Is(err, payment.ErrSignature):
		c.log().WarnContext(r.Context(), "console: webhook refused", "err", err)
		fail(w, &apierr.Error{Status: http.StatusBadRequest, Type: apierr.TypeInvalidRequest, Code: "invalid_signature",
			Message: "The webhook signature did not verify.", Err: err})
	default:
		c.log().ErrorContext(r.Context(), "console: webhook", "err", err)
		fail(w, apierr.Internal(err))
	}
}

// --- redemption codes ---

// codeAlphabet is Crockford-like base32 without padding; codes are shown
// in groups of four: "MG-ABCD-EFGH-JKMN-PQRS".
var codeEncoding = base32.NewEncoding("ABCDEFGHJKLMNPQRSTUVWXYZ23456789").WithPadding(base32.NoPadding)

// NewCode returns a fresh redemption code (100 random bits) and its hash.
func NewCode() (string, []byte) {
	var b [13]byte
	_, _ = rand.Read(b[:])
	s := codeEncoding.EncodeToString(b[:])[:20]
	code := "MG-" + s[0:4] + "-" + s[4:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20]
	return code, CodeHash(code)
}

// CodeHash is the stored hash of a code as a user may type it: case,
// spaces and dashes do not matter.
func CodeHash(code string) []byte {
	norm := strings.Map(func(r rune) rune {
		switch {
		case r == '-' || r == ' ' || r == '\t':
			return -1
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		}
		return r
	}, strings.TrimSpace(code))
	sum := sha256.Sum256([]byte(norm))
	return sum[:]
}

// maxCode bounds what is hashed from a typed code.
const maxCode = 64

func (c *Console) redeemCode(ctx context.Context, a store.Account, code string) (store.RedeemCode, store.Account, *apierr.Error) {
	if code = strings.TrimSpace(code); code == "" || len(code) > maxCode {
		return store.RedeemCode{}, store.Account{}, &apierr.Error{Status: http.StatusBadRequest, Type: apierr.TypeInvalidRequest,
			Code: CodeInvalidCode, Param: "code", Message: "Enter a redemption code like MG-ABCD-EFGH-JKMN-PQRS-TUVW."}
	}
	rc, err := c.Store.RedeemCode(ctx, CodeHash(code), a.ID, c.now())
	switch {
	case errors.Is(err, store.ErrNotFound):
		return rc, a, &apierr.Error{Status: http.StatusBadRequest, Type: apierr.TypeInvalidRequest, Code: CodeInvalidCode, Param: "code",
			Message: "This code does not exist or has expired."}
	case errors.Is(err, store.ErrConflict):
		return rc, a, &apierr.Error{Status: http.StatusConflict, Type: apierr.TypeInvalidRequest, Code: CodeCodeUsed, Param: "code",
			Message: "This code has already been used."}
	case err != nil:
		return rc, a, apierr.Internal(err)
	}
	c.credited(a.ID)
	after, err := c.Store.AccountByID(ctx, a.ID)
	if err != nil {
		return rc, a, apierr.Internal(err)
	}
	c.log().InfoContext(ctx, "console: code redeemed", "account", a.Name, "code", rc.ID, "amount", rc.Amount.String())
	return rc, after, nil
}

func (c *Console) redeem(w http.ResponseWriter, r *http.Request, _ store.Session, a store.Account) {
	var req struct {
		Code string `json:"code"`
	}
	if e := decode(w, r, &req); e != nil {
		fail(w, e)
		return
	}
	rc, after, e := c.redeemCode(r.Context(), a, req.Code)
	if e != nil {
		fail(w, e)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"credited": rc.Amount.String(), "balance": after.Balance.String()})
}
