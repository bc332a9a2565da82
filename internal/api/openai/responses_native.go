package openai

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/billing"
	"github.com/modelgate/modelgate/internal/gate"
	"github.com/modelgate/modelgate/internal/jsonx"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/reqinfo"
	"github.com/modelgate/modelgate/internal/responses"
	"github.com/modelgate/modelgate/internal/route"
	"github.com/modelgate/modelgate/internal/tokenize"
)

// respondNative passes the request through to a vendor with the Responses
// API. It reserves the most the request can cost (every body byte an input
// token, plus max_output_tokens or the model's output limit) and settles
// from the usage the vendor reports.
func (h *Handler) respondNative(w http.ResponseWriter, r *http.Request, info *reqinfo.Info, p gate.Principal,
	d route.Deployment, rs provider.Responder, req *responses.Request, body []byte, out *outcome) {
	if prev := req.PreviousResponseID(); prev != "" {
		if err := h.checkOwner(r.Context(), p.AccountID, prev, previousNotFound); err != nil {
			h.fail(w, info, err)
			return
		}
	}
	c, err := h.startCharge(p, req.Model, d.Upstream, func(mp billing.ModelPrice) bool { return mp.Priced })
	if err != nil {
		h.fail(w, info, err)
		return
	}
	if err := reserveResponses(r.Context(), c, body, req.MaxOutputTokens); err != nil {
		h.fail(w, info, err)
		return
	}
	preq := &provider.ResponsesRequest{PublicModel: req.Model, UpstreamModel: d.Upstream, Body: body, Stream: req.Stream}
	u := h.callUpstream(r, c)
	defer u.end()
	if req.Stream {
		h.nativeStream(w, r, info, rs, preq, req.Stored(), c, u, out)
		return
	}
	res, err := rs.Respond(u.ctx(r), preq)
	if err != nil {
		c.settleOwed(u.owed(err, false), c.responsesPrompt(body), out)
		h.fail(w, info, err)
		return
	}
	out.usage = res.Usage
	if !res.HasUsage {
		out.usage = estimateResponses(c, body, func(s *tokenize.Stream) { addOutputText(s, res.Body) })
		out.estimated = c != nil
	}
	out.cost = settleResponses(c, out.usage)
	if req.Stored() {
		h.saveOwner(r.Context(), info, responseID(res.Body))
	}
	h.answerJSON(w, r, info, c != nil, out, res.Body)
}

// responsesPrompt is the gateway's count of a pass-through request's
// prompt: the body's tokens (an overestimate: see estimateResponses).
func (c *charge) responsesPrompt(body []byte) func() provider.Usage {
	return func() provider.Usage { return estimateResponses(c, body, func(*tokenize.Stream) {}) }
}

// reserveResponses holds the most a pass-through request can cost: first
// with every body byte counted as an input token; when the balance cannot
// cover that, with the body's tokens counted.
func reserveResponses(ctx context.Context, c *charge, body []byte, maxOut int64) error {
	if c == nil {
		return nil
	}
	if e := outputLimit(c.Price, "max_output_tokens", maxOut); e != nil {
		return e
	}
	if c.Price.Free {
		return nil
	}
	if maxOut == 0 {
		maxOut = outputCeiling(c.Price)
	}
	amount, err := c.tokenCost(billing.Tokens{Prompt: promptBound(body), Completion: maxOut})
	if err == nil {
		err = c.reserve(ctx, amount, "max_output_tokens")
	}
	if err == nil {
		return nil
	}
	n := int64(c.Tok.Count(body))
	if !c.Tok.Exact() {
		n += n / 4 // another vendor's tokenizer may count more
	}
	amount, cerr := c.tokenCost(billing.Tokens{Prompt: n + imageAllowance(body), Completion: maxOut})
	if cerr != nil {
		return reserveError(cerr, amount, "max_output_tokens")
	}
	return c.reserve(ctx, amount, "max_output_tokens")
}

// settleResponses charges u against the reservation.
func settleResponses(c *charge, u provider.Usage) money.Micros {
	if c == nil {
		return 0
	}
	cost, err := c.tokenCost(billing.Tokens{Prompt: u.PromptTokens, Cached: u.CachedTokens, Completion: u.CompletionTokens})
	if err != nil {
		cost = c.held() // absurd counts: charge the reservation, never nothing
	}
	return c.settleCost(cost)
}

// estimateResponses is the usage the gateway counts itself when the vendor
// reports none: the request body's tokens (an overestimate of the prompt)
// and the output text that write feeds in.
func estimateResponses(c *charge, body []byte, write func(*tokenize.Stream)) provider.Usage {
	if c == nil {
		return provider.Usage{}
	}
	s := c.Tok.NewStream()
	write(s)
	u := provider.Usage{PromptTokens: int64(c.Tok.Count(body)), CompletionTokens: int64(s.Tokens())}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	return u
}

// addOutputText feeds a Response object's generated text to s.
func addOutputText(s *tokenize.Stream, body []byte) {
	var r struct {
		Output []struct {
			Arguments string `json:"arguments"`
			Content   []struct {
				Text    string `json:"text"`
				Refusal string `json:"refusal"`
			} `json:"content"`
		} `json:"output"`
	}
	if json.Unmarshal(body, &r) != nil {
		return
	}
	for _, it := range r.Output {
		s.Write([]byte(it.Arguments))
		for _, c := range it.Content {
			s.Write([]byte(c.Text))
			s.Write([]byte(c.Refusal))
		}
	}
}

// nativeStream relays the vendor's event stream event by event, names
// preserved, and charges it by the rules in streamend.go: the vendor's
// usage arrives in its terminal event (response.completed); delivered
// deltas are counted as they go, for a client that leaves (or is too slow)
// before it, and for an upstream that breaks the stream off after deltas
// reached the client, which ends with an error event. When stored, the
// response's owner is recorded as soon as an event shows its id
// (response.created), before that event is relayed.
func (h *Handler) nativeStream(w http.ResponseWriter, r *http.Request, info *reqinfo.Info, rs provider.Responder,
	req *provider.ResponsesRequest, stored bool, c *charge, u *upstream, out *outcome) {
	prompt := c.responsesPrompt(req.Body)
	st, err := rs.RespondStream(u.ctx(r), req)
	if err != nil {
		c.settleOwed(u.owed(err, false), prompt, out)
		h.fail(w, info, err)
		return
	}
	defer st.Close()
	var count *tokenize.Stream
	if c != nil {
		count = c.Tok.NewStream()
	}
	// Without the vendor's usage, the client pays for the request's tokens
	// and the deltas it was sent, counted by the gateway.
	charge := func(upErr error) {
		if us, ok := st.Usage(); ok {
			out.usage = us
			out.cost = settleResponses(c, us)
			return
		}
		delivered := count != nil && count.Tokens() > 0
		c.settleOwed(u.owed(upErr, delivered), func() provider.Usage {
			us := prompt()
			if count != nil {
				us.CompletionTokens = int64(count.Tokens())
			}
			return us
		}, out)
	}
	more := st.Next()
	if !more && st.Err() != nil {
		charge(st.Err())
		h.fail(w, info, st.Err())
		return
	}
	sw := h.startEvents(w, info, c != nil)
	buffered, _ := st.(provider.Buffered)
	seq := int64(-1)
	var end streamEnd
	for ; more && !end.stop(r, u); more = st.Next() {
		if out.ttft == 0 {
			out.ttft = h.now().Sub(info.Start)
		}
		name, data := st.Event()
		if stored {
			if id := eventResponseID(data); id != "" {
				h.saveOwner(r.Context(), info, id)
				stored = false
			}
		}
		if end.werr = sw.Event(name, data); end.werr != nil {
			break
		}
		end.wrote(r, st)
		noteEvent(count, name, data, &seq)
		if buffered != nil && buffered.Buffered() {
			continue
		}
		if end.werr = sw.Flush(); end.werr != nil {
			break
		}
	}
	end.stop(r, u) // a drained call's client may have left while its end came
	end.drain(u, st)
	upErr := st.Err()
	charge(upErr)
	switch {
	case end.complete:
		// The client has response.completed: whatever came after (it hung
		// up, the upstream's end failed), the response is done.
	case end.clientEnded():
		end.note(r, info)
		return
	case upErr != nil:
		e := apierr.From(upErr)
		info.Status, info.ErrCode = e.Status, e.Code
		if e.Err != nil {
			info.ErrDetail = e.Err.Error()
		}
		if e.Status == apierr.StatusClientClosed {
			return
		}
		if c != nil {
			w.Header().Set(costHeader, out.cost.String())
		}
		_ = sw.Event("error", errorEvent(e, seq+1))
		_ = sw.End()
		return
	}
	if c != nil {
		w.Header().Set(costHeader, out.cost.String())
	}
	if end.werr == nil {
		_ = sw.End() // with the response's end; see sse.Writer.End
	}
}

// noteEvent counts a delta's text and remembers the sequence number.
func noteEvent(count *tokenize.Stream, name string, data []byte, seq *int64) {
	if v, ok := jsonx.Field(data, "sequence_number"); ok {
		if n, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			*seq = n
		}
	}
	if count == nil {
		return
	}
	switch name {
	case "response.output_text.delta", "response.refusal.delta", "response.function_call_arguments.delta",
		"response.reasoning_text.delta", "response.reasoning_summary_text.delta":
		if v, ok := jsonx.Field(data, "delta"); ok {
			writeString(count, v)
		}
	}
}

// errorEvent is the Responses "error" event for e.
func errorEvent(e *apierr.Error, seq int64) []byte {
	var param *string
	if e.Param != "" {
		param = &e.Param
	}
	b, _ := json.Marshal(struct {
		Type           string  `json:"type"`
		SequenceNumber int64   `json:"sequence_number"`
		Code           string  `json:"code"`
		Message        string  `json:"message"`
		Param          *string `json:"param"`
	}{"error", seq, e.Code, e.Message, param})
	return b
}
