package openai

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/imagestore"
	"github.com/modelgate/modelgate/internal/lifecycle"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/reqinfo"
)

// imageItem is one element of ImagesResponse.data.
type imageItem struct {
	B64JSON       string `json:"b64_json,omitempty"`
	URL           string `json:"url,omitempty"`
	RevisedPrompt string `json:"revised_prompt,omitempty"`
}

// imageItems turns the adapter's images into what the client asked for.
// For "url", base64 images are stored and replaced by a signed link the
// gateway serves; for "b64_json" and for no preference, images are passed
// on as the vendor sent them (a vendor that ignored b64_json and sent a
// link is passed on as a link: the gateway does not fetch it).
func (h *Handler) imageItems(ctx context.Context, r *http.Request, format string, imgs []provider.GeneratedImage) ([]imageItem, error) {
	items := make([]imageItem, len(imgs))
	for i, img := range imgs {
		it := imageItem{B64JSON: img.B64JSON, URL: img.URL, RevisedPrompt: img.RevisedPrompt}
		switch {
		case format == "url" && img.URL == "":
			u, err := h.storeImage(ctx, r, img.B64JSON)
			if err != nil {
				return nil, err
			}
			it.B64JSON, it.URL = "", u
		case format == "url":
			it.B64JSON = ""
		case img.B64JSON != "":
			it.URL = ""
		}
		items[i] = it
	}
	return items, nil
}

// storeImage keeps one base64 image and returns its signed URL.
func (h *Handler) storeImage(ctx context.Context, r *http.Request, b64 string) (string, error) {
	if h.Images == nil {
		return "", apierr.Invalid("response_format", "This gateway keeps no images, so it cannot answer with URLs for this model; use response_format 'b64_json'.")
	}
	data, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return "", &apierr.Error{Status: http.StatusBadGateway, Type: apierr.TypeServer, Code: apierr.CodeBadUpstreamResponse,
			Message: "The upstream provider sent an image that is not valid base64.", Err: fmt.Errorf("decode b64_json: %w", err)}
	}
	name, err := h.Images.Save(ctx, data)
	if errors.Is(err, imagestore.ErrNotImage) {
		return "", &apierr.Error{Status: http.StatusBadGateway, Type: apierr.TypeServer, Code: apierr.CodeBadUpstreamResponse,
			Message: "The upstream provider sent something that is not an image.", Err: err}
	}
	if err != nil {
		return "", apierr.Internal(err)
	}
	return h.Images.URL(h.Origin.Base(r), name), nil
}

// imagesJSON is the ImagesResponse body: created, data, then the vendor's
// other members in a stable order.
func imagesJSON(res *provider.ImageResponse, items []imageItem) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"created":`)
	b.WriteString(strconv.FormatInt(res.Created, 10))
	b.WriteString(`,"data":`)
	data, err := json.Marshal(items)
	if err != nil {
		return nil, err
	}
	b.Write(data)
	keys := make([]string, 0, len(res.Extra))
	for k := range res.Extra {
		if k != "created" && k != "data" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		kq, _ := json.Marshal(k)
		b.WriteByte(',')
		b.Write(kq)
		b.WriteByte(':')
		b.Write(res.Extra[k])
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// answerImages settles the charge for the images returned, converts them
// to the asked format and writes the response. A failure to store an
// image releases the charge: the client gets an error and pays nothing.
func (h *Handler) answerImages(w http.ResponseWriter, r *http.Request, info *reqinfo.Info, p *imageParams, res *provider.ImageResponse, b *imageBill, out *lifecycle.Outcome) {
	items, err := h.imageItems(r.Context(), r, p.ResponseFormat, res.Images)
	var body []byte
	if err == nil {
		body, err = imagesJSON(res, items)
	}
	if err != nil {
		b.release()
		h.fail(w, info, err)
		return
	}
	out.Cost = b.settle(p, res)
	out.Usage, out.Estimated = b.usage(p, res)
	lifecycle.WriteJSON(w, info, b.c != nil, out, body)
}

// usage is the token usage for the usage record: the vendor's (GPT image
// models report it); else, for a model billed by token, the bound it was
// charged at, marked estimated; else none (billed per image).
func (b *imageBill) usage(p *imageParams, res *provider.ImageResponse) (provider.Usage, bool) {
	if u, ok := reportedUsage(res); ok {
		return u.record(), false
	}
	if b == nil || !b.tokens || len(res.Images) == 0 {
		return provider.Usage{}, false
	}
	t := b.boundFor(p, min(len(res.Images), p.N))
	return provider.Usage{PromptTokens: t.Text + t.Image, CompletionTokens: t.Output, TotalTokens: t.Text + t.Image + t.Output}, true
}
