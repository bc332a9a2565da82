package openai

import (
	"testing"

	"github.com/modelgate/modelgate/internal/lifecycle"
	"github.com/modelgate/modelgate/internal/tokenize"
)

func TestParseCompletion(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		param   string // the refused param; "" with ok=false: no param
		ok      bool
		prompts int64
	}{
		{"string", `{"model":"m","prompt":"hi"}`, "", true, 1},
		{"strings", `{"model":"m","prompt":["a","b",""]}`, "", true, 3},
		{"tokens", `{"model":"m","prompt":[1212,318,257]}`, "", true, 1},
		{"token arrays", `{"model":"m","prompt":[[1212],[318,257]]}`, "", true, 2},
		{"every param", `{"model":"m","prompt":"hi","best_of":3,"echo":true,"frequency_penalty":-2,"logit_bias":{"50256":-100},
			"logprobs":5,"max_tokens":0,"n":3,"presence_penalty":2,"seed":-1,"stop":["a","b","c","d"],"stream":false,
			"suffix":"s","temperature":2,"top_p":0,"user":"u","unknown":[1]}`, "", true, 1},
		{"nulls", `{"model":"m","prompt":"hi","best_of":null,"echo":null,"logprobs":null,"max_tokens":null,"n":null,"stop":null,"suffix":null,"stream":null}`, "", true, 1},
		{"stream with usage", `{"model":"m","prompt":"hi","stream":true,"stream_options":{"include_usage":true}}`, "", true, 1},

		{"not json", `{"model":`, "", false, 0},
		{"missing model", `{"prompt":"hi"}`, "model", false, 0},
		{"model number", `{"model":1,"prompt":"hi"}`, "model", false, 0},
		{"missing prompt", `{"model":"m"}`, "prompt", false, 0},
		{"null prompt", `{"model":"m","prompt":null}`, "prompt", false, 0},
		{"empty array", `{"model":"m","prompt":[]}`, "prompt", false, 0},
		{"prompt number", `{"model":"m","prompt":5}`, "prompt", false, 0},
		{"prompt object", `{"model":"m","prompt":{"text":"hi"}}`, "prompt", false, 0},
		{"mixed array", `{"model":"m","prompt":["a",1]}`, "prompt[1]", false, 0},
		{"array of objects", `{"model":"m","prompt":[{}]}`, "prompt[0]", false, 0},
		{"negative token", `{"model":"m","prompt":[-1]}`, "prompt", false, 0},
		{"fractional token", `{"model":"m","prompt":[1.5]}`, "prompt[0]", false, 0},
		{"empty token array", `{"model":"m","prompt":[[1],[]]}`, "prompt[1]", false, 0},
		{"string in token array", `{"model":"m","prompt":[["a"]]}`, "prompt[0][0]", false, 0},
		{"max_tokens negative", `{"model":"m","prompt":"p","max_tokens":-1}`, "max_tokens", false, 0},
		{"max_tokens float", `{"model":"m","prompt":"p","max_tokens":1.5}`, "max_tokens", false, 0},
		{"max_tokens string", `{"model":"m","prompt":"p","max_tokens":"16"}`, "max_tokens", false, 0},
		{"n 0", `{"model":"m","prompt":"p","n":0}`, "n", false, 0},
		{"n 129", `{"model":"m","prompt":"p","n":129}`, "n", false, 0},
		{"temperature 2.1", `{"model":"m","prompt":"p","temperature":2.1}`, "temperature", false, 0},
		{"temperature negative", `{"model":"m","prompt":"p","temperature":-0.1}`, "temperature", false, 0},
		{"top_p 1.5", `{"model":"m","prompt":"p","top_p":1.5}`, "top_p", false, 0},
		{"stream string", `{"model":"m","prompt":"p","stream":"yes"}`, "stream", false, 0},
		{"stop five", `{"model":"m","prompt":"p","stop":["a","b","c","d","e"]}`, "stop", false, 0},
		{"stop number", `{"model":"m","prompt":"p","stop":1}`, "stop", false, 0},
		{"stream_options without stream", `{"model":"m","prompt":"p","stream_options":{"include_usage":true}}`, "stream_options", false, 0},
		{"include_usage string", `{"model":"m","prompt":"p","stream":true,"stream_options":{"include_usage":"yes"}}`, "stream_options.include_usage", false, 0},
		{"best_of 21", `{"model":"m","prompt":"p","best_of":21}`, "best_of", false, 0},
		{"best_of below n", `{"model":"m","prompt":"p","best_of":2,"n":3}`, "best_of", false, 0},
		{"best_of streamed", `{"model":"m","prompt":"p","best_of":2,"stream":true}`, "best_of", false, 0},
		{"logprobs 6", `{"model":"m","prompt":"p","logprobs":6}`, "logprobs", false, 0},
		{"echo string", `{"model":"m","prompt":"p","echo":"true"}`, "echo", false, 0},
		{"suffix number", `{"model":"m","prompt":"p","suffix":1}`, "suffix", false, 0},
		{"presence_penalty 3", `{"model":"m","prompt":"p","presence_penalty":3}`, "presence_penalty", false, 0},
		{"logit_bias out of range", `{"model":"m","prompt":"p","logit_bias":{"1":101}}`, "logit_bias.1", false, 0},
		{"case near-miss", `{"model":"m","prompt":"p","Max_Tokens":5}`, "Max_Tokens", false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, e := parseCompletion([]byte(tt.body))
			if tt.ok {
				if e != nil {
					t.Fatalf("refused: %v", e)
				}
				if p.Model != "m" || p.Prompts != tt.prompts || len(p.Prompt) == 0 {
					t.Errorf("params %+v", p)
				}
				return
			}
			if e == nil {
				t.Fatalf("accepted")
			}
			if e.Status != 400 || e.Param != tt.param {
				t.Errorf("status %d param %q (%s), want 400 %q", e.Status, e.Param, e.Message, tt.param)
			}
		})
	}
}

func TestParseCompletionFlags(t *testing.T) {
	p, e := parseCompletion([]byte(`{"model":"m","prompt":"p","stream":true,"stream_options":{"include_usage":true},"n":2,"best_of":3,"max_tokens":0}`))
	if e == nil {
		t.Fatal("best_of with stream accepted")
	}
	p, e = parseCompletion([]byte(`{"model":"m","prompt":"p","stream":true,"stream_options":{"include_usage":true},"n":2,"max_tokens":0}`))
	if e != nil || !p.Stream || !p.IncludeUsage || p.N != 2 || !p.HasMaxTokens || p.MaxTokens != 0 {
		t.Errorf("%+v %v", p, e)
	}
	p, _ = parseCompletion([]byte(`{"model":"m","prompt":"p","best_of":3}`))
	if p.HasMaxTokens || p.BestOf != 3 {
		t.Errorf("%+v", p)
	}
}

func FuzzParseCompletion(f *testing.F) {
	for _, s := range []string{`{"model":"m","prompt":"hi"}`, `{"model":"m","prompt":[[1],[2,3]]}`, `{"model":"m","prompt":["a",1]}`,
		`{"model":"m","prompt":"p","stop":["a","b","c","d","e"]}`} {
		f.Add([]byte(s))
	}
	tok := tokenize.NewSet().For("")
	f.Fuzz(func(t *testing.T, body []byte) {
		p, e := parseCompletion(body)
		if e != nil {
			if e.Status != 400 {
				t.Fatalf("status %d", e.Status)
			}
			return
		}
		if p.Model == "" || p.Prompts < 1 || len(p.Prompt) == 0 {
			t.Fatalf("accepted without model or prompt: %+v", p)
		}
		lifecycle.CountPrompts(tok, p.Prompt)
	})
}
