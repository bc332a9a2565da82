package provider

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func TestEmbeddingList(t *testing.T) {
	vecs := [][]float32{{0.5, -0.25, 1e-8}, {1, 0, 0}}
	tests := []struct {
		name string
		b64  bool
		want string
	}{
		{"float", false, `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.5,-0.25,1e-8]},` +
			`{"object":"embedding","index":1,"embedding":[1,0,0]}],"model":"pub","usage":{"prompt_tokens":7,"total_tokens":7}}`},
		// 0.5 = 0x3f000000, -0.25 = 0xbe800000, 1e-8 = 0x322bcc77, little-endian.
		{"base64", true, `{"object":"list","data":[{"object":"embedding","index":0,"embedding":"AAAAPwAAgL53zCsy"},` +
			`{"object":"embedding","index":1,"embedding":"AACAPwAAAAAAAAAA"}],"model":"pub","usage":{"prompt_tokens":7,"total_tokens":7}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := EmbeddingList("pub", vecs, tt.b64, 7)
			if err != nil || string(got) != tt.want {
				t.Fatalf("got %s, %v\nwant %s", got, err, tt.want)
			}
		})
	}
}

func TestEmbeddingListRoundTrip(t *testing.T) {
	v := []float32{0.1, -0.2, 0.3, float32(math.Pi), -1e-30, 3.4e38}
	b, err := EmbeddingList("m", [][]float32{v}, true, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Data []struct {
			Embedding string `json:"embedding"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	got, err := DecodeFloat32(out.Data[0].Embedding)
	if err != nil {
		t.Fatal(err)
	}
	for i := range v {
		if got[i] != v[i] {
			t.Errorf("[%d] = %v, want %v", i, got[i], v[i])
		}
	}
	// The float form carries the same float32 values.
	b, _ = EmbeddingList("m", [][]float32{v}, false, 0)
	var f struct {
		Data []struct {
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	for i := range v {
		if f.Data[0].Embedding[i] != v[i] {
			t.Errorf("float [%d] = %v, want %v", i, f.Data[0].Embedding[i], v[i])
		}
	}
}

func TestEmbeddingListRefusesNaN(t *testing.T) {
	for _, x := range []float32{float32(math.NaN()), float32(math.Inf(1))} {
		if _, err := EmbeddingList("m", [][]float32{{1, x}}, false, 0); err == nil {
			t.Errorf("%v: no error", x)
		}
	}
	if b, err := EmbeddingList("m", [][]float32{nil}, false, 0); err != nil || !strings.Contains(string(b), `"embedding":[]`) {
		t.Errorf("empty vector: %s, %v", b, err)
	}
}

func TestDecodeFloat32Errors(t *testing.T) {
	for _, s := range []string{"not base64!", "AAAAAAA="} {
		if _, err := DecodeFloat32(s); err == nil {
			t.Errorf("%q: no error", s)
		}
	}
}

func TestNormalize(t *testing.T) {
	v := []float32{3, 4}
	Normalize(v)
	if math.Abs(float64(v[0])-0.6) > 1e-7 || math.Abs(float64(v[1])-0.8) > 1e-7 {
		t.Errorf("got %v", v)
	}
	z := []float32{0, 0}
	Normalize(z)
	if z[0] != 0 || z[1] != 0 {
		t.Errorf("zero vector became %v", z)
	}
}
