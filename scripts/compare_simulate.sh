#!/usr/bin/env bash
# Runs every bundled scenario (scenarios/ and tests/scenarios/) through `simulate --format json` on
# two gpumeter binaries (a refactoring's before and after), at steps of 1 s and 15 s, and reports
# every scenario whose JSON differs: the figures, the unknowns and the bounds must be the same.
# Usage: scripts/compare_simulate.sh OLD_GPUMETER NEW_GPUMETER [SCENARIO_ROOT]
# A scenario the old binary cannot read (a field added since) is listed as skipped. Figures are
# compared to 1e-9 relative (DCGM-fed scenarios vary that much run to run), the rest exactly.
set -euo pipefail
old=${1:?usage: compare_simulate.sh OLD NEW [ROOT]} new=${2:?usage: compare_simulate.sh OLD NEW [ROOT]}
root=${3:-$(dirname "$0")/..}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
same=0 differ=0 skipped=0
while IFS= read -r scen; do
  for step in 1s 15s; do
    name=$(echo "${scen#$root/}" | tr '/' '_')-$step
    # simulate exits 1 when a score misses its target: the exit codes are compared too.
    rc_old=0 rc_new=0
    "$old" simulate --scenario "$scen" --step "$step" --format json >"$work/old.json" 2>/dev/null || rc_old=$?
    if [ ! -s "$work/old.json" ]; then
      echo "skipped: $scen at $step (the old binary refused it)"
      skipped=$((skipped + 1))
      continue
    fi
    "$new" simulate --scenario "$scen" --step "$step" --format json >"$work/new.json" 2>/dev/null || rc_new=$?
    if [ "$rc_old" != "$rc_new" ]; then
      echo "DIFFERS: $scen at $step: exit $rc_old before, $rc_new after"
      differ=$((differ + 1))
      continue
    fi
    if python3 - "$work/old.json" "$work/new.json" <<'PY'
import json, sys
# Structure, names, unknowns (null) and flags exactly; numbers to 1e-9 relative: a DCGM-fed
# scenario differs from itself run to run at ~1e-10 (same binary, same seed).
worst = [0.0]
def same(a, b):
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None or isinstance(a, str):
        return a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        scale = max(abs(a), abs(b))
        rel = abs(a - b) / scale if scale else 0.0
        worst[0] = max(worst[0], rel)
        return rel <= 1e-9
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return False
a, b = (json.load(open(p)) for p in sys.argv[1:3])
ok = same(a, b)
if worst[0] > 0:
    print("  (largest relative difference %.1e)" % worst[0])
sys.exit(0 if ok else 1)
PY
    then
      same=$((same + 1))
    else
      echo "DIFFERS: $scen at $step"
      diff <(python3 -m json.tool --sort-keys "$work/old.json") <(python3 -m json.tool --sort-keys "$work/new.json") | head -20 || true
      differ=$((differ + 1))
    fi
  done
done < <(find "$root/scenarios" "$root/tests/scenarios" -name '*.yaml' | sort)
echo "compare_simulate: $same identical, $differ differ, $skipped skipped"
[ "$differ" -eq 0 ]
