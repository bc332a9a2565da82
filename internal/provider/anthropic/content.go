package anthropic

import (
	"strings"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/provider/anthropicwire"
	"github.com/modelgate/modelgate/internal/provider/oaiwire"
)

// imageTypes are the media types Anthropic accepts for base64 images.
var imageTypes = map[string]bool{"image/jpeg": true, "image/png": true, "image/gif": true, "image/webp": true}

// contentBlocks translates message i's content. Empty text is dropped, as
// Anthropic rejects empty text blocks.
func contentBlocks(i int, c oaiwire.Content) ([]anthropicwire.Block, error) {
	if c.Text != nil {
		if *c.Text == "" {
			return nil, nil
		}
		return []anthropicwire.Block{{Type: "text", Text: *c.Text}}, nil
	}
	var out []anthropicwire.Block
	for j, p := range c.Parts {
		switch p.Type {
		case "text":
			if p.Text != "" {
				out = append(out, anthropicwire.Block{Type: "text", Text: p.Text})
			}
		case "refusal":
			// An earlier refusal the client echoes back; Anthropic has no
			// such block, and the refusal text adds nothing to the context.
		case "image_url":
			b, err := imageBlock(i, j, p.ImageURL)
			if err != nil {
				return nil, err
			}
			out = append(out, b)
		case "input_audio", "file":
			return nil, apierr.Invalid("messages", "messages[%d].content[%d]: %s content is not supported by this model's provider.", i, j, p.Type)
		default:
			return nil, apierr.Invalid("messages", "messages[%d].content[%d]: content type %q is not supported by this model's provider.", i, j, p.Type)
		}
	}
	return out, nil
}

// imageBlock translates an image_url part: a data: URL becomes a base64
// source, an http(s) URL a url source.
func imageBlock(i, j int, u *oaiwire.ImageURL) (anthropicwire.Block, error) {
	if u == nil || u.URL == "" {
		return anthropicwire.Block{}, apierr.Invalid("messages", "messages[%d].content[%d].image_url.url is required.", i, j)
	}
	switch {
	case strings.HasPrefix(u.URL, "http://") || strings.HasPrefix(u.URL, "https://"):
		return anthropicwire.Block{Type: "image", Source: &anthropicwire.Source{Type: "url", URL: u.URL}}, nil
	case strings.HasPrefix(u.URL, "data:"):
		meta, data, ok := strings.Cut(strings.TrimPrefix(u.URL, "data:"), ",")
		mt, enc, _ := strings.Cut(meta, ";")
		mt = strings.ToLower(mt)
		if !ok || enc != "base64" {
			return anthropicwire.Block{}, apierr.Invalid("messages", "messages[%d].content[%d].image_url.url: a data URL must be base64 encoded.", i, j)
		}
		if !imageTypes[mt] {
			return anthropicwire.Block{}, apierr.Invalid("messages", "messages[%d].content[%d].image_url.url: image type %q is not supported by this model's provider (use image/jpeg, image/png, image/gif or image/webp).", i, j, mt)
		}
		return anthropicwire.Block{Type: "image", Source: &anthropicwire.Source{Type: "base64", MediaType: mt, Data: data}}, nil
	}
	return anthropicwire.Block{}, apierr.Invalid("messages", "messages[%d].content[%d].image_url.url must be an http(s) or data URL.", i, j)
}
