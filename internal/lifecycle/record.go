package lifecycle

import (
	"net/http"
	"strings"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/reqinfo"
	"github.com/modelgate/modelgate/internal/store"
	"github.com/modelgate/modelgate/internal/telemetry"
)

// Record leaves the usage record of the request, whatever happened, once
// its key was authenticated. A request that ends without an account (no
// key or a bad one, an unknown path, a wrong method, a signed image link)
// is nobody's to bill or show, and anyone can send any number of them: it
// is counted by reason instead (see refuse), so it cannot grow the database.
// So is a key's request the gateway refused itself before any upstream
// call, for nothing (a bad parameter, an unknown model, no balance, a rate
// limit): a key with no balance can send thousands a second, and records
// are kept for months, so it is counted per key, reason and minute (see
// refusal).
//
// A request that succeeded without naming a model and cost nothing (the
// model list, a list of video tasks) used nothing to account for: it
// leaves no usage record either, only its metrics, so the usage pages and
// statistics never show a row without a model.
//
// It runs once per request (info.Recorded): the usage recorder stores a
// request's record without looking whether it has it already. It is also
// where every request is counted in the metrics, whichever of the three
// ways it is recorded.
func (h *Core) Record(info *reqinfo.Info, out *Outcome) {
	if info.Recorded {
		return
	}
	info.Recorded = true
	h.unlimit(info, out)
	end := h.Clock()
	status := info.Status
	if status == 0 {
		status = http.StatusOK
	}
	cost := out.Charged()
	refused := info.AccountID != "" && refusal(info, status, out)
	if h.Metrics != nil {
		m := telemetry.Request{Endpoint: info.Endpoint, Model: info.Model, Provider: info.Provider, Status: status,
			Duration: end.Sub(info.Start), TTFT: out.TTFT, PromptTokens: out.Usage.PromptTokens,
			CompletionTokens: out.Usage.CompletionTokens, CostMicros: int64(cost), Attempts: metricAttempts(info)}
		if refused {
			m.Refusal = info.ErrCode
		}
		h.Metrics.Request(m)
	}
	if h.Tracer != nil {
		h.Tracer.Record(&telemetry.Span{TraceParent: info.TraceParent, Endpoint: info.Endpoint, Model: info.Model,
			Provider: info.Provider, Upstream: info.Upstream, Stream: info.Stream, Start: info.Start, End: end,
			Status: status, ErrCode: info.ErrCode, RequestID: info.ID, InputTokens: out.Usage.PromptTokens,
			OutputTokens: out.Usage.CompletionTokens, Attempts: traceAttempts(info)})
	}
	if info.AccountID == "" {
		h.refuse(info, status)
		return
	}
	if h.KeyRefusals != nil && refused {
		h.KeyRefusals.Count(store.RefusalCount{AccountID: info.AccountID, KeyID: info.KeyID,
			Minute: info.Start, Endpoint: info.Endpoint, Reason: info.ErrCode, Status: status})
		return
	}
	if modelless(info, status, cost) {
		return
	}
	h.Usage.Record(store.UsageRecord{
		RequestID: info.ID, Time: info.Start, AccountID: info.AccountID, KeyID: info.KeyID,
		Endpoint: info.Endpoint, Model: info.Model, Provider: info.Provider, UpstreamModel: info.Upstream,
		Stream: info.Stream, PromptTokens: out.Usage.PromptTokens, CompletionTokens: out.Usage.CompletionTokens,
		CachedTokens: out.Usage.CachedTokens, ReasoningTokens: out.Usage.ReasoningTokens, Estimated: out.Estimated, Cost: cost,
		Latency: end.Sub(info.Start), TTFT: out.TTFT, Status: status, ErrorCode: info.ErrCode,
		Attempts: storedAttempts(info, status),
	})
}

// modelless reports whether a request is one that used no model: it
// succeeded (below 400) without naming one, and cost nothing.
func modelless(info *reqinfo.Info, status int, cost money.Micros) bool {
	return info.Model == "" && status < http.StatusBadRequest && cost == 0
}

// refusal reports whether a request that ended with status is one the
// gateway refused itself, before any upstream call and for nothing: a
// client error (not 499, the client leaving) with an error code, no charge,
// and no error from the upstream.
func refusal(info *reqinfo.Info, status int, out *Outcome) bool {
	return status >= http.StatusBadRequest && status < http.StatusInternalServerError &&
		status != apierr.StatusClientClosed && info.ErrCode != "" && !info.Upstreamed &&
		out.Cost == 0 && out.Carried == 0 && out.Usage == (provider.Usage{})
}

// trivial reports whether a request's tries are the one that answered: all
// the usage record and the metrics need not spell out.
func trivial(as []reqinfo.Attempt) bool {
	return len(as) == 0 || len(as) == 1 && as[0].Error == ""
}

// storedAttempts is what the usage record keeps of the request's tries:
// nothing for one that answered a client that got 2xx (store.AttemptsOf
// implies it), else each.
func storedAttempts(info *reqinfo.Info, status int) []store.Attempt {
	as := info.Attempts
	if len(as) == 0 || trivial(as) && status >= 200 && status < 300 {
		return nil
	}
	out := make([]store.Attempt, len(as))
	for i, a := range as {
		out[i] = store.Attempt{Provider: a.Provider, Status: a.Status, Error: a.Error, Duration: a.Duration}
	}
	return out
}

// metricAttempts is the request's tries for the metrics; nil for one that
// answered (the hot path: no allocation).
func metricAttempts(info *reqinfo.Info) []telemetry.Attempt {
	if trivial(info.Attempts) {
		return nil
	}
	out := make([]telemetry.Attempt, len(info.Attempts))
	for i, a := range info.Attempts {
		out[i] = telemetry.Attempt{Provider: a.Provider, Status: a.Status, Failed: a.Error != ""}
	}
	return out
}

// traceAttempts is the request's tries as trace spans, their errors cut to
// the error code (a span's error.type).
func traceAttempts(info *reqinfo.Info) []telemetry.AttemptSpan {
	out := make([]telemetry.AttemptSpan, len(info.Attempts))
	for i, a := range info.Attempts {
		code, _, _ := strings.Cut(a.Error, ":")
		out[i] = telemetry.AttemptSpan{Provider: a.Provider, Upstream: a.Upstream, Start: a.Start, Duration: a.Duration,
			Status: a.Status, Error: code}
	}
	return out
}
