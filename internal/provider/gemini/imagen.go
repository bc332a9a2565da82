package gemini

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/provider"
)

var _ provider.ImageGenerator = (*Client)(nil)

// maxImagenSamples is Imagen's limit on sampleCount.
const maxImagenSamples = 4

// imagenRequest is the body of POST models/{model}:predict for Imagen, as
// google.golang.org/genai builds it (generateImagesParametersTo*):
// instances[0].prompt and parameters.
type imagenRequest struct {
	Instances  []imagenInstance `json:"instances"`
	Parameters imagenParameters `json:"parameters"`
}

type imagenInstance struct {
	Prompt string `json:"prompt"`
}

type imagenParameters struct {
	SampleCount      int    `json:"sampleCount"`
	AspectRatio      string `json:"aspectRatio,omitempty"`
	IncludeRaiReason bool   `json:"includeRaiReason"`
}

// imagenResponse is the answer: one prediction per image (generatedImage
// FromVertex reads bytesBase64Encoded, mimeType, raiFilteredReason and the
// enhanced prompt).
type imagenResponse struct {
	Predictions []struct {
		BytesBase64Encoded string `json:"bytesBase64Encoded"`
		MIMEType           string `json:"mimeType"`
		RaiFilteredReason  string `json:"raiFilteredReason"`
		Prompt             string `json:"prompt"`
	} `json:"predictions"`
	Error *wireError `json:"error"`
}

// imagenRatios are Imagen's aspect ratios with the pixel size each makes.
var imagenRatios = []struct{ ratio, size string }{
	{"1:1", "1024x1024"}, {"3:4", "896x1280"}, {"4:3", "1280x896"}, {"9:16", "768x1408"}, {"16:9", "1408x768"},
}

// imagenAspect maps an OpenAI size to an Imagen aspect ratio: Imagen's own
// pixel sizes, or any WxH with exactly one of its ratios. "" and "auto"
// leave Imagen's default (1:1).
func imagenAspect(size string) (string, bool) {
	if size == "" || size == "auto" {
		return "", true
	}
	ws, hs, _ := strings.Cut(size, "x")
	w, err1 := strconv.Atoi(ws)
	h, err2 := strconv.Atoi(hs)
	if err1 != nil || err2 != nil || w <= 0 || h <= 0 {
		return "", false
	}
	for _, r := range imagenRatios {
		if r.size == size {
			return r.ratio, true
		}
		a, b, _ := strings.Cut(r.ratio, ":")
		x, _ := strconv.Atoi(a)
		y, _ := strconv.Atoi(b)
		if w*y == h*x {
			return r.ratio, true
		}
	}
	return "", false
}

// GenerateImages translates an image generation into Imagen's predict call:
// prompt, n as sampleCount (at most 4), size as aspectRatio. quality,
// style and user have no Imagen counterpart and are not sent. Images the
// vendor's safety filter removed are left out; when all are, the answer
// is a 400 content_policy_violation with the vendor's reason.
func (c *Client) GenerateImages(ctx context.Context, req *provider.ImageRequest) (*provider.ImageResponse, error) {
	if !strings.HasPrefix(req.UpstreamModel, "imagen-") {
		return nil, apierr.Invalid("model", "The model '%s' does not support image generation; Gemini image generation uses the Imagen models.", req.PublicModel)
	}
	n := max(req.N, 1)
	if n > maxImagenSamples {
		return nil, apierr.Invalid("n", "Invalid 'n': the model '%s' generates at most %d images per request.", req.PublicModel, maxImagenSamples)
	}
	aspect, ok := imagenAspect(req.Size)
	if !ok {
		sizes := make([]string, len(imagenRatios))
		for i, r := range imagenRatios {
			sizes[i] = r.size
		}
		return nil, apierr.Invalid("size", "Invalid value for 'size': '%s'. The model '%s' makes the aspect ratios 1:1, 3:4, 4:3, 9:16 and 16:9 ('%s').",
			req.Size, req.PublicModel, strings.Join(sizes, "', '"))
	}
	body, err := json.Marshal(imagenRequest{Instances: []imagenInstance{{Prompt: req.Prompt}},
		Parameters: imagenParameters{SampleCount: n, AspectRatio: aspect, IncludeRaiReason: true}})
	if err != nil {
		return nil, fmt.Errorf("gemini %s: encode imagen request: %w", c.name, err)
	}
	b, err := c.unary(ctx, req.UpstreamModel, ":predict", body)
	if err != nil {
		return nil, err
	}
	return c.imagenAnswer(b, aspect)
}

// imagenAnswer translates a predict answer.
func (c *Client) imagenAnswer(b []byte, aspect string) (*provider.ImageResponse, error) {
	var ir imagenResponse
	if err := json.Unmarshal(b, &ir); err != nil {
		return nil, provider.BadResponse(c.name, fmt.Errorf("imagen response: %w", err))
	}
	if ir.Error != nil {
		return nil, c.vendorFailure(ir.Error)
	}
	res := &provider.ImageResponse{Created: c.now().Unix(), Size: "1024x1024"}
	for _, r := range imagenRatios {
		if r.ratio == aspect {
			res.Size = r.size
		}
	}
	var reasons []string
	for _, p := range ir.Predictions {
		if p.BytesBase64Encoded == "" {
			if p.RaiFilteredReason != "" {
				reasons = append(reasons, p.RaiFilteredReason)
			}
			continue // filtered, or a safety-attributes entry
		}
		res.Images = append(res.Images, provider.GeneratedImage{B64JSON: p.BytesBase64Encoded, MIMEType: p.MIMEType, RevisedPrompt: p.Prompt})
	}
	if len(res.Images) == 0 {
		msg := "The vendor's safety system refused to generate images for this prompt."
		if len(reasons) > 0 {
			msg += " " + strings.Join(reasons, " ")
		}
		return nil, provider.VendorRefused(&apierr.Error{Status: http.StatusBadRequest, Type: apierr.TypeInvalidRequest,
			Code: "content_policy_violation", Param: "prompt", Message: msg})
	}
	return res, nil
}
