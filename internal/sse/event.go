package sse

// Event writes one named event ("event: name" then "data: payload"), the
// framing of typed streams such as OpenAI's Responses API. name and payload
// must not contain a newline. It does not flush.
func (w *Writer) Event(name string, payload []byte) error {
	w.buf = append(w.buf[:0], "event: "...)
	w.buf = append(w.buf, name...)
	w.buf = append(w.buf, "\ndata: "...)
	w.buf = append(w.buf, payload...)
	w.buf = append(w.buf, '\n', '\n')
	w.arm()
	_, err := w.w.Write(w.buf)
	return err
}
