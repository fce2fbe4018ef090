package harbor

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/BurntSushi/toml"
)

// Problem is one thing wrong with a task directory.
type Problem struct {
	Task  string `json:"task"`
	Field string `json:"field"`
	Msg   string `json:"msg"`
}

func (p Problem) String() string { return fmt.Sprintf("%s: %s: %s", p.Task, p.Field, p.Msg) }

// namePattern is Harbor's org/name rule for [task] name.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$`)

var networkModes = map[string]bool{"public": true, "no-network": true, "allowlist": true}

// CheckFiles checks one task directory (named path in the parquet) against Harbor's task
// layout and task.toml model (SchemaVersion), and against what envgap writes: the name
// envgap/<path>, the metadata that ties it to the release (corpusID, when not empty), a
// default-fail test.sh and the oracle's solve.sh.
func CheckFiles(path string, files []File, corpusID string) []Problem {
	var ps []Problem
	bad := func(field, f string, a ...any) {
		ps = append(ps, Problem{Task: path, Field: field, Msg: fmt.Sprintf(f, a...)})
	}
	by := map[string]File{}
	hasEnv := false
	for _, f := range files {
		by[f.Path] = f
		if strings.HasPrefix(f.Path, "environment/") {
			hasEnv = true
		}
	}
	for _, req := range []string{ConfigPath, InstructionPath, TestPath, SolvePath} {
		if f, ok := by[req]; !ok || f.Link != "" {
			bad(req, "missing (a Harbor task needs task.toml, instruction.md, environment/ and tests/test.sh; envgap's also solution/solve.sh)")
		}
	}
	if !hasEnv {
		bad("environment/", "missing")
	} else if _, ok := by[DockerfilePath]; !ok {
		if _, ok := by[ComposePath]; !ok {
			bad("environment/", "has neither a Dockerfile nor a docker-compose.yaml")
		}
	}
	if f, ok := by[InstructionPath]; ok && strings.TrimSpace(string(f.Content)) == "" {
		bad(InstructionPath, "empty")
	}
	if f, ok := by[TestPath]; ok {
		s := string(f.Content)
		if !strings.HasPrefix(s, "#!") {
			bad(TestPath, "does not start with #!")
		}
		if f.Mode&0o111 == 0 {
			bad(TestPath, "not executable")
		}
		first := strings.Index(s, "reward.txt")
		if first < 0 || !strings.Contains(s[:first+len("reward.txt")], "echo 0 >") {
			bad(TestPath, "not default-fail: the first write of reward.txt must write 0")
		}
	}
	if f, ok := by[ConfigPath]; ok {
		ps = append(ps, checkConfig(path, f.Content, corpusID)...)
	}
	return ps
}

func checkConfig(path string, b []byte, corpusID string) []Problem {
	var ps []Problem
	bad := func(field, f string, a ...any) {
		ps = append(ps, Problem{Task: path, Field: ConfigPath + ": " + field, Msg: fmt.Sprintf(f, a...)})
	}
	var c map[string]any
	if _, err := toml.Decode(string(b), &c); err != nil {
		bad("", "not TOML: %v", err)
		return ps
	}
	str := func(m map[string]any, key, field string, required bool) string {
		v, ok := m[key]
		if !ok {
			if required {
				bad(field, "missing")
			}
			return ""
		}
		s, ok := v.(string)
		if !ok {
			bad(field, "is %T, want a string", v)
		}
		return s
	}
	num := func(m map[string]any, key, field string, intOnly bool) (float64, bool) {
		v, ok := m[key]
		if !ok {
			return 0, false
		}
		switch n := v.(type) {
		case int64:
			return float64(n), true
		case float64:
			if intOnly {
				bad(field, "is a float, want an integer")
			}
			return n, true
		}
		bad(field, "is %T, want a number", v)
		return 0, false
	}
	table := func(key string) map[string]any {
		v, ok := c[key]
		if !ok {
			return map[string]any{}
		}
		m, ok := v.(map[string]any)
		if !ok {
			bad(key, "is %T, want a table", v)
			return map[string]any{}
		}
		return m
	}
	if v := str(c, "schema_version", "schema_version", true); v != "" && v != SchemaVersion {
		bad("schema_version", "is %q, want %q (the version envgap follows)", v, SchemaVersion)
	}
	for k := range c {
		switch k {
		case "schema_version", "version", "source", "task", "metadata", "verifier", "agent", "environment", "solution":
		default:
			bad(k, "not a field of Harbor's task config")
		}
	}
	task := table("task")
	name := str(task, "name", "task.name", true)
	if name != "" && !namePattern.MatchString(name) {
		bad("task.name", "%q is not org/name", name)
	} else if name != "" && name != TaskName(path) {
		bad("task.name", "%q, want %q (the row's path)", name, TaskName(path))
	}
	str(task, "description", "task.description", false)
	md := table("metadata")
	if id := str(md, "instance_id", "metadata.instance_id", true); id != "" && id != path {
		bad("metadata.instance_id", "%q, want the row's path %q", id, path)
	}
	for _, k := range []string{"set", "ecosystem", "registry_date", "corpus_id", "license"} {
		str(md, k, "metadata."+k, true)
	}
	if corpusID != "" {
		if got, _ := md["corpus_id"].(string); got != "" && got != corpusID {
			bad("metadata.corpus_id", "%q, want the release's %q", got, corpusID)
		}
	}
	for _, phase := range []string{"verifier", "agent"} {
		m := table(phase)
		if n, ok := num(m, "timeout_sec", phase+".timeout_sec", false); !ok || n <= 0 {
			bad(phase+".timeout_sec", "missing or not positive")
		}
		if mode := str(m, "network_mode", phase+".network_mode", false); mode != "" && !networkModes[mode] {
			bad(phase+".network_mode", "%q is not public, no-network or allowlist", mode)
		}
	}
	env := table("environment")
	num(env, "build_timeout_sec", "environment.build_timeout_sec", false)
	for _, k := range []string{"cpus", "memory_mb", "storage_mb", "gpus"} {
		if n, ok := num(env, k, "environment."+k, true); ok && n < 0 {
			bad("environment."+k, "negative")
		}
	}
	if mode := str(env, "network_mode", "environment.network_mode", false); mode != "" && !networkModes[mode] {
		bad("environment.network_mode", "%q is not public, no-network or allowlist", mode)
	}
	if v, ok := env["healthcheck"]; ok {
		if hc, ok := v.(map[string]any); !ok {
			bad("environment.healthcheck", "is %T, want a table", v)
		} else {
			str(hc, "command", "environment.healthcheck.command", true)
		}
	}
	return ps
}
