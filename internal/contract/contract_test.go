package contract

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/jsonx"
)

const msgs = `"messages":[{"role":"user","content":"hi"}]`

// The invalid requests of the parity report (each one OpenAI refuses with
// 400), and the valid shapes the official SDKs send, per endpoint.
func TestValidate(t *testing.T) {
	long := func(n int) string { return strings.Repeat("k", n) }
	meta := func(n int) string {
		var ms []string
		for i := range n {
			ms = append(ms, `"k`+strings.Repeat("x", i)+`":"v"`)
		}
		return "{" + strings.Join(ms, ",") + "}"
	}
	tests := []struct {
		name        string
		body        Body
		json        string
		param, code string // "" for a valid body
	}{
		{"minimal chat", ChatCompletions, `{"model":"m",` + msgs + `}`, "", ""},
		{"reasoning_effort foo", ChatCompletions, `{"model":"m",` + msgs + `,"reasoning_effort":"foo"}`, "reasoning_effort", CodeInvalidValue},
		{"reasoning_effort high", ChatCompletions, `{"model":"m",` + msgs + `,"reasoning_effort":"high"}`, "", ""},
		{"service_tier foo", ChatCompletions, `{"model":"m",` + msgs + `,"service_tier":"foo"}`, "service_tier", CodeInvalidValue},
		{"metadata 16 keys", ChatCompletions, `{"model":"m",` + msgs + `,"metadata":` + meta(16) + `}`, "", ""},
		{"metadata 17 keys", ChatCompletions, `{"model":"m",` + msgs + `,"metadata":` + meta(17) + `}`, "metadata", CodeTooManyMembers},
		{"metadata key 64", ChatCompletions, `{"model":"m",` + msgs + `,"metadata":{"` + long(64) + `":"v"}}`, "", ""},
		{"metadata key 65", ChatCompletions, `{"model":"m",` + msgs + `,"metadata":{"` + long(65) + `":"v"}}`, "metadata." + long(65), CodeStringTooLong},
		{"metadata value 512", ChatCompletions, `{"model":"m",` + msgs + `,"metadata":{"k":"` + long(512) + `"}}`, "", ""},
		{"metadata value 513", ChatCompletions, `{"model":"m",` + msgs + `,"metadata":{"k":"` + long(513) + `"}}`, "metadata.k", CodeStringTooLong},
		{"metadata value number", ChatCompletions, `{"model":"m",` + msgs + `,"metadata":{"k":1}}`, "metadata.k", CodeInvalidType},
		{"modalities empty", ChatCompletions, `{"model":"m",` + msgs + `,"modalities":[]}`, "modalities", CodeEmptyArray},
		{"modalities unknown", ChatCompletions, `{"model":"m",` + msgs + `,"modalities":["text","video"]}`, "modalities[1]", CodeInvalidValue},
		{"audio format unknown", ChatCompletions, `{"model":"m",` + msgs + `,"audio":{"voice":"alloy","format":"ogg"}}`, "audio.format", CodeInvalidValue},
		{"audio custom voice", ChatCompletions, `{"model":"m",` + msgs + `,"audio":{"voice":{"id":"v_1"},"format":"mp3"}}`, "", ""},
		{"unknown content part", ChatCompletions, `{"model":"m","messages":[{"role":"user","content":[{"type":"video_url","video_url":{}}]}]}`, "messages[0].content[0].type", CodeInvalidValue},
		{"role not a string", ChatCompletions, `{"model":"m","messages":[{"role":1,"content":"x"}]}`, "messages[0].role", CodeInvalidType},
		{"no role", ChatCompletions, `{"model":"m","messages":[{"content":"x"}]}`, "messages[0].role", CodeMissing},
		{"tool name pattern", ChatCompletions, `{"model":"m",` + msgs + `,"tools":[{"type":"function","function":{"name":"get weather"}}]}`, "tools[0].function.name", CodeInvalidValue},
		{"tool name 65", ChatCompletions, `{"model":"m",` + msgs + `,"tools":[{"type":"function","function":{"name":"` + long(65) + `"}}]}`, "tools[0].function.name", CodeStringTooLong},
		{"null optional members", ChatCompletions, `{"model":"m",` + msgs + `,"user":null,"tools":null,"metadata":null,"stop":null,"n":null}`, "", ""},
		{"null required member", ChatCompletions, `{"model":null,` + msgs + `}`, "model", CodeInvalidType},
		{"unknown members pass", ChatCompletions, `{"model":"m",` + msgs + `,"top_k":5,"vendor_extra":{"a":[1]}}`, "", ""},
		{"case variant refused", ChatCompletions, `{"model":"m",` + msgs + `,"Temperature":1}`, "Temperature", CodeUnknown},
		{"escaped key found", ChatCompletions, `{"model":"m",` + msgs + `,"\u006e":0}`, "n", CodeIntegerTooSmall},
		{"integer as decimal", ChatCompletions, `{"model":"m",` + msgs + `,"n":2.0}`, "n", CodeInvalidType},
		{"integer out of range", ChatCompletions, `{"model":"m",` + msgs + `,"seed":99999999999999999999}`, "seed", CodeInvalidValue},
		{"temperature 2", ChatCompletions, `{"model":"m",` + msgs + `,"temperature":2}`, "", ""},
		{"temperature 2.0001", ChatCompletions, `{"model":"m",` + msgs + `,"temperature":2.0001}`, "temperature", CodeDecimalTooLarge},
		{"stop 5", ChatCompletions, `{"model":"m",` + msgs + `,"stop":["a","b","c","d","e"]}`, "stop", CodeArrayTooLong},
		{"logit_bias 101", ChatCompletions, `{"model":"m",` + msgs + `,"logit_bias":{"50256":101}}`, "logit_bias.50256", CodeIntegerTooLarge},
		{"escaped enum value", ChatCompletions, `{"model":"m",` + msgs + `,"reasoning_effort":"\u006cow"}`, "", ""},
		{"tool conversation", ChatCompletions, `{"model":"m","messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"ok"}]}`, "", ""},

		{"completion prompt tokens", Completions, `{"model":"m","prompt":[[1,2],[3]]}`, "", ""},
		{"completion logprobs 6", Completions, `{"model":"m","prompt":"p","logprobs":6}`, "logprobs", CodeIntegerTooLarge},
		{"completion prompt object", Completions, `{"model":"m","prompt":{}}`, "prompt", CodeInvalidType},

		{"embedding 3001 token ids", Embeddings, `{"model":"m","input":[` + strings.TrimSuffix(strings.Repeat("1,", 3001), ",") + `]}`, "", ""},
		{"embedding empty text", Embeddings, `{"model":"m","input":["a",""]}`, "input[1]", CodeEmptyString},
		{"embedding format", Embeddings, `{"model":"m","input":"a","encoding_format":"int8"}`, "encoding_format", CodeInvalidValue},

		{"image n 11", ImageGenerations, `{"prompt":"p","n":11}`, "n", CodeIntegerTooLarge},
		{"image style", ImageGenerations, `{"prompt":"p","style":"bright"}`, "style", CodeInvalidValue},

		{"responses minimal", Responses, `{"model":"m","input":"hi"}`, "", ""},
		{"responses effort", Responses, `{"model":"m","input":"hi","reasoning":{"effort":"foo"}}`, "reasoning.effort", CodeInvalidValue},
		{"responses max_output_tokens 15", Responses, `{"model":"m","input":"hi","max_output_tokens":15}`, "max_output_tokens", CodeIntegerTooSmall},
		{"responses items", Responses, `{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":"hi"}]},{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"x"}]}`, "", ""},
		{"responses function tool without strict", Responses, `{"model":"m","input":"hi","tools":[{"type":"function","name":"f"}]}`, "", ""},
		{"responses unknown item", Responses, `{"model":"m","input":[{"type":"foo"}]}`, "input[0].type", CodeInvalidValue},
		{"responses bad role", Responses, `{"model":"m","input":[{"role":"robot","content":"x"}]}`, "input[0].role", CodeInvalidValue},
		{"responses metadata 17", Responses, `{"model":"m","input":"hi","metadata":` + meta(17) + `}`, "metadata", CodeTooManyMembers},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := jsonx.Check([]byte(tt.json), 128); err != nil {
				t.Fatal(err)
			}
			err := Validate(tt.body, []byte(tt.json))
			if tt.code == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("accepted")
			}
			if err.Status != 400 || err.Type != "invalid_request_error" || err.Param != tt.param || err.Code != tt.code {
				t.Errorf("got %d %s %s param %q (%s); want param %q code %s", err.Status, err.Type, err.Code, err.Param, err.Message, tt.param, tt.code)
			}
			if !strings.Contains(err.Message, tt.param) {
				t.Errorf("message %q does not name %q", err.Message, tt.param)
			}
		})
	}
}

// Multipart fields are read as the JSON their schema expects.
func TestField(t *testing.T) {
	tests := []struct {
		body        Body
		name, value string
		param, code string
	}{
		{Transcriptions, "temperature", "0.5", "", ""},
		{Transcriptions, "temperature", "1.5", "temperature", CodeDecimalTooLarge},
		{Transcriptions, "temperature", "warm", "temperature", CodeInvalidType},
		{Transcriptions, "response_format", "srt", "", ""},
		{Transcriptions, "response_format", "docx", "response_format", CodeInvalidValue},
		{Transcriptions, "timestamp_granularities[]", "word", "", ""},
		{Transcriptions, "timestamp_granularities[]", "line", "timestamp_granularities", CodeInvalidValue},
		{Transcriptions, "include[]", "logprobs", "", ""},
		{Transcriptions, "chunking_strategy", "auto", "", ""},
		{Transcriptions, "chunking_strategy", `{"type":"server_vad","threshold":0.4}`, "", ""},
		{Transcriptions, "chunking_strategy", `{"type":"client_vad"}`, "chunking_strategy.type", CodeInvalidValue},
		{Transcriptions, "stream", "false", "", ""},
		{Transcriptions, "Language", "en", "Language", CodeUnknown},
		{Transcriptions, "vendor_option", "x", "", ""},
		{ImageEdits, "n", "10", "", ""},
		{ImageEdits, "n", "0", "n", CodeIntegerTooSmall},
		{ImageEdits, "n", "two", "n", CodeInvalidType},
		{ImageEdits, "quality", "ultra", "quality", CodeInvalidValue},
		{ImageEdits, "input_fidelity", "high", "", ""},
		{ImageEdits, "prompt", `{"not":"json, just text"}`, "", ""},
	}
	for _, tt := range tests {
		err := Field(tt.body, tt.name, tt.value)
		switch {
		case tt.code == "" && err != nil:
			t.Errorf("%s=%q refused: %v", tt.name, tt.value, err)
		case tt.code != "" && err == nil:
			t.Errorf("%s=%q accepted", tt.name, tt.value)
		case tt.code != "" && (err.Param != tt.param || err.Code != tt.code):
			t.Errorf("%s=%q: got %s %q (%s), want %s %q", tt.name, tt.value, err.Code, err.Param, err.Message, tt.code, tt.param)
		}
	}
}

func TestForm(t *testing.T) {
	tests := []struct {
		body        Body
		counts      map[string]int
		param, code string
	}{
		{ImageEdits, map[string]int{"image": 16, "prompt": 1}, "", ""},
		{ImageEdits, map[string]int{"image": 17, "prompt": 1}, "image", CodeArrayTooLong},
		{ImageEdits, map[string]int{"image": 1}, "prompt", CodeMissing},
		{Transcriptions, map[string]int{"file": 1, "model": 1, "known_speaker_names": 5}, "known_speaker_names", CodeArrayTooLong},
		{Transcriptions, map[string]int{"model": 1}, "file", CodeMissing},
	}
	for _, tt := range tests {
		err := Form(tt.body, tt.counts)
		switch {
		case tt.code == "" && err != nil:
			t.Errorf("%v refused: %v", tt.counts, err)
		case tt.code != "" && (err == nil || err.Param != tt.param || err.Code != tt.code):
			t.Errorf("%v: got %v, want %s %q", tt.counts, err, tt.code, tt.param)
		}
	}
}

// FuzzValidate checks that no well-formed body panics the validator and
// that every refusal is a 400 whose JSON body names a param.
func FuzzValidate(f *testing.F) {
	for _, bb := range benchBodies {
		f.Add(bb.json)
	}
	f.Add(`{"model":"m","input":[{"type":"message","role":"user","content":[{"type":"input_image","image_url":"x"}]}]}`)
	f.Fuzz(func(t *testing.T, body string) {
		if jsonx.Check([]byte(body), 128) != nil {
			return
		}
		for _, b := range []Body{ChatCompletions, Completions, Embeddings, ImageGenerations, Responses} {
			err := Validate(b, []byte(body))
			if err != nil && (err.Status != 400 || err.Code == "" || !json.Valid(err.JSON())) {
				t.Fatalf("bad refusal of %q: %v", body, err)
			}
		}
	})
}
