package anthropic

import (
	"testing"

	"github.com/modelgate/modelgate/internal/provider"
)

// bufferedStream is a Messages stream that says whether its next event is
// already read.
type bufferedStream struct {
	provider.MessagesStream
	next bool
}

func (b bufferedStream) Buffered() bool { return b.next }

// TestEventsBuffered checks that the relay sees whether the next event of a
// pass-through stream is already here (it then flushes once per burst, not
// once per event), and that a stream that cannot tell counts as not.
func TestEventsBuffered(t *testing.T) {
	for _, tc := range []struct {
		name string
		st   provider.MessagesStream
		want bool
	}{
		{"next event read", bufferedStream{next: true}, true},
		{"next event not read", bufferedStream{next: false}, false},
		{"stream cannot tell", struct{ provider.MessagesStream }{}, false},
	} {
		var st provider.ChatStream = events{tc.st}
		b, ok := st.(provider.Buffered)
		if !ok || b.Buffered() != tc.want {
			t.Errorf("%s: Buffered() = %v (ok %v), want %v", tc.name, ok && b.Buffered(), ok, tc.want)
		}
	}
}
