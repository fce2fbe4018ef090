package study

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/envgap/envgap/lib/studylayout"
	"github.com/envgap/envgap/schemas"
)

// Languages in the paper's order.
var Languages = []schemas.Ecosystem{schemas.EcosystemPython, schemas.EcosystemJava, schemas.EcosystemJavaScript, schemas.EcosystemCPP}

// DefaultK is the paper's repair budget: up to k = 10 Repair rounds after Gen.
const DefaultK = 10

// Bucket names of Figure 5 besides the repair-cycle ranges.
const (
	BucketFirst   = "0"
	BucketFailed  = "failed"
	BucketUnknown = "unknown"
)

// Buckets returns Figure 5's buckets under budget k, in order: first-attempt success,
// the paper's ranges 1-3, 4-7, 8-10 cut at k (and 11-k above 10), ">k" (made to work
// after more than k rounds: over the budget, a failure), failed (never made to work)
// and unknown (made to work, the round not recorded).
func Buckets(k int) []string {
	out := []string{BucketFirst}
	for _, r := range [][2]int{{1, 3}, {4, 7}, {8, 10}, {11, k}} {
		lo, hi := r[0], min(r[1], k)
		if lo > hi {
			continue
		}
		if lo == hi {
			out = append(out, fmt.Sprint(lo))
		} else {
			out = append(out, fmt.Sprintf("%d-%d", lo, hi))
		}
	}
	return append(out, OverBudget(k), BucketFailed, BucketUnknown)
}

// OverBudget is the bucket of projects made to work after more than k repair rounds.
func OverBudget(k int) string { return fmt.Sprintf(">%d", k) }

// Options are the choices of a report: the budget, and where envgap departs from the
// paper by choice, which way (see Paper).
type Options struct {
	// K is the repair budget (0: DefaultK). A project made to work after more than K
	// rounds is a failure within the budget (SR(<=k), EGAR, every "successful" metric).
	K int `json:"k"`
	// Ties orders packages of equal count in Tables 10 and 11: TiesName (by name) or
	// TiesFirstSeen (in the order the projects first show them, the paper's tables
	// being in neither alphabetical nor any stated order).
	Ties string `json:"ties"`
	// Paper reports the study the paper's way where envgap departs from it by choice
	// (docs/study.md, "envgap and the paper"): D1 from the one manifest the paper names,
	// Java test scope counted, raw names compared, ties in first-seen order, and tasks
	// whose repeat trials are not all complete left out of the main metrics too.
	Paper bool `json:"paper"`
}

// Tie orders of Tables 10 and 11.
const (
	TiesName      = "name"
	TiesFirstSeen = "first-seen"
)

func (o Options) k() int {
	if o.K <= 0 {
		return DefaultK
	}
	return o.K
}

// Report is every metric of the paper's Table 8 computed from one study. A nil number is
// undefined (nothing to average, a zero denominator the paper leaves undefined).
type Report struct {
	Study   string  `json:"study"`
	Options Options `json:"options"`
	// Buckets are Figure 5's buckets under the budget (Buckets(K)).
	Buckets  []string `json:"buckets"`
	Projects int      `json:"projects"`
	// Main counts the main-trial projects (the primary instances), Successful those made
	// to work, Layered those with D2 and D3 measured.
	Main       int `json:"main_trial_projects"`
	Successful int `json:"successful"`
	// OverBudget counts main-trial projects made to work after more than K rounds:
	// failures within the budget, left out of every metric over successful projects.
	OverBudget int      `json:"over_budget"`
	Layered    int      `json:"layers_measured"`
	Agents     []string `json:"agents"`

	Convergence []Convergence `json:"convergence"`           // M1, Figures 5 and 6
	ByDomain    []Convergence `json:"convergence_by_domain"` // Figure 10
	Grid        []GridCell    `json:"first_attempt_grid"`    // Figure 4
	Rates       []Rates       `json:"rates"`                 // M3, Figure 7
	Inflation   []Inflation   `json:"inflation"`             // M2, Figure 8
	Accuracy    []Accuracy    `json:"accuracy"`              // M4, Table 4
	CrossPairs  []PairAgree   `json:"cross_agent_pairs"`     // M5, Figure 9
	CrossAgent  []CrossAgent  `json:"cross_agent"`           // M5
	MacroCDR    *float64      `json:"macro_cdr"`
	Intra       []Intra       `json:"intra_agent"` // M6, Table 5
	EnvGap      []EnvGap      `json:"environment_gap"`
	Spearman    []Correlation `json:"manifest_size_vs_first_attempt"` // Table 7
	UDR         []UDR         `json:"udr"`                            // M7
	UDRMacro    []UDRMacro    `json:"udr_macro"`
	Phantom     []TopList     `json:"most_frequent_phantom"` // Table 10
	Hidden      []TopList     `json:"most_frequent_hidden"`  // Table 11
	Skipped     []Skip        `json:"left_out"`

	ProblemList []studylayout.Problem `json:"problems"` // Table 9
	Domains     []DomainRow           `json:"domains"`  // Table 1
	Scale       Scale                 `json:"scale"`    // Table 2
}

// DomainRow is one domain of Table 1: how many problems, and the first few titles.
type DomainRow struct {
	Domain         string   `json:"domain"`
	N              int      `json:"n"`
	Representative []string `json:"representative"`
}

// Scale is Table 2 counted from the study: distinct problems, languages and agents of
// the main trial, its projects (the primary configurations) against their product, the
// repeat trials' projects, the agent interactions a project may take (1 + K) and every
// project read.
type Scale struct {
	Tasks         int      `json:"tasks"`
	Languages     int      `json:"languages"`
	Agents        int      `json:"agents"`
	Primary       int      `json:"primary"`
	PrimaryGrid   int      `json:"primary_grid"`
	Stochastic    int      `json:"stochastic"`
	MaxInteract   int      `json:"max_interactions"`
	TotalRuns     int      `json:"total_runs"`
	RepeatedAgent []string `json:"repeated_agents"`
}

// Representatives is how many titles Table 1 lists per domain.
const Representatives = 4

// Convergence is SR(0), SR(<=k), the self-correction gain and the repair-cycle buckets
// of one agent in one language (or one domain, pooled over languages).
type Convergence struct {
	Agent    string            `json:"agent"`
	Language schemas.Ecosystem `json:"language,omitempty"`
	Domain   string            `json:"domain,omitempty"`
	N        int               `json:"n"`
	SR0      float64           `json:"sr0"`
	SRk      float64           `json:"sr_k"`
	Gain     float64           `json:"gain"`
	Buckets  map[string]int    `json:"buckets,omitempty"`
	// FailedFirst counts the projects that failed at Gen; Recovered those of them made to
	// work within the budget; RecoveryShare is Recovered/FailedFirst (undefined when
	// nothing failed at Gen).
	FailedFirst   int      `json:"failed_first"`
	Recovered     int      `json:"recovered"`
	RecoveryShare *float64 `json:"recovery_share"`
	// MeanCycles is the mean repair depth i* over the projects that converged within the
	// budget (0 for a first-attempt success); CyclesN counts them (an unknown round is
	// left out).
	MeanCycles *float64 `json:"mean_repair_cycles"`
	CyclesN    int      `json:"cycles_n"`
}

// GridCell is one (agent, language, task) of Figure 4.
type GridCell struct {
	Agent       string            `json:"agent"`
	Language    schemas.Ecosystem `json:"language"`
	Problem     int64             `json:"problem"`
	WorkedFirst bool              `json:"worked_first_time"`
	MadeToWork  bool              `json:"made_to_work"`
}

// Rates are the mean phantom, hidden and bloat rates (eq. 4) over successful projects,
// a zero denominator counting as zero. Agent is empty for the ecosystem pooled over agents.
type Rates struct {
	Agent    string            `json:"agent,omitempty"`
	Language schemas.Ecosystem `json:"language"`
	N        int               `json:"n"`
	Phantom  *float64          `json:"phantom"`
	Hidden   *float64          `json:"hidden"`
	Bloat    *float64          `json:"bloat"`
}

// Inflation is the distribution of rho = |D2|/|D1| over successful projects of one
// ecosystem. Excluded is set for C++, whose D2 is D1 by construction (the paper leaves it
// out of cross-language transitive analyses); Undefined counts projects with |D1| = 0.
type Inflation struct {
	Language  schemas.Ecosystem `json:"language"`
	Excluded  bool              `json:"excluded_from_cross_language"`
	N         int               `json:"n"`
	Undefined int               `json:"undefined_empty_d1"`
	Mean      *float64          `json:"mean"`
	Median    *float64          `json:"median"`
	Q1        *float64          `json:"q1"`
	Q3        *float64          `json:"q3"`
	Min       *float64          `json:"min"`
	Max       *float64          `json:"max"`
	Values    []float64         `json:"values"`
	// Delta is |D2 \ D1| (installed, not declared) over the same projects as rho, those
	// with |D1| = 0 included: its mean and median.
	DeltaN      int      `json:"delta_n"`
	DeltaMean   *float64 `json:"delta_mean"`
	DeltaMedian *float64 `json:"delta_median"`
	// D2FromD1 counts projects whose D2 could not be measured (C++ without a CMake
	// configure to read) and was taken as D1, the paper's fallback.
	D2FromD1 int `json:"d2_from_d1"`
}

// Accuracy is the mean per-project precision, recall and F1 of D1 against D3 (eq. 5)
// over one stratum (agent, language), or one ecosystem pooled over agents (Agent "All").
// Excluded counts projects with n1 = n3 = 0.
type Accuracy struct {
	Agent     string            `json:"agent"`
	Language  schemas.Ecosystem `json:"language"`
	N         int               `json:"n"`
	Excluded  int               `json:"excluded_both_empty"`
	Precision *float64          `json:"precision"`
	Recall    *float64          `json:"recall"`
	F1        *float64          `json:"f1"`
}

// PairAgree is the mean Jaccard (eq. 6) of two agents' declared sets over the tasks both
// did in one language, and the share of those tasks with J = 0.
type PairAgree struct {
	Language schemas.Ecosystem `json:"language"`
	A        string            `json:"a"`
	B        string            `json:"b"`
	N        int               `json:"n"`
	MeanJ    *float64          `json:"mean_jaccard"`
	CDR      *float64          `json:"cdr"`
}

// CrossAgent is the mean cross-agent Jaccard and the complete disjointness rate of one
// language over every agent pair and task.
type CrossAgent struct {
	Language schemas.Ecosystem `json:"language"`
	N        int               `json:"n"`
	MeanJ    *float64          `json:"mean_jaccard"`
	CDR      *float64          `json:"cdr"`
}

// Intra is one agent's stochastic variability in one language over its trials (Table 5):
// Jaccard of every pair of trials per task, the unanimous consensus rate and the mean
// sizes of the union and intersection of the trials' declared sets.
type Intra struct {
	Agent    string            `json:"agent"`
	Language schemas.Ecosystem `json:"language"`
	Trials   []int             `json:"trials"`
	Tasks    int               `json:"tasks"`
	// LeftOut counts tasks every trial did but not every trial made to work within the
	// budget: left out the paper's way (Options.Paper), kept otherwise (D1 is M(0)).
	LeftOut    int      `json:"left_out_failed_trial"`
	MeanJ      *float64 `json:"mean_jaccard"`
	MedianJ    *float64 `json:"median_jaccard"`
	Unanimous  int      `json:"unanimous"`
	UCR        *float64 `json:"ucr"`
	MeanUnion  *float64 `json:"mean_union"`
	MeanInters *float64 `json:"mean_intersection"`
}

// EnvGap is one agent's C++ first-round failures by class (Table 6): SLAR is SysLib/Fail,
// EGAR the share of SysLib failures repaired within the budget.
type EnvGap struct {
	Agent     string   `json:"agent"`
	Fail      int      `json:"fail"`
	SysLib    int      `json:"systemlib"`
	FetchFail int      `json:"fetchfail"`
	Other     int      `json:"other"`
	SLAR      *float64 `json:"slar"`
	Recovered int      `json:"recovered"`
	EGAR      *float64 `json:"egar"`
}

// Correlation is Spearman's rho between |D1| and first-attempt success in one ecosystem,
// over every (agent, task) of the main trial with D1 measured.
type Correlation struct {
	Language schemas.Ecosystem `json:"language"`
	N        int               `json:"n"`
	Rho      *float64          `json:"rho"`
	P        *float64          `json:"p_value"`
}

// UDR is the unnecessary dependency rate of one agent in one language: of the tasks
// marked standard-library-sufficient in that language, the share whose D1 is not empty.
type UDR struct {
	Agent    string            `json:"agent"`
	Language schemas.Ecosystem `json:"language"`
	Eligible int               `json:"eligible"`
	External int               `json:"with_external"`
	Rate     *float64          `json:"udr"`
}

// UDRMacro is an agent's UDR averaged over the languages where it is defined.
type UDRMacro struct {
	Agent string   `json:"agent"`
	Rate  *float64 `json:"udr"`
}

// TopList is the most frequent packages of one ecosystem in a set difference.
type TopList struct {
	Language schemas.Ecosystem `json:"language"`
	Packages []Count           `json:"packages"`
}

// Count is a package and how many projects it appears in.
type Count struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
}

// TopN is how many packages the phantom and hidden tables list per ecosystem.
const TopN = 5

func ptr(f float64) *float64 { return &f }

func ratio(a, b int) *float64 {
	if b == 0 {
		return nil
	}
	return ptr(float64(a) / float64(b))
}

// rateOrZero is eq. 4's rate: zero when the denominator is zero.
func rateOrZero(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func set(xs []string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

func minus(a, b []string) []string {
	bs := set(b)
	var out []string
	for _, x := range a {
		if !bs[x] {
			out = append(out, x)
		}
	}
	return out
}

func inter(a, b []string) int {
	bs := set(b)
	n := 0
	for _, x := range a {
		if bs[x] {
			n++
		}
	}
	return n
}

// Jaccard is eq. 6: |A∩B|/|A∪B|, 1 when both are empty (A and B are sets).
func Jaccard(a, b []string) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 1
	}
	i := inter(a, b)
	return float64(i) / float64(len(a)+len(b)-i)
}

// PRF is eq. 5 for one project with the paper's conventions; ok is false for a project
// with n1 = n3 = 0, which the paper leaves out.
func PRF(d1, d3 []string) (p, r, f1 float64, ok bool) {
	n1, n3 := len(d1), len(d3)
	if n1 == 0 && n3 == 0 {
		return 0, 0, 0, false
	}
	c := float64(inter(d1, d3))
	if n1 == 0 {
		p = 1
	} else {
		p = c / float64(n1)
	}
	if n3 == 0 {
		r = 1
	} else {
		r = c / float64(n3)
	}
	if p+r > 0 {
		f1 = 2 * p * r / (p + r)
	}
	return p, r, f1, true
}

// Compute computes every metric of the report from a loaded study, with the paper's
// budget and conventions unless o says otherwise.
func Compute(s *Study, o Options) *Report {
	o.K = o.k()
	o.Paper = o.Paper || s.Paper
	if o.Ties == "" {
		o.Ties = TiesName
		if o.Paper {
			o.Ties = TiesFirstSeen
		}
	}
	rep := &Report{Study: s.Dir, Options: o, Buckets: Buckets(o.K), Projects: len(s.Projects), Skipped: append([]Skip(nil), s.Skipped...)}
	agentSet := map[string]bool{}
	var main []Project
	all := append([]Project(nil), s.Projects...)
	sort.SliceStable(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if a.Agent != b.Agent {
			return a.Agent < b.Agent
		}
		if a.Language != b.Language {
			return slices.Index(Languages, a.Language) < slices.Index(Languages, b.Language)
		}
		if a.Trial != b.Trial {
			return a.Trial < b.Trial
		}
		return a.Problem < b.Problem
	})
	for _, p := range all {
		agentSet[p.Agent] = true
		if p.Trial == MainTrial {
			main = append(main, p)
		}
	}
	for a := range agentSet {
		rep.Agents = append(rep.Agents, a)
	}
	sort.Strings(rep.Agents)
	rep.Main = len(main)
	for _, p := range main {
		switch {
		case p.Success(o.K):
			rep.Successful++
			if p.HasLayers {
				rep.Layered++
				if p.D2FromD1 != "" {
					rep.Skipped = append(rep.Skipped, Skip{Ref: p.Rel, Reason: "D2 not measured (" + p.D2FromD1 + "): D2 := D1, the paper's fallback", Metrics: "rho, Delta and bloat use D1 as D2"})
				}
			} else {
				rep.Skipped = append(rep.Skipped, Skip{Ref: p.Rel, Reason: p.LayersReason, Metrics: "M2-M4 (rho, Delta, rates, P/R/F1), Tables 10-11"})
			}
		case p.MadeToWork:
			rep.OverBudget++
		}
		if p.D1Unreadable != "" {
			rep.Skipped = append(rep.Skipped, Skip{Ref: p.Rel, Reason: "D1 not measured: " + p.D1Unreadable, Metrics: "every metric that needs D1"})
		}
		if p.MadeToWork && p.Rounds == nil {
			rep.Skipped = append(rep.Skipped, Skip{Ref: p.Rel, Reason: fmt.Sprintf("made to work after repair, but the study did not record at which round (repair_rounds): counted as within the budget of %d", o.K), Metrics: "Figure 5 buckets (counted as unknown), mean repair cycles"})
		}
	}
	rep.convergence(main)
	rep.grid(main)
	rep.layerMetrics(main)
	rep.crossAgent(main)
	rep.intra(all)
	rep.envGap(main)
	rep.spearman(main)
	rep.udr(main, s.Problems)
	rep.tables(main, s)
	sort.SliceStable(rep.Skipped, func(i, j int) bool { return rep.Skipped[i].Ref < rep.Skipped[j].Ref })
	return rep
}

// Success is the paper's Success within budget k: made to work at round k or before
// (a project whose round was not recorded counts, and is listed as such).
func (p Project) Success(k int) bool {
	return p.MadeToWork && (p.WorkedFirst || p.Rounds == nil || *p.Rounds <= k)
}

// bucket is the project's Figure 5 bucket under budget k.
func bucket(p Project, k int) string {
	switch {
	case !p.MadeToWork:
		return BucketFailed
	case p.WorkedFirst:
		return BucketFirst
	case p.Rounds == nil:
		return BucketUnknown
	case *p.Rounds > k:
		return OverBudget(k)
	}
	for _, b := range Buckets(k) {
		lo, hi, ok := bucketRange(b)
		if ok && *p.Rounds >= lo && *p.Rounds <= hi {
			return b
		}
	}
	return BucketFirst // *p.Rounds == 0 without WorkedFirst: ran at Gen
}

// bucketRange reads a range bucket ("1-3", "8"); ok false for the others.
func bucketRange(b string) (lo, hi int, ok bool) {
	if n, err := fmt.Sscanf(b, "%d-%d", &lo, &hi); err == nil && n == 2 {
		return lo, hi, true
	}
	if n, err := fmt.Sscanf(b, "%d", &lo); err == nil && n == 1 && lo > 0 && b == fmt.Sprint(lo) {
		return lo, lo, true
	}
	return 0, 0, false
}

func converge(ps []Project, k int) Convergence {
	c := Convergence{N: len(ps), Buckets: map[string]int{}}
	var first, final int
	var cycles []float64
	for _, p := range ps {
		if p.WorkedFirst {
			first++
		} else {
			c.FailedFirst++
		}
		if p.Success(k) {
			final++
			if !p.WorkedFirst {
				c.Recovered++
			}
			switch {
			case p.WorkedFirst:
				cycles = append(cycles, 0)
			case p.Rounds != nil:
				cycles = append(cycles, float64(*p.Rounds))
			}
		}
		c.Buckets[bucket(p, k)]++
	}
	n := float64(len(ps))
	c.SR0, c.SRk = float64(first)/n, float64(final)/n
	c.Gain = c.SRk - c.SR0
	c.RecoveryShare = ratio(c.Recovered, c.FailedFirst)
	c.MeanCycles, c.CyclesN = mean(cycles), len(cycles)
	return c
}

func (rep *Report) convergence(main []Project) {
	k := rep.Options.K
	for _, a := range rep.Agents {
		for _, l := range Languages {
			ps := filter(main, func(p Project) bool { return p.Agent == a && p.Language == l })
			if len(ps) == 0 {
				continue
			}
			c := converge(ps, k)
			c.Agent, c.Language = a, l
			rep.Convergence = append(rep.Convergence, c)
		}
		domains := map[string][]Project{}
		for _, p := range main {
			if p.Agent == a {
				d := p.Domain
				if d == "" {
					d = "(no domain)"
				}
				domains[d] = append(domains[d], p)
			}
		}
		for _, d := range sortedKeys(domains) {
			c := converge(domains[d], k)
			c.Agent, c.Domain, c.Buckets = a, d, nil
			rep.ByDomain = append(rep.ByDomain, c)
		}
	}
}

func (rep *Report) grid(main []Project) {
	for _, p := range main {
		rep.Grid = append(rep.Grid, GridCell{Agent: p.Agent, Language: p.Language, Problem: p.Problem, WorkedFirst: p.WorkedFirst, MadeToWork: p.MadeToWork})
	}
	order := func(l schemas.Ecosystem) int { return slices.Index(Languages, l) }
	sort.Slice(rep.Grid, func(i, j int) bool {
		a, b := rep.Grid[i], rep.Grid[j]
		if a.Agent != b.Agent {
			return a.Agent < b.Agent
		}
		if a.Language != b.Language {
			return order(a.Language) < order(b.Language)
		}
		return a.Problem < b.Problem
	})
}

// layered are the main-trial projects successful within budget k with D1, D2 and D3
// measured.
func layered(main []Project, k int) []Project {
	return filter(main, func(p Project) bool { return p.Success(k) && p.HasLayers && p.D1Unreadable == "" })
}

func (rep *Report) layerMetrics(main []Project) {
	ok := layered(main, rep.Options.K)
	rates := func(agent string, l schemas.Ecosystem, ps []Project) Rates {
		var phi, eta, beta []float64
		for _, p := range ps {
			phi = append(phi, rateOrZero(len(minus(p.D1, p.D3)), len(p.D1)))
			eta = append(eta, rateOrZero(len(minus(p.D3, p.D1)), len(p.D3)))
			beta = append(beta, rateOrZero(len(minus(p.D2, p.D3)), len(p.D2)))
		}
		return Rates{Agent: agent, Language: l, N: len(ps), Phantom: mean(phi), Hidden: mean(eta), Bloat: mean(beta)}
	}
	acc := func(agent string, l schemas.Ecosystem, ps []Project) Accuracy {
		a := Accuracy{Agent: agent, Language: l}
		var P, R, F []float64
		for _, p := range ps {
			pp, rr, ff, ok := PRF(p.D1, p.D3)
			if !ok {
				a.Excluded++
				continue
			}
			P, R, F = append(P, pp), append(R, rr), append(F, ff)
		}
		a.N, a.Precision, a.Recall, a.F1 = len(P), mean(P), mean(R), mean(F)
		return a
	}
	for _, l := range Languages {
		pooled := filter(ok, func(p Project) bool { return p.Language == l })
		for _, a := range rep.Agents {
			ps := filter(pooled, func(p Project) bool { return p.Agent == a })
			if len(ps) == 0 {
				continue
			}
			rep.Rates = append(rep.Rates, rates(a, l, ps))
			rep.Accuracy = append(rep.Accuracy, acc(a, l, ps))
		}
	}
	for _, l := range Languages {
		pooled := filter(ok, func(p Project) bool { return p.Language == l })
		rep.Rates = append(rep.Rates, rates("", l, pooled))
		rep.Accuracy = append(rep.Accuracy, acc("All", l, pooled))
		in := Inflation{Language: l, Excluded: l == schemas.EcosystemCPP}
		var deltas []float64
		for _, p := range pooled {
			if p.D2FromD1 != "" {
				in.D2FromD1++
			}
			deltas = append(deltas, float64(len(minus(p.D2, p.D1))))
			if len(p.D1) == 0 {
				in.Undefined++
				continue
			}
			in.Values = append(in.Values, float64(len(p.D2))/float64(len(p.D1)))
		}
		in.DeltaN, in.DeltaMean, in.DeltaMedian = len(deltas), mean(deltas), median(deltas)
		in.N = len(in.Values)
		if in.N > 0 {
			v := append([]float64(nil), in.Values...)
			sort.Float64s(v)
			in.Values = v
			in.Mean, in.Median = mean(v), ptr(quantile(v, 0.5))
			in.Q1, in.Q3, in.Min, in.Max = ptr(quantile(v, 0.25)), ptr(quantile(v, 0.75)), ptr(v[0]), ptr(v[len(v)-1])
		}
		rep.Inflation = append(rep.Inflation, in)
		phantom, hidden := newTally(), newTally()
		for _, p := range pooled {
			for _, x := range minus(p.D1, p.D3) {
				phantom.add(x)
			}
			for _, x := range minus(p.D3, p.D1) {
				hidden.add(x)
			}
		}
		rep.Phantom = append(rep.Phantom, TopList{Language: l, Packages: phantom.top(rep.Options.Ties)})
		rep.Hidden = append(rep.Hidden, TopList{Language: l, Packages: hidden.top(rep.Options.Ties)})
	}
}

// tally counts packages and remembers the order they were first seen in (projects in
// the report's order: agent, language, problem; a project's set in its sorted order).
type tally struct {
	count map[string]int
	first map[string]int
}

func newTally() *tally { return &tally{count: map[string]int{}, first: map[string]int{}} }

func (t *tally) add(x string) {
	if _, ok := t.first[x]; !ok {
		t.first[x] = len(t.first)
	}
	t.count[x]++
}

// top returns the TopN most frequent packages, ties broken by name or by first sight.
func (t *tally) top(ties string) []Count {
	out := []Count{}
	for k, v := range t.count {
		out = append(out, Count{k, v})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		if ties == TiesFirstSeen {
			return t.first[out[i].Name] < t.first[out[j].Name]
		}
		return out[i].Name < out[j].Name
	})
	if len(out) > TopN {
		out = out[:TopN]
	}
	return out
}

// d1Index maps agent -> language -> problem -> project, for projects with D1 measured.
func d1Index(ps []Project) map[string]map[schemas.Ecosystem]map[int64]Project {
	idx := map[string]map[schemas.Ecosystem]map[int64]Project{}
	for _, p := range ps {
		if p.D1Unreadable != "" {
			continue
		}
		if idx[p.Agent] == nil {
			idx[p.Agent] = map[schemas.Ecosystem]map[int64]Project{}
		}
		if idx[p.Agent][p.Language] == nil {
			idx[p.Agent][p.Language] = map[int64]Project{}
		}
		idx[p.Agent][p.Language][p.Problem] = p
	}
	return idx
}

func (rep *Report) crossAgent(main []Project) {
	idx := d1Index(main)
	var cdrs []float64
	for _, l := range Languages {
		var all []float64
		for i, a := range rep.Agents {
			for _, b := range rep.Agents[i+1:] {
				var js []float64
				for _, prob := range sortedKeys(idx[a][l]) {
					pa := idx[a][l][prob]
					if pb, ok := idx[b][l][prob]; ok {
						js = append(js, Jaccard(pa.D1, pb.D1))
					}
				}
				all = append(all, js...)
				rep.CrossPairs = append(rep.CrossPairs, PairAgree{Language: l, A: a, B: b, N: len(js), MeanJ: mean(js), CDR: zeroShare(js)})
			}
		}
		c := CrossAgent{Language: l, N: len(all), MeanJ: mean(all), CDR: zeroShare(all)}
		if c.CDR != nil {
			cdrs = append(cdrs, *c.CDR)
		}
		rep.CrossAgent = append(rep.CrossAgent, c)
	}
	rep.MacroCDR = mean(cdrs)
}

func zeroShare(js []float64) *float64 {
	if len(js) == 0 {
		return nil
	}
	n := 0
	for _, j := range js {
		if j == 0 {
			n++
		}
	}
	return ptr(float64(n) / float64(len(js)))
}

// intra compares each agent's trials with one another, per language, over the tasks
// every one of its trials did with D1 measured.
func (rep *Report) intra(all []Project) {
	type key struct {
		agent string
		lang  schemas.Ecosystem
	}
	trials := map[key]map[int]bool{}
	byTask := map[key]map[int64]map[int][]string{}
	failedTrial := map[key]map[int64]bool{}
	for _, p := range all {
		k := key{p.Agent, p.Language}
		if trials[k] == nil {
			trials[k], byTask[k], failedTrial[k] = map[int]bool{}, map[int64]map[int][]string{}, map[int64]bool{}
		}
		trials[k][p.Trial] = true
		if !p.Success(rep.Options.K) {
			failedTrial[k][p.Problem] = true
		}
		if p.D1Unreadable != "" {
			continue
		}
		if byTask[k][p.Problem] == nil {
			byTask[k][p.Problem] = map[int][]string{}
		}
		byTask[k][p.Problem][p.Trial] = p.D1
	}
	for _, a := range rep.Agents {
		for _, l := range Languages {
			k := key{a, l}
			if len(trials[k]) < 2 {
				continue
			}
			var ts []int
			for t := range trials[k] {
				ts = append(ts, t)
			}
			sort.Ints(ts)
			in := Intra{Agent: a, Language: l, Trials: ts}
			var js, unions, inters []float64
			for _, prob := range sortedKeys(byTask[k]) {
				sets := byTask[k][prob]
				if len(sets) != len(ts) {
					continue
				}
				if rep.Options.Paper && failedTrial[k][prob] {
					// The paper's Table 5 counts the tasks every trial made to work.
					in.LeftOut++
					continue
				}
				in.Tasks++
				union, common := set(sets[ts[0]]), set(sets[ts[0]])
				same := true
				for i, ti := range ts {
					for _, tj := range ts[i+1:] {
						js = append(js, Jaccard(sets[ti], sets[tj]))
					}
					if i > 0 {
						if !slices.Equal(sets[ti], sets[ts[0]]) {
							same = false
						}
						cur := set(sets[ti])
						for x := range cur {
							union[x] = true
						}
						for x := range common {
							if !cur[x] {
								delete(common, x)
							}
						}
					}
				}
				if same {
					in.Unanimous++
				}
				unions, inters = append(unions, float64(len(union))), append(inters, float64(len(common)))
			}
			in.MeanJ, in.MedianJ = mean(js), median(js)
			in.UCR, in.MeanUnion, in.MeanInters = ratio(in.Unanimous, in.Tasks), mean(unions), mean(inters)
			rep.Intra = append(rep.Intra, in)
		}
	}
}

func (rep *Report) envGap(main []Project) {
	for _, a := range rep.Agents {
		ps := filter(main, func(p Project) bool { return p.Agent == a && p.Language == schemas.EcosystemCPP })
		if len(ps) == 0 {
			continue
		}
		g := EnvGap{Agent: a}
		for _, p := range ps {
			if p.WorkedFirst {
				continue
			}
			g.Fail++
			switch p.ErrorClass {
			case studylayout.ErrorSystemLib:
				g.SysLib++
				if p.Success(rep.Options.K) {
					g.Recovered++
				}
			case studylayout.ErrorFetchFail:
				g.FetchFail++
			default:
				g.Other++
			}
		}
		g.SLAR, g.EGAR = ratio(g.SysLib, g.Fail), ratio(g.Recovered, g.SysLib)
		rep.EnvGap = append(rep.EnvGap, g)
	}
}

func (rep *Report) spearman(main []Project) {
	for _, l := range Languages {
		var x, y []float64
		for _, p := range main {
			if p.Language != l || p.D1Unreadable != "" {
				continue
			}
			x = append(x, float64(len(p.D1)))
			s := 0.0
			if p.WorkedFirst {
				s = 1
			}
			y = append(y, s)
		}
		c := Correlation{Language: l, N: len(x)}
		if rho, pv, ok := Spearman(x, y); ok {
			c.Rho, c.P = ptr(rho), ptr(pv)
		}
		rep.Spearman = append(rep.Spearman, c)
	}
}

func (rep *Report) udr(main []Project, problems map[int64]studylayout.Problem) {
	for _, a := range rep.Agents {
		var rates []float64
		for _, l := range Languages {
			u := UDR{Agent: a, Language: l}
			for _, p := range main {
				if p.Agent != a || p.Language != l || p.D1Unreadable != "" || !stdlibSufficient(problems[p.Problem], l) {
					continue
				}
				u.Eligible++
				if len(p.D1) > 0 {
					u.External++
				}
			}
			u.Rate = ratio(u.External, u.Eligible)
			if u.Rate != nil {
				rates = append(rates, *u.Rate)
			}
			rep.UDR = append(rep.UDR, u)
		}
		rep.UDRMacro = append(rep.UDRMacro, UDRMacro{Agent: a, Rate: mean(rates)})
	}
}

func stdlibSufficient(p studylayout.Problem, l schemas.Ecosystem) bool {
	for _, s := range p.StdlibSufficient {
		if studylayout.LanguageAliases[s] == l {
			return true
		}
	}
	return false
}

func filter(ps []Project, keep func(Project) bool) []Project {
	var out []Project
	for _, p := range ps {
		if keep(p) {
			out = append(out, p)
		}
	}
	return out
}

func sortedKeys[K int64 | string, V any](m map[K]V) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// pct formats a share as a percentage, "–" when undefined.
func pct(f *float64) string {
	if f == nil || math.IsNaN(*f) {
		return "–"
	}
	return fmt.Sprintf("%.1f%%", *f*100)
}

// num formats a number with three decimals, "–" when undefined.
func num(f *float64) string {
	if f == nil || math.IsNaN(*f) {
		return "–"
	}
	return fmt.Sprintf("%.3f", *f)
}

// tables fills Tables 1, 2 and 9: the problem list, its domains and the study's scale.
func (rep *Report) tables(main []Project, s *Study) {
	for _, n := range sortedKeys(s.Problems) {
		rep.ProblemList = append(rep.ProblemList, s.Problems[n])
	}
	byDomain := map[string]*DomainRow{}
	var order []string
	for _, p := range rep.ProblemList {
		d := byDomain[p.Domain]
		if d == nil {
			d = &DomainRow{Domain: p.Domain}
			byDomain[p.Domain] = d
			order = append(order, p.Domain)
		}
		d.N++
		if len(d.Representative) < Representatives {
			d.Representative = append(d.Representative, p.Title)
		}
	}
	for _, d := range order {
		rep.Domains = append(rep.Domains, *byDomain[d])
	}
	tasks, langs := map[int64]bool{}, map[schemas.Ecosystem]bool{}
	agents := map[string]bool{}
	for _, p := range main {
		tasks[p.Problem], langs[p.Language], agents[p.Agent] = true, true, true
	}
	sc := Scale{Tasks: len(tasks), Languages: len(langs), Agents: len(agents), Primary: len(main),
		MaxInteract: 1 + rep.Options.K, TotalRuns: rep.Projects}
	sc.PrimaryGrid = sc.Tasks * sc.Languages * sc.Agents
	rep.Scale = sc
	repeated := map[string]bool{}
	for _, in := range rep.Intra {
		repeated[in.Agent] = true
	}
	rep.Scale.Stochastic = rep.Projects - rep.Main
	rep.Scale.RepeatedAgent = sortedKeys(repeated)
}
