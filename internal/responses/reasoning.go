package responses

import (
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/modelgate/modelgate/internal/provider/oaiwire"
)

// A translated answer's signed thinking (Anthropic's thinking blocks, in
// the chat answer's thinking_blocks) must reach the vendor again on the
// next turn of a tool loop, and a client that stores nothing at the vendor
// (store: false, as Codex) keeps it only in what it sends back: the
// reasoning item's encrypted_content. With include
// ["reasoning.encrypted_content"] the reasoning item carries the blocks
// there, in a versioned envelope:
//
//	"mgtb1." + base64url(JSON {"thinking_blocks": [...]})
//
// and a reasoning item of the input holding one gives its blocks back to
// the assistant turn that follows it (the chat message's thinking_blocks).
// Encrypted content the gateway did not make (OpenAI's, from another
// model) is dropped with the rest of the item, as before.

// envelopePrefix marks and versions the gateway's encrypted_content.
const envelopePrefix = "mgtb1."

// envelope is the JSON inside encrypted_content.
type envelope struct {
	ThinkingBlocks []oaiwire.ThinkingBlock `json:"thinking_blocks"`
}

// includesEncrypted reports whether the request asked for reasoning items'
// encrypted_content.
func (r *Request) includesEncrypted() bool {
	for _, s := range r.w.Include {
		if s == "reasoning.encrypted_content" {
			return true
		}
	}
	return false
}

// sealBlocks is the encrypted_content carrying blocks (nil when there are
// none).
func sealBlocks(blocks []oaiwire.ThinkingBlock) *string {
	if len(blocks) == 0 {
		return nil
	}
	b, err := json.Marshal(envelope{ThinkingBlocks: blocks})
	if err != nil {
		return nil // plain strings: cannot happen
	}
	s := envelopePrefix + base64.RawURLEncoding.EncodeToString(b)
	return &s
}

// openBlocks reads the thinking blocks of encrypted_content the gateway
// made; nil for anything else.
func openBlocks(s *string) []oaiwire.ThinkingBlock {
	if s == nil {
		return nil
	}
	rest, ok := strings.CutPrefix(*s, envelopePrefix)
	if !ok {
		return nil
	}
	b, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil {
		return nil
	}
	var e envelope
	if json.Unmarshal(b, &e) != nil {
		return nil
	}
	return e.ThinkingBlocks
}
