#!/usr/bin/env bash
# The accuracy harness end to end: on every bundled scenario, attribution over the fake NVML
# meets the targets (docs/attribution.md), and the naive device labelling visibly does not.
# Where the driver cannot say (no GPM on R470 for MIG), the harness must report a miss.
set -euo pipefail
bin=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

for p in r580 r535_43; do
  for s in exclusive timeslice-h100 mps-a100 mig-h200 node-8gpu; do
    "$bin" simulate --scenario "$s" --driver-profile "$p" >"$work/out" 2>&1 || { cat "$work/out"; fail "$s on $p: targets not met"; }
    grep -q '^targets: met$' "$work/out" || fail "$s on $p: no verdict"
    grep -q '^conservation: worst' "$work/out" || fail "$s on $p: no conservation check"
    echo "ok: $s on $p"
  done
done

# Other noise draws and no noise at all: the targets do not hang on one lucky seed.
for seed in 2 3; do
  "$bin" simulate --scenario node-8gpu --seed "$seed" >"$work/out" 2>&1 || { cat "$work/out"; fail "node-8gpu seed $seed: targets not met"; }
  grep -q 'noise default (seed '"$seed"')' "$work/out" || fail "seed $seed not reported"
done
"$bin" simulate --scenario node-8gpu --noise none >"$work/out" 2>&1 || { cat "$work/out"; fail "node-8gpu without noise"; }
# MIG energy is attributed (not n/a) and the idle power is fitted from the node's own readings.
grep -q 'idle power fitted 70.0 W' "$work/out" || { cat "$work/out"; fail "idle power not fitted"; }
awk '$1=="mig"{ if ($9 == "n/a") exit 1 }' "$work/out" || fail "MIG energy not scored"
echo "ok: other seeds, no noise, MIG energy"

# Time-slicing: naive labelling is far off while gpumeter is within 2 pp.
"$bin" simulate --scenario timeslice-h100 >"$work/ts"
naive_mean=$(awk '$1=="time-slicing"{print $(NF-3)}' "$work/ts")
ours_mean=$(awk '$1=="time-slicing"{print $3}' "$work/ts")
awk -v n="$naive_mean" -v o="$ours_mean" 'BEGIN{exit !(n > 20 && o < 2)}' || { cat "$work/ts"; fail "naive $naive_mean vs ours $ours_mean"; }
echo "ok: time-slicing naive ${naive_mean} pp vs gpumeter ${ours_mean} pp"

# A miss is reported: MIG activity is unknown without GPM (R470), so the harness says NOT met.
rc=0
"$bin" simulate --scenario mig-h200 --driver-profile r470 >"$work/mig" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || { cat "$work/mig"; fail "mig on r470: expected exit 1, got $rc"; }
grep -q '^targets: NOT met$' "$work/mig" || fail "mig on r470: no miss reported"
echo "ok: reports a miss where the driver cannot tell"

# Growth that never stops, a growth reaching its cap between samples and a fault hiding the
# processes for 4 s are not attribution errors: the verdict is "met", the fault's seconds are
# reported as unknown, and the memory is within what sampling cannot see.
growth=$(dirname "$0")/../scenarios/harness/growth-fault.yaml
for seed in 1 2 3; do
  "$bin" simulate --scenario "$growth" --seed "$seed" >"$work/gf" 2>&1 || { cat "$work/gf"; fail "growth-fault seed $seed: targets not met"; }
  grep -q '^memory: every container within' "$work/gf" || { cat "$work/gf"; fail "growth-fault: memory bound"; }
done
"$bin" simulate --scenario "$growth" --format json >"$work/gf.json" 2>"$work/gf.err" || { cat "$work/gf.err"; fail "growth-fault json: not met"; }
jq -e '.verdict == "met" and .memory_within_bound
       and ([.containers[] | select(.container == "ml/growing-0/trainer")][0].unknown_seconds >= 4)
       and ([.containers[] | select(.container == "ml/capped-0/server")][0].unknown_seconds >= 4)' \
  "$work/gf.json" >/dev/null || { cat "$work/gf.json"; fail "growth-fault json: fault seconds not reported as unknown"; }
echo "ok: growth and a fault window are not errors"

# A real error still fails: the r470 MIG run above (compute unknown outside any fault) and, on
# hand-made ledgers with a wrong split, short memory or an estimate losing activity,
# src/app/tests/simulate_score_test.cpp.

# JSON: per mode and per container, parsed; the table's verdict and the JSON's agree.
"$bin" simulate --scenario timeslice-h100 --format json >"$work/ts.json" 2>"$work/ts.err" || { cat "$work/ts.err"; fail "json run failed"; }
jq -e '.verdict == "met"
       and (.modes | map(.mode) | index("time-slicing")) != null
       and (.modes[] | select(.mode == "time-slicing") | .compute_error_pp.mean < 2 and .naive_compute_error_pp.mean > 20 and .estimate == false)
       and (.containers | length) == 3
       and all(.containers[]; (.container | test("^[^/]+/[^/]+/[^/]+$")) and .compute_error_pp < 2
               and (.memory_error | type) == "number" and (.energy_error | type) == "number"
               and (.unknown_seconds | type) == "number" and (.estimate | type) == "boolean")' \
  "$work/ts.json" >/dev/null || { cat "$work/ts.json"; fail "json scores"; }
echo "ok: --format json"

# Bad input is refused with the loader's message.
rc=0
"$bin" simulate --scenario nope >"$work/bad" 2>&1 || rc=$?
[ "$rc" -eq 2 ] && grep -q "no bundled scenario named 'nope'" "$work/bad" || fail "bad scenario not refused"
rc=0
"$bin" simulate --scenario exclusive --from 100 --to 100.5 >"$work/bad" 2>&1 || rc=$?
[ "$rc" -eq 2 ] && grep -q "must span more than one --step" "$work/bad" || { cat "$work/bad"; fail "short run not refused"; }
# A library that is not the gpumeter fake cannot be stepped: refused, naming the library.
notfake=$(ldconfig -p | awk '/libm\.so\.6 .*x86-64/ && !found {print $NF; found = 1}')  # reads all: an early exit would SIGPIPE ldconfig and fail under pipefail
if [ -n "$notfake" ]; then
  rc=0
  "$bin" simulate --scenario exclusive --nvml-library "$notfake" >"$work/bad" 2>&1 || rc=$?
  [ "$rc" -eq 2 ] && grep -qF "$notfake: not the gpumeter fake NVML" "$work/bad" || { cat "$work/bad"; fail "non-fake library not refused"; }
fi
for bad in "--noise loud" "--seed x" "--step 0" "--format yaml"; do
  rc=0
  # shellcheck disable=SC2086
  "$bin" simulate --scenario exclusive $bad >"$work/bad" 2>&1 || rc=$?
  [ "$rc" -ne 0 ] && grep -qF -- "${bad%% *}" "$work/bad" || { cat "$work/bad"; fail "'$bad' not refused with the flag named"; }
done
echo "ok: refuses bad input"

# A 15 s step outlasts the driver's per-process sample buffer (the fake keeps 64 periods of 1/6 s,
# 10.7 s): the lost seconds are counted (gpumeter_process_samples_uncovered_seconds_total) and the
# covered part's shares stand for them, flagged as estimates; compute stays within 2 pp mean. At a
# 1 s step nothing is lost (issue 18).
for seed in 1 2; do
  "$bin" simulate --scenario timeslice-h100 --step 15 --seed "$seed" --format json >"$work/step15.json" 2>"$work/step15.log" ||
    { cat "$work/step15.log"; fail "step 15, seed $seed: targets not met"; }
  jq -e '.samples_uncovered_seconds > 100' "$work/step15.json" >/dev/null || fail "step 15, seed $seed: lost samples not counted"
  jq -e '[.containers[] | .compute_error_pp] | add / length <= 2' "$work/step15.json" >/dev/null ||
    fail "step 15, seed $seed: compute error above 2 pp mean"
  jq -e '[.containers[] | .estimate] | all' "$work/step15.json" >/dev/null || fail "step 15, seed $seed: extrapolated shares not flagged"
done
"$bin" simulate --scenario timeslice-h100 --step 1 --format json >"$work/step1.json" 2>/dev/null || fail "step 1"
jq -e '.samples_uncovered_seconds == 0 and ([.containers[] | .estimate] | any | not)' "$work/step1.json" >/dev/null ||
  fail "step 1: samples counted as lost"
echo "ok: lost samples at a 15 s step counted and extrapolated (compute within 2 pp); none at 1 s"
echo "simulate end-to-end: all passed"
