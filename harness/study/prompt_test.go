package study

import (
	"strings"
	"testing"

	"github.com/envgap/envgap/core"
	"github.com/envgap/envgap/lib/studylayout"
	"github.com/envgap/envgap/schemas"
)

func TestPromptFigure3(t *testing.T) {
	p := studylayout.Problem{Number: 13, Title: "HMAC Integrity Checker", Description: "Compute and verify tags.", Requirements: []string{"sign FILE KEY", "verify FILE KEY TAG"}}
	got, err := Prompt(p, schemas.EcosystemPython, VariantExplicit)
	if err != nil {
		t.Fatal(err)
	}
	want := `TASK: HMAC Integrity Checker
Compute and verify tags.
FUNCTIONAL REQUIREMENTS:
- sign FILE KEY
- verify FILE KEY TAG
Create a complete Python project for a clean Ubuntu 22.04 machine with only Python 3.10 and pip installed. Include:
- Source code
- requirements.txt with all dependencies (direct and transitive) pinned to exact versions
- README.md with setup instructions, dependency explanations, build steps, run commands, and expected output
`
	if got != want {
		t.Errorf("explicit prompt:\n%s\nwant:\n%s", got, want)
	}
	got, _ = Prompt(p, schemas.EcosystemCPP, VariantImplicit)
	want = `TASK: HMAC Integrity Checker
Compute and verify tags.
FUNCTIONAL REQUIREMENTS:
- sign FILE KEY
- verify FILE KEY TAG
Create a complete C++ project for a clean Ubuntu 22.04 machine with only G++, CMake, make, git and zlib1g-dev installed.
`
	if got != want {
		t.Errorf("implicit prompt:\n%s\nwant:\n%s", got, want)
	}
	if _, err := Prompt(p, schemas.EcosystemPython, "terse"); err == nil {
		t.Error("an unknown variant was accepted")
	}
}

func TestAptPackages(t *testing.T) {
	files := []coreFile{{"setup.sh", "#!/bin/sh\nsudo apt-get update\nsudo apt-get install -y --no-install-recommends libssl-dev pkg-config && echo ok\napt install -y libcurl4-openssl-dev\n"}, {"README.md", "apt-get install nothing-here"}}
	got := aptPackages(toCore(files))
	want := []string{"libcurl4-openssl-dev", "libssl-dev", "pkg-config"}
	if len(got) != len(want) {
		t.Fatalf("aptPackages = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("aptPackages = %v, want %v", got, want)
		}
	}
}

type coreFile struct{ path, content string }

func toCore(fs []coreFile) []core.File {
	var out []core.File
	for _, f := range fs {
		out = append(out, core.File{Path: f.path, Content: []byte(f.content), Mode: 0o644})
	}
	return out
}

func TestRepairTextAndRunCommand(t *testing.T) {
	tt := Turn{Round: 2, Prompt: "TASK: X\n", Feedback: "e1 verbatim", Errors: []string{"e0 verbatim", "e1 verbatim"}}
	got := RepairText(tt)
	for _, want := range []string{"failed:\ne1 verbatim\n", "RUN: <command>"} {
		if !strings.Contains(got, want) {
			t.Errorf("repair text lacks %q:\n%s", want, got)
		}
	}
	// The conversation holds the prompt and the earlier errors: the message has the last.
	if strings.Contains(got, "TASK: X") || strings.Contains(got, "e0 verbatim") {
		t.Errorf("repair text repeats the conversation:\n%s", got)
	}
	traj := []any{
		map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"name": "finish", "input": map[string]any{"summary": "RUN: node a.js"}}}},
		map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"name": "finish", "input": map[string]any{"summary": "done\n RUN:  node index.js \n"}}}},
	}
	if got := runFromTrajectory(traj); got != "node index.js" {
		t.Errorf("run command %q, want the last finish's", got)
	}
}
