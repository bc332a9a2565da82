// Package stripefake is an in-process fake of Stripe Checkout for tests:
// the part of Stripe's API that stripe-go's Checkout Sessions client calls,
// a hosted "checkout page" a browser (or a test) can pay on, and the signed
// webhook events Stripe sends afterwards.
//
//	fake := stripefake.New(t, "sk_test_123", "whsec_test")
//	// point payments.stripe.api_base at fake.URL, then:
//	fake.SetWebhook(gatewayURL + "/console/webhooks/stripe")
//
// API (form-encoded, "Authorization: Bearer <secret key>" required):
//
//	POST /v1/checkout/sessions              create a session (Idempotency-Key honoured)
//	GET  /v1/checkout/sessions/{id}         retrieve it
//	POST /v1/checkout/sessions/{id}/expire  expire an open session
//
// Hosted page (no key): GET /pay/{id} shows the amount and a "Pay" button;
// POST /pay/{id} marks the session paid, delivers a signed
// checkout.session.completed event to the webhook (synchronously) and
// 303-redirects to the session's success_url. A failed delivery answers
// 502 with the webhook's status and body instead of redirecting.
//
// Send and SendRaw deliver arbitrary events (replays, out-of-order,
// tampered) for the tests of a webhook endpoint. Refund and Dispute send
// what Stripe sends when a paid session's payment is refunded
// (charge.refunded, with the charge's running amount_refunded) or
// disputed (charge.dispute.created); both name the payment by the
// session's payment_intent, which a session gets when it is paid.
//
// It is an ordinary package (not a _test file) so tests of any package can
// use it; it imports testing only for testing.TB.
package stripefake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v82"
	"github.com/stripe/stripe-go/v82/webhook"
)

// Session is a Checkout Session as the fake keeps it.
type Session struct {
	ID                 string
	URL                string // the hosted page: <fake>/pay/<id>
	Mode               string
	AmountTotal        int64 // minor units: unit_amount × quantity of the first line item
	Currency           string
	PaymentMethodTypes []string
	Metadata           map[string]string
	ClientReferenceID  string
	SuccessURL         string
	CancelURL          string
	Status             string // open, complete or expired
	PaymentStatus      string // unpaid or paid
	Created            int64
	ExpiresAt          int64 // expires_at as asked; default 24 hours after Created
	IdempotencyKey     string
	PaymentIntent      string // "pi_test_<n>" once paid; "" before
	AmountRefunded     int64  // the running total of the payment's refunds
}

// object is the session as Stripe's JSON.
func (s *Session) object() map[string]any {
	md := map[string]any{}
	for k, v := range s.Metadata {
		md[k] = v
	}
	pmt := append([]string{}, s.PaymentMethodTypes...)
	o := map[string]any{
		"id": s.ID, "object": "checkout.session", "mode": s.Mode, "url": s.URL,
		"amount_total": s.AmountTotal, "amount_subtotal": s.AmountTotal, "currency": s.Currency,
		"payment_method_types": pmt, "metadata": md, "status": s.Status, "payment_status": s.PaymentStatus,
		"success_url": s.SuccessURL, "cancel_url": s.CancelURL, "created": s.Created, "livemode": false,
		"expires_at": s.ExpiresAt, "payment_intent": nil,
	}
	if s.PaymentIntent != "" {
		o["payment_intent"] = s.PaymentIntent
	}
	if s.ClientReferenceID != "" {
		o["client_reference_id"] = s.ClientReferenceID
	} else {
		o["client_reference_id"] = nil
	}
	if s.Status != "open" {
		o["url"] = nil // Stripe drops the URL once a session is no longer payable
	}
	return o
}

// Server is the fake. Its URL is the api_base for stripe-go and the origin
// of the hosted pages.
type Server struct {
	URL string

	t             testing.TB
	srv           *httptest.Server
	secretKey     string
	webhookSecret string
	client        *http.Client

	mu       sync.Mutex
	sessions []*Session
	byID     map[string]*Session
	byIdem   map[string]*Session
	webhook  string
	nSession int
	nEvent   int
	nPayment int
	calls    int // API requests with the right key
}

// New starts a fake that accepts secretKey as the API key and signs events
// with webhookSecret; it stops when the test ends.
func New(t testing.TB, secretKey, webhookSecret string) *Server {
	s := &Server{t: t, secretKey: secretKey, webhookSecret: webhookSecret,
		client: &http.Client{Timeout: 30 * time.Second},
		byID:   map[string]*Session{}, byIdem: map[string]*Session{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/checkout/sessions", s.api(s.create))
	mux.HandleFunc("GET /v1/checkout/sessions/{id}", s.api(s.retrieve))
	mux.HandleFunc("POST /v1/checkout/sessions/{id}/expire", s.api(s.expire))
	mux.HandleFunc("GET /pay/{id}", s.payPage)
	mux.HandleFunc("POST /pay/{id}", s.pay)
	mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		stripeError(w, http.StatusNotFound, "Unrecognized request URL ("+r.Method+": "+r.URL.Path+").")
	})
	s.srv = httptest.NewServer(mux)
	s.URL = s.srv.URL
	t.Cleanup(s.srv.Close)
	return s
}

// SetWebhook sets where events go (the gateway's /console/webhooks/stripe).
func (s *Server) SetWebhook(u string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.webhook = u
}

// Sessions returns copies of the sessions created so far, oldest first.
func (s *Server) Sessions() []Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Session, 0, len(s.sessions))
	for _, x := range s.sessions {
		c := *x
		c.Metadata = maps.Clone(x.Metadata)
		c.PaymentMethodTypes = append([]string(nil), x.PaymentMethodTypes...)
		out = append(out, c)
	}
	return out
}

// Calls is how many API requests (with the right key) the fake answered:
// a test that a refusal reached no Stripe endpoint checks it stays put.
func (s *Server) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// Session returns a copy of the session id.
func (s *Server) Session(id string) (Session, bool) {
	for _, x := range s.Sessions() {
		if x.ID == id {
			return x, true
		}
	}
	return Session{}, false
}

// Sign returns a valid Stripe-Signature header for payload, signed now.
func (s *Server) Sign(payload []byte) string {
	return SignAt(payload, s.webhookSecret, time.Now())
}

// SignAt returns the Stripe-Signature header for payload signed with
// secret at ts (for wrong-secret and old-timestamp cases).
func SignAt(payload []byte, secret string, ts time.Time) string {
	return webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: payload, Secret: secret, Timestamp: ts}).Header
}

// Event builds a Stripe event of eventType whose data.object is the
// session sessionID as the fake knows it (a bare checkout.session with
// that id when the fake did not create it). For
// checkout.session.completed and checkout.session.async_payment_succeeded
// the object says status "complete" and payment_status "paid". mutate,
// when not nil, may change anything in the event before it is encoded
// (the session is Object(ev)).
func (s *Server) Event(eventType, sessionID string, mutate func(ev map[string]any)) []byte {
	var obj map[string]any
	s.mu.Lock()
	if x, ok := s.byID[sessionID]; ok {
		obj = x.object()
	} else {
		obj = map[string]any{"id": sessionID, "object": "checkout.session", "mode": "payment",
			"status": "open", "payment_status": "unpaid", "metadata": map[string]any{}, "livemode": false, "payment_intent": nil}
	}
	s.mu.Unlock()
	switch eventType {
	case string(stripe.EventTypeCheckoutSessionCompleted), string(stripe.EventTypeCheckoutSessionAsyncPaymentSucceeded):
		obj["status"], obj["payment_status"] = "complete", "paid"
		obj["url"] = nil
		if obj["payment_intent"] == nil {
			obj["payment_intent"] = s.paymentIntent(sessionID)
		}
	case string(stripe.EventTypeCheckoutSessionExpired):
		obj["status"] = "expired"
		obj["url"] = nil
	}
	return s.event(eventType, obj, mutate)
}

// event wraps obj in an event of eventType.
func (s *Server) event(eventType string, obj map[string]any, mutate func(ev map[string]any)) []byte {
	s.mu.Lock()
	s.nEvent++
	n := s.nEvent
	s.mu.Unlock()
	ev := map[string]any{
		"id":               fmt.Sprintf("evt_test_%d_%d", time.Now().UnixNano(), n),
		"object":           "event",
		"api_version":      stripe.APIVersion,
		"created":          time.Now().Unix(),
		"type":             eventType,
		"livemode":         false,
		"pending_webhooks": 1,
		"request":          map[string]any{"id": nil, "idempotency_key": nil},
		"data":             map[string]any{"object": obj},
	}
	if mutate != nil {
		mutate(ev)
	}
	b, err := json.Marshal(ev)
	if err != nil {
		s.t.Errorf("stripefake: encode event: %v", err)
	}
	return b
}

// paymentIntent is the session's PaymentIntent id, made when first asked
// (a session gets one when it is paid).
func (s *Server) paymentIntent(sessionID string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	x, ok := s.byID[sessionID]
	if !ok {
		s.nPayment++
		return fmt.Sprintf("pi_test_unknown_%d", s.nPayment)
	}
	if x.PaymentIntent == "" {
		s.nPayment++
		x.PaymentIntent = fmt.Sprintf("pi_test_%d", s.nPayment)
	}
	return x.PaymentIntent
}

// Refund refunds amount (minor units) more of the paid session's payment
// and delivers charge.refunded: its charge's amount_refunded is the
// running total of the refunds, as Stripe sends it. It returns the
// webhook's status.
func (s *Server) Refund(sessionID string, amount int64) int {
	pi := s.paymentIntent(sessionID)
	s.mu.Lock()
	var total, refunded int64
	currency := "usd"
	if x, ok := s.byID[sessionID]; ok {
		x.AmountRefunded = min(x.AmountRefunded+amount, x.AmountTotal)
		total, refunded, currency = x.AmountTotal, x.AmountRefunded, x.Currency
	}
	s.mu.Unlock()
	charge := map[string]any{"id": "ch_" + strings.TrimPrefix(pi, "pi_"), "object": "charge", "amount": total,
		"amount_captured": total, "amount_refunded": refunded, "captured": true, "currency": currency, "paid": true,
		"payment_intent": pi, "refunded": refunded >= total, "status": "succeeded", "livemode": false,
		"created": time.Now().Unix(), "metadata": map[string]any{}}
	status, _ := s.deliver(s.event(string(stripe.EventTypeChargeRefunded), charge, nil), "")
	return status
}

// Dispute opens a dispute of amount (minor units) on the paid session's
// payment and delivers charge.dispute.created; it returns the webhook's
// status.
func (s *Server) Dispute(sessionID string, amount int64) int {
	pi := s.paymentIntent(sessionID)
	s.mu.Lock()
	currency := "usd"
	if x, ok := s.byID[sessionID]; ok {
		currency = x.Currency
	}
	s.nEvent++
	n := s.nEvent
	s.mu.Unlock()
	dispute := map[string]any{"id": fmt.Sprintf("dp_test_%d", n), "object": "dispute", "amount": amount,
		"charge": "ch_" + strings.TrimPrefix(pi, "pi_"), "currency": currency, "payment_intent": pi, "reason": "fraudulent",
		"status": "needs_response", "is_charge_refundable": false, "livemode": false, "created": time.Now().Unix(),
		"metadata": map[string]any{}}
	status, _ := s.deliver(s.event(string(stripe.EventTypeChargeDisputeCreated), dispute, nil), "")
	return status
}

// Object is the data.object of an event map (for Send's mutate).
func Object(ev map[string]any) map[string]any {
	return ev["data"].(map[string]any)["object"].(map[string]any)
}

// Send delivers a signed event (see Event) to the webhook and returns the
// HTTP status it answered with (0 when it could not be reached). A
// delivered completed or async_payment_succeeded event also marks the
// fake's session paid, an expired one expired.
func (s *Server) Send(eventType, sessionID string, mutate func(ev map[string]any)) int {
	status, _ := s.deliver(s.Event(eventType, sessionID, mutate), "")
	return status
}

// SendRaw delivers payload with the given Stripe-Signature header ("" for
// none) as is, and returns the webhook's status.
func (s *Server) SendRaw(payload []byte, sigHeader string) int {
	status, _ := s.post(payload, sigHeader)
	return status
}

// deliver signs payload (unless sig is given) and posts it; it records the
// effect of the event on the fake's session.
func (s *Server) deliver(payload []byte, sig string) (int, string) {
	if sig == "" {
		sig = s.Sign(payload)
	}
	status, body := s.post(payload, sig)
	var ev struct {
		Type string `json:"type"`
		Data struct {
			Object struct {
				ID string `json:"id"`
			} `json:"object"`
		} `json:"data"`
	}
	if json.Unmarshal(payload, &ev) == nil {
		s.mu.Lock()
		if x, ok := s.byID[ev.Data.Object.ID]; ok {
			switch ev.Type {
			case string(stripe.EventTypeCheckoutSessionCompleted), string(stripe.EventTypeCheckoutSessionAsyncPaymentSucceeded):
				x.Status, x.PaymentStatus = "complete", "paid"
			case string(stripe.EventTypeCheckoutSessionExpired):
				if x.Status == "open" {
					x.Status = "expired"
				}
			}
		}
		s.mu.Unlock()
	}
	return status, body
}

func (s *Server) post(payload []byte, sig string) (int, string) {
	s.mu.Lock()
	target := s.webhook
	s.mu.Unlock()
	if target == "" {
		s.t.Errorf("stripefake: no webhook URL (call SetWebhook)")
		return 0, ""
	}
	req, err := http.NewRequest(http.MethodPost, target, bytes.NewReader(payload))
	if err != nil {
		s.t.Errorf("stripefake: %v", err)
		return 0, ""
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("User-Agent", "Stripe/1.0 (+https://stripe.com/docs/webhooks)")
	if sig != "" {
		req.Header.Set("Stripe-Signature", sig)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		s.t.Logf("stripefake: webhook %s: %v", target, err)
		return 0, ""
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, string(body)
}

// --- the API ---

func stripeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"type": "invalid_request_error", "message": msg}})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Request-Id", fmt.Sprintf("req_fake_%d", time.Now().UnixNano()))
	_ = json.NewEncoder(w).Encode(v)
}

// api checks the secret key and parses the form.
func (s *Server) api(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+s.secretKey {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"type": "invalid_request_error",
				"message": "Invalid API Key provided."}})
			return
		}
		if err := r.ParseForm(); err != nil {
			stripeError(w, http.StatusBadRequest, "Invalid request body.")
			return
		}
		s.mu.Lock()
		s.calls++
		s.mu.Unlock()
		h(w, r)
	}
}

func (s *Server) create(w http.ResponseWriter, r *http.Request) {
	f := r.PostForm
	idem := r.Header.Get("Idempotency-Key")
	s.mu.Lock()
	defer s.mu.Unlock()
	if x, ok := s.byIdem[idem]; ok && idem != "" {
		writeJSON(w, x.object())
		return
	}
	for _, p := range []string{"line_items[0][price_data][unit_amount]", "line_items[0][price_data][currency]", "success_url"} {
		if f.Get(p) == "" {
			stripeError(w, http.StatusBadRequest, "Missing required param: "+p+".")
			return
		}
	}
	unit, err := strconv.ParseInt(f.Get("line_items[0][price_data][unit_amount]"), 10, 64)
	if err != nil || unit < 0 {
		stripeError(w, http.StatusBadRequest, "Invalid integer: line_items[0][price_data][unit_amount].")
		return
	}
	qty := int64(1)
	if q := f.Get("line_items[0][quantity]"); q != "" {
		if qty, err = strconv.ParseInt(q, 10, 64); err != nil || qty < 1 {
			stripeError(w, http.StatusBadRequest, "Invalid integer: line_items[0][quantity].")
			return
		}
	}
	s.nSession++
	id := fmt.Sprintf("cs_test_%d", s.nSession)
	x := &Session{ID: id, URL: s.URL + "/pay/" + id, Mode: f.Get("mode"), AmountTotal: unit * qty,
		Currency: strings.ToLower(f.Get("line_items[0][price_data][currency]")), Metadata: map[string]string{},
		ClientReferenceID: f.Get("client_reference_id"), SuccessURL: f.Get("success_url"), CancelURL: f.Get("cancel_url"),
		Status: "open", PaymentStatus: "unpaid", Created: time.Now().Unix(), IdempotencyKey: idem}
	x.ExpiresAt = x.Created + 24*3600
	if e, err := strconv.ParseInt(f.Get("expires_at"), 10, 64); err == nil {
		if e < x.Created+30*60 || e > x.Created+24*3600 {
			stripeError(w, http.StatusBadRequest, "The `expires_at` timestamp must be between 30 minutes and 24 hours from Checkout Session creation.")
			return
		}
		x.ExpiresAt = e
	}
	if x.Mode == "" {
		x.Mode = "payment"
	}
	for i := 0; ; i++ {
		m := f.Get("payment_method_types[" + strconv.Itoa(i) + "]")
		if m == "" {
			break
		}
		x.PaymentMethodTypes = append(x.PaymentMethodTypes, m)
	}
	if len(x.PaymentMethodTypes) == 0 {
		x.PaymentMethodTypes = []string{"card"}
	}
	for k, v := range f {
		if name, ok := strings.CutPrefix(k, "metadata["); ok && strings.HasSuffix(name, "]") && len(v) > 0 {
			x.Metadata[strings.TrimSuffix(name, "]")] = v[0]
		}
	}
	s.sessions = append(s.sessions, x)
	s.byID[id] = x
	if idem != "" {
		s.byIdem[idem] = x
	}
	writeJSON(w, x.object())
}

func (s *Server) retrieve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	x, ok := s.byID[r.PathValue("id")]
	if !ok {
		stripeError(w, http.StatusNotFound, "No such checkout.session: '"+r.PathValue("id")+"'")
		return
	}
	writeJSON(w, x.object())
}

func (s *Server) expire(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	x, ok := s.byID[r.PathValue("id")]
	if !ok {
		stripeError(w, http.StatusNotFound, "No such checkout.session: '"+r.PathValue("id")+"'")
		return
	}
	if x.Status != "open" {
		stripeError(w, http.StatusBadRequest, "Only Checkout Sessions with a status in [\"open\"] can be expired.")
		return
	}
	x.Status = "expired"
	writeJSON(w, x.object())
}

// --- the hosted page ---

var page = template.Must(template.New("pay").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Pay · Fake Stripe Checkout</title>
<style>body{font:16px system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;color:#1a1f36}
.card{border:1px solid #e3e8ee;border-radius:8px;padding:1.5rem}.amount{font-size:2rem;font-weight:600;margin:.5rem 0 1rem}
button{background:#635bff;color:#fff;border:0;border-radius:6px;padding:.75rem 1.5rem;font-size:1rem;width:100%}
.muted{color:#697386;font-size:.875rem}</style></head>
<body><div class="card">
<p class="muted">Fake Stripe Checkout · test mode</p>
<h1>Balance top-up</h1>
<p class="amount" id="amount">{{.Amount}}</p>
<p class="muted">Session <code id="session">{{.ID}}</code> · {{.Methods}} · status <span id="status">{{.Status}}</span></p>
{{if .Open}}<form method="post" action="/pay/{{.ID}}"><button type="submit" id="pay">Pay</button></form>
{{if .CancelURL}}<p><a href="{{.CancelURL}}" id="cancel">Cancel and go back</a></p>{{end}}{{else}}<p>This session cannot be paid.</p>{{end}}
</div></body></html>`))

func (s *Server) payPage(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	x, ok := s.byID[r.PathValue("id")]
	var c Session
	if ok {
		c = *x
	}
	s.mu.Unlock()
	if !ok {
		http.Error(w, "no such checkout session", http.StatusNotFound)
		return
	}
	amount := fmt.Sprintf("%d.%02d %s", c.AmountTotal/100, c.AmountTotal%100, strings.ToUpper(c.Currency))
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = page.Execute(w, map[string]any{"ID": c.ID, "Amount": amount, "Methods": strings.Join(c.PaymentMethodTypes, ", "),
		"Status": c.Status, "Open": c.Status == "open", "CancelURL": c.CancelURL})
}

// pay is the Pay button: the session becomes paid, the completed event is
// delivered, and the browser goes back to success_url.
func (s *Server) pay(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	s.mu.Lock()
	x, ok := s.byID[id]
	open := ok && x.Status == "open"
	var success string
	if ok {
		success = x.SuccessURL
	}
	s.mu.Unlock()
	switch {
	case !ok:
		http.Error(w, "no such checkout session", http.StatusNotFound)
		return
	case !open:
		http.Error(w, "this checkout session is not open", http.StatusConflict)
		return
	}
	status, body := s.deliver(s.Event(string(stripe.EventTypeCheckoutSessionCompleted), id, nil), "")
	if status < 200 || status > 299 {
		http.Error(w, fmt.Sprintf("webhook delivery failed: %d %s", status, body), http.StatusBadGateway)
		return
	}
	if _, err := url.Parse(success); err != nil || success == "" {
		http.Error(w, "session has no usable success_url", http.StatusBadRequest)
		return
	}
	http.Redirect(w, r, success, http.StatusSeeOther)
}
