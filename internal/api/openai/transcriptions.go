package openai

import "net/http"

// transcriptions serves POST /v1/audio/transcriptions. PLACEHOLDER: being written; replace this whole file.
func (h *Handler) transcriptions(w http.ResponseWriter, r *http.Request) {
	h.notYet(w, r, "transcriptions")
}
