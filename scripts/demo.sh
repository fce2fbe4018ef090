#!/usr/bin/env bash
# demo.sh: the README's first command (`make demo`). Runs the whole pipeline on the
# built-in demo corpus: imports the demo study (data/demo/study) and crawls the demo's
# GitHub stand-in (data/demo/github) into a store under out/demo, runs every later stage
# (verify, propose, admit, audit, scan, export), scores the gold and noop predictions on
# the exported tasks (eval, report), builds the website of the release and those results
# (site: out/demo/site), prints the funnel and says where the output is.
#
# It starts the container engine when none answers (images/setup-engine.sh, in the
# background while envgap is built) and builds the evaluation images that are missing or
# out of date (envgap-images, which is envgap build-images with its defaults, compiled
# first so that the images build while envgap compiles: an image whose inputs did not
# change is not rebuilt).
# The demo's Python packages come from the fixture index under data/demo/pypi, served on
# 127.0.0.1 for the run and given to verify as the registry proxy's PyPI upstream (PyPI
# itself is not needed); GitHub is a stand-in serving the small world of data/demo/github
# (envgap github-serve).
#
# Every stage prints its time when it ends, and the demo ends with a table of the stages:
# what each worked on (items) and its seconds. Long stages (verify, propose, eval, run)
# print a line per item as they go.
#
# Environment: ENVGAP_DEMO_OUT (default out/demo), ENVGAP_BIN (default bin/envgap, brought
# up to date; a binary named here is built only when missing), GO (default go), BUILDFLAGS
# (go build's flags; default the Makefile's),
# ENVGAP_DEMO_FRESH=1 to start from an empty store,
# ENVGAP_DEMO_SETUP=0 to skip the engine and image steps (DOCKER_HOST must then answer
# and the images exist).
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
OUT=${ENVGAP_DEMO_OUT:-out/demo}
STORE=$OUT/store
BIN=${ENVGAP_BIN:-bin/envgap}
# The Go build flags (the Makefile's BUILDFLAGS: no DWARF, less to compile and link).
read -r -a BUILD_FLAGS <<<"${BUILDFLAGS:--tags gore2regex -gcflags=all=-dwarf=false -ldflags=-w}"

note() { printf '\n== %s\n' "$*"; }

# Timing: every stage adds a row (stage, items, milliseconds) to the table printed at the end.
now_ms() { date +%s%3N; }
secs() { printf '%d.%d' $(($1 / 1000)) $((($1 % 1000) / 100)); }
DEMO_START=$(now_ms)
ROWS=()
# record LABEL ITEMS START_MS: adds the row of a stage that started at START_MS and says its time.
record() {
	local ms=$(($(now_ms) - $3))
	ROWS+=("$1"$'\t'"${2:--}"$'\t'"$ms")
	printf -- '-- %s: %s s\n' "$1" "$(secs "$ms")"
}
# store_count KEY: a count of the demo store's funnel (total_candidates, total_tasks).
store_count() {
	"$BIN" --store "$STORE" --json status 2>/dev/null | sed -n "s/^  \"$1\": \([0-9]*\).*/\1/p"
}

mkdir -p "$OUT/bin"
# The set-up is most of a fresh machine's demo; its parts overlap:
#  - the engine's set-up (OS packages, the local base image by debootstrap) needs nothing of
#    Go: it starts at once, in the background;
#  - envgap-images, the images' builder, compiles first (about a third of envgap's packages,
#    which envgap's build then finds compiled), then envgap and the fixture index server
#    compile in the background;
#  - when the engine answers, envgap-images builds the images while envgap still compiles.
# Each row of the table is that part's own time; the total is the wall time.
SETUP=${ENVGAP_DEMO_SETUP:-1}
engine_pid=""
build_pid=""
if [ "$SETUP" != 0 ]; then
	note "container engine (images/setup-engine.sh, in the background while building; log: $OUT/setup-engine.log)"
	rm -f "$OUT/setup-engine.end"
	engine_start=$(now_ms)
	(
		rc=0
		bash images/setup-engine.sh >"$OUT/setup-engine.log" 2>&1 || rc=$?
		now_ms >"$OUT/setup-engine.end"
		exit "$rc"
	) &
	engine_pid=$!
fi
# build_envgap: bin/envgap is brought up to date (go build does only what changed); a binary
# named by ENVGAP_BIN is built only when missing.
build_envgap() {
	if [ -z "${ENVGAP_BIN:-}" ] || [ ! -x "$BIN" ]; then
		"$GO" build "${BUILD_FLAGS[@]}" -o "$BIN" ./cmd/envgap
	fi
	"$GO" build "${BUILD_FLAGS[@]}" -o "$OUT/bin/pypiserve" ./data/demo/pypiserve
}
# setup_failed WHAT RC: a set-up part failed; stop the other parts and exit with its code.
setup_failed() {
	echo "$1 failed with exit code $2" >&2
	for p in $engine_pid $build_pid; do kill "$p" 2>/dev/null || true; done
	exit "$2"
}
if [ "$SETUP" = 0 ]; then
	t=$(now_ms)
	note "building $BIN and the fixture index server"
	build_envgap
	record "build (envgap, pypiserve)" 2 "$t"
else
	t=$(now_ms)
	note "building envgap-images (the images' builder); then envgap and the fixture index server, in the background (log: $OUT/build.log)"
	"$GO" build "${BUILD_FLAGS[@]}" -o "$OUT/bin/envgap-images" ./cmd/envgap-images || setup_failed "building envgap-images" $?
	record "build (envgap-images)" 1 "$t"
	rm -f "$OUT/build.end"
	build_start=$(now_ms)
	(
		rc=0
		build_envgap >"$OUT/build.log" 2>&1 || rc=$?
		now_ms >"$OUT/build.end"
		exit "$rc"
	) &
	build_pid=$!

	rc=0
	wait "$engine_pid" || rc=$?
	cat "$OUT/setup-engine.log"
	[ "$rc" -eq 0 ] || setup_failed "images/setup-engine.sh (log above: $OUT/setup-engine.log)" "$rc"
	# Its last line is the export DOCKER_HOST=... to use.
	eval "$(tail -n 1 "$OUT/setup-engine.log")"
	# The engine's own time (it ran beside the build): the row counts from its start to its end.
	record "engine (beside the build)" 1 $(($(now_ms) - ($(cat "$OUT/setup-engine.end") - engine_start)))
	t=$(now_ms)
	note "envgap-images: the images, beside envgap's build (only what is missing or changed; the common image first, then the four)"
	rc=0
	"$OUT/bin/envgap-images" || rc=$?
	[ "$rc" -eq 0 ] || setup_failed "building the images (envgap-images, the same as envgap build-images)" "$rc"
	record "images (beside the build)" 5 "$t"

	rc=0
	wait "$build_pid" || rc=$?
	build_pid=""
	cat "$OUT/build.log"
	[ "$rc" -eq 0 ] || setup_failed "building $BIN (log above: $OUT/build.log)" "$rc"
	record "build (envgap, pypiserve)" 2 $(($(now_ms) - ($(cat "$OUT/build.end") - build_start)))
fi

# run_stage NAME ARGS...: runs `envgap NAME ARGS...` on the demo store. Exit code 4 (some
# items failed, the rest recorded) is reported and the demo goes on; any other failure is
# reported, the later stages are skipped, the funnel is still printed, and the demo exits
# with that code.
failed=0
run_stage() {
	local name=$1
	shift
	local label="$name"
	case $name in
	crawl | hf | harbor | study | sandbox) label="$name $1" ;;
	eval) label="$name $2" ;; # eval --pred NAME
	esac
	if [ "$failed" -ne 0 ]; then
		note "envgap $name: skipped (an earlier stage failed)"
		ROWS+=("$label"$'\t'"-"$'\t'"skipped")
		return 0
	fi
	note "envgap $name $*"
	local rc=0 t before
	before=$(store_count total_candidates)
	t=$(now_ms)
	"$BIN" --store "$STORE" "$name" "$@" || rc=$?
	case $rc in
	0) ;;
	4) echo "(envgap $name: some items failed and are recorded as such; going on)" ;;
	*) echo "envgap $name failed with exit code $rc" >&2; failed=$rc ;;
	esac
	record "$label" "$(stage_items "$label" "$before" "$@")" "$t"
}

# stage_items LABEL CANDIDATES-BEFORE ARGS...: what a stage worked on, for the table: the
# new candidates a crawl stored (0 when a kept store had them all), the candidates verify
# and propose looked at, the tasks the later stages took, the result folders report read,
# the study's projects.
stage_items() {
	local label=$1 before=$2
	shift 2
	case $label in
	crawl*) echo $(($(store_count total_candidates) - before)) ;;
	verify | propose) store_count total_candidates ;;
	report) echo "$(($# - 2))" ;;
	"study report") find "$2" -name meta.json | wc -l | tr -d ' ' ;;
	"study run") find "$OUT/study" -name meta.json | wc -l | tr -d ' ' ;;
	"sandbox check") echo "-" ;;
	*) store_count total_tasks ;;
	esac
}

# The store is kept between runs: a stage whose inputs did not change finds its work in the
# store (verify's verdicts and proposals, the crawls' trees and fixes, the study's D2/D3)
# and does not do it again. ENVGAP_DEMO_FRESH=1 starts from an empty store.
if [ "${ENVGAP_DEMO_FRESH:-0}" = 1 ]; then
	note "fresh store in $STORE"
	rm -rf "$STORE"
else
	note "store $STORE (kept from the last run if any; ENVGAP_DEMO_FRESH=1 empties it)"
fi
mkdir -p "$STORE"

# Lanes: stages that need nothing of each other run side by side, each lane in the
# background with its lines marked [NAME]; a lane's rows join the table, and its exit code
# the demo's, when it is waited for.
declare -A lane_pids=()
# start_lane NAME FUNCTION: runs FUNCTION (which calls run_stage) as the lane NAME.
start_lane() {
	local name=$1 fn=$2
	rm -f "$OUT/$name-lane.rows" "$OUT/$name-lane.rc" "$OUT/$name-lane.pid"
	(
		echo "$BASHPID" >"$OUT/$name-lane.pid"
		ROWS=()
		trap 'exit 143' TERM
		rc=0
		"$fn" || rc=$?
		if [ "${#ROWS[@]}" -gt 0 ]; then printf '%s\n' "${ROWS[@]}" >"$OUT/$name-lane.rows"; fi
		echo "$rc" >"$OUT/$name-lane.rc"
	) 2>&1 | sed -u "s/^/[$name] /" &
	lane_pids[$name]=$!
}
# wait_lane NAME: waits for the lane, adds its rows to the table and, when it failed, makes
# its exit code the demo's (the later stages are then skipped).
wait_lane() {
	local name=$1 pid=${lane_pids[$1]:-}
	[ -n "$pid" ] || return 0
	wait "$pid" || true
	unset "lane_pids[$name]"
	local rc row
	rc=$(cat "$OUT/$name-lane.rc" 2>/dev/null || echo 1)
	if [ -s "$OUT/$name-lane.rows" ]; then
		while IFS= read -r row; do ROWS+=("$row"); done <"$OUT/$name-lane.rows"
	fi
	if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
		echo "the $name lane failed with exit code $rc (its lines are marked [$name] above)" >&2
		failed=$rc
	fi
}
# stop_lanes: on exit, the lanes still running are stopped.
stop_lanes() {
	local name
	for name in "${!lane_pids[@]}"; do
		kill "$(cat "$OUT/$name-lane.pid" 2>/dev/null)" 2>/dev/null || true
		wait "${lane_pids[$name]}" 2>/dev/null || true
	done
}

pypi_pid=""
model_pid=""
github_pid=""
cleanup() {
	if [ -n "$pypi_pid" ]; then kill "$pypi_pid" 2>/dev/null || true; fi
	if [ -n "$github_pid" ]; then kill "$github_pid" 2>/dev/null || true; fi
	if [ -n "$model_pid" ]; then kill "$model_pid" 2>/dev/null || true; fi
	stop_lanes
}
trap cleanup EXIT

# The wall first: every probe from inside real sandbox containers (exit 5 on a leak). It
# runs in a lane beside the crawls, which start no container; nothing that does (the study
# lane, verify and after) starts before it has passed.
sandbox_lane() {
	run_stage sandbox check
	return "$failed"
}
start_lane sandbox sandbox_lane

# The fixture PyPI index, for the registry proxy that verify starts.
"$OUT/bin/pypiserve" --addr 127.0.0.1:0 >"$OUT/pypiserve.url" 2>"$OUT/pypiserve.log" &
pypi_pid=$!
for _ in $(seq 50); do
	[ -s "$OUT/pypiserve.url" ] && break
	sleep 0.1
done
PYPI_URL=$(head -n 1 "$OUT/pypiserve.url")
[ -n "$PYPI_URL" ] || { echo "the fixture index did not start: $(cat "$OUT/pypiserve.log")" >&2; exit 1; }
echo "fixture PyPI index: $PYPI_URL"

# The study lane: the demo study's report and the automated study need nothing of the
# crawl-to-site lane (their own projects, the same fixture index), so they run beside it
# from verify on (once the sandbox check has passed), as the lane [study]; their rows join
# the table when both lanes are done. On 2 cores the lanes overlap the one's container steps with the other's
# waiting (measured: docs/development.md).
study_lane() {
	model_pid=""
	trap 'if [ -n "$model_pid" ]; then kill "$model_pid" 2>/dev/null || true; fi' EXIT
	# The paper's metrics of the demo study (Table 8): tables, JSON and figures. D2 and D3 of
	# each project made to work come from running its final state through the core, memoised in
	# the store (a second report runs nothing).
	run_stage study report data/demo/study --out "$OUT/study-report" --pypi-upstream "$PYPI_URL" --jobs 2
	# The protocol automated: envgap's model agent (the real loop, each round in a box of the
	# language's clean image) on a scripted stand-in model (data/demo/agents/study-model.json:
	# NOT a model; it plays a recorded conversation per problem and language over the OpenAI
	# wire format) gets the paper's prompt for two problems in two languages; the projects run
	# in the clean images, errors go back verbatim in the same conversation and it repairs (the
	# Merkle verifier, once in each language). The folder it leaves is a study folder like
	# data/demo/study, imported (into a store of its own, so the demo's release is unchanged)
	# and reported. (data/demo/agents/study-agent.sh is the same as a command agent.)
	rm -rf "$OUT/study" "$OUT/study-store"
	rm -f "$OUT/study-model.url"
	"$BIN" model-serve --script data/demo/agents/study-model.json --url-file "$OUT/study-model.url" >"$OUT/study-model.log" 2>&1 &
	model_pid=$!
	for _ in $(seq 50); do
		[ -s "$OUT/study-model.url" ] && break
		sleep 0.1
	done
	# Two trials (Table 5's repeats) and, in Python, a second agent folder on the same script
	# (the cross-agent table and Figure 9), so that the report shows every table and figure.
	run_stage study run --agent openai --base-url "$(head -n 1 "$OUT/study-model.url")" --model scripted-study \
		--languages python,javascript --only 13,48 --max-repairs 3 --trials 2 --jobs 2 --out "$OUT/study" --pypi-upstream "$PYPI_URL"
	run_stage study run --agent openai --base-url "$(head -n 1 "$OUT/study-model.url")" --model scripted-study \
		--agent-name scripted-study-b --languages python --only 13,48 --max-repairs 3 --out "$OUT/study" --pypi-upstream "$PYPI_URL"
	kill "$model_pid" 2>/dev/null || true
	model_pid=""
	if [ "$failed" -eq 0 ]; then
		note "envgap crawl lite --study $OUT/study (a store of its own)"
		"$BIN" --store "$OUT/study-store" crawl lite --study "$OUT/study" || failed=$?
	fi
	run_stage study report "$OUT/study" --out "$OUT/study-run-report" --no-engine
	return "$failed"
}

run_stage crawl lite --study data/demo/study

# The GitHub crawls: a stand-in for GitHub (envgap github-serve) serves the small world of
# data/demo/github: two repositories whose histories are built as bare git repositories and
# served over git's smart HTTP protocol, with GitHub's REST and GraphQL answers about their
# issues and pull requests. crawl prs and crawl issues talk to it through go-github and
# go-git as they would to GitHub: an environment-only merged pull request linked to its
# issue (envgap-demo/invoices#4, closing #3) becomes a Repaired candidate, an issue that
# reports an environment failure (envgap-demo/grades#7) a Reported one, and the decoys (a
# pull request that changes source, one that closes no issue, one never merged, issues
# without an error) are rejected with their reasons. prs runs first, so the issue its
# pull request closes is not taken a second time as a Reported candidate.
note "GitHub stand-in: data/demo/github (envgap github-serve)"
rm -f "$OUT/github.url"
"$BIN" github-serve --world data/demo/github --git-root "$OUT/github" --url-file "$OUT/github.url" >"$OUT/github.log" 2>&1 &
github_pid=$!
for _ in $(seq 100); do
	[ -s "$OUT/github.url" ] && break
	sleep 0.1
done
GITHUB_URL=$(head -n 1 "$OUT/github.url" 2>/dev/null || true)
[ -n "$GITHUB_URL" ] || { echo "the GitHub stand-in did not start: $(cat "$OUT/github.log")" >&2; exit 1; }
cat "$OUT/github.log"
GIT_TMPL="$GITHUB_URL/{owner}/{name}.git"
run_stage crawl prs --crawl-id prs-demo --repos data/demo/github/repos.txt --api-url "$GITHUB_URL/" --git-url-template "$GIT_TMPL"
run_stage crawl issues --crawl-id issues-demo --repos data/demo/github/repos.txt --api-url "$GITHUB_URL/" --git-url-template "$GIT_TMPL"

# The wall must have held before any container of the later stages starts.
wait_lane sandbox
if [ "$failed" -eq 0 ]; then
	start_lane study study_lane
fi

# verify: the Lite projects and the Repaired candidate are checked with their fixes; the
# Reported issue has no fix, so its reproduced failure is recorded as a reproduction
# (not_checked, waiting for a fix).
run_stage verify --pypi-upstream "$PYPI_URL" --git-url-template "$GIT_TMPL"
# propose: an agent writes the Reported issue's reference fix from the issue, the source and
# the failing log (here data/demo/agents/propose-fix.sh, a scripted stand-in for an AI
# assistant); verify then checks the proposal like any fix.
run_stage propose --agent "bash $PWD/data/demo/agents/propose-fix.sh" --git-url-template "$GIT_TMPL" --pypi-upstream "$PYPI_URL"
run_stage verify --pypi-upstream "$PYPI_URL" --git-url-template "$GIT_TMPL"
run_stage admit
run_stage scan
# The audit asks PyPI's JSON API (the fixture index serves it too) and the npm registry
# the npm client is configured with; advisories come from a local OSV file (the OSV API is
# not reachable here), holding one made-up demo advisory.
run_stage audit --pypi "${PYPI_URL%/simple/}" --osv data/demo/osv.json
# The audit may change categories and security flags: admit again to update the rows.
run_stage admit
# Every text that is exported is scanned for credentials; export refuses otherwise.
run_stage scan
run_stage export --out "$OUT/hub" --harbor --git-url-template "$GIT_TMPL"
# The tasks in Harbor's format (harbor/tasks.parquet): the rows are the release's, and each
# task directory is sound by Harbor's task model (envgap harbor check without --no-trials
# also runs the smoke trials on the engine; docs/harbor.md).
run_stage hf check --release "$OUT/hub/harbor/tasks.parquet"
run_stage harbor check --no-trials "$OUT/hub/harbor/tasks.parquet"
# The harness zip in the folder carries envgap's source and its copy of the tasks; check
# that copy is the release's (the card's envgap hf check).
run_stage hf check --release "$OUT/hub/harness/envgap-source.zip"

# Score the built-in predictions on the exported tasks, as a user of the benchmark would
# (the Hub folder alone): gold (each task's reference fix) must resolve every repair task;
# noop (no change) resolves only controls, and the demo's tasks are all repairs (four Lite
# projects, the crawled Repaired pull request and the Reported issue), so noop resolves none.
if [ -d "$OUT/hub" ]; then
	rm -rf "$OUT/results"
	for pred in gold noop; do
		run_stage eval --pred "$pred" --jobs 2 --split full --tasks "$OUT/hub" --out "$OUT/results/$pred" \
			--git-url-template "$GIT_TMPL" --pypi-upstream "$PYPI_URL" --pypi "${PYPI_URL%/simple/}" --osv data/demo/osv.json
	done
	# envgap's own agent, the real loop in a box per attempt, on a scripted stand-in model
	# (data/demo/agents/scripted-model.json: NOT a model; it plays a recorded conversation
	# per task over the OpenAI wire format: reads the manifest, runs the reproduction, writes
	# a fix for two of the tasks, gives up on the others).
	rm -f "$OUT/model.url"
	"$BIN" model-serve --script data/demo/agents/scripted-model.json --url-file "$OUT/model.url" >"$OUT/model.log" 2>&1 &
	model_pid=$!
	for _ in $(seq 50); do
		[ -s "$OUT/model.url" ] && break
		sleep 0.1
	done
	run_stage run --agent openai --base-url "$(head -n 1 "$OUT/model.url")" --model scripted-demo --max-attempts 2 --jobs 2 \
		--split full --tasks "$OUT/hub" --out "$OUT/results/scripted" \
		--git-url-template "$GIT_TMPL" --pypi-upstream "$PYPI_URL" --pypi "${PYPI_URL%/simple/}" --osv data/demo/osv.json
	kill "$model_pid" 2>/dev/null || true
	model_pid=""
	run_stage report "$OUT/results/gold" "$OUT/results/noop" "$OUT/results/scripted" --chart "$OUT/results/resolved.png"
	# The website of the release and its result folders: static HTML under out/demo/site
	# that opens from file:// (docs/site.md).
	site_results=()
	for r in gold noop scripted; do
		if [ -f "$OUT/results/$r/summary.json" ]; then site_results+=(--results "$OUT/results/$r"); fi
	done
	run_stage site --hub "$OUT/hub" "${site_results[@]}" --out "$OUT/site"
fi

# The study lane (started above, beside the crawl-to-site lane): wait for it, then add its
# rows to the table.
wait_lane study

note "funnel"
"$BIN" --store "$STORE" status

note "output"
echo "store:          $STORE   (envgap --store $STORE status | cat REF)"
if [ -d "$OUT/hub" ]; then
	echo "Hub folder:     $OUT/hub"
fi
if [ -d "$OUT/results" ]; then
	echo "eval results:   $OUT/results/{gold,noop,scripted}   (envgap report $OUT/results/gold $OUT/results/noop $OUT/results/scripted)"
fi
if [ -f "$OUT/site/index.html" ]; then
	echo "website:        $OUT/site/index.html   (static; open it in a browser)"
fi
echo "demo study:     data/demo/study   (layout: docs/lite.md)"
if [ -f "$OUT/study-report/report.md" ]; then
	echo "study report:   $OUT/study-report/report.md   (figures beside it; docs/study.md)"
fi
if [ -f "$OUT/study-run-report/report.md" ]; then
	echo "automated study: $OUT/study   (study run, model agent on a scripted stand-in model; its report in $OUT/study-run-report)"
fi

note "where the time went"
printf '%-28s %6s %9s\n' stage items seconds
for row in "${ROWS[@]}"; do
	IFS=$'\t' read -r label items ms <<<"$row"
	if [ "$ms" = skipped ]; then
		printf '%-28s %6s %9s\n' "$label" "$items" skipped
	else
		printf '%-28s %6s %9s\n' "$label" "$items" "$(secs "$ms")"
	fi
done
printf '%-28s %6s %9s\n' total "" "$(secs $(($(now_ms) - DEMO_START)))"
exit "$failed"
