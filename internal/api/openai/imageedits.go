package openai

import "net/http"

// imageEdits serves POST /v1/images/edits. PLACEHOLDER: being written; replace this whole file.
func (h *Handler) imageEdits(w http.ResponseWriter, r *http.Request) {
	h.notYet(w, r, "imageEdits")
}
