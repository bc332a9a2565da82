package openai

import (
	"net/http"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/reqinfo"
)

// notYet is a TEMPORARY answer for endpoints being written this session;
// this file is deleted once every endpoint has its handler.
func (h *Handler) notYet(w http.ResponseWriter, r *http.Request, endpoint string) {
	info := reqinfo.From(r.Context())
	info.Endpoint = endpoint
	defer h.record(info, &outcome{})
	h.fail(w, info, &apierr.Error{Status: http.StatusNotImplemented, Type: apierr.TypeInvalidRequest, Code: "not_implemented",
		Message: "This endpoint is not implemented yet."})
}
