package openai

import "net/http"

// responses serves POST /v1/responses. PLACEHOLDER: being written; replace this whole file.
func (h *Handler) responses(w http.ResponseWriter, r *http.Request) {
	h.notYet(w, r, "responses")
}

// getResponse serves GET /v1/responses/{id}. PLACEHOLDER.
func (h *Handler) getResponse(w http.ResponseWriter, r *http.Request) {
	h.notYet(w, r, "responses.get")
}
