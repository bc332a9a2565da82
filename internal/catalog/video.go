package catalog

import (
	"fmt"
	"regexp"
	"slices"
)

// MaxVideoSeconds is the longest video a model may declare: well above what
// any vendor makes (Sora 12 s, Veo 8 s), so a typo like 600 is caught.
const MaxVideoSeconds = 60

// sizeRe is the form of an allowed size: width x height in pixels.
var sizeRe = regexp.MustCompile(`^[1-9][0-9]{0,4}x[1-9][0-9]{0,4}$`)

// ValidSize reports whether s is a size like 1280x720.
func ValidSize(s string) bool { return sizeRe.MatchString(s) }

// VideoIssue is one reason a video model cannot be served as it stands.
// Field names the setting at fault (SetVideoDurations, SetImageSizes,
// SetVideoDurationMap, SetVideoPrices or SetVideoPerSecond), so the config
// validator can point at the key the operator wrote.
type VideoIssue struct {
	Field   OverrideFields
	Message string
}

// VideoIssues checks a video model against the rules every served video
// model must meet, the same for the built-in catalog (tested) and for the
// operator's models section (config validation): at least one duration,
// each from 1 to MaxVideoSeconds and listed once; at least one size, each
// WxH and listed once; a price per second above zero for every size unless
// Free; per-size prices only for allowed sizes; and a duration map whose
// keys are durations the upstream does not make itself and whose values are
// durations it does, never longer than the key, so a client is never
// billed for more seconds than it asked for. A model of another modality
// has no issues.
func (m Model) VideoIssues() []VideoIssue {
	if m.Modality != Video {
		return nil
	}
	var out []VideoIssue
	add := func(f OverrideFields, format string, args ...any) {
		out = append(out, VideoIssue{Field: f, Message: fmt.Sprintf(format, args...)})
	}
	if len(m.VideoDurations) == 0 {
		add(SetVideoDurations, "a video model needs at least one duration in seconds (the first is the default)")
	}
	for i, d := range m.VideoDurations {
		switch {
		case d < 1 || d > MaxVideoSeconds:
			add(SetVideoDurations, "duration %d must be from 1 to %d seconds", d, MaxVideoSeconds)
		case slices.Index(m.VideoDurations, d) < i:
			add(SetVideoDurations, "duration %d is listed twice", d)
		}
	}
	if len(m.ImageSizes) == 0 {
		add(SetImageSizes, "a video model needs at least one size like 1280x720 (the first is the default)")
	}
	for i, s := range m.ImageSizes {
		switch {
		case !ValidSize(s):
			add(SetImageSizes, "size %q must look like 1280x720", s)
		case slices.Index(m.ImageSizes, s) < i:
			add(SetImageSizes, "size %s is listed twice", s)
		}
	}
	for i, p := range m.VideoPrices {
		switch {
		case !slices.Contains(m.ImageSizes, p.Size):
			add(SetVideoPrices, "price for size %q, which is not one of the model's sizes", p.Size)
		case slices.IndexFunc(m.VideoPrices, func(q VideoPrice) bool { return q.Size == p.Size }) < i:
			add(SetVideoPrices, "size %s is priced twice", p.Size)
		}
	}
	if !m.Free {
		for _, s := range m.ImageSizes {
			if m.VideoPriceFor(s) <= 0 {
				add(SetVideoPerSecond, "no price per second for size %s: set video_per_second (or a video_prices entry for the size), or free: true", s)
			}
		}
		if len(m.ImageSizes) == 0 && m.VideoPerSecond <= 0 {
			add(SetVideoPerSecond, "no price per second: set video_per_second, or free: true")
		}
	}
	keys := make([]int, 0, len(m.VideoDurationMap))
	for k := range m.VideoDurationMap {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := m.VideoDurationMap[k]
		switch {
		case k < 1 || k > MaxVideoSeconds:
			add(SetVideoDurationMap, "requested duration %d must be from 1 to %d seconds", k, MaxVideoSeconds)
		case slices.Contains(m.VideoDurations, k):
			add(SetVideoDurationMap, "%d s is mapped, but the upstream makes %d s itself", k, k)
		case !slices.Contains(m.VideoDurations, v):
			add(SetVideoDurationMap, "%d s maps to %d s, which is not one of the durations %v", k, v, m.VideoDurations)
		case v > k:
			add(SetVideoDurationMap, "%d s maps to %d s: a client would pay for more seconds than it asked for", k, v)
		}
	}
	return out
}
