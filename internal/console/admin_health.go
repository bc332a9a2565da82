package console

import (
	"context"
	"net/http"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/console/web"
	"github.com/modelgate/modelgate/internal/store"
)

// attemptFailed reports whether an upstream try is the provider's failure:
// no answer at all (a connection error or timeout), a 5xx, a 429, or a
// refusal of the gateway's own credentials (401, 403). Other 4xx answers
// are the client's request being wrong and say nothing of the provider.
func attemptFailed(a store.Attempt) bool {
	switch {
	case a.Status == 0, a.Status >= 500:
		return true
	case a.Status == http.StatusTooManyRequests, a.Status == http.StatusUnauthorized, a.Status == http.StatusForbidden:
		return true
	}
	return false
}

// providerHealth is the configured providers with the last hour's
// requests and errors counted from the usage records' upstream tries
// (store.AttemptsOf): a request the gateway refused before calling any
// upstream (a bad parameter, no balance, a rate limit, an unknown model)
// has no try and counts for no provider. A request retried on a second
// provider counts once for each.
func (c *Console) providerHealth(ctx context.Context) ([]web.AdminProvider, error) {
	if c.Operator == nil {
		return nil, nil
	}
	ps := c.Operator.Providers()
	recs, err := c.Store.ListUsage(ctx, store.UsageFilter{Since: c.now().Add(-healthWindow), Limit: healthRows})
	if err != nil {
		return nil, err
	}
	idx := make(map[string]int, len(ps))
	for i, p := range ps {
		idx[p.Name] = i
	}
	for i := range recs { // newest first: the first failure seen is the last one
		for _, at := range store.AttemptsOf(&recs[i]) {
			j, ok := idx[at.Provider]
			if !ok {
				continue
			}
			p := &ps[j]
			p.Requests++
			if attemptFailed(at) {
				p.Errors++
				if p.LastError == "" {
					p.LastError = at.Error
					if p.LastError == "" {
						p.LastError = http.StatusText(at.Status)
					}
					p.LastErrorAt = recs[i].Time
				}
			}
		}
	}
	for i := range ps {
		switch p := &ps[i]; {
		case p.Requests == 0:
			p.Health = "idle"
		case p.Errors*10 > p.Requests: // more than one in ten failed
			p.Health = "errors"
		default:
			p.Health = "ok"
		}
	}
	return ps, nil
}

type providerJSON struct {
	Name      string  `json:"name"`
	Type      string  `json:"type"`
	Models    int     `json:"models"`
	Requests  int64   `json:"requests"`
	Errors    int64   `json:"errors"`
	Health    string  `json:"health"` // ok, errors or idle
	Circuit   string  `json:"circuit,omitempty"`
	LastError *string `json:"last_error,omitempty"`
}

// apiProviders serves GET /console/api/admin/providers: the last hour's
// health of every configured provider, counting only upstream answers.
func (c *Console) apiProviders(w http.ResponseWriter, r *http.Request, _ store.Session, _ store.Account) {
	ps, err := c.providerHealth(r.Context())
	if err != nil {
		fail(w, apierr.Internal(err))
		return
	}
	data := make([]providerJSON, 0, len(ps))
	for _, p := range ps {
		j := providerJSON{Name: p.Name, Type: p.Type, Models: p.Models, Requests: p.Requests, Errors: p.Errors,
			Health: p.Health, Circuit: p.Circuit}
		if p.LastError != "" {
			j.LastError = &p.LastError
		}
		data = append(data, j)
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": data})
}
