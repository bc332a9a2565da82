package openai

import "net/http"

// completions serves POST /v1/completions. PLACEHOLDER: being written; replace this whole file.
func (h *Handler) completions(w http.ResponseWriter, r *http.Request) {
	h.notYet(w, r, "completions")
}
