package openai

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/billing"
	"github.com/modelgate/modelgate/internal/chain"
	"github.com/modelgate/modelgate/internal/gate"
	"github.com/modelgate/modelgate/internal/jsonx"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/reqinfo"
	"github.com/modelgate/modelgate/internal/responses"
	"github.com/modelgate/modelgate/internal/route"
	"github.com/modelgate/modelgate/internal/store"
	"github.com/modelgate/modelgate/internal/surcharge"
	"github.com/modelgate/modelgate/internal/tokenize"
)

// respondNative passes the request through to a vendor with the Responses
// API. It reserves the most the request can cost (see reserveNative) and
// settles from the usage the vendor reports, with the tool calls its
// answer shows.
func (h *Handler) respondNative(w http.ResponseWriter, r *http.Request, info *reqinfo.Info, p gate.Principal,
	t *tries, d route.Deployment, rs provider.Responder, req *responses.Request, body []byte, out *outcome) {
	if req.Background() {
		h.respondBackground(w, r, info, p, d, rs, req, body, out) // responses_background.go
		return
	}
	c, body, err := h.admitNative(r.Context(), p, d, req, body)
	if err != nil {
		h.fail(w, info, err)
		return
	}
	preq := &provider.ResponsesRequest{PublicModel: req.Model, UpstreamModel: d.Upstream, Body: body, Stream: req.Stream}
	if req.Stream {
		u := h.callUpstream(r, c)
		defer u.end()
		h.nativeStream(w, r, info, t, rs, preq, req.Stored(), c, u, out)
		return
	}
	var res *provider.ResponsesResult
	u, _, err := h.each(r, t, c, d, rs.(provider.Chatter), func(u *upstream, d route.Deployment, ch provider.Chatter) error {
		preq.UpstreamModel = d.Upstream
		rs, _ := nativeResponder(ch)
		var err error
		res, err = rs.Respond(u.ctx(r), preq)
		return err
	})
	defer u.end()
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
	c.noteAnswer(res.Body)
	out.cost = settleResponses(c, out.usage)
	if req.Stored() {
		h.saveResponse(r.Context(), info, responseID(res.Body), c.bound(), &out.usage)
	}
	h.answerJSON(w, r, info, c != nil, out, res.Body)
}

// responsesPrompt is the gateway's count of a pass-through request's
// prompt: the body's tokens (an overestimate: see estimateResponses).
func (c *charge) responsesPrompt(body []byte) func() provider.Usage {
	return func() provider.Usage { return estimateResponses(c, body, func(*tokenize.Stream) {}) }
}

// unknownWindow is the context assumed for a continued response the
// gateway has no size or bound for (saved before it kept them) on a model
// whose context window the catalog does not know.
const unknownWindow = 1_000_000

// admitNative admits a request for a native Responses vendor: it reads
// the stored response it continues (the account's own), reserves its body,
// that response's chain and what its tools and tier may cost, and, when the
// client set no max_tool_calls, sends the bound reserved for upstream, so
// the vendor cannot run up more calls than were paid for. It returns the
// charge (nil when nothing is charged) and the body to send.
func (h *Handler) admitNative(ctx context.Context, p gate.Principal, d route.Deployment, req *responses.Request,
	body []byte) (*charge, []byte, error) {
	var prev *store.StoredResponse
	if id := req.PreviousResponseID(); id != "" {
		sr, err := h.previous(ctx, p.AccountID, id)
		if err != nil {
			return nil, nil, err
		}
		prev = &sr
	}
	c, err := h.startCharge(p, req.Model, d.Upstream, func(mp billing.ModelPrice) bool { return mp.Priced })
	if err != nil {
		return nil, nil, err
	}
	if err := h.reserveNative(ctx, p, c, req, body, prev); err != nil {
		return nil, nil, err
	}
	if calls := c.toolCalls(); calls > 0 {
		if body, err = jsonx.Set(body, "max_tool_calls", []byte(strconv.FormatInt(calls, 10))); err != nil {
			c.release()
			return nil, nil, apierr.Internal(err)
		}
	}
	return c, body, nil
}

// reserveNative holds the most a pass-through request can cost: its body
// (every byte an input token; when the balance cannot cover that, the
// body's tokens counted), every image at imageTokens, the context of the
// response it continues (its size, else its bound; capped at the context
// window, which no input exceeds), max_output_tokens or the model's output
// limit, the most its built-in tools can cost, and the group's reserve for
// input the gateway cannot size (refused unless the group allows it).
// It notes on c the new response's bound: the input and output tokens it
// reserved for, what a request continuing it reserves until its size is
// known.
func (h *Handler) reserveNative(ctx context.Context, p gate.Principal, c *charge, req *responses.Request, body []byte,
	prev *store.StoredResponse) error {
	if c == nil {
		return nil
	}
	maxOut := req.MaxOutputTokens
	if e := outputLimit(c.Price, "max_output_tokens", maxOut); e != nil {
		return e
	}
	if c.Price.Free {
		return nil
	}
	unsizedParam := req.Unsized()
	unsized, err := h.unsized(p, unsizedParam)
	if err != nil {
		return err
	}
	rules := h.Policy.Rules(p.Group)
	if c.plan, err = surcharge.New(c.Price, req.Ask(rules.MaxToolCalls), h.imageModels(p)); err != nil {
		return err
	}
	price, fees := c.reservePrice()
	if maxOut == 0 {
		maxOut = outputCeiling(c.Price)
	}
	window := c.Price.ContextWindow
	var context int64
	if prev != nil {
		context = chain.Tokens(*prev, max(window, unknownWindow))
	}
	images := imageAllowance(body) + imageTokens*req.FileImages()
	input := func(bodyTokens int64) int64 {
		n := bodyTokens + images + context
		if window > 0 {
			n = min(n, window)
		}
		return n
	}
	reserve := func(prompt int64) (money.Micros, error) {
		amount, err := billing.Cost(price, billing.Tokens{Prompt: prompt, Completion: maxOut, Fees: fees}, c.Ratio)
		if err != nil {
			return amount, err
		}
		return amount + unsized, c.TryReserve(ctx, amount+unsized)
	}
	prompt := input(int64(len(body)))
	amount, err := reserve(prompt)
	if errors.Is(err, billing.ErrInsufficient) || errors.Is(err, billing.ErrOverflow) {
		n := int64(c.Tok.Count(body))
		if !c.Tok.Exact() {
			n += n / 4 // another vendor's tokenizer may count more
		}
		prompt = input(n)
		amount, err = reserve(prompt)
	}
	if err != nil {
		return reserveError(err, max(amount, 1), "max_output_tokens")
	}
	c.boundTokens = prompt + maxOut
	if unsizedParam != "" && window > 0 {
		c.boundTokens = window + maxOut // its input is unknown: at most the window
	}
	return nil
}

// settleResponses charges u against the reservation, with the fees of
// the tool calls the answer showed (see charge.noteAnswer).
func settleResponses(c *charge, u provider.Usage) money.Micros {
	if c == nil {
		return 0
	}
	cost, err := c.usageCost(&u)
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
func (h *Handler) nativeStream(w http.ResponseWriter, r *http.Request, info *reqinfo.Info, t *tries, rs provider.Responder,
	req *provider.ResponsesRequest, stored bool, c *charge, u *upstream, out *outcome) {
	prompt := c.responsesPrompt(req.Body)
	st, err := rs.RespondStream(u.ctx(r), req)
	if err != nil {
		t.failed(err, u)
		c.settleOwed(u.owed(err, false), prompt, out)
		h.fail(w, info, err)
		return
	}
	defer st.Close()
	var count *tokenize.Stream
	if c != nil {
		count = c.Tok.NewStream()
	}
	var respID string // the stored response's id, once an event showed it
	// Without the vendor's usage, the client pays for the request's tokens
	// and the deltas it was sent, counted by the gateway.
	charge := func(upErr error) {
		if us, ok := st.Usage(); ok {
			out.usage = us
			out.cost = settleResponses(c, us)
			h.sizeResponse(respID, us)
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
		t.failed(st.Err(), u)
		charge(st.Err())
		h.fail(w, info, st.Err())
		return
	}
	t.answered()
	sw := h.startEvents(w, info, c != nil)
	defer h.streamEnded()
	buffered, _ := st.(provider.Buffered)
	seq := int64(-1)
	var end streamEnd
	for ; more && !end.stop(r, u); more = st.Next() {
		if out.ttft == 0 {
			out.ttft = h.now().Sub(info.Start)
		}
		name, data := st.Event()
		if stored && respID == "" {
			if id := eventResponseID(data); id != "" {
				h.saveResponse(r.Context(), info, id, c.bound(), nil)
				respID = id
			}
		}
		noteUsed(c, name, data)
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
	end.drain(u, st, func() { name, data := st.Event(); noteUsed(c, name, data) })
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
		e := streamFailed(info, upErr)
		if e.Status == apierr.StatusClientClosed {
			return
		}
		if c != nil {
			w.Header().Set(costHeader, out.charged().String())
		}
		_ = sw.Event("error", errorEvent(e, seq+1))
		_ = sw.End()
		return
	}
	if c != nil {
		w.Header().Set(costHeader, out.charged().String())
	}
	if end.werr == nil {
		_ = sw.End() // with the response's end; see sse.Writer.End
	}
}

// noteUsed notes on c what an event shows the vendor used beyond tokens:
// a tool call item done, or the whole answer in the final event.
func noteUsed(c *charge, name string, data []byte) {
	switch name {
	case "response.output_item.done":
		if item, ok := jsonx.Field(data, "item"); ok {
			c.noteItem(item)
		}
	case "response.completed", "response.incomplete", "response.failed":
		if resp, ok := jsonx.Field(data, "response"); ok {
			c.noteAnswer(resp)
		}
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
