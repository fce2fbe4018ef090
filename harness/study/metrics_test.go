package study

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/envgap/envgap/lib/studylayout"
	"github.com/envgap/envgap/schemas"
)

// The study below is small enough to work out every metric by hand from the paper's
// formulas; the expected values in TestComputeHandStudy are those hand computations.

type hp struct {
	rel          string // agent/language-tN/pN
	worked, made bool
	rounds       int      // -1: not recorded
	d1           []string // python/js names; cpp: "fp:Name" find_package, "fc:name" FetchContent
	d2, d3       []string // nil d3: no layers.json
	err          string
}

func writeStudy(t *testing.T, projects []hp) string { return writeStudyTB(t, projects) }

func writeStudyTB(t testing.TB, projects []hp) string {
	t.Helper()
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		must(os.MkdirAll(filepath.Dir(p), 0o755))
		must(os.WriteFile(p, []byte(s), 0o644))
	}
	write(filepath.Join(dir, "problems.json"), `[
 {"number": 1, "title": "CSV Statistical Analyzer", "domain": "Data Processing", "stdlib_sufficient": ["python", "javascript"]},
 {"number": 2, "title": "RSA Digital Signatures", "domain": "Cryptography"},
 {"number": 3, "title": "DNS Resolver", "domain": "Networking"}
]`)
	for _, p := range projects {
		pd := filepath.Join(dir, filepath.FromSlash(p.rel))
		lang := strings.SplitN(strings.SplitN(p.rel, "/", 3)[1], "-", 2)[0]
		w := filepath.Join(pd, "written")
		switch lang {
		case "python":
			write(filepath.Join(w, "requirements.txt"), strings.Join(p.d1, "\n")+"\n")
			write(filepath.Join(w, "main.py"), "print('hi')\n")
		case "javascript":
			deps := map[string]string{}
			for _, d := range p.d1 {
				deps[d] = "1.0.0"
			}
			b, _ := json.Marshal(map[string]any{"name": "proj", "version": "1.0.0", "dependencies": deps})
			write(filepath.Join(w, "package.json"), string(b))
		case "cpp":
			var b strings.Builder
			b.WriteString("cmake_minimum_required(VERSION 3.16)\nproject(p CXX)\ninclude(FetchContent)\n")
			for _, d := range p.d1 {
				if n, ok := strings.CutPrefix(d, "fp:"); ok {
					fmt.Fprintf(&b, "find_package(%s REQUIRED)\n", n)
				} else if n, ok := strings.CutPrefix(d, "fc:"); ok {
					fmt.Fprintf(&b, "FetchContent_Declare(%s GIT_REPOSITORY https://example.invalid/%s.git GIT_TAG v1)\n", n, n)
				}
			}
			b.WriteString("add_executable(p main.cpp)\n")
			write(filepath.Join(w, "CMakeLists.txt"), b.String())
		case "java":
			var b strings.Builder
			b.WriteString("<project><modelVersion>4.0.0</modelVersion><groupId>g</groupId><artifactId>p</artifactId><version>1</version>\n" +
				"<build><plugins><plugin><artifactId>maven-jar-plugin</artifactId><configuration><archive><manifest><mainClass>Main</mainClass></manifest></archive></configuration></plugin></plugins></build>\n<dependencies>\n")
			for _, d := range p.d1 {
				fmt.Fprintf(&b, "<dependency><groupId>g</groupId><artifactId>%s</artifactId><version>1.0</version></dependency>\n", d)
			}
			b.WriteString("</dependencies></project>\n")
			write(filepath.Join(w, "pom.xml"), b.String())
			write(filepath.Join(w, "src/main/java/Main.java"), "public class Main { public static void main(String[] a) {} }\n")
		default:
			write(filepath.Join(w, "README.md"), "x\n")
		}
		if p.rounds == -2 { // no meta.json
			continue
		}
		meta := map[string]any{"created_at": "2026-03-01T10:00:00Z", "worked_first_time": p.worked, "made_to_work": p.made}
		if !p.worked {
			meta["repaired_at"] = "2026-03-01T11:00:00Z"
			meta["error"] = p.err
		}
		if p.made {
			meta["run_command"] = "true"
		}
		if p.rounds >= 0 && !p.worked {
			meta["repair_rounds"] = p.rounds
		}
		b, _ := json.Marshal(meta)
		write(filepath.Join(pd, "meta.json"), string(b))
		if p.d3 != nil {
			l := map[string]any{"d2": nonNil(p.d2), "d3": p.d3}
			if lang == "cpp" && p.d2 == nil { // no CMake configure read: D2 := D1
				delete(l, "d2")
				l["d2_unreadable"] = "no CMakeCache.txt in the project"
			}
			b, _ := json.Marshal(l)
			write(filepath.Join(pd, "layers.json"), string(b))
		}
	}
	return dir
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

var handStudy = []hp{
	// Python, main trial.
	{rel: "a/python-t1/p1", worked: true, made: true, d1: []string{"requests", "tabulate"}, d2: []string{"requests", "tabulate", "urllib3", "idna"}, d3: []string{"requests", "urllib3"}},
	{rel: "a/python-t1/p2", made: true, rounds: 2, d1: nil, d2: nil, d3: []string{"six"}, err: "ModuleNotFoundError: No module named 'six'"},
	{rel: "a/python-t1/p3", made: true, rounds: 5, d1: []string{"numpy"}, d2: []string{"numpy"}, d3: []string{}, err: "E"},
	{rel: "b/python-t1/p1", rounds: 10, d1: []string{"requests"}, err: "E"},
	{rel: "b/python-t1/p2", worked: true, made: true, d1: nil, d2: nil, d3: []string{}},
	{rel: "b/python-t1/p3", worked: true, made: true, d1: []string{"numpy", "requests"}, d2: []string{"numpy", "requests", "certifi"}, d3: []string{"numpy", "certifi"}},
	// Python, repeats of agent a (p3 only in trial 2: not in every trial).
	{rel: "a/python-t2/p1", worked: true, made: true, d1: []string{"requests"}},
	{rel: "a/python-t2/p2", worked: true, made: true, d1: nil},
	{rel: "a/python-t2/p3", worked: true, made: true, d1: []string{"numpy"}},
	{rel: "a/python-t3/p1", worked: true, made: true, d1: []string{"requests", "tabulate"}},
	{rel: "a/python-t3/p2", worked: true, made: true, d1: nil},
	// JavaScript.
	{rel: "a/javascript-t1/p1", worked: true, made: true, d1: []string{"yargs"}, d2: []string{"yargs", "cliui"}, d3: []string{}},
	{rel: "b/javascript-t1/p1", worked: true, made: true, d1: nil, d2: nil, d3: []string{}},
	{rel: "c/javascript-t1/p2", made: true, rounds: -1, d1: []string{"lodash"}, err: "E"}, // no layers, no rounds
	// C++ (D2 is D1 by definition; layers' d2 is ignored).
	{rel: "a/cpp-t1/p1", made: true, rounds: 1, d1: []string{"fp:OpenSSL", "fc:nlohmann_json"}, d3: []string{"ssl", "crypto"},
		err: "CMake Error at /usr/share/cmake-3.22/Modules/FindPackageHandleStandardArgs.cmake:230 (message):\n  Could NOT find OpenSSL, try to set the path to OpenSSL root folder in the"},
	{rel: "a/cpp-t1/p2", rounds: 10, d1: []string{"fc:json"}, err: "CMake Error at /usr/share/cmake-3.22/Modules/FetchContent.cmake:1087 (message):\n  Build step for json failed: 2"},
	{rel: "a/cpp-t1/p3", made: true, rounds: 8, d1: []string{"fp:ZLIB"}, d3: []string{"z"}, err: "main.cpp:3:10: fatal error: zlib.h: No such file or directory"},
	{rel: "b/cpp-t1/p1", rounds: 10, d1: []string{"fp:CURL"}, err: "Package 'libharu', required by 'virtual:world', not found"},
	{rel: "b/cpp-t1/p2", worked: true, made: true, d1: []string{"fc:nlohmann_json"}, d3: []string{}}, // header-only: absent from D3
	{rel: "c/cpp-t1/p1", worked: true, made: true, d1: nil, d3: []string{}},
	// Bad input.
	{rel: "a/java-t1/p2", rounds: -2},                        // no meta.json
	{rel: "b/java-t2/p1", worked: true, made: true},          // a trial without its main run
	{rel: "a/rust-t1/p1", worked: true, made: true, d1: nil}, // unknown language
}

func loadHand(t *testing.T) *Report {
	t.Helper()
	s, err := Load(context.Background(), writeStudy(t, handStudy), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return Compute(s, Options{})
}

func near(t *testing.T, what string, got *float64, want float64) {
	t.Helper()
	if got == nil {
		t.Errorf("%s: undefined, want %.6f", what, want)
		return
	}
	if math.Abs(*got-want) > 1e-9 {
		t.Errorf("%s = %.12f, want %.12f", what, *got, want)
	}
}

func undefined(t *testing.T, what string, got *float64) {
	t.Helper()
	if got != nil {
		t.Errorf("%s = %v, want undefined", what, *got)
	}
}

func TestComputeHandStudy(t *testing.T) {
	r := loadHand(t)
	py, js, cpp := schemas.EcosystemPython, schemas.EcosystemJavaScript, schemas.EcosystemCPP
	if r.Main != 15 || r.Successful != 12 || r.Layered != 11 {
		t.Errorf("main %d successful %d layered %d, want 15, 12, 11", r.Main, r.Successful, r.Layered)
	}

	// M1: SR(0), SR(<=k), gain, buckets.
	conv := map[string]Convergence{}
	for _, c := range r.Convergence {
		conv[c.Agent+"/"+string(c.Language)] = c
	}
	check := func(k string, sr0, srk float64, buckets map[string]int) {
		t.Helper()
		c, ok := conv[k]
		if !ok {
			t.Fatalf("no convergence row %s", k)
		}
		near(t, k+" SR(0)", &c.SR0, sr0)
		near(t, k+" SR(<=k)", &c.SRk, srk)
		near(t, k+" gain", &c.Gain, srk-sr0)
		for b, n := range buckets {
			if c.Buckets[b] != n {
				t.Errorf("%s bucket %s = %d, want %d (all: %v)", k, b, c.Buckets[b], n, c.Buckets)
			}
		}
	}
	check("a/python", 1.0/3, 1, map[string]int{"0": 1, "1-3": 1, "4-7": 1, "failed": 0})
	check("b/python", 2.0/3, 2.0/3, map[string]int{"0": 2, "failed": 1})
	check("a/cpp", 0, 2.0/3, map[string]int{"1-3": 1, "8-10": 1, "failed": 1})
	check("c/javascript", 0, 1, map[string]int{"unknown": 1})

	// Figure 10: by domain, pooled over languages (agent a).
	dom := map[string]Convergence{}
	for _, c := range r.ByDomain {
		dom[c.Agent+"/"+c.Domain] = c
	}
	for k, want := range map[string][2]float64{"a/Data Processing": {2.0 / 3, 1}, "a/Cryptography": {0, 0.5}, "a/Networking": {0, 1}} {
		c := dom[k]
		near(t, k+" SR(0)", &c.SR0, want[0])
		near(t, k+" SR(<=k)", &c.SRk, want[1])
	}

	// M3: rates (eq. 4), zero denominators as zero.
	rates := map[string]Rates{}
	for _, x := range r.Rates {
		rates[x.Agent+"/"+string(x.Language)] = x
	}
	near(t, "python phantom", rates["/python"].Phantom, 0.4)
	near(t, "python hidden", rates["/python"].Hidden, 0.4)
	near(t, "python bloat", rates["/python"].Bloat, (0.5+0+1+0+1.0/3)/5)
	near(t, "javascript phantom", rates["/javascript"].Phantom, 0.5)
	near(t, "javascript hidden", rates["/javascript"].Hidden, 0)
	near(t, "javascript bloat", rates["/javascript"].Bloat, 0.5)
	near(t, "cpp phantom", rates["/cpp"].Phantom, 0.375)
	near(t, "cpp hidden", rates["/cpp"].Hidden, 0)
	near(t, "cpp bloat", rates["/cpp"].Bloat, 0.375)
	undefined(t, "java phantom (no projects)", rates["/java"].Phantom)

	// M4: P/R/F1 (eq. 5) with the conventions, per stratum and pooled.
	acc := map[string]Accuracy{}
	for _, x := range r.Accuracy {
		acc[x.Agent+"/"+string(x.Language)] = x
	}
	a := acc["All/python"]
	if a.N != 4 || a.Excluded != 1 {
		t.Errorf("python pooled n %d excluded %d, want 4, 1", a.N, a.Excluded)
	}
	near(t, "python P", a.Precision, 0.5)
	near(t, "python R", a.Recall, 0.5)
	near(t, "python F1", a.F1, 0.25)
	near(t, "a python F1", acc["a/python"].F1, 0.5/3)
	near(t, "a python P (P=1 when n1=0<n3)", acc["a/python"].Precision, 0.5)
	near(t, "a python R (R=1 when n3=0<n1)", acc["a/python"].Recall, 0.5)
	b := acc["b/python"] // a stratum of one project (and one excluded)
	if b.N != 1 || b.Excluded != 1 {
		t.Errorf("b python n %d excluded %d, want 1, 1", b.N, b.Excluded)
	}
	near(t, "b python F1", b.F1, 0.5)
	near(t, "cpp P", acc["All/cpp"].Precision, 0.5)
	near(t, "cpp R", acc["All/cpp"].Recall, 1)
	near(t, "cpp F1", acc["All/cpp"].F1, 5.0/9)
	if acc["All/javascript"].N != 1 || acc["All/javascript"].Excluded != 1 {
		t.Errorf("javascript pooled: %+v, want n 1, excluded 1", acc["All/javascript"])
	}
	near(t, "javascript R (nothing traced)", acc["All/javascript"].Recall, 1)
	near(t, "javascript F1", acc["All/javascript"].F1, 0)

	// M2: rho, undefined for |D1| = 0, C++ marked excluded.
	infl := map[schemas.Ecosystem]Inflation{}
	for _, x := range r.Inflation {
		infl[x.Language] = x
	}
	if x := infl[py]; x.N != 3 || x.Undefined != 2 || x.Excluded {
		t.Errorf("python rho: %+v", x)
	}
	near(t, "python rho mean", infl[py].Mean, 1.5)
	near(t, "python rho median", infl[py].Median, 1.5)
	near(t, "javascript rho mean", infl[js].Mean, 2)
	if x := infl[cpp]; !x.Excluded || x.N != 3 || x.Undefined != 1 {
		t.Errorf("cpp rho: %+v", x)
	}
	near(t, "cpp rho mean (D2 := D1)", infl[cpp].Mean, 1)

	// M5: cross-agent Jaccard (1 both empty, 0 one empty) and CDR.
	cross := map[schemas.Ecosystem]CrossAgent{}
	for _, x := range r.CrossAgent {
		cross[x.Language] = x
	}
	near(t, "python mean J", cross[py].MeanJ, 2.0/3)
	near(t, "python CDR", cross[py].CDR, 0)
	near(t, "javascript mean J", cross[js].MeanJ, 0)
	near(t, "javascript CDR", cross[js].CDR, 1)
	near(t, "cpp CDR", cross[cpp].CDR, 1)
	if cross[cpp].N != 4 {
		t.Errorf("cpp pairs %d, want 4", cross[cpp].N)
	}
	undefined(t, "java CDR", cross[schemas.EcosystemJava].CDR)
	near(t, "macro CDR", r.MacroCDR, 2.0/3)

	// M6: intra-agent over a's three python trials (p3 is not in every trial).
	if len(r.Intra) != 1 {
		t.Fatalf("intra rows %+v, want one (a, python)", r.Intra)
	}
	in := r.Intra[0]
	if in.Tasks != 2 || in.Unanimous != 1 {
		t.Errorf("intra tasks %d unanimous %d, want 2, 1", in.Tasks, in.Unanimous)
	}
	near(t, "intra mean J", in.MeanJ, 5.0/6)
	near(t, "intra median J", in.MedianJ, 1)
	near(t, "UCR", in.UCR, 0.5)
	near(t, "V union", in.MeanUnion, 1)
	near(t, "V intersection", in.MeanInters, 0.5)

	// M8: SLAR and EGAR.
	gap := map[string]EnvGap{}
	for _, g := range r.EnvGap {
		gap[g.Agent] = g
	}
	if g := gap["a"]; g.Fail != 3 || g.SysLib != 1 || g.FetchFail != 1 || g.Other != 1 || g.Recovered != 1 {
		t.Errorf("a env gap %+v", g)
	}
	near(t, "a SLAR", gap["a"].SLAR, 1.0/3)
	near(t, "a EGAR", gap["a"].EGAR, 1)
	near(t, "b SLAR", gap["b"].SLAR, 1)
	near(t, "b EGAR", gap["b"].EGAR, 0)
	undefined(t, "c SLAR (no failures)", gap["c"].SLAR)
	undefined(t, "c EGAR", gap["c"].EGAR)

	// Table 7: Spearman, against scipy.stats.spearmanr (scipy 1.10.1) on the same pairs.
	sp := map[schemas.Ecosystem]Correlation{}
	for _, c := range r.Spearman {
		sp[c.Language] = c
	}
	near(t, "python rho_S", sp[py].Rho, 0.4082482904638631)
	near(t, "python p", sp[py].P, 0.421648255176194)
	near(t, "javascript rho_S", sp[js].Rho, -0.5)
	near(t, "javascript p", sp[js].P, 0.6666666666666667)
	near(t, "cpp rho_S", sp[cpp].Rho, -0.6123724356957945)
	near(t, "cpp p", sp[cpp].P, 0.19626117814926958)
	undefined(t, "java rho_S", sp[schemas.EcosystemJava].Rho)

	// M7: UDR over stdlib-sufficient tasks (p1 in python and javascript).
	udr := map[string]UDR{}
	for _, u := range r.UDR {
		udr[u.Agent+"/"+string(u.Language)] = u
	}
	near(t, "a python UDR", udr["a/python"].Rate, 1)
	near(t, "b python UDR (failed projects count: D1 is M(0))", udr["b/python"].Rate, 1)
	near(t, "b javascript UDR", udr["b/javascript"].Rate, 0)
	undefined(t, "a cpp UDR (not marked)", udr["a/cpp"].Rate)
	macro := map[string]*float64{}
	for _, m := range r.UDRMacro {
		macro[m.Agent] = m.Rate
	}
	near(t, "a UDR macro", macro["a"], 1)
	near(t, "b UDR macro", macro["b"], 0.5)
	undefined(t, "c UDR macro", macro["c"])

	// Tables 10, 11.
	top := func(ls []TopList, l schemas.Ecosystem) string {
		for _, x := range ls {
			if x.Language == l {
				return counts(x.Packages)
			}
		}
		return ""
	}
	for _, c := range []struct{ got, want string }{
		{top(r.Phantom, py), "numpy (1), requests (1), tabulate (1)"},
		{top(r.Hidden, py), "certifi (1), six (1), urllib3 (1)"},
		{top(r.Phantom, cpp), "nlohmann_json (2)"},
		{top(r.Hidden, cpp), "–"},
	} {
		if c.got != c.want {
			t.Errorf("top list %q, want %q", c.got, c.want)
		}
	}

	// Left out, by path and reason.
	want := map[string]string{
		"a/java-t1/p2/meta.json": "is missing",
		"b/java-t2":              "has no main run",
		"a/rust-t1":              `language "rust" is not one of`,
		"c/javascript-t1/p2":     "no layers.json and no engine",
		"a/cpp-t1/p1":            "D2 := D1, the paper's fallback",
	}
	for ref, sub := range want {
		found := false
		for _, s := range r.Skipped {
			if strings.HasPrefix(s.Ref, ref) && strings.Contains(s.Reason, sub) {
				found = true
			}
		}
		if !found {
			t.Errorf("left out: nothing for %s with %q in %+v", ref, sub, r.Skipped)
		}
	}
}

func TestJaccardAndPRFConventions(t *testing.T) {
	for _, c := range []struct {
		a, b []string
		want float64
	}{
		{nil, nil, 1}, {[]string{"x"}, nil, 0}, {nil, []string{"x"}, 0},
		{[]string{"x", "y"}, []string{"y", "z"}, 1.0 / 3}, {[]string{"x"}, []string{"x"}, 1},
	} {
		if got := Jaccard(c.a, c.b); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Jaccard(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
	if _, _, _, ok := PRF(nil, nil); ok {
		t.Error("PRF of two empty sets is defined; the paper leaves such projects out")
	}
	if p, r, f, _ := PRF(nil, []string{"x"}); p != 1 || r != 0 || f != 0 {
		t.Errorf("PRF(empty, {x}) = %v %v %v, want 1 0 0", p, r, f)
	}
	if p, r, f, _ := PRF([]string{"x"}, nil); p != 0 || r != 1 || f != 0 {
		t.Errorf("PRF({x}, empty) = %v %v %v, want 0 1 0", p, r, f)
	}
}

// TestSpearmanReference checks Spearman's rho and its p-value against
// scipy.stats.spearmanr (scipy 1.10.1), ties included.
func TestSpearmanReference(t *testing.T) {
	for _, c := range []struct {
		x, y   []float64
		rho, p float64
	}{
		{[]float64{0, 1, 1, 2, 3, 3, 3, 5, 0, 2, 4, 1}, []float64{1, 1, 0, 1, 0, 0, 1, 0, 1, 1, 0, 1}, -0.6230559828490336, 0.030441363005725485},
		{[]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, []float64{2, 1, 4, 3, 6, 5, 8, 7, 10, 9}, 0.9393939393939393, 5.484052998513666e-05},
		{[]float64{3, 1, 2, 0}, []float64{1, 0, 1, 1}, 0.2581988897471611, 0.7418011102528389},
	} {
		rho, p, ok := Spearman(c.x, c.y)
		if !ok || math.Abs(rho-c.rho) > 1e-12 || math.Abs(p-c.p) > 1e-9*math.Max(1, c.p) {
			t.Errorf("Spearman(%v, %v) = %v, %v, %v; want %v, %v", c.x, c.y, rho, p, ok, c.rho, c.p)
		}
	}
	if _, _, ok := Spearman([]float64{1, 2, 3}, []float64{1, 1, 1}); ok {
		t.Error("Spearman with a constant variable is defined")
	}
}

func TestClassifyCPPError(t *testing.T) {
	for text, want := range map[string]string{
		"Could NOT find OpenSSL, try to set the path":                                                    studylayout.ErrorSystemLib,
		`Could not find a package configuration file provided by "fmt" with any of the following names:`: studylayout.ErrorSystemLib,
		"Package 'libharu', required by 'virtual:world', not found":                                      studylayout.ErrorSystemLib,
		"CMake Error at /usr/share/cmake-3.22/Modules/FetchContent.cmake:1087 (message):":                studylayout.ErrorFetchFail,
		"fatal: unable to access 'https://github.com/x/y.git/': Could not resolve host: github.com":      studylayout.ErrorFetchFail,
		"main.cpp:3:10: fatal error: zlib.h: No such file or directory":                                  studylayout.ErrorOther,
		"/usr/bin/ld: cannot find -lssl":                                                                 studylayout.ErrorOther,
		"":                                                                                               studylayout.ErrorOther,
	} {
		if got := ClassifyCPPError(text); got != want {
			t.Errorf("ClassifyCPPError(%q) = %s, want %s", text, got, want)
		}
	}
}

func TestWriteDir(t *testing.T) {
	r := loadHand(t)
	dir := t.TempDir()
	if err := WriteDir(dir, r); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| a | Python | 3 | 33.3% | 100.0% | 66.7% |", "![Figure 4", "| C++ | nlohmann_json (2) | – |", `\|D1\|=0`} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	for name := range figureKeys {
		f := filepath.Join(dir, figureKeys[name])
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(b), "<svg") || !strings.HasSuffix(string(b), "</svg>\n") {
			t.Errorf("%s is not an SVG document", f)
		}
	}
	var back Report
	b, _ := os.ReadFile(filepath.Join(dir, "report.json"))
	if err := json.Unmarshal(b, &back); err != nil || back.Main != r.Main {
		t.Errorf("report.json: %v, main %d", err, back.Main)
	}
}
