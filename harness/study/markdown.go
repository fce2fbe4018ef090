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
	fmt.Fprintf(w, "%d projects read (%d of the main trial, %d of them successful within the budget, %d made to work only after it, %d with D2 and D3 measured); %d agents: %s. ",
		r.Projects, r.Main, r.Successful, r.OverBudget, r.Layered, len(r.Agents), strings.Join(r.Agents, ", "))
	fmt.Fprintf(w, "Every metric but intra-agent variability is over the main trial (trial %d); rates, rho, Delta and P/R/F1 are means over projects successful within the budget with D2 and D3 measured. Definitions: docs/study.md.\n\n", MainTrial)
	fmt.Fprintf(w, "Options: %s.\n\n", OptionsText(r.Options))

	fmt.Fprintf(w, "## The problems (Tables 1 and 9) and the study's scale (Table 2)\n\n")
	t := table{head: []string{"Domain", "n", "Representative tasks"}}
	for _, d := range r.Domains {
		t.add(d.Domain, fmt.Sprint(d.N), strings.Join(d.Representative, ", "))
	}
	t.write(w)
	sc := r.Scale
	t = table{head: []string{"Dimension", "Count"}}
	t.add("Benchmark programming tasks", fmt.Sprint(sc.Tasks))
	t.add("Target language ecosystems", fmt.Sprint(sc.Languages))
	t.add("LLM coding agents", fmt.Sprint(sc.Agents))
	t.add(fmt.Sprintf("Primary configurations (%d×%d×%d = %d)", sc.Tasks, sc.Languages, sc.Agents, sc.PrimaryGrid), fmt.Sprint(sc.Primary))
	rep := "none"
	if len(sc.RepeatedAgent) > 0 {
		rep = strings.Join(sc.RepeatedAgent, ", ")
	}
	t.add("Stochastic trials (repeats of: "+rep+")", fmt.Sprint(sc.Stochastic))
	t.add("Maximum agent interactions per instance (1 + k)", fmt.Sprint(sc.MaxInteract))
	t.add("Total evaluation runs", fmt.Sprint(sc.TotalRuns))
	t.write(w)
	t = table{head: []string{"ID", "Problem", "Domain", "Cx.", "standard library suffices in"}}
	for _, p := range r.ProblemList {
		id := p.ID
		if id == "" {
			id = fmt.Sprintf("p_%02d", p.Number)
		}
		std := strings.Join(p.StdlibSufficient, ", ")
		if std == "" {
			std = "–"
		}
		t.add(id, p.Title, p.Domain, p.Complexity, std)
	}
	t.write(w)

	fmt.Fprintf(w, "## M1: success under self-correction, budget k = %d (Figures 4-6)\n\n", r.Options.K)
	fig("grid", "Figure 4: first-attempt success per agent, language and task")
	head := []string{"Agent", "Language", "n", "SR(0)", "SR(<=k)", "gain"}
	head = append(head, r.Buckets...)
	head = append(head, "failed first", "recovered", "mean repair cycles")
	t = table{head: head}
	for _, c := range r.Convergence {
		row := []string{c.Agent, langName(c.Language), fmt.Sprint(c.N), pct(&c.SR0), pct(&c.SRk), pct(&c.Gain)}
		for _, b := range r.Buckets {
			row = append(row, fmt.Sprint(c.Buckets[b]))
		}
		row = append(row, fmt.Sprint(c.FailedFirst), fmt.Sprintf("%d (%s)", c.Recovered, pct(c.RecoveryShare)), cycles(c))
		t.add(row...)
	}
	t.write(w)
	fmt.Fprintf(w, "Column %s counts projects made to work only after more than k = %d repair rounds: failures within the budget, as the paper counts them (not in SR(<=k), recovered or EGAR). Recovered: of the projects that failed at Gen, those made to work within the budget. Mean repair cycles: i* over the projects that converged within the budget (0 for a first-attempt success).\n\n", OverBudget(r.Options.K), r.Options.K)
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

	fmt.Fprintf(w, "## M2: environment growth rho = |D2|/|D1| and Delta = D2 \\ D1 (Figure 8)\n\n")
	t = table{head: []string{"Language", "n", "|D1|=0 (undefined)", "mean", "median", "Q1", "Q3", "min", "max", "mean |Delta|", "median |Delta|", "note"}}
	for _, x := range r.Inflation {
		var notes []string
		if x.Excluded {
			notes = append(notes, "D2 from the CMake configure (packages found and fetched); left out of cross-language transitive analyses, as in the paper")
		}
		if x.D2FromD1 > 0 {
			notes = append(notes, fmt.Sprintf("%d project(s) with D2 not measured: D2 := D1 (the paper's fallback)", x.D2FromD1))
		}
		t.add(langName(x.Language), fmt.Sprint(x.N), fmt.Sprint(x.Undefined), num(x.Mean), num(x.Median), num(x.Q1), num(x.Q3), num(x.Min), num(x.Max),
			num(x.DeltaMean), num(x.DeltaMedian), strings.Join(notes, "; "))
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
		t = table{head: []string{"Agent", "Language", "trials", "mean J_intra", "median", "UCR", "mean V∪", "mean V∩", "left out (a trial failed)"}}
		for _, x := range r.Intra {
			ts := make([]string, len(x.Trials))
			for i, n := range x.Trials {
				ts[i] = fmt.Sprint(n)
			}
			t.add(x.Agent, langName(x.Language), strings.Join(ts, ","), num(x.MeanJ), num(x.MedianJ),
				fmt.Sprintf("%d/%d (%s)", x.Unanimous, x.Tasks, pct(x.UCR)), num1(x.MeanUnion), num1(x.MeanInters), fmt.Sprint(x.LeftOut))
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

func cycles(c Convergence) string {
	if c.MeanCycles == nil {
		return "–"
	}
	return fmt.Sprintf("%.2f (n %d)", *c.MeanCycles, c.CyclesN)
}

// OptionsText says in words which budget and conventions a report used.
func OptionsText(o Options) string {
	conv := "envgap's conventions where it departs from the paper (every manifest file, Java test scope left out, C++ CMake names mapped to the libraries a trace sees, Table 5 over every task all trials did); --paper gives the paper's"
	if o.Paper {
		conv = "the paper's conventions (its one manifest file per language, Java test scope counted, C++ names compared raw, Table 5 over the tasks every trial made to work)"
	}
	ties := "ties in Tables 10 and 11 by name"
	if o.Ties == TiesFirstSeen {
		ties = "ties in Tables 10 and 11 in the order first seen"
	}
	return fmt.Sprintf("budget k = %d (made to work after more than %d repair rounds is a failure); %s; %s", o.K, o.K, ties, conv)
}
