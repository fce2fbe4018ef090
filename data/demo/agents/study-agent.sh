#!/usr/bin/env bash
# study-agent.sh: the demo's scripted stand-in for a coding agent under `envgap study run`
# (docs/study.md). It follows the study's agent protocol as a real agent would: it reads the
# prompt ($ENVGAP_STUDY_PROMPT) at Gen (round 0) and the verbatim error of the last round
# ($ENVGAP_STUDY_FEEDBACK) at each Repair round, writes the project in its working directory
# (the workspace) and says how to run it ($ENVGAP_RUN_COMMAND_FILE). Its answers are fixed:
# problem 13 (HMAC Integrity Checker) runs as written in Python and JavaScript; problem 48
# (Merkle Tree Verifier) forgets a dependency in Python (tabulate, added at round 1 when the
# error says the module is missing) and writes a package.json with a trailing comma in
# JavaScript (rewritten at round 1 when npm says it cannot parse it).
set -euo pipefail
lang=${ENVGAP_STUDY_LANGUAGE:?run by envgap study run}
problem=${ENVGAP_STUDY_PROBLEM:?}
round=${ENVGAP_STUDY_ROUND:?}
feedback=$(cat "$ENVGAP_STUDY_FEEDBACK")
grep -q '^TASK: ' "$ENVGAP_STUDY_PROMPT" || { echo "no task in the prompt" >&2; exit 1; }

case "$lang/$problem/$round" in
python/13/0)
	cat > hmac_check.py <<'PY'
import hashlib, hmac, sys

def tag(data: bytes, key: bytes) -> str:
    return hmac.new(key, data, hashlib.sha256).hexdigest()

if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        ok = tag(b"what do ya want for nothing?", b"Jefe") == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        print("OK" if ok else "FAILED")
        sys.exit(0 if ok else 1)
    cmd, path, key = sys.argv[1:4]
    t = tag(open(path, "rb").read(), key.encode())
    if cmd == "sign":
        print(t)
    else:
        ok = hmac.compare_digest(t, sys.argv[4])
        print("OK" if ok else "FAILED")
        sys.exit(0 if ok else 1)
PY
	: > requirements.txt
	printf '# HMAC Integrity Checker\n\nNo dependencies: hmac and hashlib are in the standard library.\n\n    python3 hmac_check.py --self-test\n' > README.md
	echo "python3 hmac_check.py --self-test" > "$ENVGAP_RUN_COMMAND_FILE"
	;;
javascript/13/0)
	cat > index.js <<'JS'
const crypto = require("crypto");
const tag = (data, key) => crypto.createHmac("sha256", key).update(data).digest("hex");
const ok = tag("what do ya want for nothing?", "Jefe") === "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843";
console.log(ok ? "OK" : "FAILED");
process.exit(ok ? 0 : 1);
JS
	printf '{\n  "name": "hmac-check",\n  "version": "1.0.0",\n  "main": "index.js",\n  "dependencies": {}\n}\n' > package.json
	printf '# HMAC Integrity Checker\n\nNo dependencies: crypto is built into Node.js.\n\n    node index.js\n' > README.md
	echo "node index.js" > "$ENVGAP_RUN_COMMAND_FILE"
	;;
python/48/0)
	cat > merkle.py <<'PY'
import hashlib, sys
from tabulate import tabulate

def h(b): return hashlib.sha256(b).digest()

def levels(leaves):
    out = [leaves]
    while len(out[-1]) > 1:
        cur = out[-1] + ([out[-1][-1]] if len(out[-1]) % 2 else [])
        out.append([h(cur[i] + cur[i + 1]) for i in range(0, len(cur), 2)])
    return out

def proof(lv, i):
    p = []
    for level in lv[:-1]:
        level = level + ([level[-1]] if len(level) % 2 else [])
        p.append((level[i ^ 1], i % 2 == 0))
        i //= 2
    return p

def verify(leaf, p, root):
    x = leaf
    for sib, right in p:
        x = h(x + sib) if right else h(sib + x)
    return x == root

if __name__ == "__main__":
    files = sys.argv[2:]
    leaves = [h(open(f, "rb").read()) for f in files]
    lv = levels(leaves)
    root = lv[-1][0]
    rows = [(f, verify(leaves[i], proof(lv, i), root)) for i, f in enumerate(files)]
    print(tabulate(rows, headers=["leaf", "verified"]))
    print("root", root.hex())
    sys.exit(0 if all(ok for _, ok in rows) else 1)
PY
	mkdir -p data
	for x in a b c; do echo "block $x" > data/$x.txt; done
	: > requirements.txt
	printf '# Merkle Tree Verifier\n\n    python3 merkle.py selftest data/a.txt data/b.txt data/c.txt\n' > README.md
	echo "python3 merkle.py selftest data/a.txt data/b.txt data/c.txt" > "$ENVGAP_RUN_COMMAND_FILE"
	;;
python/48/*)
	if grep -q "No module named 'tabulate'" <<<"$feedback"; then
		echo "tabulate==0.9.0" >> requirements.txt
	fi
	;;
javascript/48/0)
	cat > index.js <<'JS'
const { createHash } = require("crypto");
const h = (s) => createHash("sha256").update(s).digest("hex");
const leaves = ["a", "b", "c"].map(h);
let level = leaves;
while (level.length > 1) {
  if (level.length % 2) level = [...level, level[level.length - 1]];
  const next = [];
  for (let i = 0; i < level.length; i += 2) next.push(h(level[i] + level[i + 1]));
  level = next;
}
console.log("root", level[0]);
JS
	printf '{\n  "name": "merkle",\n  "version": "1.0.0",\n  "main": "index.js",\n  "dependencies": {},\n}\n' > package.json
	printf '# Merkle Tree Verifier\n\n    node index.js\n' > README.md
	echo "node index.js" > "$ENVGAP_RUN_COMMAND_FILE"
	;;
javascript/48/*)
	if grep -q "EJSONPARSE" <<<"$feedback"; then
		printf '{\n  "name": "merkle",\n  "version": "1.0.0",\n  "main": "index.js",\n  "dependencies": {}\n}\n' > package.json
	fi
	;;
*/*/0)
	echo "this scripted agent knows problems 13 and 48 in Python and JavaScript only" >&2
	exit 1
	;;
esac
printf '{"round": %s, "language": "%s", "problem": %s}\n' "$round" "$lang" "$problem" >> "$ENVGAP_TRAJECTORY_FILE"
