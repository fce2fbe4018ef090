package images

import (
	"fmt"
	"slices"
)

// Image names as the dataset card spells them (schemas.Ecosystem.Image; a test checks
// that the two agree). schemas.ImageRef gives the engine's reference of each.
const (
	Python     = "envgap-python-eval"
	JavaScript = "envgap-javascript-eval"
	Java       = "envgap-java-eval"
	Cpp        = "envgap-cpp-eval"
)

// Common is the intermediate image the four are built FROM (common/Dockerfile): the
// package lists and what every image holds, made once. Runs do not use it.
const Common = "envgap-eval-common"

// ProductionBase is the base image of the published evaluation images.
const ProductionBase = "ubuntu:22.04"

// LocalBase is the Debian 12 base image setup-engine.sh creates on machines
// that cannot pull from a container registry.
const LocalBase = "localhost/envgap-base:bookworm"

// InputsLabel is the image label holding the digest of an image's build inputs.
const InputsLabel = "org.envgap.inputs"

// spec describes one evaluation image: its name, the ecosystem it serves, the
// embedded directory with its Dockerfile, and its rank in the parallel builds
// (lower starts first: the longest builds start first, so that with two at once
// the short ones fill in behind them).
type spec struct {
	name      string
	ecosystem string
	dir       string
	rank      int
}

func specs() []spec {
	return []spec{
		{Python, "python", "python", 2},
		{JavaScript, "javascript", "javascript", 3},
		{Java, "java", "java", 0},
		{Cpp, "cpp", "cpp", 1},
	}
}

// commonSpec is the intermediate image's spec.
var commonSpec = spec{Common, "", "common", -1}

// Names returns the four image names in build order.
func Names() []string {
	var out []string
	for _, s := range specs() {
		out = append(out, s.name)
	}
	return out
}

// selectSpecs returns the specs named in only (all when only is empty).
func selectSpecs(only []string) ([]spec, error) {
	all := specs()
	if len(only) == 0 {
		return all, nil
	}
	var out []spec
	for _, s := range all {
		if slices.Contains(only, s.name) || slices.Contains(only, s.ecosystem) {
			out = append(out, s)
		}
	}
	for _, o := range only {
		found := false
		for _, s := range all {
			if o == s.name || o == s.ecosystem {
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("unknown image %q: want one of %v or an ecosystem (python, javascript, java, cpp)", o, Names())
		}
	}
	return out, nil
}
