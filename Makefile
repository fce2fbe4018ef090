# envgap: build, test, bench, lint, demo. Every target works on a fresh machine of this
# kind: `make test` and `make demo` start a container engine first when none answers.
SHELL := /bin/bash
GO ?= go
GOFLAGS_TAGS ?= -tags gore2regex
PKGS ?= ./...
# setup-engine.sh prints "export DOCKER_HOST=..." as its last line.
WITH_ENGINE = eval "$$(bash images/setup-engine.sh | tail -n 1)" &&

.PHONY: build test test-short bench lint demo engine slurm browser images images-build clean-store

build:
	$(GO) build $(GOFLAGS_TAGS) -o bin/envgap ./cmd/envgap

engine:
	bash images/setup-engine.sh

# A single-node Slurm controller and node from the OS packages (slurm-wlm, munge), for
# --slurm runs and their tests; does nothing when Slurm already answers.
slurm:
	bash images/setup-slurm.sh

# A headless Chromium from the OS packages at /usr/bin/chromium, for the website's browser
# tests (harness/site); does nothing when it already runs.
browser:
	bash images/setup-browser.sh

# The set-up's parts overlap: envgap-images (the images' builder, envgap build-images with
# its defaults, from a third of envgap's packages) compiles first; then envgap compiles
# while the engine is set up (OS packages, debootstrap) and, once it answers, the images
# build (the common image, then the four at once).
images:
	$(GO) build $(GOFLAGS_TAGS) -o bin/envgap-images ./cmd/envgap-images
	$(MAKE) --no-print-directory -j2 build images-build

images-build: engine
	$(WITH_ENGINE) ./bin/envgap-images

# The README's test command. Starts the engine and a single-node Slurm and builds the
# images when needed (the three set-ups side by side; their OS package installs take turns), then runs every test with the race detector; tests that need the
# engine or Slurm fail (not skip) when it is missing. While the set-up waits on downloads
# and the disk, the test binaries are compiled with the race detector in the background
# (niced, into Go's build cache, running nothing: -exec true), so that the test run finds
# them compiled; a failure there is left to the test run to report.
test:
	@nice -n 10 $(GO) test $(GOFLAGS_TAGS) -race -count=1 -run '^$$' -exec true $(PKGS) >/dev/null 2>&1 & warm=$$!; \
	$(MAKE) --no-print-directory -j3 images slurm browser || { kill $$warm 2>/dev/null; exit 1; }; \
	wait $$warm || true
	$(WITH_ENGINE) ENVGAP_REQUIRE_ENGINE=1 $(GO) test $(GOFLAGS_TAGS) -race -count=1 -timeout 45m $(PKGS)

# Tests that need no engine (engine tests skip).
test-short:
	$(GO) test $(GOFLAGS_TAGS) -race -count=1 -short $(PKGS)

bench: images slurm browser
	$(WITH_ENGINE) $(GO) test $(GOFLAGS_TAGS) -run '^$$' -bench . -benchmem -benchtime 1x -timeout 60m $(PKGS)

lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt: files above need formatting"; exit 1; }
	$(GO) vet $(GOFLAGS_TAGS) $(PKGS)

# The README's first command: the main job on the built-in demo corpus. The script builds
# envgap, starts the engine (in the background meanwhile) and builds the images itself, so
# that its table of stages and seconds counts them too.
demo:
	GO="$(GO)" bash scripts/demo.sh
