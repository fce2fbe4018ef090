package study

import (
	"fmt"
	"io"
	"strings"

	"github.com/envgap/envgap/schemas"
)

// langName is a language as the paper writes it.
func langName(l schemas.Ecosystem) string {
	switch l {
	case schemas.EcosystemPython:
		return "Python"
	case schemas.EcosystemJava:
		return "Java"
	case schemas.EcosystemJavaScript:
		return "JavaScript"
	case schemas.EcosystemCPP:
		return "C++"
	}
	return string(l)
}

type table struct {
	head []string
	rows [][]string
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) write(w io.Writer) {
	esc := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	head := make([]string, len(t.head))
	for i, h := range t.head {
		head[i] = esc(h)
	}
	fmt.Fprintf(w, "| %s |\n|", strings.Join(head, " | "))
	for range t.head {
		fmt.Fprint(w, "---|")
	}
	fmt.Fprintln(w)
	for _, r := range t.rows {
		for i := range r {
			r[i] = esc(r[i])
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(r, " | "))
	}
	fmt.Fprintln(w)
}

// WriteMarkdown writes the report as Markdown tables; figures, when given, are linked
// (file names relative to the Markdown file).
func WriteMarkdown(w io.Writer, r *Report, figures map[string]string) {
	fig := func(key, alt string) {
		if f, ok := figures[key]; ok {
			fmt.Fprintf(w, "![%s](%s)\n\n", alt, f)
		}
	}
	fmt.Fprintf(w, "# Study report: %s\n\n", r.Study)
	fmt.Fprintf(w, "%d projects read (%d of the main trial, %d of them made to work, %d with D2 and D3 measured); %d agents: %s. ",
		r.Projects, r.Main, r.Successful, r.Layered, len(r.Agents), strings.Join(r.Agents, ", "))
	fmt.Fprintf(w, "Every metric but intra-agent variability is over the main trial (trial %d); rates, rho and P/R/F1 are means over successful projects with D2 and D3 measured. Definitions: docs/study.md.\n\n", MainTrial)

	fmt.Fprintf(w, "## M1: success under self-correction (Figures 4-6)\n\n")
	fig("grid", "Figure 4: first-attempt success per agent, language and task")
	t := table{head: []string{"Agent", "Language", "n", "SR(0)", "SR(<=k)", "gain", "0", "1-3", "4-7", "8-10", "failed", "unknown"}}
	for _, c := range r.Convergence {
		t.add(c.Agent, langName(c.Language), fmt.Sprint(c.N), pct(&c.SR0), pct(&c.SRk), pct(&c.Gain),
			fmt.Sprint(c.Buckets["0"]), fmt.Sprint(c.Buckets["1-3"]), fmt.Sprint(c.Buckets["4-7"]), fmt.Sprint(c.Buckets["8-10"]+c.Buckets[">10"]),
			fmt.Sprint(c.Buckets["failed"]), fmt.Sprint(c.Buckets["unknown"]))
	}
	t.write(w)
	fig("buckets", "Figure 5: repair cycles to converge")
	fig("convergence", "Figure 6: SR(0) and self-correction gain by language")

	fmt.Fprintf(w, "## M3: phantom, hidden and bloat rates (Figure 7)\n\n")
	t = table{head: []string{"Language", "Agent", "n", "phantom", "hidden", "bloat"}}
	for _, x := range r.Rates {
		a := x.Agent
		if a == "" {
			a = "All"
		}
		t.add(langName(x.Language), a, fmt.Sprint(x.N), pct(x.Phantom), pct(x.Hidden), pct(x.Bloat))
	}
	t.write(w)
	fig("rates", "Figure 7: phantom, hidden and bloat rates by ecosystem")

	fmt.Fprintf(w, "## M2: environment growth rho = |D2|/|D1| (Figure 8)\n\n")
	t = table{head: []string{"Language", "n", "|D1|=0 (undefined)", "mean", "median", "Q1", "Q3", "min", "max", "note"}}
	for _, x := range r.Inflation {
		note := ""
		if x.Excluded {
			note = "D2 := D1 by construction; left out of cross-language transitive analyses"
		}
		t.add(langName(x.Language), fmt.Sprint(x.N), fmt.Sprint(x.Undefined), num(x.Mean), num(x.Median), num(x.Q1), num(x.Q3), num(x.Min), num(x.Max), note)
	}
	t.write(w)
	fig("inflation", "Figure 8: inflation ratio by ecosystem")

	fmt.Fprintf(w, "## M4: initial-manifest accuracy, D1 against D3 (Table 4)\n\n")
	t = table{head: []string{"Agent", "Language", "n", "n1=n3=0 (excluded)", "Precision", "Recall", "F1"}}
	for _, x := range r.Accuracy {
		t.add(x.Agent, langName(x.Language), fmt.Sprint(x.N), fmt.Sprint(x.Excluded), num(x.Precision), num(x.Recall), num(x.F1))
	}
	t.write(w)

	fmt.Fprintf(w, "## M5: cross-agent consistency of D1 (Figure 9)\n\n")
	t = table{head: []string{"Language", "pair", "tasks", "mean J", "CDR"}}
	for _, x := range r.CrossPairs {
		if x.N == 0 {
			continue
		}
		t.add(langName(x.Language), x.A+" / "+x.B, fmt.Sprint(x.N), num(x.MeanJ), pct(x.CDR))
	}
	for _, x := range r.CrossAgent {
		t.add(langName(x.Language), "all pairs", fmt.Sprint(x.N), num(x.MeanJ), pct(x.CDR))
	}
	t.write(w)
	fmt.Fprintf(w, "Macro-average CDR over the languages: %s.\n\n", pct(r.MacroCDR))
	fig("jaccard", "Figure 9: cross-agent agreement on declared dependencies")

	fmt.Fprintf(w, "## M6: stochastic variability over one agent's trials (Table 5)\n\n")
	if len(r.Intra) == 0 {
		fmt.Fprintf(w, "No agent has more than one trial in a language.\n\n")
	} else {
		t = table{head: []string{"Agent", "Language", "trials", "mean J_intra", "median", "UCR", "mean V∪", "mean V∩"}}
		for _, x := range r.Intra {
			ts := make([]string, len(x.Trials))
			for i, n := range x.Trials {
				ts[i] = fmt.Sprint(n)
			}
			t.add(x.Agent, langName(x.Language), strings.Join(ts, ","), num(x.MeanJ), num(x.MedianJ),
				fmt.Sprintf("%d/%d (%s)", x.Unanimous, x.Tasks, pct(x.UCR)), num1(x.MeanUnion), num1(x.MeanInters))
		}
		t.write(w)
	}

	fmt.Fprintf(w, "## M8: environment gap, C++ first-round failures (Table 6)\n\n")
	t = table{head: []string{"Agent", "Fail", "SysLib", "FetchFail", "Other", "SLAR", "Rec.", "EGAR"}}
	for _, x := range r.EnvGap {
		t.add(x.Agent, fmt.Sprint(x.Fail), fmt.Sprint(x.SysLib), fmt.Sprint(x.FetchFail), fmt.Sprint(x.Other), pct(x.SLAR), fmt.Sprint(x.Recovered), pct(x.EGAR))
	}
	t.write(w)

	fmt.Fprintf(w, "## Manifest size against first-attempt success (Table 7)\n\n")
	t = table{head: []string{"Ecosystem", "n", "Spearman rho", "p-value"}}
	for _, x := range r.Spearman {
		p := "–"
		if x.P != nil {
			p = fmt.Sprintf("%.4f", *x.P)
		}
		t.add(langName(x.Language), fmt.Sprint(x.N), num(x.Rho), p)
	}
	t.write(w)

	fmt.Fprintf(w, "## M7: unnecessary dependency rate on standard-library-sufficient tasks (Section 6.5)\n\n")
	t = table{head: []string{"Agent", "Language", "eligible tasks", "with external packages", "UDR"}}
	for _, x := range r.UDR {
		t.add(x.Agent, langName(x.Language), fmt.Sprint(x.Eligible), fmt.Sprint(x.External), pct(x.Rate))
	}
	for _, x := range r.UDRMacro {
		t.add(x.Agent, "macro average", "", "", pct(x.Rate))
	}
	t.write(w)

	fmt.Fprintf(w, "## Convergence by task domain (Figure 10)\n\n")
	t = table{head: []string{"Agent", "Domain", "n", "SR(0)", "SR(<=k)", "gain"}}
	for _, c := range r.ByDomain {
		t.add(c.Agent, c.Domain, fmt.Sprint(c.N), pct(&c.SR0), pct(&c.SRk), pct(&c.Gain))
	}
	t.write(w)
	fig("domains", "Figure 10: convergence by task domain")

	fmt.Fprintf(w, "## Most frequent phantom and hidden packages (Tables 10, 11)\n\n")
	t = table{head: []string{"Ecosystem", "phantom (D1 \\ D3)", "hidden (D3 \\ D1)"}}
	for i := range r.Phantom {
		t.add(langName(r.Phantom[i].Language), counts(r.Phantom[i].Packages), counts(r.Hidden[i].Packages))
	}
	t.write(w)

	fmt.Fprintf(w, "## Left out\n\n")
	if len(r.Skipped) == 0 {
		fmt.Fprintf(w, "Nothing.\n")
		return
	}
	t = table{head: []string{"Project or path", "left out of", "why"}}
	for _, s := range r.Skipped {
		t.add(s.Ref, s.Metrics, s.Reason)
	}
	t.write(w)
}

func counts(cs []Count) string {
	if len(cs) == 0 {
		return "–"
	}
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = fmt.Sprintf("%s (%d)", c.Name, c.Count)
	}
	return strings.Join(parts, ", ")
}

func num1(f *float64) string {
	if f == nil {
		return "–"
	}
	return fmt.Sprintf("%.1f", *f)
}
