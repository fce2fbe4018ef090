package scan

import (
	"fmt"
	"math/rand"
	"strings"
)

// The varied corpus: texts of code in several languages, manifests, build logs, patches
// and prose, generated from a seeded PRNG so that identifiers, literals, numbers and the
// structure of files differ from text to text (the old benchmark corpus repeats six
// files, which a cache of repeated windows can hide). Real-shaped fake secrets are
// sprinkled in.

var corpusWords = strings.Fields(`user order cache client config request response session item product
payment weather city report metric event queue worker job file path buffer image model layer tensor
batch record field value index table column row schema query result handler service server router
route view template widget button panel window frame socket stream channel message packet header
body payload document node tree graph edge vertex matrix vector point shape color style theme font
price amount total count limit offset page cursor filter sort search match pattern rule policy role
group member team project repo branch commit build deploy release version package module plugin
driver adapter provider factory builder parser lexer token scanner reader writer encoder decoder
logger monitor tracer timer clock date time zone region bucket object blob store disk volume mount
device sensor signal sample frame audio video codec track album artist playlist song lyric genre
customer invoice ledger account balance transfer wallet credit debit refund charge plan tier quota
access auth key secret password credential api endpoint webhook callback hook listener emitter
task step stage pipeline runner executor scheduler cron retry backoff timeout deadline context
state status flag option setting preference profile avatar address phone email name title label`)

var corpusVerbs = strings.Fields(`get set load save fetch send parse build make create update delete
remove add find list check validate compute render format convert apply merge split join open close
read write start stop run reset init flush sync resolve handle process register dispatch emit
notify refresh encode decode hash sign verify wrap unwrap map reduce collect sort filter`)

var corpusProse = strings.Fields(`the a this that when after before because while although if
then so but and or not only also still just never always sometimes usually build fails
works breaks installs compiles crashes hangs returns raises throws prints logs shows reports
error warning message output version dependency package module library tool compiler
interpreter runtime environment machine container image system user maintainer contributor
issue bug fix patch change commit release upgrade downgrade pin unpin install uninstall
clean fresh local remote upstream downstream missing broken outdated deprecated removed
renamed moved new old latest stable beta nightly manual automatic expected actual same
different wrong correct header file path directory folder cache network proxy mirror
registry timeout permission denied found not able to with without from into on in at for
of by about over under between during since until across`)

// corpusGen writes varied texts.
type corpusGen struct {
	r     *rand.Rand
	f     *fakeSecrets
	plain []string // secret lines
}

func (g *corpusGen) word() string { return corpusWords[g.r.Intn(len(corpusWords))] }
func (g *corpusGen) verb() string { return corpusVerbs[g.r.Intn(len(corpusVerbs))] }

func title(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

// ident returns a fresh identifier in one of the usual casings.
func (g *corpusGen) ident(style int) string {
	n := 1 + g.r.Intn(3)
	parts := make([]string, 0, n+1)
	if g.r.Intn(3) == 0 {
		parts = append(parts, g.verb())
	}
	for range n {
		parts = append(parts, g.word())
	}
	switch style {
	case 0: // snake
		return strings.Join(parts, "_")
	case 1: // camel
		for i := 1; i < len(parts); i++ {
			parts[i] = title(parts[i])
		}
		return strings.Join(parts, "")
	case 2: // Pascal
		for i := range parts {
			parts[i] = title(parts[i])
		}
		return strings.Join(parts, "")
	default: // SCREAMING
		return strings.ToUpper(strings.Join(parts, "_"))
	}
}

func (g *corpusGen) sentence() string {
	n := 6 + g.r.Intn(18)
	ws := make([]string, n)
	for i := range ws {
		switch g.r.Intn(9) {
		case 0:
			ws[i] = g.word()
		case 1:
			ws[i] = "`" + g.ident(g.r.Intn(3)) + "`"
		default:
			ws[i] = corpusProse[g.r.Intn(len(corpusProse))]
		}
	}
	ws[0] = title(ws[0])
	return strings.Join(ws, " ") + "."
}

func (g *corpusGen) version() string {
	return fmt.Sprintf("%d.%d.%d", g.r.Intn(12), g.r.Intn(40), g.r.Intn(20))
}

func (g *corpusGen) str() string {
	switch g.r.Intn(5) {
	case 0:
		return fmt.Sprintf("https://%s.example.com/%s/%s", g.word(), g.word(), g.ident(0))
	case 1:
		return g.sentence()
	case 2:
		return fmt.Sprintf("%s/%s.%s", g.word(), g.ident(0), []string{"json", "yaml", "txt", "csv", "png"}[g.r.Intn(5)])
	default:
		return g.ident(g.r.Intn(4))
	}
}

// envRef is a value read from the environment or a config object, the usual shape of a
// generic-api-key false positive in code.
func (g *corpusGen) envRef(lang string) string {
	v := g.ident(3)
	switch lang {
	case "py":
		return []string{`os.environ.get("` + v + `")`, `os.getenv("` + v + `", "")`, `settings.` + v, `config["` + g.ident(0) + `"]`, `self.` + g.ident(0)}[g.r.Intn(5)]
	case "js":
		return []string{`process.env.` + v, `config.` + g.ident(1), `options.` + g.ident(1) + ` || ''`, `this.` + g.ident(1)}[g.r.Intn(4)]
	case "go":
		return []string{`os.Getenv("` + v + `")`, `cfg.` + g.ident(2), `viper.GetString("` + g.ident(0) + `")`}[g.r.Intn(3)]
	default:
		return []string{`System.getenv("` + v + `")`, `props.getProperty("` + g.ident(0) + `")`, `this.` + g.ident(1)}[g.r.Intn(3)]
	}
}

// secretName is an identifier with a keyword of the generic rule.
func (g *corpusGen) secretName(style int) string {
	kw := []string{"api_key", "token", "secret", "password", "auth", "access_token", "credentials", "key", "api"}[g.r.Intn(9)]
	parts := []string{kw}
	if g.r.Intn(2) == 0 {
		parts = append([]string{g.word()}, parts...)
	}
	s := strings.Join(parts, "_")
	switch style {
	case 1, 2:
		ps := strings.Split(s, "_")
		for i := range ps {
			if i > 0 || style == 2 {
				ps[i] = title(ps[i])
			}
		}
		return strings.Join(ps, "")
	case 3:
		return strings.ToUpper(s)
	}
	return s
}

func (g *corpusGen) python(b *strings.Builder) {
	fmt.Fprintf(b, "\"\"\"%s\"\"\"\nimport os\nimport %s\nfrom %s.%s import %s, %s\n\n", g.sentence(), g.word(), g.word(), g.ident(0), g.ident(2), g.ident(0))
	fmt.Fprintf(b, "%s = %d\n%s = %q\n\n", g.ident(3), g.r.Intn(10000), g.ident(3), g.str())
	for range 1 + g.r.Intn(3) {
		cls := g.ident(2)
		fmt.Fprintf(b, "\nclass %s(%s):\n    \"\"\"%s\"\"\"\n\n    def __init__(self, %s, %s=None):\n", cls, g.ident(2), g.sentence(), g.ident(0), g.ident(0))
		for range 2 + g.r.Intn(4) {
			if g.r.Intn(3) == 0 {
				fmt.Fprintf(b, "        self.%s = %s\n", g.secretName(0), g.envRef("py"))
			} else {
				fmt.Fprintf(b, "        self.%s = %s\n", g.ident(0), g.ident(0))
			}
		}
		for range 1 + g.r.Intn(4) {
			fmt.Fprintf(b, "\n    def %s(self, %s):\n", g.ident(0), g.ident(0))
			for range 2 + g.r.Intn(6) {
				switch g.r.Intn(7) {
				case 0:
					fmt.Fprintf(b, "        if not %s:\n            raise %sError(%q)\n", g.ident(0), g.ident(2), g.sentence())
				case 1:
					fmt.Fprintf(b, "        for %s in self.%s:\n            %s.%s(%s)\n", g.word(), g.ident(0), g.ident(0), g.verb(), g.word())
				case 2:
					fmt.Fprintf(b, "        headers = {\"Authorization\": f\"Bearer {self.%s}\", \"X-Request-Id\": %s}\n", g.secretName(0), g.ident(0))
				case 3:
					fmt.Fprintf(b, "        %s = %s\n", g.secretName(0), g.envRef("py"))
				case 4:
					fmt.Fprintf(b, "        # %s\n", g.sentence())
				default:
					fmt.Fprintf(b, "        %s = self.%s(%s, %s=%d)\n", g.ident(0), g.ident(0), g.ident(0), g.word(), g.r.Intn(500))
				}
			}
			fmt.Fprintf(b, "        return %s\n", g.ident(0))
		}
	}
}

func (g *corpusGen) javascript(b *strings.Builder) {
	fmt.Fprintf(b, "'use strict';\nconst %s = require('%s');\nconst { %s, %s } = require('./%s');\n\n", g.ident(1), g.word(), g.ident(1), g.ident(1), g.ident(0))
	for range 2 + g.r.Intn(5) {
		switch g.r.Intn(4) {
		case 0:
			fmt.Fprintf(b, "const %s = %s;\n", g.secretName(1), g.envRef("js"))
		case 1:
			fmt.Fprintf(b, "const %s = {\n  %s: %s,\n  %s: '%s',\n  %s: %d,\n};\n", g.ident(1), g.secretName(1), g.envRef("js"), g.ident(1), g.str(), g.ident(1), g.r.Intn(9000))
		default:
			fmt.Fprintf(b, "\nasync function %s(%s, %s) {\n", g.ident(1), g.ident(1), g.ident(1))
			for range 2 + g.r.Intn(6) {
				switch g.r.Intn(5) {
				case 0:
					fmt.Fprintf(b, "  const res = await axios.get(`${%s}/%s`, { headers: { Authorization: `Bearer ${%s}` } });\n", g.ident(1), g.word(), g.secretName(1))
				case 1:
					fmt.Fprintf(b, "  if (!%s) {\n    throw new Error('%s');\n  }\n", g.ident(1), g.sentence())
				case 2:
					fmt.Fprintf(b, "  // %s\n", g.sentence())
				default:
					fmt.Fprintf(b, "  const %s = %s.%s(%s);\n", g.ident(1), g.ident(1), g.verb(), g.ident(1))
				}
			}
			fmt.Fprintf(b, "  return %s;\n}\n", g.ident(1))
		}
	}
	fmt.Fprintf(b, "\nmodule.exports = { %s, %s };\n", g.ident(1), g.ident(1))
}

func (g *corpusGen) golang(b *strings.Builder) {
	fmt.Fprintf(b, "package %s\n\nimport (\n\t\"context\"\n\t\"fmt\"\n\t\"%s/%s\"\n)\n\n", g.word(), g.word(), g.word())
	typ := g.ident(2)
	fmt.Fprintf(b, "// %s %s\ntype %s struct {\n", typ, g.sentence(), typ)
	for range 2 + g.r.Intn(6) {
		if g.r.Intn(3) == 0 {
			n := g.secretName(2)
			fmt.Fprintf(b, "\t%s string `json:\"%s\" yaml:\"%s\"`\n", n, strings.ToLower(n), strings.ToLower(n))
		} else {
			fmt.Fprintf(b, "\t%s %s\n", g.ident(2), []string{"string", "int", "[]byte", "time.Duration", "*http.Client"}[g.r.Intn(5)])
		}
	}
	b.WriteString("}\n")
	for range 1 + g.r.Intn(4) {
		fmt.Fprintf(b, "\n// %s %s\nfunc (x *%s) %s(ctx context.Context, %s string) error {\n", g.ident(2), g.sentence(), typ, g.ident(2), g.ident(1))
		for range 2 + g.r.Intn(6) {
			switch g.r.Intn(5) {
			case 0:
				fmt.Fprintf(b, "\t%s := %s\n", g.secretName(1), g.envRef("go"))
			case 1:
				fmt.Fprintf(b, "\tif err := x.%s(ctx); err != nil {\n\t\treturn fmt.Errorf(\"%s: %%w\", err)\n\t}\n", g.ident(1), strings.ToLower(g.sentence()))
			case 2:
				fmt.Fprintf(b, "\treq.Header.Set(\"Authorization\", \"Bearer \"+x.%s)\n", g.secretName(2))
			default:
				fmt.Fprintf(b, "\t%s := x.%s.%s(%d)\n", g.ident(1), g.ident(2), g.ident(2), g.r.Intn(64))
			}
		}
		b.WriteString("\treturn nil\n}\n")
	}
}

func (g *corpusGen) java(b *strings.Builder) {
	cls := g.ident(2)
	fmt.Fprintf(b, "package com.%s.%s;\n\nimport java.util.%s;\nimport org.%s.%s;\n\npublic class %s {\n", g.word(), g.word(), g.ident(2), g.word(), g.ident(2), cls)
	for range 2 + g.r.Intn(4) {
		if g.r.Intn(3) == 0 {
			fmt.Fprintf(b, "    private final String %s = %s;\n", g.secretName(1), g.envRef("java"))
		} else {
			fmt.Fprintf(b, "    private static final int %s = %d;\n", g.ident(3), g.r.Intn(1000))
		}
	}
	for range 1 + g.r.Intn(3) {
		fmt.Fprintf(b, "\n    /** %s */\n    public %s %s(%s %s) throws %sException {\n", g.sentence(), g.ident(2), g.ident(1), g.ident(2), g.ident(1), g.ident(2))
		for range 2 + g.r.Intn(5) {
			switch g.r.Intn(4) {
			case 0:
				fmt.Fprintf(b, "        String %s = %s;\n", g.secretName(1), g.envRef("java"))
			case 1:
				fmt.Fprintf(b, "        builder.header(\"Authorization\", \"Bearer \" + %s);\n", g.secretName(1))
			default:
				fmt.Fprintf(b, "        %s %s = this.%s.%s(%s);\n", g.ident(2), g.ident(1), g.ident(1), g.ident(1), g.ident(1))
			}
		}
		fmt.Fprintf(b, "        return %s;\n    }\n", g.ident(1))
	}
	b.WriteString("}\n")
}

func (g *corpusGen) manifest(b *strings.Builder) {
	switch g.r.Intn(5) {
	case 0:
		fmt.Fprintf(b, "{\n  \"name\": \"%s\",\n  \"version\": \"%s\",\n  \"description\": \"%s\",\n  \"dependencies\": {\n", strings.ReplaceAll(g.ident(0), "_", "-"), g.version(), g.sentence())
		n := 3 + g.r.Intn(12)
		for i := range n {
			sep := ","
			if i == n-1 {
				sep = ""
			}
			fmt.Fprintf(b, "    \"%s\": \"^%s\"%s\n", strings.ReplaceAll(g.ident(0), "_", "-"), g.version(), sep)
		}
		b.WriteString("  }\n}\n")
	case 1:
		for range 4 + g.r.Intn(16) {
			fmt.Fprintf(b, "%s%s%s\n", strings.ReplaceAll(g.ident(0), "_", "-"), []string{"==", ">=", "~=", "<"}[g.r.Intn(4)], g.version())
		}
	case 2:
		fmt.Fprintf(b, "version: \"3.8\"\nservices:\n  %s:\n    image: %s/%s:%s\n    environment:\n", g.word(), g.word(), g.word(), g.version())
		for range 2 + g.r.Intn(5) {
			switch g.r.Intn(3) {
			case 0:
				fmt.Fprintf(b, "      %s: ${%s}\n", g.secretName(3), g.ident(3))
			default:
				fmt.Fprintf(b, "      %s: \"%s\"\n", g.ident(3), g.word())
			}
		}
		fmt.Fprintf(b, "    ports:\n      - \"%d:%d\"\n", 1000+g.r.Intn(9000), 1000+g.r.Intn(9000))
	case 3:
		fmt.Fprintf(b, "name: %s\non: [push, pull_request]\njobs:\n  %s:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n", g.sentence(), g.word())
		for range 1 + g.r.Intn(4) {
			fmt.Fprintf(b, "      - name: %s\n        run: %s %s\n        env:\n          %s: ${{ secrets.%s }}\n", g.sentence(), g.verb(), g.ident(0), g.secretName(3), g.ident(3))
		}
	default:
		fmt.Fprintf(b, "FROM %s:%s\nWORKDIR /app\nCOPY . .\nRUN pip install -r requirements.txt\nENV %s=%s\n", g.word(), g.version(), g.ident(3), g.word())
		fmt.Fprintf(b, "ARG %s\nCMD [\"python\", \"%s.py\"]\n", g.secretName(3), g.ident(0))
	}
}

func (g *corpusGen) log(b *strings.Builder) {
	for range 5 + g.r.Intn(30) {
		switch g.r.Intn(8) {
		case 0:
			fmt.Fprintf(b, "Collecting %s==%s\n  Downloading %s-%s-py3-none-any.whl (%d kB)\n", g.ident(0), g.version(), g.ident(0), g.version(), g.r.Intn(900))
		case 1:
			fmt.Fprintf(b, "npm WARN deprecated %s@%s: %s\n", strings.ReplaceAll(g.ident(0), "_", "-"), g.version(), g.sentence())
		case 2:
			fmt.Fprintf(b, "Traceback (most recent call last):\n  File \"/usr/lib/python3.%d/site-packages/%s/%s.py\", line %d, in %s\n    %s = %s(%s)\n%sError: %s\n",
				8+g.r.Intn(5), g.word(), g.ident(0), g.r.Intn(900), g.ident(0), g.ident(0), g.ident(0), g.ident(0), g.ident(2), g.sentence())
		case 3:
			fmt.Fprintf(b, "%04d-%02d-%02dT%02d:%02d:%02dZ INFO %s: %s (%dms)\n", 2020+g.r.Intn(6), 1+g.r.Intn(12), 1+g.r.Intn(28), g.r.Intn(24), g.r.Intn(60), g.r.Intn(60), g.ident(0), g.sentence(), g.r.Intn(3000))
		case 4:
			fmt.Fprintf(b, "--- FAIL: Test%s (%d.%02ds)\n    %s_test.go:%d: got %d, want %d\n", g.ident(2), g.r.Intn(9), g.r.Intn(100), g.word(), g.r.Intn(400), g.r.Intn(99), g.r.Intn(99))
		case 5:
			fmt.Fprintf(b, "ERROR: Could not build wheels for %s, which is required to install pyproject.toml-based projects\n", g.ident(0))
		case 6:
			fmt.Fprintf(b, "[%s] %s: %s=%s\n", []string{"DEBUG", "WARN", "INFO"}[g.r.Intn(3)], g.ident(0), g.secretName(0), g.ident(3))
		default:
			fmt.Fprintf(b, "%s.c:%d:%d: error: '%s' undeclared (first use in this function)\n", g.ident(0), g.r.Intn(900), g.r.Intn(80), g.ident(0))
		}
	}
}

func (g *corpusGen) prose(b *strings.Builder) {
	fmt.Fprintf(b, "## %s\n\n", g.sentence())
	for range 1 + g.r.Intn(4) {
		for range 2 + g.r.Intn(6) {
			b.WriteString(g.sentence())
			b.WriteByte(' ')
		}
		b.WriteString("\n\n")
	}
	if g.r.Intn(2) == 0 {
		fmt.Fprintf(b, "```\n$ %s %s --%s\n", g.word(), g.verb(), g.word())
		g.log(b)
		b.WriteString("```\n\n")
	}
}

// patch writes a unified diff of some code.
func (g *corpusGen) patch(b *strings.Builder) {
	var src strings.Builder
	ext := []string{"py", "js", "go", "java"}[g.r.Intn(4)]
	switch ext {
	case "py":
		g.python(&src)
	case "js":
		g.javascript(&src)
	case "go":
		g.golang(&src)
	default:
		g.java(&src)
	}
	lines := strings.SplitAfter(src.String(), "\n")
	name := g.ident(0) + "." + ext
	fmt.Fprintf(b, "diff --git a/%s b/%s\n--- a/%s\n+++ b/%s\n@@ -1,%d +1,%d @@\n", name, name, name, name, len(lines), len(lines))
	for _, l := range lines {
		if l == "" {
			continue
		}
		switch g.r.Intn(6) {
		case 0:
			b.WriteString("-" + l)
		case 1:
			b.WriteString("+" + l)
		default:
			b.WriteString(" " + l)
		}
	}
}

// variedCorpus returns texts totalling about size bytes (see corpusGen), with a
// real-shaped fake secret in roughly one text of secretEvery (0: none).
func variedCorpus(size int, seed int64, secretEvery int) []Text {
	g := &corpusGen{r: rand.New(rand.NewSource(seed)), f: newFakes(seed + 1)}
	var out []Text
	total := 0
	kinds := []string{"py", "js", "go", "java", "manifest", "log", "md", "diff"}
	for i := 0; total < size; i++ {
		var b strings.Builder
		kind := kinds[g.r.Intn(len(kinds))]
		target := 2<<10 + g.r.Intn(40<<10)
		for b.Len() < target {
			switch kind {
			case "py":
				g.python(&b)
			case "js":
				g.javascript(&b)
			case "go":
				g.golang(&b)
			case "java":
				g.java(&b)
			case "manifest":
				g.manifest(&b)
			case "log":
				g.log(&b)
			case "md":
				g.prose(&b)
			default:
				g.patch(&b)
			}
			if secretEvery > 0 && g.r.Intn(secretEvery) == 0 {
				plain, special := secretLines(g.f, g.r)
				s := plain[g.r.Intn(len(plain))]
				if g.r.Intn(8) == 0 {
					s = special[g.r.Intn(len(special))]
				}
				b.WriteString(s + "\n")
			}
		}
		out = append(out, Text{InstanceID: fmt.Sprintf("envgap__varied__r-%d", i), Field: FieldProjectFiles, Path: fmt.Sprintf("src/%s.%s", g.ident(0), kind), Content: b.String()})
		total += b.Len()
	}
	return out
}
