package tokenize

import (
	"encoding/json"
	"testing"
)

func benchmarkCount(b *testing.B, size int) {
	tok := sharedSet.For("o200k")
	text := englishText(size)
	tok.Count(text) // load the vocabulary outside the timing
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		tok.Count(text)
	}
}

// BenchmarkCount1K counts 1 KiB of English text.
func BenchmarkCount1K(b *testing.B) { benchmarkCount(b, 1<<10) }

// BenchmarkCount100K counts 100 KiB of English text.
func BenchmarkCount100K(b *testing.B) { benchmarkCount(b, 100<<10) }

// BenchmarkChatPrompt1K counts a chat request body of about 1 KiB.
func BenchmarkChatPrompt1K(b *testing.B) {
	tok := sharedSet.For("o200k")
	body, err := json.Marshal(map[string]any{
		"model": "gpt-4o",
		"messages": []map[string]any{
			{"role": "system", "content": string(englishText(300))},
			{"role": "user", "name": "bob", "content": []map[string]any{
				{"type": "text", "text": string(englishText(400))},
				{"type": "image_url", "image_url": map[string]string{"url": "https://example.com/a.png"}},
			}},
		},
		"tools": []json.RawMessage{json.RawMessage(
			`{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}`)},
	})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tok.ChatPrompt(body); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStream100K counts 100 KiB of English text streamed in 20-byte
// deltas.
func BenchmarkStream100K(b *testing.B) {
	tok := sharedSet.For("o200k")
	text := englishText(100 << 10)
	tok.Count(text)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	s := tok.NewStream()
	for b.Loop() {
		s.Reset(tok)
		for i := 0; i < len(text); i += 20 {
			s.Write(text[i:min(i+20, len(text))])
		}
		s.Tokens()
	}
}
