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
