package main

import (
	"strings"
	"time"

	"github.com/modelgate/modelgate/internal/catalog"
)

// snapshotDate is when genai-prices.json was copied in. Conditional prices
// starting after it are ignored, and models without a release date in
// releases below get it as their `created` time (the data set has no
// dates). Bump it when refreshing the data.
const snapshotDate = "2026-11-01"

// defaultMaxOutput is the output limit assumed for token models whose real
// one is not in maxOutputs (capped at the context window when smaller).
const defaultMaxOutput = 8192

// Patterns below are matched against the lower-cased id; "*" matches any
// run of characters ("/" included). In every table the first match wins, so
// specific patterns come before general ones.

// modalities: everything not listed is a chat model.
var modalities = []rule[catalog.Modality]{
	{"text-embedding-*", catalog.Embedding}, {"*embed*", catalog.Embedding}, {"voyage-*", catalog.Embedding},
	{"gpt-3.5-turbo-instruct", catalog.Completion}, {"davinci", catalog.Completion}, {"babbage", catalog.Completion},
	{"curie", catalog.Completion}, {"ada", catalog.Completion}, {"text-davinci-*", catalog.Completion},
	{"gpt-image-*", catalog.Image}, {"dall-e-*", catalog.Image}, {"imagen-*", catalog.Image},
	{"*-tts", catalog.Audio}, {"*-transcribe", catalog.Audio}, {"whisper-*", catalog.Audio},
}

// tokenizers: OpenAI's published encodings; other vendors' tokenizers are
// not bundled, so their counts are approximated ("").
var tokenizers = []rule[string]{
	{"gpt-4o*", "o200k"}, {"chatgpt-4o*", "o200k"}, {"gpt-4.1*", "o200k"}, {"gpt-4.5*", "o200k"},
	{"gpt-5*", "o200k"}, {"o1*", "o200k"}, {"o3*", "o200k"}, {"o4*", "o200k"}, {"gpt-oss*", "o200k"},
	{"openai/gpt-oss*", "o200k"}, {"gpt-realtime*", "o200k"}, {"gpt-audio*", "o200k"}, {"codex-mini*", "o200k"},
	{"computer-use*", "o200k"}, {"gpt-chat-latest", "o200k"},
	{"gpt-4*", "cl100k"}, {"gpt-3.5*", "cl100k"}, {"text-embedding-3-*", "cl100k"}, {"text-embedding-ada-002", "cl100k"},
}

// reasoning: models that think before answering (and bill those tokens as output).
var reasoning = []rule[bool]{
	{"*non-reasoning*", false}, {"gpt-5-chat*", false}, {"gpt-5*-image*", false},
	{"o1*", true}, {"o3*", true}, {"o4*", true}, {"gpt-5*", true}, {"*gpt-oss*", true}, {"codex-mini*", true},
	{"deepseek-reasoner", true}, {"*deepseek-r1*", true}, {"r1-1776", true},
	{"claude-3-7*", true}, {"claude-*-4*", true}, {"claude-4*", true}, {"claude-*-5*", true},
	{"gemini-2.5*", true}, {"gemini-3*", true},
	{"grok-3-mini*", true}, {"grok-4*", true}, {"grok-code*", true},
	{"*thinking*", true}, {"magistral*", true}, {"*qwq*", true}, {"*qwen3*", true}, {"*qwen-3*", true},
	{"sonar-reasoning*", true}, {"sonar-deep-research", true}, {"*-reasoning*", true},
	{"glm-4.5*", true}, {"glm-4.7*", true}, {"glm-5*", true}, {"minimax-m1", true}, {"minimax-m2*", true},
}

// vision: models that accept images in chat messages.
var vision = []rule[bool]{
	{"*-transcribe", false}, {"*-tts", false}, {"*realtime*", false}, {"*audio*", false},
	{"o1-mini*", false}, {"o3-mini*", false}, {"*search*", false},
	{"gpt-4o*", true}, {"chatgpt-4o*", true}, {"gpt-4.1*", true}, {"gpt-4.5*", true}, {"gpt-4-turbo*", true},
	{"gpt-4-vision*", true}, {"gpt-5*", true}, {"o1*", true}, {"o3*", true}, {"o4*", true}, {"computer-use*", true},
	{"claude-3*", true}, {"claude-*-4*", true}, {"claude-4*", true}, {"claude-*-5*", true},
	{"gemini*", true}, {"gemma-3*", true}, {"gemma-4*", true},
	{"grok-2-vision*", true}, {"grok-4*", true}, {"pixtral*", true}, {"*vision*", true}, {"*-vl-*", true},
	{"*llama-4*", true}, {"*llama4*", true}, {"mistral-medium-3*", true}, {"mistral-small-3.1*", true},
	{"mistral-small-3.2*", true}, {"phi-4-multimodal*", true},
}

// tools: most chat models call functions; these do not.
var noTools = []rule[bool]{
	{"o1-mini*", true}, {"gpt-3.5-turbo-instruct", true}, {"gpt-4-vision*", true}, {"*search*", true},
	{"*deep-research*", true}, {"sonar*", true}, {"r1-1776", true}, {"*deepseek-r1*", true},
	{"*guard*", true}, {"gemma*", true}, {"google/gemma*", true}, {"*-tts", true}, {"*-transcribe", true},
}

// maxOutputs are the vendors' published output limits per family.
var maxOutputs = []rule[int64]{
	{"gpt-4o*", 16384}, {"chatgpt-4o*", 16384}, {"gpt-4.1*", 32768}, {"gpt-4.5*", 16384},
	{"gpt-4-turbo*", 4096}, {"gpt-4-vision*", 4096}, {"gpt-3.5*", 4096}, {"gpt-5*", 128000},
	{"o1-mini*", 65536}, {"o1*", 100000}, {"o3*", 100000}, {"o4*", 100000},
	{"claude-3-5*", 8192}, {"claude-3-7*", 64000}, {"claude-3*", 4096}, {"claude-sonnet-4*", 64000},
	{"claude-4-sonnet*", 64000}, {"claude-opus-4-0", 32000}, {"claude-opus-4-1", 32000}, {"claude-4-opus*", 32000},
	{"claude-opus-4-5", 64000}, {"claude-haiku-4-5", 64000},
	{"gemini-1.5*", 8192}, {"gemini-2.0*", 8192}, {"gemini-2.5*", 65536}, {"gemini-3*", 65536},
	{"deepseek-chat", 8192}, {"deepseek-reasoner", 64000},
}

// contextWindows fill in major families the data set gives no window for.
var contextWindows = []rule[int64]{
	{"o1-pro", 200000}, {"o3*", 200000}, {"o4-mini*", 200000}, {"codex-mini*", 200000},
	{"gpt-4o*", 128000}, {"chatgpt-4o*", 128000}, {"gpt-4.5*", 128000}, {"gpt-5*", 400000},
	{"claude-*", 200000}, {"gemini-2.5*", 1048576}, {"gemini-3*", 1048576},
	{"text-embedding-*", 8192}, {"deepseek-*", 128000},
}

// releases are public release dates for major families (the data set has
// none); every other model gets snapshotDate.
var releases = []rule[string]{
	{"gpt-4o-mini-transcribe", "2025-03-20"}, {"gpt-4o-transcribe", "2025-03-20"}, {"gpt-4o-mini-tts", "2025-03-20"},
	{"gpt-4o-mini", "2024-07-18"}, {"gpt-4o", "2024-05-13"}, {"gpt-4.1*", "2025-04-14"}, {"gpt-4.5-preview", "2025-02-27"},
	{"gpt-4-turbo", "2024-04-09"}, {"gpt-4", "2023-03-14"}, {"gpt-3.5-turbo", "2023-03-01"},
	{"gpt-5", "2025-08-07"}, {"gpt-5-mini", "2025-08-07"}, {"gpt-5-nano", "2025-08-07"},
	{"o1-mini", "2024-09-12"}, {"o1", "2024-12-17"}, {"o3-mini", "2025-01-31"}, {"o3", "2025-04-16"},
	{"o4-mini", "2025-04-16"}, {"gpt-oss-*", "2025-08-05"},
	{"text-embedding-3-*", "2024-01-25"}, {"text-embedding-ada-002", "2022-12-15"},
	{"claude-3-opus*", "2024-03-04"}, {"claude-3-sonnet*", "2024-03-04"}, {"claude-3-haiku*", "2024-03-13"},
	{"claude-3-5-sonnet*", "2024-06-20"}, {"claude-3-7-sonnet*", "2025-02-24"},
	{"claude-sonnet-4-0", "2025-05-22"}, {"claude-opus-4-0", "2025-05-22"}, {"claude-opus-4-1", "2025-08-05"},
	{"claude-sonnet-4-5", "2025-09-29"}, {"claude-haiku-4-5", "2025-10-15"},
	{"gemini-2.0-flash", "2025-02-05"}, {"gemini-2.5-pro", "2025-06-17"}, {"gemini-2.5-flash", "2025-06-17"},
	{"deepseek-chat", "2024-12-26"}, {"deepseek-reasoner", "2025-01-20"}, {"grok-4-0709", "2025-07-09"},
}

// rule maps an id pattern to a value.
type rule[T any] struct {
	pattern string
	value   T
}

// lookup returns the value of the first rule matching id, or def.
func lookup[T any](rules []rule[T], id string, def T) T {
	id = strings.ToLower(id)
	for _, r := range rules {
		if match(r.pattern, id) {
			return r.value
		}
	}
	return def
}

// match reports whether id matches pattern, where "*" matches any run of
// characters (including "/", unlike path.Match).
func match(pattern, id string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == id
	}
	if !strings.HasPrefix(id, parts[0]) {
		return false
	}
	id = id[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(id, p)
		if i < 0 {
			return false
		}
		id = id[i+len(p):]
	}
	return strings.HasSuffix(id, last)
}

// date is a release date as Unix seconds.
func date(s string) int64 {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic("catalog/gen: bad date " + s) // a typo in the tables above
	}
	return t.Unix()
}

// derive fills the facts the data set lacks from the tables above.
func derive(m *catalog.Model) {
	id := m.ID
	m.Modality = lookup(modalities, id, catalog.Chat)
	m.Created = date(lookup(releases, id, snapshotDate))
	m.Tokenizer = lookup(tokenizers, id, "")
	if m.ContextWindow == 0 {
		m.ContextWindow = lookup(contextWindows, id, 0)
	}
	if m.Modality != catalog.Chat && m.Modality != catalog.Completion {
		return // embeddings, images and audio have no output tokens or capabilities
	}
	m.MaxOutput = lookup(maxOutputs, id, 0)
	m.OutputLimited = m.MaxOutput > 0 // published; the default below is only assumed
	if m.MaxOutput == 0 {
		m.MaxOutput = defaultMaxOutput
	}
	if m.ContextWindow > 0 && m.MaxOutput > m.ContextWindow {
		m.MaxOutput = m.ContextWindow
	}
	if m.Modality == catalog.Chat {
		m.Tools = !lookup(noTools, id, false)
		m.Vision = lookup(vision, id, false)
		m.Reasoning = lookup(reasoning, id, false)
	}
}
