package model

import "strings"

// DefaultContextTokens is the context assumed for a model ContextTokens does not know:
// small enough for most models served locally, so that elision starts before the
// provider overflows.
const DefaultContextTokens = 32768

// contextWindows are the published context windows (input tokens) of model families,
// matched as substrings of a model id in order, the most specific first. Bedrock ids
// carry a provider prefix ("anthropic.claude-3-5-sonnet-...", "us.anthropic...").
var contextWindows = []struct {
	match  string
	tokens int64
}{
	{"claude", 200000},
	{"gpt-4.1", 1047576},
	{"gpt-5", 400000},
	{"gpt-4o", 128000},
	{"gpt-4-turbo", 128000},
	{"o4-mini", 200000},
	{"o3", 200000},
	{"o1", 200000},
	{"nova-micro", 128000},
	{"nova-lite", 300000},
	{"nova-pro", 300000},
	{"llama3-1", 128000}, {"llama3.1", 128000}, {"llama-3.1", 128000},
	{"llama3-2", 128000}, {"llama3.2", 128000}, {"llama-3.2", 128000},
	{"llama3-3", 128000}, {"llama3.3", 128000}, {"llama-3.3", 128000},
	{"mistral-large", 128000},
	{"qwen2.5", 32768}, {"qwen3", 32768},
}

// ContextTokens returns the context window of a model id and whether it is known; an
// unknown model gets DefaultContextTokens.
func ContextTokens(modelID string) (int64, bool) {
	id := strings.ToLower(modelID)
	for _, w := range contextWindows {
		if strings.Contains(id, w.match) {
			return w.tokens, true
		}
	}
	return DefaultContextTokens, false
}
