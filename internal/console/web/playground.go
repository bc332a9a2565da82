package web

// Playground is /console/playground: chat turns run server-side as one of
// the user's keys (the page never holds a key's secret). The page is a
// shell the script fills: its texts come from the catalogue as data-
// attributes, so the script speaks the page's language.
type Playground struct {
	Layout
	// Off: the gateway serves no playground (the console has no
	// Playground); the page says so.
	Off bool
	// Keys are the user's active keys (not revoked, disabled or expired).
	Keys []PlaygroundKey
	// Models are the first key's group's chat models (the script swaps
	// them when another key is picked).
	Models []PlaygroundModel
	// ModelsJSON is {"group": [{"id": …, "max_output": …}, …], …} for
	// the groups of Keys, read by the script.
	ModelsJSON string
	// BaseURL is the gateway's /v1 base URL, for the copied code.
	BaseURL string
}

// PlaygroundKey is a key the playground may run as, shown by name.
type PlaygroundKey struct {
	ID     string
	Name   string // the key's name, or its prefix when it has none
	Prefix string
	Group  string
}

// PlaygroundModel is a chat model a key's group may use.
type PlaygroundModel struct {
	ID string `json:"id"`
	// MaxOutput is the most tokens max_tokens may ask for (0: unknown).
	MaxOutput int64 `json:"max_output,omitempty"`
}
