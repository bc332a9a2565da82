// Package openai serves the gateway's OpenAI-compatible /v1 API: it
// decodes and validates each endpoint's requests and encodes its answers
// in OpenAI's wire format, and runs them through the shared request
// lifecycle (internal/lifecycle: authenticate, limit, admit, route with
// failover, relay, settle, and a usage record for every request whose key
// it authenticated; the others are only counted, see lifecycle.Core.Refused).
package openai

import (
	"fmt"
	"net/http"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/background"
	"github.com/modelgate/modelgate/internal/chain"
	"github.com/modelgate/modelgate/internal/imagestore"
	"github.com/modelgate/modelgate/internal/lifecycle"
	"github.com/modelgate/modelgate/internal/reqinfo"
	"github.com/modelgate/modelgate/internal/server"
	"github.com/modelgate/modelgate/internal/store"
)

// Handler serves /v1: the OpenAI wire format (decode, validate, encode)
// of each endpoint, over the shared request lifecycle (lifecycle.Core,
// which every front door calls). Core is required; the fields below are
// the OpenAI door's own.
type Handler struct {
	*lifecycle.Core

	// Images keeps the images answered as URLs when the vendor sent base64
	// (nil: such requests fail; b64_json still works).
	Images *imagestore.Store

	// Origin is the base of the image and video links the handler makes;
	// never the request's Host (the zero Origin: the listener's address).
	Origin server.Origin

	// Responses records which account created each vendor-stored response
	// (nil: nothing is recorded and no stored response can be read).
	Responses store.Responses

	// Chains records the sizes of stored responses as their answers end,
	// for requests that continue them (nil: only sizes known when a
	// response is saved are recorded; the others reserve their bound).
	Chains *chain.Sizes

	// Videos serves the video endpoints (nil: they answer 404).
	Videos *Videos

	// Background keeps background Responses requests as tasks until they
	// are settled (nil: background: true is refused).
	Background *background.Service
}

// Routes registers the /v1 endpoints and a JSON 404 for everything else.
func (h *Handler) Routes(mux *http.ServeMux) {
	mux.Handle("/v1/chat/completions", h.only(http.MethodPost, h.chat))
	mux.Handle("/v1/completions", h.only(http.MethodPost, h.completions))
	mux.Handle("/v1/embeddings", h.only(http.MethodPost, h.embeddings))
	mux.Handle("/v1/images/generations", h.only(http.MethodPost, h.imageGenerations))
	mux.Handle("/v1/images/edits", h.only(http.MethodPost, h.imageEdits))
	mux.Handle("/v1/audio/transcriptions", h.only(http.MethodPost, h.transcriptions))
	mux.Handle("/v1/responses", h.only(http.MethodPost, h.responses))
	mux.Handle("/v1/responses/{id}", h.only(http.MethodGet, h.getResponse))
	mux.Handle("/v1/responses/{id}/cancel", h.only(http.MethodPost, h.cancelResponse))
	mux.Handle("/v1/models", h.only(http.MethodGet, h.ListModels))
	mux.Handle("/v1/models/{model...}", h.only(http.MethodGet, h.GetModel))
	h.videoRoutes(mux)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		info := reqinfo.From(r.Context())
		info.Endpoint = "unknown"
		defer h.Record(info, &lifecycle.Outcome{})
		h.fail(w, info, &apierr.Error{Status: http.StatusNotFound, Type: apierr.TypeInvalidRequest, Code: apierr.CodeNotFound,
			Message: fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path)})
	})
}

func (h *Handler) only(method string, f http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != method {
			info := reqinfo.From(r.Context())
			info.Endpoint = "unknown"
			defer h.Record(info, &lifecycle.Outcome{})
			w.Header().Set("Allow", method)
			h.fail(w, info, &apierr.Error{Status: http.StatusMethodNotAllowed, Type: apierr.TypeInvalidRequest,
				Code: apierr.CodeMethodNotAllowed, Message: fmt.Sprintf("Method %s is not allowed on %s; use %s.", r.Method, r.URL.Path, method)})
			return
		}
		f(w, r)
	})
}

// fail answers with err and notes it for the log and the usage record.
func (h *Handler) fail(w http.ResponseWriter, info *reqinfo.Info, err error) {
	apierr.Write(w, lifecycle.Note(info, err))
}
