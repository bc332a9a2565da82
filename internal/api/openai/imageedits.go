package openai

import (
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/contract"
	"github.com/modelgate/modelgate/internal/lifecycle"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/reqinfo"
	"github.com/modelgate/modelgate/internal/route"
)

// imageEdits serves POST /v1/images/edits: a multipart upload read part
// by part, each file held once and checked (real type, size, dimensions,
// the mask against the image) before anything reaches the vendor, then
// streamed to it from where it is held.
func (h *Handler) imageEdits(w http.ResponseWriter, r *http.Request) {
	info := reqinfo.From(r.Context())
	info.Endpoint = "images.edits"
	var out lifecycle.Outcome
	defer h.Record(info, &out)

	p, err := h.Authenticate(w, r, info, r.Header.Get("Authorization"))
	if err != nil {
		h.fail(w, info, err)
		return
	}
	form, err := h.readEditForm(w, r)
	defer form.close()
	if err != nil {
		h.fail(w, info, err)
		return
	}
	params, perr := form.params()
	if perr != nil {
		h.fail(w, info, perr)
		return
	}
	info.Model = params.Model
	t, d, ch, err := h.pickFor(r, info, p, params.Model, "image edits", func(c provider.Chatter) bool {
		_, ok := c.(provider.ImageEditor)
		return ok
	})
	if err == nil && isModel(d.Model, d.Upstream, "dall-e-3") {
		err = apierr.Invalid("model", "The model '%s' does not support image edits; use dall-e-2 or a GPT image model.", d.Model)
	}
	defer t.Release()
	if err != nil {
		h.fail(w, info, err)
		return
	}
	rules := editRulesFor(d.Model, d.Upstream)
	if n := utf8.RuneCountInString(params.Prompt); n > rules.maxPrompt {
		h.fail(w, info, apierr.Invalid("prompt", "The prompt is %d characters long; the model '%s' takes at most %d.", n, d.Model, rules.maxPrompt))
		return
	}
	if err := form.checkFiles(d.Model, rules); err != nil {
		h.fail(w, info, err)
		return
	}
	params.InputImages = len(form.files)
	bill, err := h.startImages(r.Context(), p, d, &params, "image edits")
	if err != nil {
		h.fail(w, info, err)
		return
	}
	req := &provider.ImageEditRequest{PublicModel: params.Model, UpstreamModel: d.Upstream, Prompt: params.Prompt, N: params.N,
		Size: params.Size, Quality: params.Quality, ResponseFormat: params.ResponseFormat, Fields: form.fields, Files: form.providerFiles()}
	var res *provider.ImageResponse
	u, _, err := h.Each(r, t, bill.c, d, ch, func(u *lifecycle.Upstream, d route.Deployment, ch provider.Chatter) error {
		req.UpstreamModel = d.Upstream
		var err error
		res, err = ch.(provider.ImageEditor).EditImages(u.Ctx(r), req)
		return err
	})
	defer u.End()
	if err != nil {
		bill.unanswered(u, err, &out)
		h.fail(w, info, err)
		return
	}
	h.answerImages(w, r, info, &params, res, bill, &out)
}

// editSingles are the text fields that may appear once.
var editSingles = []string{"model", "prompt", "n", "size", "quality", "response_format", "user", "stream"}

// params reads and validates the text fields the gateway uses.
func (f *editForm) params() (imageParams, *apierr.Error) {
	for _, name := range editSingles {
		if _, n := f.value(name); n > 1 {
			return imageParams{}, apierr.Invalid(name, "The field '%s' was sent %d times; send it once.", name, n)
		}
	}
	counts := map[string]int{}
	for _, fl := range f.fields {
		counts[formParam(fl.Name)]++
	}
	for _, hf := range f.files {
		counts[formParam(hf.field)]++
	}
	if e := contract.Form(contract.ImageEdits, counts); e != nil {
		return imageParams{}, e
	}
	p := imageParams{N: 1}
	p.Model, _ = f.value("model")
	if p.Model == "" {
		return p, apierr.Invalid("model", "You must provide a model parameter.")
	}
	var sent int
	if p.Prompt, sent = f.value("prompt"); sent == 0 {
		return p, missing("prompt")
	}
	if s, sent := f.value("n"); sent > 0 {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 || n > maxImages {
			return p, apierr.Invalid("n", "Invalid 'n': expected an integer between 1 and %d, but got '%s' instead.", maxImages, s)
		}
		p.N = n
	}
	p.Size, _ = f.value("size")
	p.Quality, _ = f.value("quality")
	p.ResponseFormat, _ = f.value("response_format")
	p.User, _ = f.value("user")
	if s, _ := f.value("stream"); s == "true" || s == "1" {
		return p, apierr.Invalid("stream", "Streaming image edits are not supported by this gateway; send the request without 'stream'.")
	}
	return p, p.check()
}

// providerFiles hands the held files to the adapter, named with the
// extension of their real type.
func (f *editForm) providerFiles() []provider.FormFile {
	out := make([]provider.FormFile, len(f.files))
	for i, hf := range f.files {
		out[i] = provider.FormFile{Field: hf.field, Filename: hf.upstreamName(), ContentType: hf.sniffed, Size: hf.size, Open: hf.open}
	}
	return out
}
