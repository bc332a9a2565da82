package console

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/console/web"
	"github.com/modelgate/modelgate/internal/store"
)

// codeMeanings are the catalogue keys of what an error code means, for an
// error whose upstream left no message of its own.
var codeMeanings = map[string]string{
	apierr.CodeInsufficientQuota:   "err.meaning_insufficient_quota",
	apierr.CodeRateLimitExceeded:   "err.meaning_rate_limited",
	apierr.CodeModelNotFound:       "err.meaning_model_not_found",
	apierr.CodeInvalidRequest:      "err.meaning_invalid_request",
	apierr.CodeInvalidAPIKey:       "err.meaning_invalid_api_key",
	apierr.CodeContextLength:       "err.meaning_context_length",
	apierr.CodeModelNotPriced:      "err.meaning_not_priced",
	apierr.CodeClientClosed:        "err.meaning_client_closed",
	apierr.CodeClientTooSlow:       "err.meaning_client_closed",
	apierr.CodeUpstreamError:       "err.meaning_upstream",
	apierr.CodeUpstreamUnavailable: "err.meaning_upstream",
	apierr.CodeUpstreamTimeout:     "err.meaning_upstream_timeout",
	apierr.CodeUpstreamAuth:        "err.meaning_upstream_auth",
	apierr.CodeBadUpstreamResponse: "err.meaning_upstream",
	apierr.CodeServiceUnavailable:  "err.meaning_unavailable",
	apierr.CodeServer:              "err.meaning_server",
}

// errorMessage is what went wrong with u: its last upstream try's error,
// else the meaning of its code in l.
func (c *Console) errorMessage(l web.Lang, u *store.UsageRecord) string {
	if at := store.AttemptsOf(u); len(at) > 0 && at[len(at)-1].Error != "" {
		return at[len(at)-1].Error
	}
	if k, ok := codeMeanings[u.ErrorCode]; ok {
		return c.Pages.Text(l, k)
	}
	return http.StatusText(u.Status)
}

// errorsQuery reads limit, cursor, account (a name) and model of the
// errors listing; the account must exist (404 otherwise).
func (c *Console) errorsQuery(ctx context.Context, q url.Values) (store.UsageFilter, *apierr.Error) {
	f := store.UsageFilter{Status: store.UsageError, Model: q.Get("model"), Limit: defaultUsageLimit}
	var e *apierr.Error
	if f.Limit, e = limitParam(q, f.Limit, maxUsageLimit); e != nil {
		return f, e
	}
	if f.After, e = usageCursorParam(q); e != nil {
		return f, e
	}
	if len(f.Model) > 200 {
		return f, apierr.Invalid("model", "model must be at most 200 characters.")
	}
	if name := q.Get("account"); name != "" {
		a, e := c.accountNamed(ctx, name)
		if e != nil {
			return f, e
		}
		f.AccountID = a.ID
	}
	return f, nil
}

// accountNamed is the account called name; a 404 when there is none.
func (c *Console) accountNamed(ctx context.Context, name string) (store.Account, *apierr.Error) {
	if len(name) > 200 {
		return store.Account{}, notFound("No such account.")
	}
	a, err := c.Store.AccountByName(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return a, notFound("No such account.")
	} else if err != nil {
		return a, apierr.Internal(err)
	}
	return a, nil
}

// adminErrors is one page of failed requests across accounts as rows, and
// the next page's cursor.
func (c *Console) adminErrors(r *http.Request, f store.UsageFilter, l web.Lang) ([]web.AdminError, string, error) {
	recs, next, err := c.usagePage(r, f)
	if err != nil {
		return nil, "", err
	}
	ctx := r.Context()
	accounts, keys := map[string]string{}, map[string]string{}
	out := make([]web.AdminError, 0, len(recs))
	for i := range recs {
		u := &recs[i]
		if _, ok := accounts[u.AccountID]; !ok && u.AccountID != "" {
			a, err := c.Store.AccountByID(ctx, u.AccountID)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return nil, "", err
			}
			accounts[u.AccountID] = a.Name
		}
		if _, ok := keys[u.KeyID]; !ok && u.KeyID != "" {
			k, err := c.Store.KeyByID(ctx, u.KeyID)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return nil, "", err
			}
			keys[u.KeyID] = keyLabel(k)
		}
		out = append(out, web.AdminError{CreatedAt: u.Time, Account: accounts[u.AccountID], KeyName: keys[u.KeyID],
			Model: u.Model, Provider: u.Provider, Status: u.Status, Code: u.ErrorCode, Message: c.errorMessage(l, u),
			RequestID: u.RequestID})
	}
	return out, next, nil
}

type errorJSON struct {
	CreatedAt time.Time `json:"created_at"`
	Account   string    `json:"account"`
	KeyName   string    `json:"key_name"`
	Model     string    `json:"model"`
	Provider  string    `json:"provider"`
	Status    int       `json:"status"`
	Code      string    `json:"code"`
	Message   string    `json:"message"`
	RequestID string    `json:"request_id"`
}

// apiErrors serves GET /console/api/admin/errors: failed requests of every
// account, newest first, paged.
func (c *Console) apiErrors(w http.ResponseWriter, r *http.Request, _ store.Session, _ store.Account) {
	f, e := c.errorsQuery(r.Context(), r.URL.Query())
	if e != nil {
		fail(w, e)
		return
	}
	rows, next, err := c.adminErrors(r, f, web.En)
	if err != nil {
		fail(w, apierr.Internal(err))
		return
	}
	data := make([]errorJSON, 0, len(rows))
	for _, x := range rows {
		data = append(data, errorJSON{CreatedAt: x.CreatedAt.UTC(), Account: x.Account, KeyName: x.KeyName, Model: x.Model,
			Provider: x.Provider, Status: x.Status, Code: x.Code, Message: x.Message, RequestID: x.RequestID})
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": data, "next_cursor": cursorOrNil(next)})
}

// cursorOrNil is next as JSON: null at the end.
func cursorOrNil(next string) *string {
	if next == "" {
		return nil
	}
	return &next
}
