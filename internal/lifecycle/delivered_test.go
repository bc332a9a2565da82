package lifecycle

import (
	"fmt"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/tokenize"
)

// The delivered text of a long stream is counted exactly, however many
// chunks it came in, while the raw buffer never grows past its bound.
func TestDeliveredCountsWithBoundedMemory(t *testing.T) {
	tok := tokenize.NewSet().For("o200k")
	for _, n := range []int{0, 1, 30, 5000} {
		d := &Delivered{tok: tok}
		maxRaw := 0
		for i := range n {
			chunk := fmt.Sprintf(`{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" hello"}}],"n":%d}`, i)
			d.Add([]byte(chunk))
			if d.raw != nil {
				maxRaw = max(maxRaw, len(*d.raw))
			}
		}
		if got := d.Tokens(); got != int64(n) {
			t.Errorf("%d chunks of \" hello\": %d tokens", n, got)
		}
		if maxRaw >= deliveredBuffer {
			t.Errorf("%d chunks: raw buffer reached %d bytes", n, maxRaw)
		}
		d.Release()
	}
	var none *Delivered // no billing: nothing to record
	none.Add([]byte(`{}`))
	none.Release()
}

// Chat chunks are kept from their top-level "choices" on when they start
// as the stream's first did, and whole otherwise; either way the count is
// that of every chunk's text.
func TestDeliveredKeepsChatChunksFromChoices(t *testing.T) {
	tok := tokenize.NewSet().For("o200k")
	chunk := func(head, text string) string {
		return `{` + head + `"choices":[{"index":0,"delta":{"content":"` + text + `"}}],"usage":null}`
	}
	same := `"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m",`
	for _, tc := range []struct {
		name    string
		chunks  []string
		trimmed []bool // which chunks are kept from "choices" on
	}{
		{"same head", []string{chunk(same, " one"), chunk(same, " two"), chunk(same, " three")}, []bool{false, true, true}},
		{"head changes", []string{chunk(same, " one"), chunk(`"id":"chatcmpl-2",`, " two"), chunk(same, " three")}, []bool{false, false, true}},
		{"choices in a string first", []string{chunk(`"id":"\"choices\":[{\"delta\":{\"content\":\"no\"}}]",`, " one"),
			chunk(`"id":"\"choices\":[{\"delta\":{\"content\":\"no\"}}]",`, " two")}, []bool{false, true}},
		{"no choices first", []string{`{"id":"x","object":"chat.completion.chunk"}`, chunk(same, " one"), chunk(same, " two")}, []bool{false, false, false}},
		{"choices first", []string{chunk("", " one"), chunk("", " two")}, []bool{false, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := tok.NewStream()
			d := &Delivered{tok: tok}
			wantKept := 0
			for i, c := range tc.chunks {
				AddText(want, []byte(c), "delta")
				d.Add([]byte(c))
				if tc.trimmed[i] {
					wantKept += 1 + len(c) - strings.LastIndex(c, `"choices":[{"index"`)
				} else {
					wantKept += len(c)
				}
			}
			if kept := len(*d.raw); kept != wantKept {
				t.Errorf("kept %d bytes, want %d", kept, wantKept)
			}
			if got := d.Tokens(); got != int64(want.Tokens()) {
				t.Errorf("%d tokens, want %d", got, want.Tokens())
			}
			d.Release()
		})
	}
}
