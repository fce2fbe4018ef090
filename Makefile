# envgap: build, test, bench, lint, demo. Every target works on a fresh machine of this
# kind: `make test` and `make demo` start a container engine first when none answers.
SHELL := /bin/bash
GO ?= go
GOFLAGS_TAGS ?= -tags gore2regex
# Binaries and test binaries without DWARF (debugger) information: stack traces and panics
# are unchanged, and compiling and linking take less CPU (envgap from an empty cache: 150 ->
# 115 CPU s). For a debugger: make build BUILDFLAGS='-tags gore2regex'.
BUILDFLAGS ?= $(GOFLAGS_TAGS) -gcflags=all=-dwarf=false -ldflags=-w
TESTFLAGS ?= $(GOFLAGS_TAGS) -race -gcflags=all=-dwarf=false -ldflags=-w
PKGS ?= ./...
# setup-engine.sh prints "export DOCKER_HOST=..." as its last line.
WITH_ENGINE = eval "$$(bash images/setup-engine.sh | tail -n 1)" &&

.PHONY: build envgap-images test test-short bench lint demo engine slurm browser images images-build clean-store

build:
	$(GO) build $(BUILDFLAGS) -o bin/envgap ./cmd/envgap

# The images' builder (envgap build-images with its defaults), from a third of envgap's
# packages.
envgap-images:
	$(GO) build $(BUILDFLAGS) -o bin/envgap-images ./cmd/envgap-images

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
images: envgap-images
	$(MAKE) --no-print-directory -j2 -o envgap-images build images-build

# The engine and the images, without bin/envgap (what the tests need): the engine's set-up
# and envgap-images' compile side by side, then the images.
images-build: engine envgap-images
	$(WITH_ENGINE) ./bin/envgap-images

# The README's test command. Starts the engine and a single-node Slurm and builds the
# images when needed (the set-ups side by side; their OS package installs take turns; no
# bin/envgap, which no test runs), then runs every test with the race detector; tests that
# need the engine or Slurm fail (not skip) when it is missing. While the set-up waits on downloads
# and the disk, the test binaries are compiled with the race detector in the background
# (niced, into Go's build cache, running nothing: -exec true), so that the test run finds
# them compiled; a failure there is left to the test run to report.
test:
	@nice -n 10 $(GO) test $(TESTFLAGS) -count=1 -run '^$$' -exec true $(PKGS) >/dev/null 2>&1 & warm=$$!; \
	$(MAKE) --no-print-directory -j4 images-build slurm browser || { kill $$warm 2>/dev/null; exit 1; }; \
	wait $$warm || true
	$(WITH_ENGINE) ENVGAP_REQUIRE_ENGINE=1 $(GO) test $(TESTFLAGS) -count=1 -timeout 45m $(PKGS)

# Tests that need no engine (engine tests skip).
test-short:
	$(GO) test $(TESTFLAGS) -count=1 -short $(PKGS)

bench: images-build slurm browser
	$(WITH_ENGINE) $(GO) test $(GOFLAGS_TAGS) -run '^$$' -bench . -benchmem -benchtime 1x -timeout 60m $(PKGS)

lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt: files above need formatting"; exit 1; }
	$(GO) vet $(GOFLAGS_TAGS) $(PKGS)

# The README's first command: the main job on the built-in demo corpus. The script builds
# envgap, starts the engine (in the background meanwhile) and builds the images itself, so
# that its table of stages and seconds counts them too.
demo:
	GO="$(GO)" BUILDFLAGS="$(BUILDFLAGS)" bash scripts/demo.sh
