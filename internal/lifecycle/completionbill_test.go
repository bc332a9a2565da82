package lifecycle

import (
	"testing"

	"github.com/modelgate/modelgate/internal/tokenize"
)

func TestCountPrompts(t *testing.T) {
	tok := tokenize.NewSet().For("cl100k")
	tests := []struct {
		prompt         string
		total, largest int64
	}{
		{`"This is a test."`, 5, 5},
		{`"line\nbreak \u00e9"`, int64(tok.Count([]byte("line\nbreak é"))), int64(tok.Count([]byte("line\nbreak é")))},
		{`["This is a test.","Hello"]`, 6, 5},
		{`[1212,318,257,1332,13]`, 5, 5},
		{`[[1212,318],[257]]`, 3, 2},
		{`[]`, 0, 0},
	}
	for _, tt := range tests {
		total, largest := CountPrompts(tok, []byte(tt.prompt))
		if total != tt.total || largest != tt.largest {
			t.Errorf("%s: %d, %d; want %d, %d", tt.prompt, total, largest, tt.total, tt.largest)
		}
	}
}

func TestCompletionMul(t *testing.T) {
	if completionMul(16, 3) != 48 || completionMul(1<<53, 1<<20) != 1<<62 || completionMul(5, 0) != 0 {
		t.Error("completionMul")
	}
}
