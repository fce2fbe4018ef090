package study

import (
	"fmt"
	"strings"

	"github.com/envgap/envgap/lib/studylayout"
	"github.com/envgap/envgap/schemas"
)

// The prompt variants of the paper's Section 3.1.
const (
	// VariantExplicit asks for source code, a manifest pinned to exact versions (direct
	// and transitive) and a README: the paper's primary instances.
	VariantExplicit = "explicit"
	// VariantImplicit gives no completeness specification.
	VariantImplicit = "implicit"
)

// Runtime is what the clean image of a language has, as the prompt names it, and the
// manifest file the prompt asks for.
type Runtime struct {
	Language string // as the prompt writes it
	Runtime  string
	Manifest string
}

// Runtimes of the evaluation images (images/*/Dockerfile: Ubuntu 22.04 with the toolchain
// alone, as the paper's).
var Runtimes = map[schemas.Ecosystem]Runtime{
	schemas.EcosystemPython:     {"Python", "Python 3.10 and pip", "requirements.txt"},
	schemas.EcosystemJavaScript: {"JavaScript (Node.js)", "Node.js 20 LTS and npm", "package.json"},
	schemas.EcosystemJava:       {"Java", "JDK 17 and Maven 3", "pom.xml"},
	schemas.EcosystemCPP:        {"C++", "G++, CMake, make, git and zlib1g-dev", "CMakeLists.txt"},
}

// Prompt fills the paper's Figure 3 template for a problem and language. The explicit
// variant is the figure as printed; the implicit variant leaves out the completeness
// specification (the "Include:" list). A problem without a description or requirements
// gets its title alone in their place.
func Prompt(p studylayout.Problem, l schemas.Ecosystem, variant string) (string, error) {
	rt, ok := Runtimes[l]
	if !ok {
		return "", fmt.Errorf("language %q: want python, javascript, java or cpp", l)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "TASK: %s\n", p.Title)
	if d := strings.TrimSpace(p.Description); d != "" {
		b.WriteString(d + "\n")
	}
	b.WriteString("FUNCTIONAL REQUIREMENTS:\n")
	for _, r := range p.Requirements {
		fmt.Fprintf(&b, "- %s\n", strings.TrimSpace(r))
	}
	fmt.Fprintf(&b, "Create a complete %s project for a clean Ubuntu 22.04 machine with only %s installed.", rt.Language, rt.Runtime)
	switch variant {
	case VariantExplicit:
		fmt.Fprintf(&b, " Include:\n- Source code\n- %s with all dependencies (direct and transitive) pinned to exact versions\n- README.md with setup instructions, dependency explanations, build steps, run commands, and expected output\n", rt.Manifest)
	case VariantImplicit:
		b.WriteString("\n")
	default:
		return "", fmt.Errorf("variant %q: want %s or %s", variant, VariantExplicit, VariantImplicit)
	}
	return b.String(), nil
}
