package openai

import "net/http"

// imageGenerations serves POST /v1/images/generations. PLACEHOLDER: being written; replace this whole file.
func (h *Handler) imageGenerations(w http.ResponseWriter, r *http.Request) {
	h.notYet(w, r, "imageGenerations")
}
