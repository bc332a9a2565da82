package openai

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseEmbeddingsValid(t *testing.T) {
	tests := []struct {
		name   string
		body   string
		want   embedParams
		bound  int64
		inputs int
	}{
		{"string", `{"model":"m","input":"hello world"}`, embedParams{Model: "m", Texts: []string{"hello world"}}, 11, 1},
		{"escaped string", `{"model":"m","input":"a\u00e9\n"}`, embedParams{Model: "m", Texts: []string{"aé\n"}}, 4, 1},
		{"strings", `{"model":"m","input":["a","bc"]}`, embedParams{Model: "m", Texts: []string{"a", "bc"}}, 3, 2},
		{"token ids", `{"model":"m","input":[1212, 318, 0]}`, embedParams{Model: "m", Tokens: [][]int64{{1212, 318, 0}}}, 3, 1},
		{"token arrays", `{"model":"m","input":[[1,2],[3]]}`, embedParams{Model: "m", Tokens: [][]int64{{1, 2}, {3}}}, 3, 2},
		{"base64", `{"model":"m","input":"x","encoding_format":"base64"}`, embedParams{Model: "m", Texts: []string{"x"}, Base64: true}, 1, 1},
		{"float", `{"model":"m","input":"x","encoding_format":"float","dimensions":256,"user":"u"}`,
			embedParams{Model: "m", Texts: []string{"x"}, Dimensions: 256}, 1, 1},
		{"nulls", `{"model":"m","input":"x","encoding_format":null,"dimensions":null,"user":null}`, embedParams{Model: "m", Texts: []string{"x"}}, 1, 1},
		{"unknown member passes", `{"model":"m","input":"x","task":{"deep":[1]}}`, embedParams{Model: "m", Texts: []string{"x"}}, 1, 1},
		{"2048 strings", `{"model":"m","input":[` + strings.Repeat(`"a",`, 2047) + `"a"]}`,
			embedParams{Model: "m", Texts: strings.Split(strings.Repeat("a", 2048), "")}, 2048, 2048},
		{"long token array is one input", `{"model":"m","input":[` + strings.Repeat(`1,`, 3000) + `1]}`,
			embedParams{Model: "m", Tokens: [][]int64{ones(3001)}}, 3001, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseEmbeddings([]byte(tt.body))
			if err != nil {
				t.Fatalf("error %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
			if b := got.inputBound(); b != tt.bound {
				t.Errorf("bound %d, want %d", b, tt.bound)
			}
		})
	}
}

func ones(n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = 1
	}
	return out
}

func TestParseEmbeddingsInvalid(t *testing.T) {
	tests := []struct {
		name, body, param string
		msg               string // part of the message
	}{
		{"not json", `{"model":`, "", "could not parse"},
		{"not object", `["x"]`, "", "JSON object"},
		{"missing model", `{"input":"x"}`, "model", "Missing required parameter"},
		{"empty model", `{"model":"","input":"x"}`, "model", "Missing"},
		{"model number", `{"model":1,"input":"x"}`, "model", "expected a string"},
		{"model case", `{"Model":"m","input":"x"}`, "Model", "case-sensitive"},
		{"missing input", `{"model":"m"}`, "input", "Missing required parameter: 'input'"},
		{"null input", `{"model":"m","input":null}`, "input", "but got null"},
		{"empty string", `{"model":"m","input":""}`, "input", "empty string"},
		{"empty array", `{"model":"m","input":[]}`, "input", "empty array"},
		{"empty element", `{"model":"m","input":["a",""]}`, "input[1]", "empty string"},
		{"empty token array", `{"model":"m","input":[[1],[]]}`, "input[1]", "empty array"},
		{"mixed string number", `{"model":"m","input":["a",1]}`, "input[1]", "expected a string, but got an integer"},
		{"mixed number array", `{"model":"m","input":[1,[2]]}`, "input[1]", "expected an integer, but got an array"},
		{"mixed inside token array", `{"model":"m","input":[[1,"a"]]}`, "input[0][1]", "expected an integer, but got a string"},
		{"float token", `{"model":"m","input":[1,2.5]}`, "input[1]", "expected an integer, but got a decimal number"},
		{"exponent token", `{"model":"m","input":[1e3]}`, "input[0]", "expected an integer, but got a decimal number"},
		{"negative token", `{"model":"m","input":[[5,-1]]}`, "input", "input[0][1] is -1"},
		{"huge token", `{"model":"m","input":[2147483648]}`, "input", "below 2^31"},
		{"object input", `{"model":"m","input":{"text":"x"}}`, "input", "Invalid type for 'input'"},
		{"number input", `{"model":"m","input":5}`, "input", "Invalid type for 'input'"},
		{"bool element", `{"model":"m","input":[true]}`, "input[0]", "but got a boolean"},
		{"null element", `{"model":"m","input":["a",null]}`, "input[1]", "expected a string, but got null"},
		{"nested three deep", `{"model":"m","input":[[[1]]]}`, "input[0][0]", "expected an integer, but got an array"},
		{"2049 strings", `{"model":"m","input":[` + strings.Repeat(`"a",`, 2048) + `"a"]}`, "input", "maximum length 2048"},
		{"2049 token arrays", `{"model":"m","input":[` + strings.Repeat(`[1],`, 2048) + `[1]]}`, "input", "maximum length 2048"},
		{"bad encoding", `{"model":"m","input":"x","encoding_format":"int8"}`, "encoding_format", "'float' and 'base64'"},
		{"encoding number", `{"model":"m","input":"x","encoding_format":1}`, "encoding_format", "expected a string"},
		{"zero dimensions", `{"model":"m","input":"x","dimensions":0}`, "dimensions", "Expected a value >= 1"},
		{"negative dimensions", `{"model":"m","input":"x","dimensions":-3}`, "dimensions", "Expected a value >= 1"},
		{"float dimensions", `{"model":"m","input":"x","dimensions":1.5}`, "dimensions", "expected an integer"},
		{"string dimensions", `{"model":"m","input":"x","dimensions":"256"}`, "dimensions", "expected an integer"},
		{"huge dimensions", `{"model":"m","input":"x","dimensions":4294967296}`, "dimensions", "at most"},
		{"user number", `{"model":"m","input":"x","user":7}`, "user", "expected a string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseEmbeddings([]byte(tt.body))
			if err == nil {
				t.Fatal("accepted")
			}
			if err.Status != 400 || err.Param != tt.param || !strings.Contains(err.Message, tt.msg) {
				t.Errorf("got %d param %q: %s; want param %q and %q", err.Status, err.Param, err.Message, tt.param, tt.msg)
			}
		})
	}
}

// FuzzParseEmbeddings checks that no body panics the parser and that an
// accepted body always has a model and exactly one kind of input.
func FuzzParseEmbeddings(f *testing.F) {
	for _, s := range []string{`{"model":"m","input":"x"}`, `{"model":"m","input":[[1,2],[3]]}`, `{"model":"m","input":[1,"a"]}`,
		`{"model":"m","input":["a","b"],"dimensions":3,"encoding_format":"base64"}`, `{"model":"m","input":[]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := parseEmbeddings(body)
		if err != nil {
			if err.Status != 400 {
				t.Fatalf("status %d", err.Status)
			}
			return
		}
		if p.Model == "" || (p.Texts == nil) == (p.Tokens == nil) {
			t.Fatalf("accepted %s as %+v", body, p)
		}
		for _, s := range p.Texts {
			if s == "" {
				t.Fatalf("accepted an empty text in %s", body)
			}
		}
		for _, ids := range p.Tokens {
			if len(ids) == 0 {
				t.Fatalf("accepted an empty token array in %s", body)
			}
		}
	})
}
