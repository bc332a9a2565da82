package lifecycle

// ChatParams is what the chat exchange needs from a valid chat request
// (the door has decoded and checked it); everything else stays in the raw
// body, which is what goes upstream.
type ChatParams struct {
	Model               string
	Stream              bool
	IncludeUsage        bool
	N                   int64 // 0 when absent
	MaxTokens           int64 // 0 when absent
	MaxCompletionTokens int64 // 0 when absent
	// What the request asks for beyond tokens (see chatAsk): service_tier
	// as sent, web_search_options given, and the parameter that asks for
	// spoken output ("" none).
	Tier          string
	SearchOptions bool
	AudioOut      string
}

// CompletionParams is what admitting a legacy completion needs from a
// valid /v1/completions request.
type CompletionParams struct {
	Model        string
	Stream       bool
	IncludeUsage bool
	N            int64 // 0 when absent
	BestOf       int64 // 0 when absent
	MaxTokens    int64
	HasMaxTokens bool   // max_tokens was sent (0 is a valid value)
	Prompt       []byte // the raw prompt member
	Prompts      int64  // how many prompts it holds (choices are per prompt)
}
