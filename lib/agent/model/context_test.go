package model

import "testing"

func TestContextTokens(t *testing.T) {
	for id, want := range map[string]int64{
		"anthropic.claude-3-5-sonnet-20241022-v2:0":  200000,
		"us.anthropic.claude-sonnet-4-20250514-v1:0": 200000,
		"gpt-4o-mini":                     128000,
		"gpt-4.1-2025-04-14":              1047576,
		"o3-mini":                         200000,
		"meta.llama3-1-70b-instruct-v1:0": 128000,
		"amazon.nova-pro-v1:0":            300000,
		"my-local-model":                  DefaultContextTokens,
	} {
		got, known := ContextTokens(id)
		if got != want || known != (want != DefaultContextTokens) {
			t.Errorf("ContextTokens(%q) = %d, %v; want %d", id, got, known, want)
		}
	}
}
