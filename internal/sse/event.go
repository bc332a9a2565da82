package sse

// Event queues one named event ("event: name" then "data: payload"), the
// framing of typed streams such as OpenAI's Responses API. name and payload
// must not contain a newline. Like Data, it sends nothing before Flush.
func (w *Writer) Event(name string, payload []byte) error {
	b := append(w.buf(), "event: "...)
	b = append(b, name...)
	b = append(b, "\ndata: "...)
	b = append(b, payload...)
	return w.queue(append(b, '\n', '\n'))
}

// Raw queues frame, bytes that are already whole SSE events (each ended
// by a blank line), as they are: a relay of a vendor's stream whose events
// pass through unchanged. Like Data, it sends nothing before Flush.
func (w *Writer) Raw(frame []byte) error {
	return w.queue(append(w.buf(), frame...))
}
