package responses

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Event payloads. evBase is filled in by emit.
type (
	evBase struct {
		Type           string `json:"type"`
		SequenceNumber int64  `json:"sequence_number"`
	}
	evResponse struct {
		evBase
		Response *Response `json:"response"`
	}
	evItem struct {
		evBase
		OutputIndex int `json:"output_index"`
		Item        any `json:"item"`
	}
	evPart struct {
		evBase
		ItemID       string `json:"item_id"`
		OutputIndex  int    `json:"output_index"`
		ContentIndex int    `json:"content_index"`
		Part         any    `json:"part"`
	}
	evDelta struct {
		evBase
		ItemID       string `json:"item_id"`
		OutputIndex  int    `json:"output_index"`
		ContentIndex int    `json:"content_index"`
		Delta        string `json:"delta"`
		Logprobs     *[]any `json:"logprobs,omitempty"`
	}
	evDone struct {
		evBase
		ItemID       string  `json:"item_id"`
		OutputIndex  int     `json:"output_index"`
		ContentIndex int     `json:"content_index"`
		Text         *string `json:"text,omitempty"`
		Refusal      *string `json:"refusal,omitempty"`
		Logprobs     *[]any  `json:"logprobs,omitempty"`
	}
	evArgsDelta struct {
		evBase
		ItemID      string `json:"item_id"`
		OutputIndex int    `json:"output_index"`
		Delta       string `json:"delta"`
	}
	evError struct {
		evBase
		Code    string  `json:"code"`
		Message string  `json:"message"`
		Param   *string `json:"param"`
	}
	evSearch struct {
		evBase
		ItemID      string `json:"item_id"`
		OutputIndex int    `json:"output_index"`
	}
	evInputDone struct {
		evBase
		ItemID      string `json:"item_id"`
		OutputIndex int    `json:"output_index"`
		Input       string `json:"input"`
	}
	evArgsDone struct {
		evBase
		ItemID      string `json:"item_id"`
		OutputIndex int    `json:"output_index"`
		Name        string `json:"name"`
		Arguments   string `json:"arguments"`
	}
)

func (s *Stream) emitResponse(typ string, r Response) {
	ev := evResponse{Response: &r}
	s.emit(typ, &ev.evBase, &ev)
}

// emit numbers and encodes one event (without escaping <, > and &, which
// JSON does not need).
func (s *Stream) emit(typ string, base *evBase, v any) {
	base.Type, base.SequenceNumber = typ, s.seq
	s.seq++
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Every payload is plain data and validated JSON, so this cannot
		// happen; if it did, the client gets an error event, not a panic.
		buf.Reset()
		msg := fmt.Sprintf("The gateway could not encode a %s event.", typ)
		typ = "error"
		_ = enc.Encode(evError{evBase: evBase{Type: typ, SequenceNumber: base.SequenceNumber}, Code: "server_error", Message: msg})
	}
	s.events = append(s.events, Event{Type: typ, Data: bytes.TrimRight(buf.Bytes(), "\n")})
}
