#!/usr/bin/env bash
# ci-prepare.sh: what CI runs before the tests that need containers.
#
#  1. images/setup-engine.sh: an engine that answers (Podman's Docker API on
#     machines without a Docker daemon) and the local base image;
#  2. the four evaluation images, through `envgap build-images` when the CLI
#     has that command, else through images/cmd/buildimages (same options).
#
# Images whose inputs label already matches are not rebuilt, engine layers are
# cached by the engine, and the npm tarballs of the local JavaScript image are
# kept in ${XDG_CACHE_HOME:-~/.cache}/envgap/images; so a second run on the same
# machine takes seconds. On a fresh machine: about 1 min setup + 3 min builds.
#
# Everything is logged to stderr; the last line on stdout is the
# `export DOCKER_HOST=...` line, for:
#   eval "$(bash images/ci-prepare.sh | tail -n 1)"
# Extra arguments go to the build command (e.g. --only python, --force).
set -euo pipefail
cd "$(dirname "$0")/.."

t0=$(date +%s)
export_line=$(bash images/setup-engine.sh | tail -n 1)
case "$export_line" in
export\ DOCKER_HOST=*) eval "$export_line" ;;
*) echo "ci-prepare: setup-engine.sh did not print an export line" >&2; exit 1 ;;
esac
t1=$(date +%s)
echo "ci-prepare: engine ready at $DOCKER_HOST in $((t1 - t0))s" >&2

# The CLI has the command once a cobra command is declared with that name.
if grep -rqsE --include='*.go' 'Use:[[:space:]]*"build-images' cmd/envgap/; then
	go run ./cmd/envgap build-images "$@" >&2
else
	go run ./images/cmd/buildimages "$@" >&2
fi
t2=$(date +%s)
echo "ci-prepare: images ready in $((t2 - t1))s" >&2
echo "$export_line"
