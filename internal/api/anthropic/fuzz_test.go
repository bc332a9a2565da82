package anthropic

import (
	"encoding/json"
	"testing"
)

// FuzzParseMessages feeds the Messages decoder arbitrary bodies, seeded
// from the table tests: parseMessages and, for what it accepts, toChat
// (both ways of options) must not panic, must answer with a 400 when they
// refuse; an accepted body's decoded request must marshal, and its chat
// translation must be valid JSON.
func FuzzParseMessages(f *testing.F) {
	for _, tc := range badBodies {
		if len(tc.body) < 64<<10 {
			f.Add([]byte(tc.body))
		}
	}
	for _, tc := range goodBodies {
		if len(tc.body) < 64<<10 {
			f.Add([]byte(tc.body))
		}
	}
	for _, tc := range chatCases {
		f.Add([]byte(tc.in))
	}
	for _, tc := range refusals {
		f.Add([]byte(msgBody(tc.in)))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		p, e := parseMessages(body)
		if e != nil {
			if e.Status != 400 || e.Message == "" {
				t.Fatalf("refusal %d %q", e.Status, e.Message)
			}
			return
		}
		if p.Model == "" || p.MaxTokens < 1 || len(p.Req.Messages) == 0 {
			t.Fatalf("accepted an incomplete request: %+v", p)
		}
		if b, err := json.Marshal(&p.Req); err != nil || !json.Valid(b) {
			t.Fatalf("the decoded request does not marshal: %v", err)
		}
		for _, o := range []chatOptions{{}, {Reasons: true, Stream: true}} {
			out, e := toChat(p, o)
			if e != nil {
				if e.Status != 400 || e.Param == "" {
					t.Fatalf("toChat refusal %d param %q: %s", e.Status, e.Param, e.Message)
				}
				continue
			}
			if !json.Valid(out) {
				t.Fatalf("toChat wrote invalid JSON: %s", out)
			}
		}
	})
}
