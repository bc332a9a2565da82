package sse

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// Named events written by Writer.Event read back with their names.
func TestWriterEvent(t *testing.T) {
	rec := httptest.NewRecorder()
	w := NewWriter(rec)
	for _, e := range []ev{{"response.created", "", `{"a":1}`}, {"response.output_text.delta", "", `{"delta":"hi"}`}} {
		if err := w.Event(e.typ, []byte(e.data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Data([]byte(`{"plain":true}`)); err != nil {
		t.Fatal(err)
	}
	if rec.Body.Len() != 0 || rec.Flushed {
		t.Fatalf("sent before Flush: %q", rec.Body.String())
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "event: response.created\ndata: {\"a\":1}\n\nevent: response.output_text.delta\ndata: {\"delta\":\"hi\"}\n\ndata: {\"plain\":true}\n\n"
	if got := rec.Body.String(); got != want {
		t.Fatalf("wrote %q, want %q", got, want)
	}
	got, err := readAll(NewReader(strings.NewReader(want), 0))
	wantEv := []ev{{"response.created", "", `{"a":1}`}, {"response.output_text.delta", "", `{"delta":"hi"}`}, {"", "", `{"plain":true}`}}
	if err != nil || !equal(got, wantEv) {
		t.Fatalf("read back %v, %v", got, err)
	}
}

// Raw frames pass through byte for byte, between the events around them,
// and read back as the events they are.
func TestWriterRaw(t *testing.T) {
	tests := []struct {
		name  string
		frame string
		want  []ev
	}{
		{"one named event", "event: message_start\ndata: {\"type\":\"message_start\"}\n\n",
			[]ev{{"message_start", "", `{"type":"message_start"}`}}},
		{"two events in one frame", "event: ping\ndata: {}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
			[]ev{{"ping", "", `{}`}, {"message_stop", "", `{"type":"message_stop"}`}}},
		{"a plain data event", "data: {\"x\":1}\n\n", []ev{{"", "", `{"x":1}`}}},
		{"nothing", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			w := NewWriter(rec)
			if err := w.Data([]byte(`{"before":true}`)); err != nil {
				t.Fatal(err)
			}
			if err := w.Raw([]byte(tt.frame)); err != nil {
				t.Fatal(err)
			}
			if err := w.Event("after", []byte(`{}`)); err != nil {
				t.Fatal(err)
			}
			if rec.Body.Len() != 0 {
				t.Fatalf("sent before Flush: %q", rec.Body.String())
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			want := "data: {\"before\":true}\n\n" + tt.frame + "event: after\ndata: {}\n\n"
			if got := rec.Body.String(); got != want {
				t.Fatalf("wrote %q, want %q", got, want)
			}
			got, err := readAll(NewReader(strings.NewReader(want), 0))
			wantEv := append(append([]ev{{"", "", `{"before":true}`}}, tt.want...), ev{"after", "", `{}`})
			if err != nil || !equal(got, wantEv) {
				t.Fatalf("read back %v, %v; want %v", got, err, wantEv)
			}
		})
	}
}
