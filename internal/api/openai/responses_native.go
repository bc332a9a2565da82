package openai

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/billing"
	"github.com/modelgate/modelgate/internal/chain"
	"github.com/modelgate/modelgate/internal/gate"
	"github.com/modelgate/modelgate/internal/jsonx"
	"github.com/modelgate/modelgate/internal/lifecycle"
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
	t *lifecycle.Tries, d route.Deployment, rs provider.Responder, req *responses.Request, body []byte, out *lifecycle.Outcome) {
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
		u := h.CallUpstream(r, c)
		defer u.End()
		h.nativeStream(w, r, info, t, rs, preq, req.Stored(), c, u, out)
		return
	}
	var res *provider.ResponsesResult
	u, _, err := h.Each(r, t, c, d, rs.(provider.Chatter), func(u *lifecycle.Upstream, d route.Deployment, ch provider.Chatter) error {
		preq.UpstreamModel = d.Upstream
		rs, _ := nativeResponder(ch)
		var err error
		res, err = rs.Respond(u.Ctx(r), preq)
		return err
	})
	defer u.End()
	if err != nil {
		c.SettleOwed(u.Owed(err, false), responsesPrompt(c, body), out)
		h.fail(w, info, err)
		return
	}
	out.Usage = res.Usage
	if !res.HasUsage {
		out.Usage = estimateResponses(c, body, func(s *tokenize.Stream) { addOutputText(s, res.Body) })
		out.Estimated = c != nil
	}
	c.NoteAnswer(res.Body)
	out.Cost = settleResponses(c, out.Usage)
	if req.Stored() {
		h.saveResponse(r.Context(), info, responseID(res.Body), c.Bound(), &out.Usage)
	}
	lifecycle.AnswerJSON(w, r, info, c != nil, out, res.Body)
}

// responsesPrompt is the gateway's count of a pass-through request's
// prompt: the body's tokens (an overestimate: see estimateResponses).
func responsesPrompt(c *lifecycle.Charge, body []byte) func() provider.Usage {
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
	body []byte) (*lifecycle.Charge, []byte, error) {
	var prev *store.StoredResponse
	if id := req.PreviousResponseID(); id != "" {
		sr, err := h.previous(ctx, p.AccountID, id)
		if err != nil {
			return nil, nil, err
		}
		prev = &sr
	}
	c, err := h.StartCharge(p, req.Model, d.Upstream, func(mp billing.ModelPrice) bool { return mp.Priced })
	if err != nil {
		return nil, nil, err
	}
	if err := h.reserveNative(ctx, p, c, req, body, prev); err != nil {
		return nil, nil, err
	}
	if calls := c.ToolCalls(); calls > 0 {
		if body, err = jsonx.Set(body, "max_tool_calls", []byte(strconv.FormatInt(calls, 10))); err != nil {
			c.Release()
			return nil, nil, apierr.Internal(err)
		}
	}
	return c, body, nil
}

// reserveNative holds the most a pass-through request can cost: its body
// (every byte an input token; when the balance cannot cover that, the
// body's tokens counted), every image at lifecycle.ImageTokens, the context of the
// response it continues (its size, else its bound; capped at the context
// window, which no input exceeds), max_output_tokens or the model's output
// limit, the most its built-in tools can cost, and the group's reserve for
// input the gateway cannot size (refused unless the group allows it).
// It notes on c the new response's bound: the input and output tokens it
// reserved for, what a request continuing it reserves until its size is
// known.
func (h *Handler) reserveNative(ctx context.Context, p gate.Principal, c *lifecycle.Charge, req *responses.Request, body []byte,
	prev *store.StoredResponse) error {
	if c == nil {
		return nil
	}
	maxOut := req.MaxOutputTokens
	if e := lifecycle.OutputLimit(c.Price, "max_output_tokens", maxOut); e != nil {
		return e
	}
	if c.Price.Free {
		return nil
	}
	unsizedParam := req.Unsized()
	unsized, err := h.Unsized(p, unsizedParam)
	if err != nil {
		return err
	}
	rules := h.Policy.Rules(p.Group)
	if c.Plan, err = surcharge.New(c.Price, req.Ask(rules.MaxToolCalls), h.ImageModels(p)); err != nil {
		return err
	}
	price, fees := c.ReservePrice()
	if maxOut == 0 {
		maxOut = lifecycle.OutputCeiling(c.Price)
	}
	window := c.Price.ContextWindow
	var context int64
	if prev != nil {
		context = chain.Tokens(*prev, max(window, unknownWindow))
	}
	images := lifecycle.ImageAllowance(body) + lifecycle.ImageTokens*req.FileImages()
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
	if billing.Tighter(err) {
		n := int64(c.Tok.Count(body))
		if !c.Tok.Exact() {
			n += n / 4 // another vendor's tokenizer may count more
		}
		prompt = input(n)
		amount, err = reserve(prompt)
	}
	if err != nil {
		return lifecycle.ReserveError(err, max(amount, 1), "max_output_tokens")
	}
	c.BoundTokens = prompt + maxOut
	if unsizedParam != "" && window > 0 {
		c.BoundTokens = window + maxOut // its input is unknown: at most the window
	}
	return nil
}

// settleResponses charges u against the reservation, with the fees of
// the tool calls the answer showed (see charge.noteAnswer).
func settleResponses(c *lifecycle.Charge, u provider.Usage) money.Micros {
	if c == nil {
		return 0
	}
	cost, err := c.UsageCost(&u)
	if err != nil {
		cost = c.Held() // absurd counts: charge the reservation, never nothing
	}
	return c.SettleCost(cost)
}

// estimateResponses is the usage the gateway counts itself when the vendor
// reports none: the request body's tokens (an overestimate of the prompt)
// and the output text that write feeds in.
func estimateResponses(c *lifecycle.Charge, body []byte, write func(*tokenize.Stream)) provider.Usage {
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
// preserved, and charges it by the rules in lifecycle's streamend.go: the vendor's
// usage arrives in its terminal event (response.completed); delivered
// deltas are counted as they go, for a client that leaves (or is too slow)
// before it, and for an upstream that breaks the stream off after deltas
// reached the client, which ends with an error event. When stored, the
// response's owner is recorded as soon as an event shows its id
// (response.created), before that event is relayed.
func (h *Handler) nativeStream(w http.ResponseWriter, r *http.Request, info *reqinfo.Info, t *lifecycle.Tries, rs provider.Responder,
	req *provider.ResponsesRequest, stored bool, c *lifecycle.Charge, u *lifecycle.Upstream, out *lifecycle.Outcome) {
	prompt := responsesPrompt(c, req.Body)
	st, err := rs.RespondStream(u.Ctx(r), req)
	if err != nil {
		t.Failed(err, u)
		c.SettleOwed(u.Owed(err, false), prompt, out)
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
			out.Usage = us
			out.Cost = settleResponses(c, us)
			h.sizeResponse(respID, us)
			return
		}
		delivered := count != nil && count.Tokens() > 0
		c.SettleOwed(u.Owed(upErr, delivered), func() provider.Usage {
			us := prompt()
			if count != nil {
				us.CompletionTokens = int64(count.Tokens())
			}
			return us
		}, out)
	}
	more := st.Next()
	if !more && st.Err() != nil {
		t.Failed(st.Err(), u)
		charge(st.Err())
		h.fail(w, info, st.Err())
		return
	}
	t.Answered()
	sw := h.startEvents(w, info, c != nil)
	defer h.StreamEnded()
	buffered, _ := st.(provider.Buffered)
	seq := int64(-1)
	var end lifecycle.StreamEnd
	for ; more && !end.Stop(r, u); more = st.Next() {
		if out.TTFT == 0 {
			out.TTFT = h.Clock().Sub(info.Start)
		}
		name, data := st.Event()
		if stored && respID == "" {
			if id := eventResponseID(data); id != "" {
				h.saveResponse(r.Context(), info, id, c.Bound(), nil)
				respID = id
			}
		}
		noteUsed(c, name, data)
		if end.WriteErr = sw.Event(name, data); end.WriteErr != nil {
			break
		}
		end.Wrote(r, st)
		noteEvent(count, name, data, &seq)
		if buffered != nil && buffered.Buffered() {
			continue
		}
		if end.WriteErr = sw.Flush(); end.WriteErr != nil {
			break
		}
	}
	end.Stop(r, u) // a drained call's client may have left while its end came
	end.Drain(u, st, func() { name, data := st.Event(); noteUsed(c, name, data) })
	upErr := st.Err()
	charge(upErr)
	switch {
	case end.Complete:
		// The client has response.completed: whatever came after (it hung
		// up, the upstream's end failed), the response is done.
	case end.ClientEnded():
		end.Note(r, info)
		return
	case upErr != nil:
		e := lifecycle.StreamFailed(info, upErr)
		if e.Status == apierr.StatusClientClosed {
			return
		}
		if c != nil {
			w.Header().Set(lifecycle.CostHeader, out.Charged().String())
		}
		_ = sw.Event("error", errorEvent(e, seq+1))
		_ = sw.End()
		return
	}
	if c != nil {
		w.Header().Set(lifecycle.CostHeader, out.Charged().String())
	}
	if end.WriteErr == nil {
		_ = sw.End() // with the response's end; see sse.Writer.End
	}
}

// noteUsed notes on c what an event shows the vendor used beyond tokens:
// a tool call item done, or the whole answer in the final event.
func noteUsed(c *lifecycle.Charge, name string, data []byte) {
	switch name {
	case "response.output_item.done":
		if item, ok := jsonx.Field(data, "item"); ok {
			c.NoteItem(item)
		}
	case "response.completed", "response.incomplete", "response.failed":
		if resp, ok := jsonx.Field(data, "response"); ok {
			c.NoteAnswer(resp)
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
			lifecycle.WriteString(count, v)
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
