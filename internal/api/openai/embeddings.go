package openai

import "net/http"

// embeddings serves POST /v1/embeddings. PLACEHOLDER: being written; replace this whole file.
func (h *Handler) embeddings(w http.ResponseWriter, r *http.Request) {
	h.notYet(w, r, "embeddings")
}
