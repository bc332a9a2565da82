package openai

import (
	"bytes"
	"fmt"

	"github.com/modelgate/modelgate/internal/billing"
	"github.com/modelgate/modelgate/internal/jsonx"
	"github.com/modelgate/modelgate/internal/surcharge"
)

// What a chat request makes the vendor bill beyond its tokens at the
// model's default prices (see internal/surcharge), and input it does not
// show. Both look inside messages only when the body holds the marker they
// look for, so a plain request pays one bytes.Contains for each.

// chatAsk is what a chat request asks for beyond tokens; ok is false when
// it asks for nothing (no plan is needed: the default tier's prices).
func chatAsk(mp billing.ModelPrice, params chatParams, body []byte) (a surcharge.Ask, ok bool) {
	a = surcharge.Ask{Tier: params.tier, SearchOptions: params.searchOptions, Choices: params.N, AudioOut: params.audioOut}
	if bytes.Contains(body, []byte(`"input_audio"`)) {
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
func chatUnsized(body []byte) string {
	if !bytes.Contains(body, []byte(`"file_id"`)) {
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
