package lifecycle

import (
	"github.com/modelgate/modelgate/internal/billing"
	"strings"
	"testing"
)

func TestMarkChat(t *testing.T) {
	tests := []struct {
		name, body    string
		audio, fileID bool
	}{
		{"plain", `{"model":"m","messages":[{"role":"user","content":"Hello, how are you?"}]}`, false, false},
		{"tool ids are not file ids", `{"messages":[{"role":"tool","tool_call_id":"call_1","content":"snake_case"}]}`, false, false},
		{"audio part", `{"messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"AAA","format":"wav"}}]}]}`, true, false},
		{"file by id", `{"messages":[{"role":"user","content":[{"type":"file","file":{"file_id":"file-abc"}}]}]}`, false, true},
		{"both", `{"messages":[{"content":[{"type":"input_audio"},{"file":{"file_id":"f"}}]}]}`, true, true},
		{"a \\u escape may spell either", `{"messages":[{"content":[{"type":"input\u005faudio"}]}]}`, true, true},
		{"other escapes do not", `{"messages":[{"content":"line\nnext \"quoted\" C:\\dir"}]}`, false, false},
		{"marker at the very end", `"input_`, false, false},
		{"empty", ``, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := markChat([]byte(tt.body))
			if m.inputAudio != tt.audio || m.fileID != tt.fileID {
				t.Errorf("markChat = %+v, want audio %v, file_id %v", m, tt.audio, tt.fileID)
			}
		})
	}
}

// TestChatExtrasSeeEscapedMarkers: a type spelt with a \u escape is the
// same type to the vendor, so it is found (and priced or refused) too.
func TestChatExtrasSeeEscapedMarkers(t *testing.T) {
	audio := []byte(`{"messages":[{"role":"user","content":[{"type":"input\u005faudio","input_audio":{"data":"AAA","format":"wav"}}]}]}`)
	if a, _ := chatAsk(billing.ModelPrice{}, ChatParams{}, audio, markChat(audio)); a.AudioIn != "messages[0].content[0]" {
		t.Errorf("escaped input_audio: AudioIn %q", a.AudioIn)
	}
	file := []byte(`{"messages":[{"content":[{"type":"file","file":{"file\u005fid":"file-abc"}}]}]}`)
	if got := chatUnsized(file, markChat(file)); !strings.HasPrefix(got, "messages[0].content[0]") {
		t.Errorf("escaped file_id: %q", got)
	}
}

func BenchmarkMarkChat(b *testing.B) {
	body := []byte(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"` + strings.Repeat("The quick brown fox jumps over the lazy dog. ", 25) + `"}]}`)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		_ = markChat(body)
	}
}
