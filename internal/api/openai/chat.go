package openai

import (
	"net/http"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/reqinfo"
	"github.com/modelgate/modelgate/internal/route"
	"github.com/modelgate/modelgate/internal/sse"
	"github.com/modelgate/modelgate/internal/store"
)

// outcome is what the usage record needs beyond reqinfo.Info.
type outcome struct {
	usage provider.Usage
	ttft  time.Duration
}

// chat serves POST /v1/chat/completions.
func (h *Handler) chat(w http.ResponseWriter, r *http.Request) {
	info := reqinfo.From(r.Context())
	info.Endpoint = "chat.completions"
	var out outcome
	defer h.record(info, &out)

	p, err := h.authenticate(r, info)
	if err != nil {
		h.fail(w, info, err)
		return
	}
	body, err := h.readJSON(w, r)
	if err != nil {
		h.fail(w, info, err)
		return
	}
	params, perr := parseChat(body)
	if perr != nil {
		h.fail(w, info, perr)
		return
	}
	info.Model, info.Stream = params.Model, params.Stream
	d, ok := h.Router.Pick(params.Model)
	if !ok || !h.Policy.Allows(p.Group, params.Model) {
		h.fail(w, info, apierr.ModelNotFound(params.Model))
		return
	}
	info.Provider, info.Upstream = d.Provider, d.Upstream
	req := &provider.ChatRequest{PublicModel: params.Model, UpstreamModel: d.Upstream, Body: body,
		Stream: params.Stream, IncludeUsage: params.IncludeUsage}
	if params.Stream {
		h.stream(w, r, info, d, req, &out)
		return
	}
	res, err := d.Chatter.Chat(r.Context(), req)
	if err != nil {
		h.fail(w, info, err)
		return
	}
	out.usage = res.Usage
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	info.Status = http.StatusOK
	if _, err := w.Write(res.Body); err != nil {
		info.Status, info.ErrCode, info.ErrDetail = apierr.StatusClientClosed, apierr.CodeClientClosed, err.Error()
	}
}

// stream relays chunks as they arrive. The first chunk is read before the
// response starts, so a request that fails at once still gets a proper
// status code; after that, failures end the stream with an error event.
func (h *Handler) stream(w http.ResponseWriter, r *http.Request, info *reqinfo.Info, d route.Deployment, req *provider.ChatRequest, out *outcome) {
	st, err := d.Chatter.ChatStream(r.Context(), req)
	if err != nil {
		h.fail(w, info, err)
		return
	}
	defer st.Close()
	more := st.Next()
	if !more && st.Err() != nil {
		h.fail(w, info, st.Err())
		out.usage, _ = st.Usage()
		return
	}
	hdr := w.Header()
	hdr.Set("Content-Type", "text/event-stream")
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	info.Status = http.StatusOK
	sw := sse.NewWriter(w)
	buffered, _ := st.(provider.Buffered)
	var werr error
	for ; more; more = st.Next() {
		if out.ttft == 0 {
			out.ttft = h.now().Sub(info.Start)
		}
		if werr = sw.Data(st.Chunk()); werr != nil {
			break
		}
		if buffered != nil && buffered.Buffered() {
			continue // the next chunk is already here; flush after it
		}
		if werr = sw.Flush(); werr != nil {
			break
		}
	}
	out.usage, _ = st.Usage()
	if werr != nil {
		info.Status, info.ErrCode, info.ErrDetail = apierr.StatusClientClosed, apierr.CodeClientClosed, werr.Error()
		return
	}
	if err := st.Err(); err != nil {
		e := apierr.From(err)
		info.Status, info.ErrCode = e.Status, e.Code
		if e.Err != nil {
			info.ErrDetail = e.Err.Error()
		}
		if e.Status == apierr.StatusClientClosed {
			return // nobody to tell
		}
		_ = sw.Data(e.JSON())
		_ = sw.Flush()
		return
	}
	_ = sw.Done()
	_ = sw.Flush()
}

// record leaves the usage record of the request, whatever happened.
func (h *Handler) record(info *reqinfo.Info, out *outcome) {
	end := h.now()
	status := info.Status
	if status == 0 {
		status = http.StatusOK
	}
	h.Usage.Record(store.UsageRecord{
		RequestID: info.ID, Time: info.Start, AccountID: info.AccountID, KeyID: info.KeyID,
		Endpoint: info.Endpoint, Model: info.Model, Provider: info.Provider, UpstreamModel: info.Upstream,
		Stream: info.Stream, PromptTokens: out.usage.PromptTokens, CompletionTokens: out.usage.CompletionTokens,
		Latency: end.Sub(info.Start), TTFT: out.ttft, Status: status, ErrorCode: info.ErrCode,
	})
}
