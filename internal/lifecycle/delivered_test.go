package lifecycle

import (
	"fmt"
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
