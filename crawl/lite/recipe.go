package lite

import (
	"github.com/envgap/envgap/lib/studylayout"
	"path"

	"github.com/envgap/envgap/schemas"
)

// runSetup runs a project's setup.sh when there is one: the fix's setup.sh installs the
// system packages the repair installed.
const runSetup = "if [ -f " + studylayout.SetupScriptPath + " ]; then bash " + studylayout.SetupScriptPath + "; fi"

// Commands are the evaluation commands the import gives a Lite candidate.
type Commands struct {
	Bootstrap, Resolve, Repro, Run string
}

// DefaultCommands returns the commands of a Lite project: bootstrap prints the toolchain's
// versions; resolve runs setup.sh when present, then installs or builds with the
// ecosystem's tool on the main manifest (resolveOverride, the study's own command,
// replaces the tool step); run is the traced command; repro is resolve then run, because
// a Lite project may fail while building or only when it runs.
func DefaultCommands(eco schemas.Ecosystem, manifest, resolveOverride, run string) Commands {
	c := Commands{Run: run}
	switch eco {
	case schemas.EcosystemPython:
		c.Bootstrap = "python3 --version && python3 -m pip --version"
	case schemas.EcosystemJavaScript:
		c.Bootstrap = "node --version && npm --version"
	case schemas.EcosystemJava:
		c.Bootstrap = "java -version && mvn -v"
	case schemas.EcosystemCPP:
		c.Bootstrap = "cmake --version && g++ --version"
	}
	tool := resolveOverride
	if tool == "" {
		tool = defaultTool(eco, manifest)
	}
	c.Resolve = runSetup + " && " + tool
	if run != "" {
		c.Repro = c.Resolve + " && " + run
	}
	return c
}

func defaultTool(eco schemas.Ecosystem, manifest string) string {
	dir := path.Dir(manifest)
	cd := ""
	if manifest != "" && dir != "." {
		cd = "cd " + dir + " && "
	}
	base := path.Base(manifest)
	switch eco {
	case schemas.EcosystemPython:
		switch {
		case manifest == "":
			return "true"
		case base == "requirements.txt":
			return "python3 -m pip install -r " + manifest
		case base == "Pipfile":
			return "python3 -m pip install pipenv && " + cd + "pipenv install --system"
		}
		return cd + "python3 -m pip install ."
	case schemas.EcosystemJavaScript:
		return cd + "npm install"
	case schemas.EcosystemJava:
		if base == "build.gradle" || base == "build.gradle.kts" {
			return cd + "gradle build -x test"
		}
		return cd + "mvn -B package -DskipTests"
	case schemas.EcosystemCPP:
		switch base {
		case "CMakeLists.txt", "":
			return cd + "cmake -S . -B build && cmake --build build -j 2"
		case "meson.build":
			return cd + "meson setup build && meson compile -C build"
		}
		return cd + "make"
	}
	return "true"
}
