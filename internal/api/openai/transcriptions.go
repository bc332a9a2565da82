package openai

import (
	"net/http"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/billing"
	"github.com/modelgate/modelgate/internal/lifecycle"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/reqinfo"
	"github.com/modelgate/modelgate/internal/route"
)

// sizeBoundRate is the bitrate (bytes per second: 8 kbit/s) assumed of a
// file whose duration cannot be read: a lower bound for the supported
// speech codecs at usable quality, so size / rate bounds the length.
const sizeBoundRate = 1000

// transcriptions serves POST /v1/audio/transcriptions: the multipart form
// is read and validated whole (the file spooled once and its duration
// read), the most the audio can cost reserved, the file streamed to the
// upstream, and the answer relayed as it came. It is billed per second of
// audio: the upstream's reported duration, else the file's.
func (h *Handler) transcriptions(w http.ResponseWriter, r *http.Request) {
	info := reqinfo.From(r.Context())
	info.Endpoint = "audio.transcriptions"
	var out lifecycle.Outcome
	defer h.Record(info, &out)

	p, err := h.Authenticate(w, r, info, r.Header.Get("Authorization"))
	if err != nil {
		h.fail(w, info, err)
		return
	}
	form, err := readTranscriptionForm(w, r)
	if err != nil {
		h.fail(w, info, err)
		return
	}
	defer form.close()
	info.Model = form.model
	t, d, ch, err := h.pickFor(r, info, p, form.model, "audio transcription", func(c provider.Chatter) bool { _, ok := c.(provider.Transcriber); return ok })
	if err != nil {
		h.fail(w, info, err)
		return
	}
	defer t.Release()
	if err := h.audioModality(form.model, d.Upstream); err != nil {
		h.fail(w, info, err)
		return
	}
	c, err := h.StartCharge(p, form.model, d.Upstream, func(mp billing.ModelPrice) bool { return mp.AudioPerSecond > 0 })
	if err != nil {
		h.fail(w, info, err)
		return
	}
	held := form.duration
	if held <= 0 {
		held = sizeBound(form.file.Size)
	}
	amount, err := audioCost(c, max(held, time.Second))
	if err == nil && c != nil && !c.Price.Free {
		amount = max(amount, 1) // a hold of 0 would settle nothing
	}
	if err == nil {
		err = c.Reserve(r.Context(), amount, "file")
	}
	if err != nil {
		h.fail(w, info, err)
		return
	}
	req := &provider.TranscriptionRequest{PublicModel: form.model, UpstreamModel: d.Upstream, File: form.upstreamFile(),
		Fields: form.fields, ResponseFormat: form.respFormat, Language: form.language, Prompt: form.prompt,
		Temperature: form.temperature, TimestampGranularities: form.granularities}
	var res *provider.TranscriptionResponse
	u, _, err := h.Each(r, t, c, d, ch, func(u *lifecycle.Upstream, d route.Deployment, ch provider.Chatter) error {
		req.UpstreamModel = d.Upstream
		var err error
		res, err = ch.(provider.Transcriber).Transcribe(u.Ctx(r), req)
		return err
	})
	defer u.End()
	if err != nil {
		// Once the vendor had the audio it bills all of it, whether or not
		// the client waits: the reservation is charged (see lifecycle's streamend.go).
		out.Cost = c.SettleHeld(u.Owed(err, false))
		h.fail(w, info, err)
		return
	}
	// The vendor's duration is what it bills us; without one the file's
	// (or, unreadable, the size bound that was reserved) is charged and
	// the record says it is the gateway's estimate.
	billed := res.Duration
	if billed <= 0 {
		billed, out.Estimated = held, true
	}
	cost, err := audioCost(c, billed)
	if err != nil {
		cost = c.Held() // absurd durations: charge the reservation, never nothing
	}
	out.Cost = c.SettleCost(cost)
	hdr := w.Header()
	if c != nil {
		hdr.Set(lifecycle.CostHeader, out.Charged().String())
	}
	hdr.Set("Content-Type", res.ContentType)
	w.WriteHeader(http.StatusOK)
	info.Status = http.StatusOK
	if _, err := w.Write(res.Body); err != nil {
		info.Status, info.ErrCode, info.ErrDetail = apierr.StatusClientClosed, apierr.CodeClientClosed, err.Error()
	}
}

// audioModality refuses, with a 400 rather than "not priced", a model the
// catalog knows as something other than an audio model (a chat model sent
// to the transcription endpoint).
func (h *Handler) audioModality(public, upstream string) error {
	if h.Billing == nil {
		return nil
	}
	if mp, ok := h.Billing.Prices(public, upstream); ok && mp.Modality != "" && mp.Modality != "audio" {
		return apierr.Invalid("model", "The model '%s' does not support audio transcription (it is a %s model).", public, mp.Modality)
	}
	return nil
}

// sizeBound is the longest a file of size bytes can plausibly play at
// sizeBoundRate, rounded up to a whole second.
func sizeBound(size int64) time.Duration {
	return time.Duration((size+sizeBoundRate-1)/sizeBoundRate) * time.Second
}

// audioCost is d of audio at the model's per-second price and the group's
// ratio, billed by the millisecond: d is rounded up to a whole
// millisecond, and ms × price × ratio is rounded half up once to the
// micro-unit. Free models cost nothing.
func audioCost(c *lifecycle.Charge, d time.Duration) (money.Micros, error) {
	if c == nil || c.Price.Free {
		return 0, nil
	}
	ms := int64((d + time.Millisecond - 1) / time.Millisecond)
	unit := int64(c.Price.AudioPerSecond)
	if ms < 0 || unit < 0 || (ms > 0 && unit > (1<<62)/ms) {
		return 0, lifecycle.ReserveError(billing.ErrOverflow, 0, "file")
	}
	v, ok := money.MulDiv(unit*ms, c.Ratio, 1000*money.PPM)
	if !ok {
		return 0, lifecycle.ReserveError(billing.ErrOverflow, 0, "file")
	}
	return money.Micros(v), nil
}
