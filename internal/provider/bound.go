package provider

// OutputBounder is implemented by adapters that decide the upstream's
// output limit themselves rather than passing the client's through: the
// Anthropic adapter always sends a max_tokens, and raises it above the
// thinking budget that reasoning_effort asks for; Gemini's thinking budget
// adds to the output. The gateway reserves what the upstream request
// allows, so it asks the adapter.
type OutputBounder interface {
	// OutputBound is the most output tokens one choice of req may make
	// upstream, after every adjustment the adapter makes; 0 when the
	// adapter sends no limit of its own (the vendor's default applies).
	OutputBound(req *ChatRequest) int64
}
