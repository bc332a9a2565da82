package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/jsonx"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/reqinfo"
	"github.com/modelgate/modelgate/internal/store"
)

// Every gateway key shares the operator's vendor account, so the vendor
// would hand any stored response to any key that knows its id. The gateway
// therefore records which account created each response it passed through
// (Handler.Responses) and serves a stored id, to GET or as
// previous_response_id, only to that account.

// saveOwnerTimeout bounds the one insert that records a response's owner.
const saveOwnerTimeout = 5 * time.Second

// responseNotFound is the one answer for an id the caller may not read,
// whether it exists or not, in the vendor's words.
func responseNotFound(id string) *apierr.Error {
	return &apierr.Error{Status: http.StatusNotFound, Type: apierr.TypeInvalidRequest, Code: apierr.CodeNotFound,
		Message: fmt.Sprintf("Response with id '%s' not found.", id)}
}

// previousNotFound is OpenAI's answer for a previous_response_id it does
// not have, given for ids of other accounts as well.
func previousNotFound(id string) *apierr.Error {
	return &apierr.Error{Status: http.StatusBadRequest, Type: apierr.TypeInvalidRequest, Code: "previous_response_not_found",
		Param: "previous_response_id", Message: fmt.Sprintf("Previous response with id '%s' not found.", id)}
}

// checkOwner returns nil when accountID created the response id through
// the gateway, notFound(id) when it did not (or nobody did, or the handler
// has no store), and a 500 when the store failed.
func (h *Handler) checkOwner(ctx context.Context, accountID, id string, notFound func(string) *apierr.Error) error {
	if h.Responses == nil || accountID == "" {
		return notFound(id)
	}
	owner, err := h.Responses.ResponseOwner(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return notFound(id)
	case err != nil:
		return apierr.Internal(fmt.Errorf("look up the owner of response %q: %w", id, err))
	case owner != accountID:
		return notFound(id)
	}
	return nil
}

// saveOwner records that the caller created the response id. The answer
// goes out even when this fails (the vendor has the response either way);
// the failure is logged, and the caller will get 404 for that id.
func (h *Handler) saveOwner(ctx context.Context, info *reqinfo.Info, id string) {
	if id == "" {
		return
	}
	if h.Responses == nil {
		h.Logger().Error("responses: no store to record the owner of a stored response; GET will not find it",
			slog.String("request_id", info.ID), slog.String("response_id", id))
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), saveOwnerTimeout)
	defer cancel()
	if err := h.Responses.SaveResponseOwner(ctx, id, info.AccountID, h.Clock()); err != nil {
		h.Logger().Error("responses: record the owner of a stored response", slog.String("request_id", info.ID),
			slog.String("response_id", id), slog.String("account_id", info.AccountID), slog.Any("error", err))
	}
}

// previous returns what the gateway recorded of the response a request
// continues (previous_response_id): previousNotFound unless accountID
// created it through the gateway, a 500 when the store failed.
func (h *Handler) previous(ctx context.Context, accountID, id string) (store.StoredResponse, error) {
	if h.Responses == nil || accountID == "" {
		return store.StoredResponse{}, previousNotFound(id)
	}
	var sr store.StoredResponse
	var err error
	if h.Chains != nil {
		sr, err = h.Chains.Lookup(ctx, id)
	} else {
		sr, err = h.Responses.StoredResponse(ctx, id)
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		return sr, previousNotFound(id)
	case err != nil:
		return sr, apierr.Internal(fmt.Errorf("look up the previous response %q: %w", id, err))
	case sr.AccountID != accountID:
		return store.StoredResponse{}, previousNotFound(id)
	}
	return sr, nil
}

// saveResponse records that the caller created the response id, with the
// tokens reserved for it (bound) and, when its answer has ended (u not
// nil), its size, so that a request continuing it reserves its context.
// As saveOwner, a failure is logged and the answer goes out.
func (h *Handler) saveResponse(ctx context.Context, info *reqinfo.Info, id string, bound int64, u *provider.Usage) {
	if id == "" {
		return
	}
	if h.Responses == nil {
		h.saveOwner(ctx, info, id)
		return
	}
	r := store.StoredResponse{ID: id, AccountID: info.AccountID, CreatedAt: h.Clock(), Bound: bound}
	if u != nil {
		r.Sized, r.InputTokens, r.OutputTokens = true, u.PromptTokens, u.CompletionTokens
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), saveOwnerTimeout)
	defer cancel()
	if err := h.Responses.SaveResponse(ctx, r); err != nil {
		h.Logger().Error("responses: record a stored response", slog.String("request_id", info.ID),
			slog.String("response_id", id), slog.String("account_id", info.AccountID), slog.Any("error", err))
	}
}

// sizeResponse records the size of a stored response whose answer ended
// after it was saved (a stream): at once for this process, in the store a
// flush later (see internal/chain).
func (h *Handler) sizeResponse(id string, u provider.Usage) {
	if id == "" {
		return
	}
	if h.Chains != nil {
		h.Chains.Record(id, u.PromptTokens, u.CompletionTokens)
	}
}

// responseID is the "id" of a Response object, "" when it has none.
func responseID(obj []byte) string {
	v, ok := jsonx.Field(obj, "id")
	if !ok {
		return ""
	}
	var id string
	if json.Unmarshal(v, &id) != nil {
		return ""
	}
	return id
}

// eventResponseID is the id of the Response object a stream event carries
// (response.created and the other response.* lifecycle events), "" when
// the event carries none.
func eventResponseID(data []byte) string {
	resp, ok := jsonx.Field(data, "response")
	if !ok || len(resp) == 0 || resp[0] != '{' {
		return ""
	}
	return responseID(resp)
}
