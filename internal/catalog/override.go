package catalog

import (
	"maps"
	"slices"
)

// OverrideFields is a set of Model fields an Override gives, so a config
// that sets only a price leaves the built-in context window, capabilities
// and other prices alone, and "free: false" can be told apart from no
// "free" at all.
type OverrideFields uint32

// The fields an Override can set, one bit each.
const (
	SetOwnedBy OverrideFields = 1 << iota
	SetCreated
	SetModality
	SetContextWindow
	SetMaxOutput
	SetTools
	SetVision
	SetReasoning
	SetTokenizer
	SetInput
	SetOutput
	SetCachedInput
	SetImages
	SetAudioPerSecond
	SetVideoPerSecond
	SetImageSizes
	SetVideoDurations
	SetFree
	SetVideoPrices
	SetVideoDurationMap
	SetAudioInput
	SetAudioOutput
	SetTiers
	SetToolCalls
	SetSearches
	SetImageInput
	SetCachedImageInput
	SetImageOutput
)

// priceFields are the fields that price a model.
const priceFields = SetInput | SetOutput | SetCachedInput | SetImages | SetAudioPerSecond | SetVideoPerSecond |
	SetVideoPrices | SetAudioInput | SetAudioOutput | SetImageInput | SetCachedImageInput | SetImageOutput

// Has reports whether every field in f2 is in f.
func (f OverrideFields) Has(f2 OverrideFields) bool {
	return f&f2 == f2
}

// Override changes the fields named in Set of the model with Model.ID, or
// adds that model when the catalog does not know the id. Fields not in Set
// keep the catalog's value (or the zero value for a new model, whose
// modality defaults to Chat).
type Override struct {
	Model Model
	Set   OverrideFields
}

// With returns a new catalog with the overrides applied in order; c itself
// is unchanged. Setting Images without ImageSizes also makes the sizes the
// images are priced for the allowed ones, since a size without a price
// could not be billed anyway.
func (c *Catalog) With(overrides []Override) *Catalog {
	models := make([]Model, 0, len(c.sorted)+len(overrides))
	models = append(models, c.sorted...)
	index := make(map[string]int, len(models))
	for i, m := range models {
		index[m.ID] = i
	}
	for _, o := range overrides {
		i, ok := index[o.Model.ID]
		if !ok {
			i = len(models)
			index[o.Model.ID] = i
			models = append(models, Model{ID: o.Model.ID, Modality: Chat})
		}
		models[i] = apply(models[i], o)
	}
	return New(models)
}

// apply copies the fields named in o.Set from o.Model onto m.
func apply(m Model, o Override) Model {
	src, set := o.Model, o.Set
	if set.Has(SetOwnedBy) {
		m.OwnedBy = src.OwnedBy
	}
	if set.Has(SetCreated) {
		m.Created = src.Created
	}
	if set.Has(SetModality) {
		m.Modality = src.Modality
	}
	if set.Has(SetContextWindow) {
		m.ContextWindow = src.ContextWindow
	}
	if set.Has(SetMaxOutput) {
		m.MaxOutput, m.OutputLimited = src.MaxOutput, src.MaxOutput > 0 // the operator's limit is enforced
	}
	if set.Has(SetTools) {
		m.Tools = src.Tools
	}
	if set.Has(SetVision) {
		m.Vision = src.Vision
	}
	if set.Has(SetReasoning) {
		m.Reasoning = src.Reasoning
	}
	if set.Has(SetTokenizer) {
		m.Tokenizer = src.Tokenizer
	}
	if set.Has(SetInput) {
		m.Input = src.Input
	}
	if set.Has(SetOutput) {
		m.Output = src.Output
	}
	if set.Has(SetCachedInput) {
		m.CachedInput = src.CachedInput
	}
	if set.Has(SetImages) {
		m.Images = slices.Clone(src.Images)
		if !set.Has(SetImageSizes) {
			m.ImageSizes = imageSizes(src.Images)
		}
	}
	if set.Has(SetImageInput) {
		m.ImageInput = src.ImageInput
	}
	if set.Has(SetCachedImageInput) {
		m.CachedImageInput = src.CachedImageInput
	}
	if set.Has(SetImageOutput) {
		m.ImageOutput = src.ImageOutput
	}
	if set.Has(SetAudioPerSecond) {
		m.AudioPerSecond = src.AudioPerSecond
	}
	if set.Has(SetVideoPerSecond) {
		m.VideoPerSecond = src.VideoPerSecond
	}
	if set.Has(SetImageSizes) {
		m.ImageSizes = slices.Clone(src.ImageSizes)
	}
	if set.Has(SetVideoDurations) {
		m.VideoDurations = slices.Clone(src.VideoDurations)
	}
	if set.Has(SetFree) {
		m.Free = src.Free
	} else if m.Free && set&priceFields != 0 {
		// A price given for a free model (a demo model) is meant to be
		// charged: it stops being free when the prices make it billable
		// (otherwise it stays free, and config check warns).
		paid := m
		paid.Free = false
		if paid.Priced() {
			m.Free = false
		}
	}
	if set.Has(SetVideoPrices) {
		m.VideoPrices = slices.Clone(src.VideoPrices)
	}
	if set.Has(SetVideoDurationMap) {
		m.VideoDurationMap = maps.Clone(src.VideoDurationMap)
	}
	if set.Has(SetAudioInput) {
		m.AudioInput = src.AudioInput
	}
	if set.Has(SetAudioOutput) {
		m.AudioOutput = src.AudioOutput
	}
	if set.Has(SetTiers) { // the operator's tiers replace the catalog's whole
		m.Tiers = maps.Clone(src.Tiers)
	}
	if set.Has(SetToolCalls) { // as do the tool prices
		m.ToolCalls = maps.Clone(src.ToolCalls)
	}
	if set.Has(SetSearches) {
		m.Searches = src.Searches
	}
	return m
}

// imageSizes lists the distinct sizes of prices, in first-seen order.
func imageSizes(prices []ImagePrice) []string {
	var sizes []string
	for _, p := range prices {
		if !slices.Contains(sizes, p.Size) {
			sizes = append(sizes, p.Size)
		}
	}
	return sizes
}
