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

// ProductionBase is the base image of the published evaluation images.
const ProductionBase = "ubuntu:22.04"

// LocalBase is the Debian 12 base image setup-engine.sh creates on machines
// that cannot pull from a container registry.
const LocalBase = "localhost/envgap-base:bookworm"

// InputsLabel is the image label holding the digest of an image's build inputs.
const InputsLabel = "org.envgap.inputs"

// spec describes one evaluation image: its name, the ecosystem it serves and
// the embedded directory with its Dockerfile.
type spec struct {
	name      string
	ecosystem string
	dir       string
}

func specs() []spec {
	return []spec{
		{Python, "python", "python"},
		{JavaScript, "javascript", "javascript"},
		{Java, "java", "java"},
		{Cpp, "cpp", "cpp"},
	}
}

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
