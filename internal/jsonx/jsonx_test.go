package jsonx

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

var checkCases = []struct {
	name string
	in   string
	err  string // substring; "" means valid
}{
	{"object", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, ""},
	{"scalars", `[1,-0.5,2e10,1E-3,true,false,null,"x"]`, ""},
	{"whitespace", " \t\n{ \"a\" : [ ] , \"b\" : { } }\r\n", ""},
	{"unicode", `{"s":"héllo wörld 日本 🎉","e":"\u00e9\n\"\\\/"}`, ""},
	{"empty", ``, "unexpected end"},
	{"trailing", `{} {}`, "after the top-level value"},
	{"trailing comma", `{"a":1,}`, "expected a string object key"},
	{"single quotes", `{'a':1}`, "expected a string object key"},
	{"bad literal", `{"a":tru}`, "expected true"},
	{"leading zero", `{"a":01}`, "expected ',' or '}'"},
	{"bare minus", `{"a":-}`, "invalid number"},
	{"dot no digits", `{"a":1.}`, "no digits after"},
	{"exp no digits", `{"a":1e}`, "no digits in exponent"},
	{"duplicate key", `{"model":"a","model":"b"}`, "duplicate object key"},
	{"duplicate nested", `{"m":[{"role":"user","role":"system"}]}`, "duplicate object key"},
	{"duplicate escaped", `{"model":"a","\u006dodel":"b"}`, "duplicate object key"},
	{"same key other objects", `{"a":{"x":1},"b":{"x":1}}`, ""},
	{"invalid utf8", "{\"a\":\"\xff\"}", "invalid UTF-8"},
	{"truncated utf8", "{\"a\":\"\xe6\x97\"}", "invalid UTF-8"},
	{"control char", "{\"a\":\"x\ny\"}", "control character"},
	{"bad escape", `{"a":"\x"}`, "invalid escape"},
	{"short unicode", `{"a":"\u12"}`, "invalid \\u escape"},
	{"unterminated", `{"a":"abc`, "unterminated string"},
	{"too deep", strings.Repeat("[", 65) + strings.Repeat("]", 65), "nested deeper than 64"},
	{"deep enough", strings.Repeat("[", 64) + strings.Repeat("]", 64), ""},
}

func TestCheck(t *testing.T) {
	for _, tc := range checkCases {
		t.Run(tc.name, func(t *testing.T) {
			err := Check([]byte(tc.in), 64)
			if tc.err == "" {
				if err != nil {
					t.Fatalf("Check(%q) = %v, want nil", tc.in, err)
				}
				return
			}
			var se *SyntaxError
			if !errors.As(err, &se) || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("Check(%q) = %v, want SyntaxError containing %q", tc.in, err, tc.err)
			}
		})
	}
}

func TestCheckManyKeysUsesSet(t *testing.T) {
	var b strings.Builder
	b.WriteString("{")
	for i := range 40 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"k` + string(rune('a'+i%26)) + string(rune('a'+i/26)) + `":1`)
	}
	ok := b.String() + "}"
	if err := Check([]byte(ok), 8); err != nil {
		t.Fatalf("40 distinct keys: %v", err)
	}
	dup := b.String() + `,"kaa":2}`
	if err := Check([]byte(dup), 8); err == nil {
		t.Fatal("duplicate among 41 keys not found")
	}
}

func TestField(t *testing.T) {
	body := []byte(`{"model" : "gpt-4o", "nested":{"model":"x"}, "n":2, "s":"a\"b}", "arr":[{"a":"]"}], "last":null}`)
	cases := []struct {
		key, want string
		ok        bool
	}{
		{"model", `"gpt-4o"`, true},
		{"nested", `{"model":"x"}`, true},
		{"n", `2`, true},
		{"s", `"a\"b}"`, true},
		{"arr", `[{"a":"]"}]`, true},
		{"last", `null`, true},
		{"missing", ``, false},
		{"a", ``, false},
	}
	for _, tc := range cases {
		got, ok := Field(body, tc.key)
		if ok != tc.ok || string(got) != tc.want {
			t.Errorf("Field(%q) = %q, %v; want %q, %v", tc.key, got, ok, tc.want, tc.ok)
		}
	}
	if _, ok := Field([]byte(`[1]`), "a"); ok {
		t.Error("Field on array reported a key")
	}
}

func TestSet(t *testing.T) {
	cases := []struct {
		name, in, key, val, want string
	}{
		{"replace", `{"model":"a","x":1}`, "model", `"b"`, `{"model":"b","x":1}`},
		{"replace keeps spacing", `{ "x" : 1 , "model" : "a" }`, "model", `"bb"`, `{ "x" : 1 , "model" : "bb" }`},
		{"add", `{"x":1}`, "model", `"b"`, `{"x":1,"model":"b"}`},
		{"add to empty", `{ }`, "model", `"b"`, `{ "model":"b"}`},
		{"replace object", `{"so":{"a":1},"z":2}`, "so", `{"include_usage":true}`, `{"so":{"include_usage":true},"z":2}`},
		{"not nested", `{"o":{"model":"a"}}`, "model", `"b"`, `{"o":{"model":"a"},"model":"b"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Set([]byte(tc.in), tc.key, []byte(tc.val))
			if err != nil || string(got) != tc.want {
				t.Fatalf("Set = %s, %v; want %s", got, err, tc.want)
			}
			if !json.Valid(got) {
				t.Fatalf("result is not JSON: %s", got)
			}
		})
	}
	if _, err := Set([]byte(`[]`), "a", []byte(`1`)); !errors.Is(err, ErrNotObject) {
		t.Fatalf("Set on array: %v", err)
	}
}

func TestDelete(t *testing.T) {
	cases := []struct{ name, in, key, want string }{
		{"middle", `{"a":1,"usage":null,"b":2}`, "usage", `{"a":1,"b":2}`},
		{"first", `{"usage":{"x":1},"b":2}`, "usage", `{"b":2}`},
		{"last", `{"a":1, "usage" : null }`, "usage", `{"a":1 }`},
		{"only", `{"usage":null}`, "usage", `{}`},
		{"absent", `{"a":1}`, "usage", `{"a":1}`},
		{"escaped key", `{"a":1,"\u0075sage":null}`, "usage", `{"a":1}`},
		{"colon in earlier string", `{"a":"x:\"y","usage":1}`, "usage", `{"a":"x:\"y"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := AppendDelete(nil, []byte(tc.in), tc.key)
			if err != nil || string(got) != tc.want {
				t.Fatalf("AppendDelete = %s, %v; want %s", got, err, tc.want)
			}
		})
	}
}

func TestEach(t *testing.T) {
	var got []string
	err := Each([]byte(` { "a" : 1 , "b\u0063":{"x":[1,"}"]},"d":"e" } `), func(k, v []byte) bool {
		got = append(got, string(k)+"="+string(v))
		return true
	})
	want := []string{`a=1`, `bc={"x":[1,"}"]}`, `d="e"`}
	if err != nil || strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("Each = %v, %v; want %v", got, err, want)
	}
	n := 0
	_ = Each([]byte(`{"a":1,"b":2}`), func(k, v []byte) bool { n++; return false })
	if n != 1 {
		t.Errorf("Each did not stop: %d calls", n)
	}
	if err := Each([]byte(`[1]`), func(k, v []byte) bool { return true }); !errors.Is(err, ErrNotObject) {
		t.Errorf("Each on array: %v", err)
	}
}

func FuzzCheck(f *testing.F) {
	for _, tc := range checkCases {
		f.Add([]byte(tc.in))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if Check(b, 64) != nil {
			return
		}
		if !json.Valid(b) {
			t.Fatalf("Check accepted what encoding/json rejects: %q", b)
		}
		if _, ok := Field(b, "model"); ok || len(b) > 0 && strings.HasPrefix(strings.TrimSpace(string(b)), "{") {
			out, err := Set(b, "model", []byte(`"patched"`))
			if err != nil {
				t.Fatalf("Set on a valid object: %v", err)
			}
			if err := Check(out, 64); err != nil {
				t.Fatalf("Set produced invalid JSON %q: %v", out, err)
			}
			if got, _ := Field(out, "model"); string(got) != `"patched"` {
				t.Fatalf("Field after Set = %q", got)
			}
			del, err := AppendDelete(nil, out, "model")
			if err != nil || Check(del, 64) != nil {
				t.Fatalf("AppendDelete produced invalid JSON %q: %v", del, err)
			}
			if _, ok := Field(del, "model"); ok {
				t.Fatalf("AppendDelete left the key: %q", del)
			}
		}
	})
}

func TestCheckObject(t *testing.T) {
	keys := []string{"model", "usage", "error", "choices"}
	spans := make([]Span, len(keys))
	b := []byte(` {"id":"x", "model" : "m1","choices":[{"d":"}"}],"\u0075sage":null,"o":{"model":"inner"}} `)
	closeAt, err := CheckObject(b, 8, keys, spans)
	if err != nil {
		t.Fatal(err)
	}
	if b[closeAt] != '}' || closeAt != len(b)-2 {
		t.Errorf("closeAt %d", closeAt)
	}
	want := map[string]string{"model": `"m1"`, "usage": `null`, "error": "", "choices": `[{"d":"}"}]`}
	for i, k := range keys {
		if got := string(spans[i].Value(b)); got != want[k] {
			t.Errorf("%s = %q, want %q", k, got, want[k])
		}
	}
	if got := string(b[spans[0].KeyStart:spans[0].ValEnd]); got != `"model" : "m1"` {
		t.Errorf("model member %q", got)
	}
	out := AppendEdits(nil, b,
		Edit{Start: spans[0].ValStart, End: spans[0].ValEnd, With: []byte(`"pub"`)},
		Removal(b, spans[1]))
	if string(out) != ` {"id":"x", "model" : "pub","choices":[{"d":"}"}],"o":{"model":"inner"}} ` {
		t.Errorf("edited: %s", out)
	}
	if _, err := CheckObject([]byte(`[1]`), 8, keys, spans); err == nil {
		t.Error("array accepted")
	}
	if _, err := CheckObject([]byte(`{"a":{"b":1,"b":2}}`), 8, keys, spans); err != nil {
		t.Errorf("a nested duplicate is the vendor's business: %v", err)
	}
	if _, err := CheckObject([]byte(`{"a":1,"a":2}`), 8, keys, spans); err == nil {
		t.Error("duplicate accepted")
	}
	if closeAt, err := CheckObject([]byte(`{}`), 8, keys, spans); err != nil || closeAt != 1 || spans[0].Found() {
		t.Errorf("empty object: %d %v %v", closeAt, err, spans)
	}
}

func FuzzCheckObject(f *testing.F) {
	for _, tc := range checkCases {
		f.Add([]byte(tc.in))
	}
	keys := []string{"model", "usage"}
	f.Fuzz(func(t *testing.T, b []byte) {
		spans := make([]Span, 2)
		closeAt, err := CheckObject(b, 64, keys, spans)
		if err != nil {
			return
		}
		// CheckObject looks for duplicate keys at the top level only: Check
		// may refuse what it accepts for a nested duplicate, nothing else.
		var se *SyntaxError
		if err := Check(b, 64); (err != nil && !(errors.As(err, &se) && strings.HasPrefix(se.Msg, "duplicate object key"))) || b[closeAt] != '}' {
			t.Fatalf("CheckObject accepted what Check rejects (%v): %q", err, b)
		}
		for i, k := range keys {
			v, ok := Field(b, k)
			if ok != spans[i].Found() || string(v) != string(spans[i].Value(b)) {
				t.Fatalf("%s: span %q vs Field %q", k, spans[i].Value(b), v)
			}
		}
		var edits []Edit
		if spans[1].Found() {
			edits = append(edits, Removal(b, spans[1]))
		}
		out := AppendEdits(nil, b, edits...)
		if _, err := CheckObject(out, 64, keys, make([]Span, 2)); err != nil {
			t.Fatalf("removal broke %q into %q", b, out)
		}
		if _, ok := Field(out, "usage"); ok {
			t.Fatalf("usage still in %q", out)
		}
	})
}

func BenchmarkCheckObject(b *testing.B) {
	keys := []string{"model", "usage", "error", "choices"}
	spans := make([]Span, len(keys))
	for b.Loop() {
		if _, err := CheckObject(benchChunk, 64, keys, spans); err != nil {
			b.Fatal(err)
		}
	}
}

// Strings are scanned eight bytes at a time: every byte value at every
// position of a window, and strings ending at every offset, must be judged
// as byte by byte (encoding/json agrees on what a valid string is, once
// invalid UTF-8, which it lets through, is refused).
func TestCheckStringBytes(t *testing.T) {
	for n := 0; n <= 19; n++ {
		for at := 0; at < n; at++ {
			for c := 0; c < 256; c++ {
				s := []byte(`"` + strings.Repeat("a", n) + `"`)
				s[1+at] = byte(c)
				err := Check(s, 8)
				if (err == nil) != validString(s) {
					t.Fatalf("%q: Check says %v, want valid=%v", s, err, validString(s))
				}
			}
		}
	}
	// Multi-byte runes and escapes across window edges.
	for n := 0; n <= 16; n++ {
		for _, ins := range []string{"é", "日", "🎉", `\"`, `\\`, `\u00e9`, "\xe6\x97", "\x7f"} {
			s := []byte(`"` + strings.Repeat("b", n) + ins + strings.Repeat("c", 9) + `"`)
			if err := Check(s, 8); (err == nil) != validString(s) {
				t.Fatalf("%q: Check says %v, want valid=%v", s, err, validString(s))
			}
		}
	}
}

func validString(s []byte) bool { return json.Valid(s) && utf8.Valid(s) }

func TestCheckObjectProbe(t *testing.T) {
	keys := []string{"model", "choices"}
	spans := make([]Span, len(keys))
	cases := []struct {
		in  string
		hit bool
	}{
		{`{"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`, true},
		{`{"choices":[{"index":0,"finish_reason" : "length"}],"model":"m"}`, true},
		{`{"choices":[{"index":0,"finish_reason":null}]}`, false},
		{`{"choices":[{"index":0,"delta":{"content":"\"finish_reason\":\"stop\""},"finish_reason":null}]}`, false},
		{`{"choices":[{"delta":{"finish_reason":"stop"}}]}`, false},         // too deep
		{`{"other":[{"finish_reason":"stop"}],"choices":[]}`, false},        // not in choices
		{`{"choices":[{"a":1},{"finish_r\u0065ason":"stop"}]}`, true},       // escaped key
		{`{"choices":{"0":{"finish_reason":"stop"}}}`, true},                // an object of objects
		{`{"finish_reason":"stop","choices":[{"finish_reason":1}]}`, false}, // top level, or not a string
	}
	for _, tc := range cases {
		_, hit, err := CheckObjectProbe([]byte(tc.in), 8, keys, spans, 1, "finish_reason")
		if err != nil || hit != tc.hit {
			t.Errorf("%s: hit %v, %v; want %v", tc.in, hit, err, tc.hit)
		}
		if got, ok := Field([]byte(tc.in), "choices"); ok != spans[1].Found() || string(got) != string(spans[1].Value([]byte(tc.in))) {
			t.Errorf("%s: choices span %q, Field %q", tc.in, spans[1].Value([]byte(tc.in)), got)
		}
	}
	if _, hit, err := CheckObjectProbe([]byte(cases[0].in), 8, keys, spans, -1, "finish_reason"); err != nil || hit {
		t.Errorf("no probe: hit %v, %v", hit, err)
	}
}

// TestMembers checks that Members finds what Field finds, every key in one
// pass, and the closing brace Set would insert before.
func TestMembers(t *testing.T) {
	keys := []string{"model", "stream_options", "missing"}
	tests := []struct {
		name, body string
		closeAt    int
	}{
		{"usual", `{"model":"m","messages":[{"role":"user","content":"}"}],"stream":true}`, -2},
		{"repeated key: the first", `{"model":"a","stream_options":null,"model":"b"}`, -2},
		{"escaped key", `{"\u006dodel" : "m" , "stream_options" :{"include_usage":false} }`, -2},
		{"nested key is not top-level", `{"x":{"model":"no"}}`, -2},
		{"empty", ` {} `, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := []byte(tc.body)
			spans := make([]Span, len(keys))
			closeAt, err := Members(b, keys, spans)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.closeAt
			if want == -2 {
				want = bytes.LastIndexByte(b, '}')
			}
			if closeAt != want {
				t.Errorf("closeAt %d, want %d", closeAt, want)
			}
			for i, k := range keys {
				v, ok := Field(b, k)
				if spans[i].Found() != ok || string(spans[i].Value(b)) != string(v) {
					t.Errorf("%s: span value %q (found %v), Field %q (%v)", k, spans[i].Value(b), spans[i].Found(), v, ok)
				}
				if ok && !bytes.HasPrefix(b[spans[i].KeyStart:], []byte(`"`)) {
					t.Errorf("%s: KeyStart %d is not at the key", k, spans[i].KeyStart)
				}
			}
		})
	}
	for _, bad := range []string{`[1]`, `{"a":1`, ``, `{"a" 1}`} {
		if _, err := Members([]byte(bad), keys, make([]Span, len(keys))); err == nil {
			t.Errorf("Members(%q): no error", bad)
		}
	}
}
