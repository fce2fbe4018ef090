#!/usr/bin/env bash
# propose-fix.sh: the demo's scripted stand-in for an AI coding assistant, for
# `envgap propose --agent 'bash data/demo/agents/propose-fix.sh'` (docs/agents.md,
# "Reference fixes by an agent"). It follows the agent protocol like a real agent would: it reads the
# reproduction's failing log, finds the Python module the project could not import, and
# declares it in requirements.txt at an exact version from its own small table. It changes
# nothing else, and writes what it did as its trajectory. A real agent would read the
# task file ($ENVGAP_TASK_FILE), the source and the log, and could run "$ENVGAP_REPRO".
set -euo pipefail
log=${ENVGAP_FAILURE_LOG:?run by envgap propose}
module=$(sed -n "s/.*No module named '\([A-Za-z0-9_.-]*\)'.*/\1/p" "$log" | head -n 1)
case "$module" in
tabulate) pin="tabulate==0.9.0" ;;
"") echo "no missing module in the failing log" >&2; exit 1 ;;
*) echo "no known release of $module" >&2; exit 1 ;;
esac
[ -f requirements.txt ] || : > requirements.txt
[ -z "$(tail -c 1 requirements.txt)" ] || echo >> requirements.txt
echo "$pin" >> requirements.txt
printf '[{"step": 1, "read": "%s", "found": "No module named %s"}, {"step": 2, "edit": "requirements.txt", "added": "%s"}]\n' \
	"$log" "$module" "$pin" > "$ENVGAP_TRAJECTORY_FILE"
