package background

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/modelgate/modelgate/internal/billing"
	"github.com/modelgate/modelgate/internal/jsonx"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/store"
	"github.com/modelgate/modelgate/internal/surcharge"
)

// Usage record fields of a task's settlement. The record's RequestID is
// the response id; the creating request leaves its own record (cost 0).
const (
	Endpoint         = "responses"
	CodeFailed       = "response_failed"
	CodeCancelled    = "response_cancelled"
	CodeTimeout      = "response_timeout"
	CodeUpstreamLost = "response_upstream_lost"
)

// The statuses a settlement record carries for each way a response ends.
var endStatus = map[store.ResponseStatus]struct {
	status int
	code   string
}{
	store.ResponseCompleted:  {http.StatusOK, ""},
	store.ResponseIncomplete: {http.StatusOK, ""}, // a complete answer cut at max_output_tokens
	store.ResponseFailed:     {http.StatusInternalServerError, CodeFailed},
	store.ResponseCancelled:  {499, CodeCancelled},
}

// ending is how a task ends: its final status, what is charged and why.
type ending struct {
	status    store.ResponseStatus
	why       string // the task's Error: why the gateway ended it; "" when the vendor did
	cost      money.Micros
	usage     provider.Usage
	estimated bool // usage is the gateway's count
	known     bool // usage is what the cost was computed from (OnSettled is told)
	code      int  // the usage record's Status and ErrorCode
	errCode   string
}

// settle finishes the open task t with the final status the vendor
// reported in res, charged from res's usage (or, when it has none, the
// gateway's count of the prompt and of the output res shows), as owner
// ("" for a client's request). A task settled meanwhile by someone else
// is left alone.
func (s *Service) settle(ctx context.Context, owner string, t store.ResponseTask, status store.ResponseStatus, res *provider.ResponsesResult) {
	e := ending{status: status, usage: res.Usage, estimated: !res.HasUsage, known: true}
	if e.estimated {
		e.usage = s.estimate(t, res.Body)
	}
	e.cost = s.cost(t, e.usage, res.Body)
	e.code, e.errCode = endStatus[status].status, endStatus[status].code
	s.finish(ctx, owner, t, e)
}

// finish writes t's end: the status, the cost, and the usage record that
// charges it, in one store transaction; then OnSettled, when the usage is
// known. A conflict (another finished it first) is no failure.
func (s *Service) finish(ctx context.Context, owner string, t store.ResponseTask, e ending) {
	now := s.now()
	f := t
	f.Status, f.Error, f.Cost, f.FinishedAt, f.UpdatedAt = e.status, e.why, e.cost, now, now
	u := e.usage
	rec := store.UsageRecord{
		RequestID: t.ID, Time: now, AccountID: t.AccountID, KeyID: t.KeyID, Endpoint: Endpoint,
		Model: t.Model, Provider: t.Provider, UpstreamModel: t.UpstreamModel,
		PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, CachedTokens: u.CachedTokens,
		ReasoningTokens: u.ReasoningTokens, Estimated: e.estimated, Cost: e.cost,
		Latency: max(now.Sub(t.CreatedAt), 0), Status: e.code, ErrorCode: e.errCode,
	}
	err := s.Store.FinishResponseTask(ctx, owner, f, &rec)
	switch {
	case err == nil:
		s.log().Info("background: response settled", "response_id", t.ID, "status", e.status,
			"cost", e.cost.String(), "estimated", e.estimated, "by", ownerName(owner))
		if e.known && s.OnSettled != nil {
			s.OnSettled(ctx, t.ID, u)
		}
	case errors.Is(err, store.ErrConflict), errors.Is(err, store.ErrNotFound):
		s.log().Info("background: response settled meanwhile; skipped", "response_id", t.ID, "err", err)
	case ctx.Err() != nil:
		// Shutdown: the task stays open and the next poll settles it.
	default:
		s.log().Error("background: settling a response failed; a later poll retries", "response_id", t.ID, "err", err)
	}
}

func ownerName(owner string) string {
	if owner == "" {
		return "client"
	}
	return owner
}

// cost is what u costs at t's fixed prices and ratio, with what the
// answer (body: a Response object; nil when there is none) shows the vendor
// used beyond tokens priced by t's terms (its service tier, its built-in
// tool calls), never more than what was held for it: the reservation bounds
// what the request could cost, so only context the body does not carry can
// pass it, and the payer is never charged past what it had reserved (the
// rest is logged as written off). Absurd counts charge the reservation.
func (s *Service) cost(t store.ResponseTask, u provider.Usage, body []byte) money.Micros {
	p := billing.TokenPrice{Input: t.InputPrice, CachedInput: t.CachedInputPrice, Output: t.OutputPrice}
	if p == (billing.TokenPrice{}) {
		return 0 // a free model, or billing off
	}
	var fees money.Micros
	if t.Terms != "" {
		plan, err := surcharge.Unmarshal(t.Terms)
		if err != nil {
			s.log().Error("background: reading a response's terms failed; charging what was held", "response_id", t.ID, "err", err)
			return t.Held
		}
		p, fees = plan.Settle(surcharge.Scan(body))
	}
	c, err := billing.Cost(p, billing.Tokens{Prompt: u.PromptTokens, Cached: u.CachedTokens, Completion: u.CompletionTokens, Fees: fees}, t.RatioPPM)
	if err != nil {
		s.log().Error("background: pricing a response failed; charging what was held", "response_id", t.ID, "err", err)
		return t.Held
	}
	if c > t.Held {
		s.log().Warn("background: a response cost more than its reservation; the rest is written off",
			"response_id", t.ID, "account", t.AccountID, "cost", c.String(), "charged", t.Held.String())
		c = t.Held
	}
	return max(c, 0)
}

// estimate is the usage the gateway counts when the vendor reports none:
// the request's prompt as counted at submission and the output text the
// Response object body shows.
func (s *Service) estimate(t store.ResponseTask, body []byte) provider.Usage {
	u := provider.Usage{PromptTokens: t.PromptEstimate}
	if s.Billing != nil && s.Billing.Prices != nil && s.Billing.Tokens != nil {
		if mp, ok := s.Billing.Prices(t.Model, t.UpstreamModel); ok {
			st := s.Billing.Tokens.For(mp.Tokenizer).NewStream()
			for _, text := range outputText(body) {
				st.Write([]byte(text))
			}
			u.CompletionTokens = int64(st.Tokens())
		}
	}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	return u
}

// outputText is the generated text of a Response object: message text and
// refusals, and function call arguments.
func outputText(body []byte) []string {
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
		return nil
	}
	var out []string
	for _, it := range r.Output {
		out = append(out, it.Arguments)
		for _, c := range it.Content {
			out = append(out, c.Text, c.Refusal)
		}
	}
	return out
}

// ResponseID is the "id" of a Response object, "" when it has none.
func ResponseID(body []byte) string {
	var id string
	if v, ok := jsonx.Field(body, "id"); !ok || json.Unmarshal(v, &id) != nil {
		return ""
	}
	return id
}

// Status is the "status" of a Response object; "" (not Valid) when it has
// none or one the gateway does not know.
func Status(body []byte) store.ResponseStatus {
	var st string
	if v, ok := jsonx.Field(body, "status"); !ok || json.Unmarshal(v, &st) != nil {
		return ""
	}
	if s := store.ResponseStatus(st); s.Valid() {
		return s
	}
	return ""
}

// ValidID accepts the ids vendors issue (letters, digits, '_' and '-', at
// most 256), so nothing else reaches the store or an upstream path.
func ValidID(id string) bool {
	if id == "" || len(id) > 256 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
