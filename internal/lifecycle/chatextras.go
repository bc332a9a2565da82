package lifecycle

import (
	"bytes"
	"fmt"

	"github.com/modelgate/modelgate/internal/billing"
	"github.com/modelgate/modelgate/internal/jsonx"
	"github.com/modelgate/modelgate/internal/surcharge"
)

// What a chat request makes the vendor bill beyond its tokens at the
// model's default prices (see internal/surcharge), and input it does not
// show. Both look inside messages only when the body may hold the marker
// they look for (see markChat), so a plain request pays two IndexByte
// passes for both.

// chatMarks says which markers a chat body may hold: "input_audio" (an
// audio content part) and "file_id" (a file sent by id).
type chatMarks struct{ inputAudio, fileID bool }

// markChat finds the markers in two IndexByte passes: one over the
// backslashes (a \u escape can spell any marker, so a body with one is
// walked whole) and one over the underscores that both markers have, each
// checked in place. A bytes.Contains per marker cost ~0.7 µs on a 1 KB
// body (the quote they start with is everywhere in JSON); these cost a
// tenth of that.
func markChat(body []byte) chatMarks {
	for i := 0; i < len(body); {
		j := bytes.IndexByte(body[i:], '\\')
		if j < 0 {
			break
		}
		j += i
		if j+1 < len(body) && body[j+1] == 'u' {
			return chatMarks{inputAudio: true, fileID: true}
		}
		i = j + 2
	}
	var m chatMarks
	for i := 0; i < len(body); {
		j := bytes.IndexByte(body[i:], '_')
		if j < 0 {
			break
		}
		j += i
		before, after := body[:j], body[j+1:]
		m.inputAudio = m.inputAudio || bytes.HasSuffix(before, []byte(`"input`)) && bytes.HasPrefix(after, []byte(`audio"`))
		m.fileID = m.fileID || bytes.HasSuffix(before, []byte(`"file`)) && bytes.HasPrefix(after, []byte(`id"`))
		i = j + 1
	}
	return m
}

// chatAsk is what a chat request asks for beyond tokens; ok is false when
// it asks for nothing (no plan is needed: the default tier's prices).
func chatAsk(mp billing.ModelPrice, params ChatParams, body []byte, m chatMarks) (a surcharge.Ask, ok bool) {
	a = surcharge.Ask{Tier: params.Tier, SearchOptions: params.SearchOptions, Choices: params.N, AudioOut: params.AudioOut}
	if m.inputAudio {
		a.AudioIn = firstPart(body, func(part []byte) bool { return stringMember(part, "type") == "input_audio" }, "")
	}
	switch a.Tier {
	case "", "auto", billing.DefaultTier:
		a.Tier = ""
	}
	return a, a.Tier != "" || a.SearchOptions || a.AudioIn != "" || a.AudioOut != "" || mp.Searches
}

// chatUnsized names the first part of a chat request that makes the
// vendor bill input whose size the gateway cannot know: a file sent by id
// ("" when there is none).
func chatUnsized(body []byte, m chatMarks) string {
	if !m.fileID {
		return ""
	}
	return firstPart(body, func(part []byte) bool {
		if stringMember(part, "type") != "file" {
			return false
		}
		f, ok := jsonx.Field(part, "file")
		return ok && stringMember(f, "file_id") != ""
	}, ".file.file_id")
}

// firstPart names (messages[i].content[j] + suffix) the first content
// part of a chat body's messages that match accepts; "" when none does.
func firstPart(body []byte, match func(part []byte) bool, suffix string) string {
	msgs, ok := jsonx.Field(body, "messages")
	if !ok {
		return ""
	}
	found := ""
	i := 0
	_ = jsonx.EachElement(msgs, func(msg []byte) bool {
		if content, ok := jsonx.Field(msg, "content"); ok && len(content) > 0 && content[0] == '[' {
			j := 0
			_ = jsonx.EachElement(content, func(part []byte) bool {
				if match(part) {
					found = fmt.Sprintf("messages[%d].content[%d]%s", i, j, suffix)
				}
				j++
				return found == ""
			})
		}
		i++
		return found == ""
	})
	return found
}

// stringMember is obj's string member key, "" when absent or not a
// string.
func stringMember(obj []byte, key string) string {
	v, ok := jsonx.Field(obj, key)
	if !ok || len(v) < 2 || v[0] != '"' {
		return ""
	}
	return string(jsonx.Unescape(v[1 : len(v)-1]))
}
