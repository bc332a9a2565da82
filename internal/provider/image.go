package provider

import (
	"context"
	"encoding/json"
	"io"
)

// ImageRequest is a validated image generation request on its way
// upstream. Body is the client's JSON exactly as received; OpenAI-compatible
// adapters forward it with only model patched. The other fields are the
// validated values, for adapters that translate.
type ImageRequest struct {
	PublicModel   string
	UpstreamModel string
	Body          []byte
	Prompt        string
	N             int    // 1..10
	Size          string // "WxH", "auto", or "" (the vendor's default)
	Quality       string // "" when the client sent none
	Style         string
	User          string
	// ResponseFormat is what the client asked for ("url", "b64_json" or
	// ""); adapters may answer in either form, the handler converts.
	ResponseFormat string
}

// GeneratedImage is one image of an answer: base64 data, or a URL where
// the vendor hosts it (or both).
type GeneratedImage struct {
	B64JSON       string // standard base64, as the vendors send it
	URL           string
	RevisedPrompt string
	MIMEType      string // of the decoded B64JSON when the vendor says; "" unknown
}

// ImageResponse is an adapter's answer to an image request, in the terms of
// OpenAI's ImagesResponse.
type ImageResponse struct {
	Created int64
	Images  []GeneratedImage
	// Size and Quality are what the vendor reports it produced ("" when it
	// does not say); billing uses them for requests that left them to the
	// vendor ("auto").
	Size, Quality string
	// Extra holds the other top-level members of an OpenAI-compatible
	// vendor's answer (usage, background, output_format, ...), passed on
	// untouched.
	Extra map[string]json.RawMessage
}

// ImageGenerator is implemented by adapters that serve POST
// /v1/images/generations.
type ImageGenerator interface {
	GenerateImages(ctx context.Context, req *ImageRequest) (*ImageResponse, error)
}

// FormFile is one file of a multipart upload, already validated and held
// once (in memory or in a temporary file); Open may be called more than
// once and each reader starts at the beginning.
type FormFile struct {
	Field       string // form field name: "image", "image[]", "mask", ...
	Filename    string
	ContentType string // the sniffed, real type
	Size        int64
	Open        func() (io.ReadCloser, error)
}

// FormField is one text field of a multipart upload.
type FormField struct {
	Name, Value string
}

// ImageEditRequest is a validated image edit request on its way upstream.
// Fields and Files keep the client's order; OpenAI-compatible adapters
// forward them (model replaced by the upstream id) as a new multipart body
// streamed from the held files.
type ImageEditRequest struct {
	PublicModel    string
	UpstreamModel  string
	Prompt         string
	N              int
	Size           string
	Quality        string
	ResponseFormat string
	Fields         []FormField // every text field the client sent, model included
	Files          []FormFile  // image or image[] parts, the mask, any other file field
}

// ImageEditor is implemented by adapters that serve POST /v1/images/edits.
type ImageEditor interface {
	EditImages(ctx context.Context, req *ImageEditRequest) (*ImageResponse, error)
}
