package anthropic

import (
	"github.com/modelgate/modelgate/internal/jsonx"
	"github.com/modelgate/modelgate/internal/lifecycle"
	"github.com/modelgate/modelgate/internal/tokenize"
)

// answerTokens counts the generated text of a complete Message (text,
// thinking, tool inputs), for a settlement without the vendor's usage.
func answerTokens(c *lifecycle.Charge, body []byte) func() int64 {
	return func() int64 {
		if c == nil || c.Tok == nil {
			return 0
		}
		s := c.Tok.NewStream()
		content, ok := jsonx.Field(body, "content")
		if !ok {
			return 0
		}
		_ = jsonx.EachElement(content, func(block []byte) bool {
			blockText(s, block)
			return true
		})
		return int64(s.Tokens())
	}
}

// blockText feeds the generated text of a content block to s.
func blockText(s *tokenize.Stream, block []byte) {
	for _, k := range [...]string{"text", "thinking"} {
		if v, ok := jsonx.Field(block, k); ok {
			lifecycle.WriteString(s, v)
		}
	}
	if v, ok := jsonx.Field(block, "input"); ok && len(v) > 0 && v[0] == '{' {
		s.Write(v)
	}
}

// eventText feeds the generated text of one raw SSE event of a Messages
// stream to s: the text, thinking and tool-input deltas.
func eventText(s *tokenize.Stream, ev []byte) {
	data := eventData(ev)
	if data == nil {
		return
	}
	d, ok := jsonx.Field(data, "delta")
	if !ok {
		return
	}
	for _, k := range [...]string{"text", "thinking", "partial_json"} {
		if v, ok := jsonx.Field(d, k); ok {
			lifecycle.WriteString(s, v)
		}
	}
}

// eventData is the data line of a raw SSE event (nil when it has none).
func eventData(ev []byte) []byte {
	for len(ev) > 0 {
		line := ev
		rest := []byte(nil)
		for i, b := range ev {
			if b == '\n' {
				line, rest = ev[:i], ev[i+1:]
				break
			}
		}
		if len(line) > 5 && string(line[:5]) == "data:" {
			line = line[5:]
			if len(line) > 0 && line[0] == ' ' {
				line = line[1:]
			}
			return line
		}
		if rest == nil {
			return nil
		}
		ev = rest
	}
	return nil
}
