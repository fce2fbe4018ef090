package eval

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/envgap/envgap/schemas"
)

// The later-history rules (docs/scoring.md). Each hit is a Leak with the
// trajectory step it was found in.
const (
	RulePullRequest = "pull-request"  // the fix's pull request named (URL, owner/repo#N, refs/pull/N, API)
	RuleFixCommit   = "fix-commit"    // pr_head_commit or pr_merge_commit (7+ hex prefix)
	RuleHistory     = "later-history" // a command that fetches or logs history past base_commit
	RuleFixLines    = "fix-lines"     // the fix's added lines in a tool's output before the agent wrote them
)

// step is one trajectory entry reduced to what the agent did (actions: commands, tool
// inputs, its own text) and what it was shown (outputs: tool results, observations).
type step struct {
	actions []string
	outputs []string
}

// Keys of a trajectory entry, by what they hold.
var (
	actionKeys = map[string]bool{"action": true, "actions": true, "command": true, "cmd": true, "input": true,
		"arguments": true, "args": true, "parameters": true, "tool_calls": true, "tool_input": true, "code": true,
		"thought": true, "note": true, "text": true, "patch": true, "changes": true, "message": true, "messages": true}
	outputKeys = map[string]bool{"output": true, "observation": true, "observations": true, "stdout": true,
		"stderr": true, "result": true, "results": true, "aggregated_output": true, "response": true}
	metaKeys = map[string]bool{"role": true, "type": true, "id": true, "name": true, "tool": true, "exit_code": true,
		"step": true, "step_id": true, "timestamp": true, "cost_usd": true, "tokens": true, "usage": true,
		"session_id": true, "source": true, "status": true, "is_error": true, "duration_ms": true, "model": true,
		"subtype": true, "metrics": true, "thread_id": true, "item": true, "content": true, "function": true,
		"function_name": true, "tool_call_id": true, "tool_use_id": true, "parent_tool_use_id": true, "uuid": true,
		"num_turns": true, "total_cost_usd": true, "extra": true, "info": true}
	outputRoles = map[string]bool{"tool": true, "function": true, "user": true, "tool_result": true, "observation": true}
)

// readTrajectory reduces a trajectory to steps. shape names what was recognised; an entry
// that is not an object, or an object with no key the rules know, makes the whole
// trajectory "not inspected" (ok false, why says which entry).
func readTrajectory(traj []any) (steps []step, shape string, ok bool) {
	if len(traj) == 0 {
		return nil, "empty", true
	}
	// ATIF (Harbor): one object with schema_version "ATIF..." and steps.
	if len(traj) == 1 {
		if m, isMap := traj[0].(map[string]any); isMap {
			if v, _ := m["schema_version"].(string); strings.HasPrefix(strings.ToUpper(v), "ATIF") {
				if inner, isList := m["steps"].([]any); isList {
					s, _, ok := readTrajectory(inner)
					return s, "ATIF", ok
				}
			}
		}
	}
	for i, e := range traj {
		m, isMap := e.(map[string]any)
		if !isMap {
			return nil, fmt.Sprintf("entry %d is a %s, not an object", i, kindOf(e)), false
		}
		known := false
		for k := range m {
			if actionKeys[k] || outputKeys[k] || metaKeys[k] {
				known = true
				break
			}
		}
		if !known {
			return nil, fmt.Sprintf("entry %d has no field the rules know", i), false
		}
		var s step
		walk(m, modeOf(m, ""), &s)
		steps = append(steps, s)
	}
	return steps, "steps", true
}

func kindOf(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "boolean"
	case []any:
		return "array"
	case nil:
		return "null"
	}
	return "value"
}

const (
	modeNone   = ""
	modeAction = "action"
	modeOutput = "output"
)

// modeOf says what an object's "content"/"text" holds from its role or type.
func modeOf(m map[string]any, inherited string) string {
	role, _ := m["role"].(string)
	typ, _ := m["type"].(string)
	_, observation := m["observation"].(string) // OpenHands: {"observation": "run", "content": ...}
	switch {
	case outputRoles[role], typ == "tool_result", typ == "function_call_output", observation:
		return modeOutput
	case role == "assistant", role == "agent", typ == "tool_use", typ == "text" && inherited == modeNone,
		typ == "agent_message", typ == "reasoning", typ == "function_call":
		return modeAction
	case role == "system":
		return "skip"
	}
	if inherited != "" {
		return inherited
	}
	return modeAction
}

// walk collects the strings of v into s by the mode the keys above them give. Inside a
// tool's input (below an action key) every field is the agent's.
func walk(v any, mode string, s *step) { walkIn(v, mode, false, s) }

func walkIn(v any, mode string, inside bool, s *step) {
	switch x := v.(type) {
	case string:
		switch mode {
		case modeOutput:
			s.outputs = append(s.outputs, x)
		case modeAction:
			s.actions = append(s.actions, x)
		}
	case []any:
		for _, e := range x {
			walkIn(e, mode, inside, s)
		}
	case map[string]any:
		if mode == "skip" {
			return
		}
		own := modeOf(x, mode)
		if own == "skip" {
			return
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			switch {
			case outputKeys[k]:
				walkIn(x[k], modeOutput, false, s)
			case actionKeys[k] || k == "content" || k == "item" || k == "function":
				m := own
				if actionKeys[k] && own != modeOutput {
					m = modeAction
				}
				walkIn(x[k], m, inside || m == modeAction && actionKeys[k], s)
			case inside:
				walkIn(x[k], mode, true, s)
			}
		}
	}
}

var (
	hexRe     = regexp.MustCompile(`(?i)\b[0-9a-f]{7,40}\b`)
	historyRe = []struct {
		re   *regexp.Regexp
		what string
	}{
		{regexp.MustCompile(`\bgit\b[^\n;&|]*\bfetch\b[^\n;&|]*--(unshallow|deepen|shallow-since|shallow-exclude)\b`), "git fetch past the shallow base commit"},
		{regexp.MustCompile(`\bgit\b[^\n;&|]*\blog\b[^\n;&|]*\s--(all|branches|remotes|tags|glob|reflog)\b`), "git log of every ref"},
		{regexp.MustCompile(`\bgit\b[^\n;&|]*\b(reflog|pull)\b`), "git pull / reflog"},
		{regexp.MustCompile(`\brefs/pull/\d+`), "a pull request ref"},
		{regexp.MustCompile(`\bgh\s+(pr|api)\b`), "the GitHub CLI reading pull requests or the API"},
	}
	cloneRe = regexp.MustCompile(`\bgit\b[^\n;&|]*\bclone\b[^\n;&|]*`)
	depthRe = regexp.MustCompile(`--depth[= ]+1\b`)
)

// findLeaks applies the later-history rules to the steps of a trajectory. files are the
// prediction's files (the fix-lines rule counts a line only when the prediction wrote it).
func findLeaks(t *schemas.Task, steps []step, files map[string]*string) []schemas.Leak {
	var out []schemas.Leak
	add := func(rule string, i int, ev string) {
		for _, l := range out {
			if l.Rule == rule && l.Step == i {
				return
			}
		}
		if len(ev) > 200 {
			ev = ev[:200] + "..."
		}
		out = append(out, schemas.Leak{Rule: rule, Step: i, Evidence: ev})
	}
	prRes := pullRequestPatterns(t)
	commits := fixCommits(t)
	repoLower := strings.ToLower(t.Repo)
	for i, s := range steps {
		all := append(append([]string{}, s.actions...), s.outputs...)
		for _, text := range all {
			for _, re := range prRes {
				if m := re.FindString(text); m != "" {
					add(RulePullRequest, i, m)
				}
			}
			if len(commits) > 0 {
				for _, h := range hexRe.FindAllString(text, -1) {
					lh := strings.ToLower(h)
					for _, c := range commits {
						if strings.HasPrefix(c, lh) && !strings.HasPrefix(strings.ToLower(t.BaseCommit), lh) {
							add(RuleFixCommit, i, h)
						}
					}
				}
			}
		}
		for _, text := range s.actions {
			for _, h := range historyRe {
				if m := h.re.FindString(text); m != "" {
					add(RuleHistory, i, h.what+": "+m)
				}
			}
			for _, m := range cloneRe.FindAllString(text, -1) {
				if t.Source != schemas.SourceLite && repoLower != "" && strings.Contains(strings.ToLower(m), repoLower) && !depthRe.MatchString(m) {
					add(RuleHistory, i, "a full clone of the repository: "+m)
				}
			}
		}
	}
	// The fix's added lines shown by a tool before the agent wrote them.
	lines := fixLines(t, files)
	if len(lines) > 0 {
		firstWritten := map[string]int{}
		for i, s := range steps {
			for _, a := range s.actions {
				for l := range lines {
					if _, seen := firstWritten[l]; !seen && strings.Contains(a, l) {
						firstWritten[l] = i
					}
				}
			}
		}
		for i, s := range steps {
			for _, o := range s.outputs {
				for _, ol := range strings.Split(o, "\n") {
					n := normLine(ol)
					if !lines[n] {
						continue
					}
					if w, ok := firstWritten[n]; !ok || w > i {
						add(RuleFixLines, i, n)
					}
				}
			}
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Step < out[b].Step })
	return out
}

func pullRequestPatterns(t *schemas.Task) []*regexp.Regexp {
	if t.PRNumber == nil || t.Repo == "" {
		return nil
	}
	n := strconv.FormatInt(*t.PRNumber, 10)
	repo := regexp.QuoteMeta(t.Repo)
	pats := []string{
		`(?i)github\.com/` + repo + `/pull/` + n + `\b`,
		`(?i)api\.github\.com/repos/` + repo + `/pulls/` + n + `\b`,
		`(?i)\b` + repo + `#` + n + `\b`,
	}
	if t.PullRequest != nil && *t.PullRequest != "" {
		pats = append(pats, regexp.QuoteMeta(*t.PullRequest)+`\b`)
	}
	var out []*regexp.Regexp
	for _, p := range pats {
		out = append(out, regexp.MustCompile(p))
	}
	return out
}

func fixCommits(t *schemas.Task) []string {
	var out []string
	for _, c := range []*string{t.PRHeadCommit, t.PRMergeCommit} {
		if c != nil && len(*c) >= 7 {
			out = append(out, strings.ToLower(*c))
		}
	}
	return out
}

// normLine trims a line of output and a diff marker in front of it.
func normLine(s string) string {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "+") && !strings.HasPrefix(s, "+++") {
		s = strings.TrimSpace(s[1:])
	}
	return s
}

// fixLines returns the distinctive lines the reference fix adds that the prediction
// also writes: at least 12 characters, not a line the patch removes or keeps as context,
// not in the problem statement.
func fixLines(t *schemas.Task, files map[string]*string) map[string]bool {
	if t.Patch == "" || len(files) == 0 {
		return nil
	}
	added, other := map[string]bool{}, map[string]bool{}
	for _, l := range strings.Split(t.Patch, "\n") {
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
		case strings.HasPrefix(l, "+"):
			if n := strings.TrimSpace(l[1:]); len(n) >= 12 {
				added[n] = true
			}
		case strings.HasPrefix(l, "-"), strings.HasPrefix(l, " "):
			other[strings.TrimSpace(l[1:])] = true
		}
	}
	written := map[string]bool{}
	for _, c := range files {
		if c != nil {
			for _, l := range strings.Split(*c, "\n") {
				written[strings.TrimSpace(l)] = true
			}
		}
	}
	out := map[string]bool{}
	for l := range added {
		// A line the issue itself shows is no sign of the later history.
		if !other[l] && written[l] && !strings.Contains(t.ProblemStatement, l) {
			out[l] = true
		}
	}
	return out
}
