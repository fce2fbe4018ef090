package study

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/envgap/envgap/schemas"
)

// paperStudy is a hand-made study whose every number below was worked out by hand from
// the paper's formulas (Section 6, eqs. 3-6, Tables 4-6, 10, 11), before the code ran.
// Budget k = 10 unless a test says otherwise.
//
//	claude/python-t1/p1  Gen ran.             D1 {requests, tabulate}  D2 {certifi, idna, requests, tabulate, urllib3}  D3 {requests, urllib3}
//	claude/python-t1/p2  ran at round 10      D1 {click, pandas}       D2 {click, numpy, pandas, six}                    D3 {numpy, pandas}
//	                     (the budget's edge: a success)
//	claude/python-t1/p3  ran at round 11      D1 {tabulate}            (layers given, but over the budget: a failure,
//	                     (over the budget)                              out of every metric over successful projects)
//	codex/python-t1/p1   Gen ran.             D1 {pandas}              D2 {numpy, pandas, python-dateutil}               D3 {numpy, pandas}
//	codex/python-t1/p2   never ran (10 rounds) D1 {pandas}
//	codex/python-t1/p3   Gen ran.             D1 {}                    D2 {}                                              D3 {}
//	claude/cpp-t1/p1     SystemLib at Gen (Could NOT find OpenSSL), ran at round 2.
//	                     D1 find_package(OpenSSL), FetchContent nlohmann_json = {nlohmann_json, openssl};
//	                     D2 from the configure {OpenSSL, nlohmann_json, fmt}: the fetched project pulled fmt;
//	                     D3 {ssl, crypto} = {openssl} by key.
//	codex/cpp-t1/p1      SystemLib at Gen (Could NOT find CURL), ran at round 12 (over the budget).
//	claude/python-t2, -t3: repeats of p1 and p2 (see TestPaperHandStudy's Table 5).
var paperStudy = []hp{
	{rel: "claude/python-t1/p1", worked: true, made: true, d1: []string{"requests", "tabulate"},
		d2: []string{"requests", "tabulate", "urllib3", "idna", "certifi"}, d3: []string{"requests", "urllib3"}},
	{rel: "claude/python-t1/p2", made: true, rounds: 10, d1: []string{"pandas", "click"},
		d2: []string{"pandas", "click", "numpy", "six"}, d3: []string{"pandas", "numpy"}, err: "ModuleNotFoundError: No module named 'numpy'"},
	{rel: "claude/python-t1/p3", made: true, rounds: 11, d1: []string{"tabulate"}, d2: []string{"tabulate"}, d3: []string{"tabulate"}, err: "E"},
	{rel: "codex/python-t1/p1", worked: true, made: true, d1: []string{"pandas"}, d2: []string{"pandas", "numpy", "python-dateutil"}, d3: []string{"pandas", "numpy"}},
	{rel: "codex/python-t1/p2", rounds: 10, d1: []string{"pandas"}, err: "E"},
	{rel: "codex/python-t1/p3", worked: true, made: true, d1: nil, d2: []string{}, d3: []string{}},
	{rel: "claude/cpp-t1/p1", made: true, rounds: 2, d1: []string{"fp:OpenSSL", "fc:nlohmann_json"},
		d2: []string{"OpenSSL", "nlohmann_json", "fmt"}, d3: []string{"ssl", "crypto"},
		err: "CMake Error at /usr/share/cmake-3.22/Modules/FindPackageHandleStandardArgs.cmake:230 (message):\n  Could NOT find OpenSSL"},
	{rel: "codex/cpp-t1/p1", made: true, rounds: 12, d1: []string{"fp:CURL"}, d2: []string{"CURL"}, d3: []string{"curl"},
		err: "CMake Error at /usr/share/cmake-3.22/Modules/FindPackageHandleStandardArgs.cmake:230 (message):\n  Could NOT find CURL"},
	{rel: "claude/python-t2/p1", worked: true, made: true, d1: []string{"requests", "tabulate"}},
	{rel: "claude/python-t2/p2", rounds: 10, d1: []string{"pandas"}, err: "E"},
	{rel: "claude/python-t3/p1", worked: true, made: true, d1: []string{"requests"}},
	{rel: "claude/python-t3/p2", worked: true, made: true, d1: []string{"pandas", "click"}},
}

const paperProblems = `[
 {"number": 1, "id": "p_01", "title": "CSV Statistical Analyzer", "domain": "Data Processing", "complexity": "M"},
 {"number": 2, "id": "p_02", "title": "JSON Schema Validator", "domain": "Data Processing", "complexity": "M"},
 {"number": 3, "id": "p_13", "title": "HMAC Integrity Checker", "domain": "Cryptography", "complexity": "M", "stdlib_sufficient": ["python", "javascript", "java"]}
]`

func paperReport(t *testing.T, lo LoadOptions, o Options) *Report {
	t.Helper()
	dir := writeStudy(t, paperStudy)
	if err := os.WriteFile(filepath.Join(dir, "problems.json"), []byte(paperProblems), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(context.Background(), dir, lo)
	if err != nil {
		t.Fatal(err)
	}
	return Compute(s, o)
}

func TestPaperHandStudy(t *testing.T) {
	r := paperReport(t, LoadOptions{}, Options{})
	py, cpp := schemas.EcosystemPython, schemas.EcosystemCPP
	// Successful within k = 10: claude p1, p2 (round 10 <= k), cpp p1; codex p1, p3.
	// Over the budget: claude python p3 (11), codex cpp p1 (12).
	if r.Main != 8 || r.Successful != 5 || r.OverBudget != 2 || r.Layered != 5 || r.Projects != 12 {
		t.Errorf("main %d successful %d over budget %d layered %d projects %d, want 8, 5, 2, 5, 12", r.Main, r.Successful, r.OverBudget, r.Layered, r.Projects)
	}
	if got := strings.Join(r.Buckets, " "); got != "0 1-3 4-7 8-10 >10 failed unknown" {
		t.Errorf("buckets %q", got)
	}

	// M1 (eq. 3 with Success within the budget).
	//   claude python: SR(0) = 1/3 (p1); SR(<=k) = 2/3 (p1, p2 at round 10); p3 at 11 is a
	//     failure, in ">10". Failed first 2 (p2, p3), recovered 1: share 1/2. Mean i* over
	//     the converged: (0 + 10)/2 = 5.
	//   codex python: SR(0) = SR(<=k) = 2/3; failed first 1, recovered 0; cycles (0+0)/2 = 0.
	//   claude cpp: SR(0) 0, SR(<=k) 1, bucket 1-3; recovered 1/1; cycles 2.
	//   codex cpp: SR(0) 0, SR(<=k) 0 (round 12 > 10), bucket ">10"; recovered 0/1; no cycles.
	conv := map[string]Convergence{}
	for _, c := range r.Convergence {
		conv[c.Agent+"/"+string(c.Language)] = c
	}
	m1 := func(k string, sr0, srk float64, buckets map[string]int, failed, recovered int, share, cycles *float64) {
		t.Helper()
		c := conv[k]
		near(t, k+" SR(0)", &c.SR0, sr0)
		near(t, k+" SR(<=k)", &c.SRk, srk)
		near(t, k+" gain", &c.Gain, srk-sr0)
		total := 0
		for _, n := range c.Buckets {
			total += n
		}
		for b, n := range buckets {
			if c.Buckets[b] != n {
				t.Errorf("%s bucket %s = %d, want %d (%v)", k, b, c.Buckets[b], n, c.Buckets)
			}
			total -= n
		}
		if total != 0 {
			t.Errorf("%s buckets %v, want only %v", k, c.Buckets, buckets)
		}
		if c.FailedFirst != failed || c.Recovered != recovered {
			t.Errorf("%s failed first %d recovered %d, want %d, %d", k, c.FailedFirst, c.Recovered, failed, recovered)
		}
		eq(t, k+" recovery share", c.RecoveryShare, share)
		eq(t, k+" mean repair cycles", c.MeanCycles, cycles)
	}
	m1("claude/python", 1.0/3, 2.0/3, map[string]int{"0": 1, "8-10": 1, ">10": 1}, 2, 1, ptr(0.5), ptr(5))
	m1("codex/python", 2.0/3, 2.0/3, map[string]int{"0": 2, "failed": 1}, 1, 0, ptr(0), ptr(0))
	m1("claude/cpp", 0, 1, map[string]int{"1-3": 1}, 1, 1, ptr(1), ptr(2))
	m1("codex/cpp", 0, 0, map[string]int{">10": 1}, 1, 0, ptr(0), nil)

	// Figure 10, pooled over languages: claude Data Processing = py p1, py p2, cpp p1:
	// SR(0) 1/3, SR(<=k) 1; Cryptography = py p3: 0, 0 (over budget). codex Data
	// Processing = py p1, py p2, cpp p1: 1/3, 1/3; Cryptography = py p3: 1, 1.
	dom := map[string]Convergence{}
	for _, c := range r.ByDomain {
		dom[c.Agent+"/"+c.Domain] = c
	}
	for k, w := range map[string][2]float64{"claude/Data Processing": {1.0 / 3, 1}, "claude/Cryptography": {0, 0},
		"codex/Data Processing": {1.0 / 3, 1.0 / 3}, "codex/Cryptography": {1, 1}} {
		c := dom[k]
		near(t, k+" SR(0)", &c.SR0, w[0])
		near(t, k+" SR(<=k)", &c.SRk, w[1])
	}

	// M3 (eq. 4), python over the four successful projects (claude p3 is over budget):
	//   claude p1: phi 1/2 (tabulate), eta 1/2 (urllib3), beta 3/5 (certifi, idna, tabulate)
	//   claude p2: phi 1/2 (click), eta 1/2 (numpy), beta 2/4 (click, six)
	//   codex p1: phi 0, eta 1/2 (numpy), beta 1/3 (python-dateutil)
	//   codex p3: every denominator 0: 0, 0, 0
	//   means: phantom 1/4, hidden 3/8, bloat (3/5 + 1/2 + 1/3)/4 = 43/120.
	// C++ claude p1 by key: D1 {nlohmann_json, openssl}, D2 {fmt, nlohmann_json, openssl},
	//   D3 {openssl}: phi 1/2, eta 0, beta 2/3.
	rates := map[string]Rates{}
	for _, x := range r.Rates {
		rates[x.Agent+"/"+string(x.Language)] = x
	}
	near(t, "python phantom", rates["/python"].Phantom, 0.25)
	near(t, "python hidden", rates["/python"].Hidden, 0.375)
	near(t, "python bloat", rates["/python"].Bloat, 43.0/120)
	near(t, "cpp phantom", rates["/cpp"].Phantom, 0.5)
	near(t, "cpp hidden", rates["/cpp"].Hidden, 0)
	near(t, "cpp bloat", rates["/cpp"].Bloat, 2.0/3)

	// M4 (eq. 5): claude p1 P 1/2 R 1/2 F1 1/2; claude p2 likewise; codex p1 P 1 R 1/2
	// F1 2/3; codex p3 excluded (n1 = n3 = 0). All python: P 2/3, R 1/2, F1 (1/2+1/2+2/3)/3
	// = 5/9. C++ claude p1: P 1/2, R 1, F1 2/3.
	acc := map[string]Accuracy{}
	for _, x := range r.Accuracy {
		acc[x.Agent+"/"+string(x.Language)] = x
	}
	if a := acc["All/python"]; a.N != 3 || a.Excluded != 1 {
		t.Errorf("python pooled n %d excluded %d, want 3, 1", a.N, a.Excluded)
	}
	near(t, "python P", acc["All/python"].Precision, 2.0/3)
	near(t, "python R", acc["All/python"].Recall, 0.5)
	near(t, "python F1", acc["All/python"].F1, 5.0/9)
	near(t, "claude python F1", acc["claude/python"].F1, 0.5)
	near(t, "codex python F1", acc["codex/python"].F1, 2.0/3)
	near(t, "cpp P", acc["All/cpp"].Precision, 0.5)
	near(t, "cpp R", acc["All/cpp"].Recall, 1)
	near(t, "cpp F1", acc["All/cpp"].F1, 2.0/3)

	// M2: rho = |D2|/|D1|: python 5/2, 4/2, 3/1 (codex p3 undefined): mean 2.5, median
	// 2.5. Delta = |D2 \ D1|: 3, 2, 2, 0: mean 7/4, median 2. C++: the fetched project
	// pulled fmt: rho 3/2, Delta 1, D2 measured (not D1).
	infl := map[schemas.Ecosystem]Inflation{}
	for _, x := range r.Inflation {
		infl[x.Language] = x
	}
	if x := infl[py]; x.N != 3 || x.Undefined != 1 || x.DeltaN != 4 {
		t.Errorf("python rho: %+v", x)
	}
	near(t, "python rho mean", infl[py].Mean, 2.5)
	near(t, "python rho median", infl[py].Median, 2.5)
	near(t, "python Delta mean", infl[py].DeltaMean, 1.75)
	near(t, "python Delta median", infl[py].DeltaMedian, 2)
	if x := infl[cpp]; x.N != 1 || x.D2FromD1 != 0 {
		t.Errorf("cpp rho: %+v, want one project with D2 measured", x)
	}
	near(t, "cpp rho (fetched dependency)", infl[cpp].Mean, 1.5)
	near(t, "cpp Delta", infl[cpp].DeltaMean, 1)

	// M5 (eq. 6): python p1 {requests, tabulate} / {pandas} 0; p2 {click, pandas} /
	// {pandas} 1/2; p3 {tabulate} / {} 0: mean 1/6, CDR 2/3. C++ p1 {nlohmann_json,
	// openssl} / {curl} 0: CDR 1. Macro CDR (2/3 + 1)/2 = 5/6.
	cross := map[schemas.Ecosystem]CrossAgent{}
	for _, x := range r.CrossAgent {
		cross[x.Language] = x
	}
	near(t, "python mean J", cross[py].MeanJ, 1.0/6)
	near(t, "python CDR", cross[py].CDR, 2.0/3)
	near(t, "cpp CDR", cross[cpp].CDR, 1)
	near(t, "macro CDR", r.MacroCDR, 5.0/6)

	// M6 (Table 5), claude python, tasks in all three trials: p1 t1 {requests, tabulate},
	// t2 the same, t3 {requests}: J 1, 1/2, 1/2; p2 t1 {click, pandas}, t2 {pandas}, t3
	// {click, pandas}: J 1/2, 1, 1/2. Mean 4/6, median of {1/2 x4, 1 x2} = 1/2; UCR 0/2;
	// V∪ 2, 2: mean 2; V∩ 1, 1: mean 1. (p2's second trial never ran: kept here, D1 is M(0).)
	if len(r.Intra) != 1 || r.Intra[0].Tasks != 2 || r.Intra[0].Unanimous != 0 || r.Intra[0].LeftOut != 0 {
		t.Fatalf("intra %+v, want claude python over 2 tasks, none unanimous", r.Intra)
	}
	in := r.Intra[0]
	near(t, "J_intra mean", in.MeanJ, 2.0/3)
	near(t, "J_intra median", in.MedianJ, 0.5)
	near(t, "UCR", in.UCR, 0)
	near(t, "V union", in.MeanUnion, 2)
	near(t, "V intersection", in.MeanInters, 1)

	// M8 (Table 6): claude cpp fail 1, SysLib 1, recovered 1: SLAR 1, EGAR 1. codex cpp
	// fail 1, SysLib 1, made to work at round 12 > k: recovered 0, EGAR 0.
	gap := map[string]EnvGap{}
	for _, g := range r.EnvGap {
		gap[g.Agent] = g
	}
	if g := gap["claude"]; g.Fail != 1 || g.SysLib != 1 || g.Recovered != 1 {
		t.Errorf("claude env gap %+v", g)
	}
	if g := gap["codex"]; g.Fail != 1 || g.SysLib != 1 || g.Recovered != 0 {
		t.Errorf("codex env gap %+v (made to work only after the budget: not recovered)", g)
	}
	near(t, "claude EGAR", gap["claude"].EGAR, 1)
	near(t, "codex SLAR", gap["codex"].SLAR, 1)
	near(t, "codex EGAR", gap["codex"].EGAR, 0)

	// Table 7, python: |D1| = 2, 2, 1, 1, 1, 0 (claude p1-p3, codex p1-p3) against Gen
	// success 1, 0, 0, 1, 0, 1. Ranks x 5.5, 5.5, 3, 3, 3, 1; y 5, 2, 2, 5, 2, 5 (both
	// means 3.5). Σdxdy = -3, Σdx² = 15, Σdy² = 13.5: rho = -3/sqrt(202.5). t = rho
	// sqrt(4/(1-rho²)); with 4 df, P(T <= |t|) = 1/2 + (3/8) u (1 - t²/(12(1 + t²/4))),
	// u = |t|/sqrt(1 + t²/4): p = 0.688457089776.
	sp := map[schemas.Ecosystem]Correlation{}
	for _, c := range r.Spearman {
		sp[c.Language] = c
	}
	near(t, "python Spearman rho", sp[py].Rho, -0.21081851067789195)
	if sp[py].P == nil || *sp[py].P < 0.6884570897 || *sp[py].P > 0.6884570898 {
		t.Errorf("python Spearman p = %v, want 0.688457089776", sp[py].P)
	}

	// M7: p3 is standard-library-sufficient in python: claude declared tabulate (1/1),
	// codex nothing (0/1). Over-budget or not, D1 is M(0).
	udr := map[string]UDR{}
	for _, u := range r.UDR {
		udr[u.Agent+"/"+string(u.Language)] = u
	}
	near(t, "claude python UDR", udr["claude/python"].Rate, 1)
	near(t, "codex python UDR", udr["codex/python"].Rate, 0)
	eq(t, "claude cpp UDR (not marked)", udr["claude/cpp"].Rate, nil)

	// Tables 10, 11. Python phantom: tabulate (claude p1) and click (claude p2), one each:
	// a tie, by name "click, tabulate". Hidden: numpy 2 (claude p2, codex p1), urllib3 1.
	// C++ phantom nlohmann_json (header-only: never in D3); hidden none (openssl met).
	top := func(ls []TopList, l schemas.Ecosystem) string {
		for _, x := range ls {
			if x.Language == l {
				return counts(x.Packages)
			}
		}
		return ""
	}
	for _, c := range []struct{ got, want string }{
		{top(r.Phantom, py), "click (1), tabulate (1)"},
		{top(r.Hidden, py), "numpy (2), urllib3 (1)"},
		{top(r.Phantom, cpp), "nlohmann_json (1)"},
		{top(r.Hidden, cpp), "–"},
	} {
		if c.got != c.want {
			t.Errorf("top list %q, want %q", c.got, c.want)
		}
	}

	// Tables 1, 2, 9.
	if len(r.Domains) != 2 || r.Domains[0].Domain != "Data Processing" || r.Domains[0].N != 2 || r.Domains[1].N != 1 {
		t.Errorf("Table 1: %+v", r.Domains)
	}
	if sc := r.Scale; sc.Tasks != 3 || sc.Languages != 2 || sc.Agents != 2 || sc.Primary != 8 || sc.PrimaryGrid != 12 ||
		sc.Stochastic != 4 || sc.MaxInteract != 11 || sc.TotalRuns != 12 || strings.Join(sc.RepeatedAgent, ",") != "claude" {
		t.Errorf("Table 2: %+v", sc)
	}
	if len(r.ProblemList) != 3 || r.ProblemList[2].ID != "p_13" {
		t.Errorf("Table 9: %+v", r.ProblemList)
	}

	var md bytes.Buffer
	WriteMarkdown(&md, r, nil)
	for _, s := range []string{
		"| claude | Python | 3 | 33.3% | 66.7% | 33.3% | 1 | 0 | 0 | 1 | 1 | 0 | 0 | 2 | 1 (50.0%) | 5.00 (n 2) |",
		"| Agent | Language | n | SR(0) | SR(<=k) | gain | 0 | 1-3 | 4-7 | 8-10 | >10 | failed | unknown |",
		"budget k = 10", "| Primary configurations (3×2×2 = 12) | 8 |", "| p_13 | HMAC Integrity Checker | Cryptography | M | python, javascript, java |",
	} {
		if !strings.Contains(md.String(), s) {
			t.Errorf("Markdown lacks %q", s)
		}
	}
}

// TestPaperHandStudyBudgetAndConventions: the same study under k = 12 and the paper's way.
func TestPaperHandStudyBudgetAndConventions(t *testing.T) {
	// k = 12: claude python p3 (11) and codex cpp p1 (12) are successes; buckets gain 11-12.
	r := paperReport(t, LoadOptions{}, Options{K: 12})
	if got := strings.Join(r.Buckets, " "); got != "0 1-3 4-7 8-10 11-12 >12 failed unknown" {
		t.Errorf("buckets %q", got)
	}
	conv := map[string]Convergence{}
	for _, c := range r.Convergence {
		conv[c.Agent+"/"+string(c.Language)] = c
	}
	if c := conv["claude/python"]; c.SRk != 1 || c.Buckets["11-12"] != 1 || c.Recovered != 2 {
		t.Errorf("k=12 claude python %+v", c)
	}
	// Mean i* (0 + 10 + 11)/3 = 7.
	near(t, "k=12 claude python cycles", conv["claude/python"].MeanCycles, 7)
	for _, g := range r.EnvGap {
		if g.Agent == "codex" {
			near(t, "k=12 codex EGAR", g.EGAR, 1)
		}
	}
	if r.Successful != 7 || r.OverBudget != 0 {
		t.Errorf("k=12: successful %d over %d, want 7, 0", r.Successful, r.OverBudget)
	}
	if k := (Options{K: 3}); strings.Join(Buckets(k.k()), " ") != "0 1-3 >3 failed unknown" {
		t.Errorf("k=3 buckets %v", Buckets(3))
	}

	// The paper's way: raw C++ names (openssl in D1, ssl and crypto in D3: the paper's
	// openssl phantom / crypto hidden), ties first seen, Table 5 over tasks every trial
	// made to work (p2's second trial never ran: left out).
	r = paperReport(t, LoadOptions{Paper: true}, Options{})
	if !r.Options.Paper || r.Options.Ties != TiesFirstSeen {
		t.Errorf("options %+v", r.Options)
	}
	top := map[string]string{}
	for _, x := range r.Phantom {
		top["phantom/"+string(x.Language)] = counts(x.Packages)
	}
	for _, x := range r.Hidden {
		top["hidden/"+string(x.Language)] = counts(x.Packages)
	}
	for k, want := range map[string]string{
		"phantom/python": "tabulate (1), click (1)", // first seen: claude p1 before p2
		"phantom/cpp":    "nlohmann_json (1), openssl (1)",
		"hidden/cpp":     "crypto (1), ssl (1)",
	} {
		if top[k] != want {
			t.Errorf("%s = %q, want %q", k, top[k], want)
		}
	}
	// C++ raw: D1 {nlohmann_json, openssl}, D3 {crypto, ssl}: phi 1, eta 1; F1 0.
	for _, x := range r.Rates {
		if x.Agent == "" && x.Language == schemas.EcosystemCPP {
			near(t, "paper cpp phantom", x.Phantom, 1)
			near(t, "paper cpp hidden", x.Hidden, 1)
		}
	}
	if len(r.Intra) != 1 || r.Intra[0].Tasks != 1 || r.Intra[0].LeftOut != 1 {
		t.Fatalf("paper intra %+v, want p1 only, p2 left out", r.Intra)
	}
	near(t, "paper J_intra mean (p1: 1, 1/2, 1/2)", r.Intra[0].MeanJ, 2.0/3)
	var md bytes.Buffer
	WriteMarkdown(&md, r, nil)
	if !strings.Contains(md.String(), "the paper's conventions") || !strings.Contains(md.String(), "first seen") {
		t.Errorf("the header does not say the paper's way was used")
	}
}

func eq(t *testing.T, what string, got, want *float64) {
	t.Helper()
	if want == nil {
		undefined(t, what, got)
		return
	}
	near(t, what, got, *want)
}

// TestPaperManifestConventions: D1 of a Java project with a test-scoped dependency and of a
// Python project that declares in pyproject.toml alone, envgap's way and the paper's.
func TestPaperManifestConventions(t *testing.T) {
	dir := t.TempDir()
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	meta := `{"created_at": "2026-03-01T10:00:00Z", "worked_first_time": true, "made_to_work": true, "run_command": "true"}`
	write("a/java-t1/p1/meta.json", meta)
	write("a/java-t1/p1/written/pom.xml", `<project><modelVersion>4.0.0</modelVersion><groupId>g</groupId><artifactId>p</artifactId><version>1</version><dependencies>
<dependency><groupId>com.google.code.gson</groupId><artifactId>gson</artifactId><version>2.10.1</version></dependency>
<dependency><groupId>junit</groupId><artifactId>junit</artifactId><version>4.13.2</version><scope>test</scope></dependency>
</dependencies></project>`)
	write("a/python-t1/p1/meta.json", meta)
	write("a/python-t1/p1/written/pyproject.toml", "[project]\nname = \"p\"\nversion = \"1\"\ndependencies = [\"requests==2.31.0\"]\n")
	for _, c := range []struct {
		paper    bool
		java, py string
	}{{false, "gson", "requests"}, {true, "gson junit", ""}} {
		s, err := Load(context.Background(), dir, LoadOptions{Paper: c.paper})
		if err != nil {
			t.Fatal(err)
		}
		d1 := map[schemas.Ecosystem]string{}
		for _, p := range s.Projects {
			d1[p.Language] = strings.Join(p.D1, " ")
		}
		if d1[schemas.EcosystemJava] != c.java || d1[schemas.EcosystemPython] != c.py {
			t.Errorf("paper %v: java D1 %q, python D1 %q; want %q, %q", c.paper, d1[schemas.EcosystemJava], d1[schemas.EcosystemPython], c.java, c.py)
		}
	}
}

// TestLastLineSkipsColourCodes: a failing step's last line that is only terminal colour
// codes (Maven's) is not the reason; the line before it is.
func TestLastLineSkipsColourCodes(t *testing.T) {
	text := "$ mvn -B package\n[ERROR] Failed to execute goal on project demo\n\x1b[0m\x1b[0m\n[resolve exit 1]"
	if got := failureLine(text); got != "[ERROR] Failed to execute goal on project demo" {
		t.Errorf("lastLine = %q", got)
	}
}
