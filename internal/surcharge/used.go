package surcharge

import (
	"github.com/modelgate/modelgate/internal/jsonx"
)

// Used is what an answer says the vendor used beyond tokens.
type Used struct {
	// Tier is the service tier the vendor says it ran the request at
	// ("" when it does not say).
	Tier string
	// Calls counts built-in tool calls by output item type
	// ("web_search_call"); code interpreter calls count their containers.
	Calls map[string]int64
	// Images are the images the image_generation tool made.
	Images []Image
	// Searches is the web searches a chat answer's vendor counted for
	// web_search_options (provider.Usage.WebSearches); SearchesCounted
	// says the vendor counts them (else each choice is one search).
	Searches        int64
	SearchesCounted bool

	containers map[string]bool // code interpreter containers counted
}

// Image is one image_generation call's result, as the vendor reports it.
type Image struct{ Size, Quality string }

// Scan reads a Responses object (a plain answer's body, or the response a
// stream's final event carries): its service_tier and, among its output
// items, every built-in tool call (see Add).
func Scan(obj []byte) Used {
	u := Used{Tier: stringField(obj, "service_tier")}
	if out, ok := jsonx.Field(obj, "output"); ok {
		_ = jsonx.EachElement(out, func(item []byte) bool {
			u.Add(item)
			return true
		})
	}
	return u
}

// Add counts one output item when it is a built-in tool call (a stream's
// response.output_item.done carries one before the answer ends, so a
// stream cut short still pays for the calls it showed). An item that
// failed is not counted; code interpreter calls count their containers.
func (u *Used) Add(item []byte) {
	typ := stringField(item, "type")
	switch typ {
	case "", "message", "reasoning", "function_call", "custom_tool_call", "mcp_list_tools", "mcp_approval_request":
		return
	}
	if stringField(item, "status") == "failed" {
		return
	}
	switch typ {
	case "image_generation_call":
		u.Images = append(u.Images, Image{Size: stringField(item, "size"), Quality: stringField(item, "quality")})
		return
	case "code_interpreter_call": // billed per container
		id := stringField(item, "container_id")
		if u.containers[id] {
			return
		}
		if u.containers == nil {
			u.containers = map[string]bool{}
		}
		u.containers[id] = true
	}
	if u.Calls == nil {
		u.Calls = map[string]int64{}
	}
	u.Calls[typ]++
}

// stringField is the string member key of obj ("" when absent or not a
// string).
func stringField(obj []byte, key string) string {
	v, ok := jsonx.Field(obj, key)
	if !ok || len(v) < 2 || v[0] != '"' {
		return ""
	}
	return string(jsonx.Unescape(v[1 : len(v)-1]))
}
