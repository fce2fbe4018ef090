package schemas

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// TestAgentColumns: what an agent may see is declared once, by agent:"visible" in the
// record layout: the issue, the project's place and the repro command, never the fix, the
// pull request or the scoring commands. The run protocol's documentation lists the same
// columns.
func TestAgentColumns(t *testing.T) {
	want := []string{"instance_id", "repo", "base_commit", "problem_statement", "problem_statement_truncated", "registry_date",
		"ecosystem", "image", "manifest_path", "manifest_paths", "repro_command", "failure_signature"}
	if got := columnNames(AgentColumns()); !reflect.DeepEqual(got, want) {
		t.Errorf("agent-visible columns %v, want %v", got, want)
	}
	for _, c := range AgentColumns() {
		if strings.Contains(c.Doc, "Do not show it to the agent") || strings.HasPrefix(c.Name, "pr_") ||
			c.Name == "resolve_command" || c.Name == "run_command" || c.Name == "expected_failure_regex" {
			t.Errorf("%s is agent-visible", c.Name)
		}
	}
	doc, err := os.ReadFile(filepath.Join("..", "docs", "agents.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, row, ok := strings.Cut(string(doc), "| `ENVGAP_TASK_FILE` | ")
	row, _, _ = strings.Cut(row, ". Never")
	if !ok {
		t.Fatal("docs/agents.md has no ENVGAP_TASK_FILE row")
	}
	var listed []string
	for _, m := range regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(row, -1) {
		listed = append(listed, m[1])
	}
	sort.Strings(listed)
	sorted := append([]string{}, want...)
	sort.Strings(sorted)
	if !reflect.DeepEqual(listed, sorted) {
		t.Errorf("docs/agents.md's task file lists %v, the layout %v", listed, sorted)
	}
}

// TestAgentView: a view struct gets exactly the agent-visible columns of the task; one
// with another column, a wrong type or a missing column is refused.
func TestAgentView(t *testing.T) {
	task := Task{Ident: Ident{InstanceID: "envgap__o__r-1"}, Spec: Spec{Repo: "o/r", Patch: "secret fix", ManifestPaths: []string{"setup.py"},
		FailureSignature: "E", RegistryDate: "2024-01-01T00:00:00Z", ProblemStatementTruncated: true}}
	type view struct {
		InstanceID                string    `json:"instance_id"`
		Repo                      string    `json:"repo"`
		BaseCommit                string    `json:"base_commit"`
		ProblemStatement          string    `json:"problem_statement"`
		ProblemStatementTruncated bool      `json:"problem_statement_truncated"`
		FailureSignature          string    `json:"failure_signature"`
		Ecosystem                 Ecosystem `json:"ecosystem"`
		Image                     string    `json:"image"`
		ManifestPath              string    `json:"manifest_path"`
		ManifestPaths             []string  `json:"manifest_paths"`
		ReproCommand              string    `json:"repro_command"`
		RegistryDate              string    `json:"registry_date"`
	}
	var v view
	if err := AgentView(&task, &v); err != nil {
		t.Fatal(err)
	}
	if v.InstanceID != task.InstanceID || v.Repo != "o/r" || !v.ProblemStatementTruncated || v.FailureSignature != "E" ||
		v.RegistryDate != task.RegistryDate || !reflect.DeepEqual(v.ManifestPaths, []string{"setup.py"}) {
		t.Errorf("view %+v", v)
	}
	type withPatch struct {
		view
		Patch string `json:"patch"`
	}
	if err := AgentView(&task, &withPatch{}); err == nil || !strings.Contains(err.Error(), "patch") {
		t.Errorf("a view with the patch: %v", err)
	}
	type missing struct {
		InstanceID string `json:"instance_id"`
	}
	if err := AgentView(&task, &missing{}); err == nil || !strings.Contains(err.Error(), "no field for the agent-visible column repo") {
		t.Errorf("a view without most columns: %v", err)
	}
	type wrongType struct {
		view
		Repo int `json:"repo"`
	}
	if err := AgentView(&task, &wrongType{}); err == nil {
		t.Errorf("a view with a wrongly typed column: no error")
	}
}
