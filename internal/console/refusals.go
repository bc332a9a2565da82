package console

import (
	"net/http"
	"net/url"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/store"
)

// maxRefusalRows bounds the refusal counts a page or call shows: a row
// is a key, endpoint and reason in one minute, newest first.
const maxRefusalRows = 100

type refusalJSON struct {
	Minute   time.Time `json:"minute"` // the start of the UTC minute
	KeyID    string    `json:"key_id"`
	Endpoint string    `json:"endpoint"`
	Status   int       `json:"status"`
	Code     string    `json:"error_code"`
	Count    int64     `json:"count"`
}

// refusalQuery reads from, to and key, as the usage listing does, for
// account a. The model and status filters do not apply: refused requests
// are counted without their model, and all failed.
func refusalQuery(q url.Values, accountID string) (store.RefusalFilter, *apierr.Error) {
	f := store.RefusalFilter{AccountID: accountID, KeyID: q.Get("key"), Limit: maxRefusalRows}
	var err *apierr.Error
	if f.Since, err = timeParam(q, "from", false); err != nil {
		return f, err
	}
	if f.Until, err = timeParam(q, "to", true); err != nil {
		return f, err
	}
	if len(f.KeyID) > 100 {
		return f, apierr.Invalid("key", "key must be at most 100 characters.")
	}
	return f, nil
}

// refusals serves GET /console/api/refusals: the account's requests the
// gateway refused before calling a vendor (no balance, an unknown model, a
// bad parameter), counted per key, endpoint, error code and minute, newest
// first, at most 100 rows.
func (c *Console) refusals(w http.ResponseWriter, r *http.Request, _ store.Session, a store.Account) {
	f, e := refusalQuery(r.URL.Query(), a.ID)
	if e != nil {
		fail(w, e)
		return
	}
	counts, err := c.Store.ListRefusals(r.Context(), f)
	if err != nil {
		fail(w, apierr.Internal(err))
		return
	}
	data := make([]refusalJSON, 0, len(counts))
	for _, rc := range counts {
		data = append(data, refusalJSON{Minute: rc.Minute, KeyID: rc.KeyID, Endpoint: rc.Endpoint, Status: rc.Status,
			Code: rc.Reason, Count: rc.Count})
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": data})
}
