package console

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/csv"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/store"
)

// The balance history: GET /console/api/ledger (JSON, one page), GET
// /console/api/ledger.csv (every entry the filters select, up to
// maxCSVRows) and the /console/ledger page (ledger_page.go). Every entry
// is one change of the account's balance as the store's ledger holds it.

// Bounds of the ledger calls.
const (
	defaultLedgerLimit = 50
	maxLedgerLimit     = 500
	ledgerBatch        = 1000 // entries read per store call while streaming the CSV
)

// The kinds the API speaks. hold and release are accepted as filters, but
// no entry ever has them: a hold reserves part of the balance without
// moving it (it shows in /console/api/me's held amount), so the ledger
// only sees the charge that ends it.
const (
	apiTopUp      = "topup"
	apiBonus      = "bonus"
	apiCode       = "code"
	apiAdjustment = "adjustment"
	apiRefund     = "refund"
	apiUsage      = "usage"
	apiHold       = "hold"
	apiRelease    = "release"
)

// ledgerKinds maps the API's kinds to the store's; hold and release map to
// none.
var ledgerKinds = map[string]store.LedgerKind{
	apiTopUp: store.KindTopUp, apiBonus: store.KindBonus, apiCode: store.KindCode,
	apiAdjustment: store.KindAdjustment, apiRefund: store.KindRefund, apiUsage: store.KindCharge,
	apiHold: "", apiRelease: "",
}

// apiKind is the API's name of a store kind.
func apiKind(k store.LedgerKind) string {
	if k == store.KindCharge {
		return apiUsage
	}
	return string(k)
}

// ledgerFilter is a parsed ledger query: the store's query and whether it
// selects nothing at all (only hold or release were asked for).
type ledgerFilter struct {
	q    store.LedgerQuery
	none bool
}

// ledgerQuery reads limit, cursor, from, to and kind (repeated or comma
// separated) for account a. from and to are dates (to inclusive) or RFC
// 3339 times (to exclusive), as for usage.
func (c *Console) ledgerQuery(q url.Values, accountID string) (ledgerFilter, *apierr.Error) {
	f := ledgerFilter{q: store.LedgerQuery{AccountID: accountID, Limit: defaultLedgerLimit}}
	var e *apierr.Error
	if f.q.Since, e = timeParam(q, "from", false); e != nil {
		return f, e
	}
	if f.q.Until, e = timeParam(q, "to", true); e != nil {
		return f, e
	}
	n, e := limitParam(q, f.q.Limit, maxLedgerLimit)
	if e != nil {
		return f, e
	}
	f.q.Limit = n
	if cur := q.Get("cursor"); cur != "" {
		before, ok := c.decodeLedgerCursor(accountID, cur)
		if !ok {
			return f, apierr.Invalid("cursor", "cursor must be the next_cursor of a previous page.")
		}
		f.q.Before = before
	}
	kinds, e := kindParam(q)
	if e != nil {
		return f, e
	}
	if len(kinds) > 0 {
		for _, k := range kinds {
			if sk := ledgerKinds[k]; sk != "" {
				f.q.Kinds = append(f.q.Kinds, sk)
			}
		}
		f.none = len(f.q.Kinds) == 0 // an empty Kinds would mean every kind
	}
	return f, nil
}

// kindParam reads kind=a,b or kind=a&kind=b: each must be an API kind.
func kindParam(q url.Values) ([]string, *apierr.Error) {
	var out []string
	seen := map[string]bool{}
	for _, v := range q["kind"] {
		for _, k := range strings.Split(v, ",") {
			k = strings.TrimSpace(k)
			if k == "" {
				continue
			}
			if _, ok := ledgerKinds[k]; !ok {
				return nil, apierr.Invalid("kind", "kind must be one of topup, bonus, code, adjustment, refund, usage, hold or release.")
			}
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	return out, nil
}

// ledgerCursorPrefix marks a ledger cursor, so a usage cursor (or any
// other text) is refused rather than read as a position.
const ledgerCursorPrefix = "ledger:"

// ledgerCursorLabel derives the cursors' MAC key from CookieKey, so the
// key is used for nothing else.
const ledgerCursorLabel = "modelgate console ledger cursor MAC key"

// encodeLedgerCursor is the opaque cursor of position before in
// accountID's ledger: the position and a MAC binding it to the account,
// so an edited cursor, or one of another account, is refused.
func (c *Console) encodeLedgerCursor(accountID string, before int64) string {
	pos := base64.RawURLEncoding.EncodeToString([]byte(ledgerCursorPrefix + strconv.FormatInt(before, 10)))
	return pos + "." + c.ledgerCursorMAC(accountID, pos)
}

func (c *Console) ledgerCursorMAC(accountID, pos string) string {
	k := hmac.New(sha256.New, c.CookieKey)
	k.Write([]byte(ledgerCursorLabel))
	m := hmac.New(sha256.New, k.Sum(nil))
	m.Write([]byte(accountID + "\x00" + pos))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:12])
}

// decodeLedgerCursor reads a cursor encodeLedgerCursor made for accountID.
func (c *Console) decodeLedgerCursor(accountID, s string) (int64, bool) {
	pos, mac, ok := strings.Cut(s, ".")
	if !ok || !hmac.Equal([]byte(mac), []byte(c.ledgerCursorMAC(accountID, pos))) {
		return 0, false
	}
	b, err := base64.RawURLEncoding.DecodeString(pos)
	if err != nil {
		return 0, false
	}
	n, ok := strings.CutPrefix(string(b), ledgerCursorPrefix)
	if !ok {
		return 0, false
	}
	before, err := strconv.ParseInt(n, 10, 64)
	if err != nil || before < 1 || strconv.FormatInt(before, 10) != n {
		return 0, false
	}
	return before, true
}

// ledgerPage reads one page of f: the entries and the next page's cursor
// ("" on the last page).
func (c *Console) ledgerPage(r *http.Request, f ledgerFilter) ([]store.LedgerEntry, string, error) {
	entries, next, err := c.ledgerBatch(r, f)
	if err != nil || next == 0 {
		return entries, "", err
	}
	return entries, c.encodeLedgerCursor(f.q.AccountID, next), nil
}

type ledgerJSON struct {
	ID           int64     `json:"id"`
	CreatedAt    time.Time `json:"created_at"`
	Kind         string    `json:"kind"`
	Amount       string    `json:"amount"`
	BalanceAfter string    `json:"balance_after"`
	Reason       string    `json:"reason,omitempty"`
	Ref          string    `json:"ref,omitempty"`
}

func ledgerOf(e store.LedgerEntry) ledgerJSON {
	return ledgerJSON{ID: e.ID, CreatedAt: e.Time.UTC(), Kind: apiKind(e.Kind), Amount: e.Amount.String(),
		BalanceAfter: e.BalanceAfter.String(), Reason: entryReason(e), Ref: e.Ref}
}

// entryReason is the operator's note of an adjustment or a refund; the
// console's adjust form stores "console, by NAME: reason", of which only
// the reason is the user's business. Other kinds' notes are the gateway's
// own bookkeeping and stay out.
func entryReason(e store.LedgerEntry) string {
	if e.Kind != store.KindAdjustment && e.Kind != store.KindRefund {
		return ""
	}
	n := e.Note
	if rest, ok := strings.CutPrefix(n, "console, by "); ok {
		if _, reason, ok := strings.Cut(rest, ": "); ok {
			n = reason
		}
	}
	return n
}

func (c *Console) ledger(w http.ResponseWriter, r *http.Request, _ store.Session, a store.Account) {
	f, e := c.ledgerQuery(r.URL.Query(), a.ID)
	if e != nil {
		fail(w, e)
		return
	}
	entries, next, err := c.ledgerPage(r, f)
	if err != nil {
		fail(w, apierr.Internal(err))
		return
	}
	data := make([]ledgerJSON, 0, len(entries))
	for _, x := range entries {
		data = append(data, ledgerOf(x))
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": data, "next_cursor": cursorOrNil(next)})
}

// ledgerCSVHeader is the first line of ledger.csv.
var ledgerCSVHeader = []string{"id", "created_at", "kind", "amount", "balance_after", "reason", "ref"}

// ledgerCSV streams every entry the filters select (limit and cursor are
// ignored), newest first, up to maxCSVRows, reading the store a batch at a
// time.
func (c *Console) ledgerCSV(w http.ResponseWriter, r *http.Request, _ store.Session, a store.Account) {
	q := r.URL.Query()
	q.Del("limit")
	q.Del("cursor")
	f, e := c.ledgerQuery(q, a.ID)
	if e != nil {
		fail(w, e)
		return
	}
	f.q.Limit = ledgerBatch
	// The first batch is read before the header goes out, so a store error
	// is still an error answer.
	entries, next, err := c.ledgerBatch(r, f)
	if err != nil {
		fail(w, apierr.Internal(err))
		return
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="ledger-%s.csv"`, c.now().Format("20060102-150405")))
	cw := csv.NewWriter(w)
	_ = cw.Write(ledgerCSVHeader)
	rows := 0
	for {
		for _, x := range entries {
			if rows == maxCSVRows {
				cw.Flush()
				return
			}
			j := ledgerOf(x)
			_ = cw.Write([]string{strconv.FormatInt(j.ID, 10), j.CreatedAt.Format(time.RFC3339Nano), j.Kind, j.Amount,
				j.BalanceAfter, csvSafe(j.Reason), csvSafe(j.Ref)})
			rows++
		}
		cw.Flush()
		if next == 0 || cw.Error() != nil {
			return
		}
		f.q.Before = next
		if entries, next, err = c.ledgerBatch(r, f); err != nil {
			// The header is out: the truncated file is all we can give.
			c.log().ErrorContext(r.Context(), "console: ledger csv", "err", err)
			return
		}
	}
}

// ledgerBatch is one store page of f and the Before of the next (0: none).
func (c *Console) ledgerBatch(r *http.Request, f ledgerFilter) ([]store.LedgerEntry, int64, error) {
	if f.none {
		return nil, 0, nil
	}
	entries, next, err := c.Store.LedgerPage(r.Context(), f.q)
	if err != nil {
		return nil, 0, fmt.Errorf("ledger page: %w", err)
	}
	return entries, next, nil
}
