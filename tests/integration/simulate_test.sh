#!/usr/bin/env bash
# The accuracy harness end to end: on every bundled scenario, attribution over the fake NVML
# meets the targets (docs/attribution.md), and the naive device labelling visibly does not.
# Where the driver cannot say (no GPM on R470 for MIG), the harness must report a miss.
# Usage: simulate_test.sh GPUMETER [sanitizer]
# `sanitizer` (CI's ASan/UBSan pass): every check once, on one driver profile and one noise draw
# where the full run repeats them on others; the repeats exercise no other code path, and the
# full run has already judged them in the first pass.
set -euo pipefail
bin=$1
profiles="r580 r535_43" seeds="1 2 3" more_seeds="2 3" step_seeds="1 2"
case "${2:-full}" in
  full) ;;
  sanitizer) profiles="r580" seeds="1" more_seeds="" step_seeds="1" ;;
  *) echo "simulate_test.sh: mode '$2' is neither full nor sanitizer" >&2; exit 2 ;;
esac
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

for p in $profiles; do
  for s in exclusive timeslice-h100 mps-a100 mig-h200 node-8gpu; do
    "$bin" simulate --scenario "$s" --driver-profile "$p" >"$work/out" 2>&1 || { cat "$work/out"; fail "$s on $p: targets not met"; }
    grep -q '^targets: met$' "$work/out" || fail "$s on $p: no verdict"
    grep -q '^conservation: worst' "$work/out" || fail "$s on $p: no conservation check"
    echo "ok: $s on $p"
  done
done

# Other noise draws and no noise at all: the targets do not hang on one lucky seed.
for seed in $more_seeds; do
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

# A100 MIG (no GPM): each instance's activity comes from the simulated node's dcgm-exporter (30 s
# means) through the agent's DCGM source. Containers alone on their instance meet the targets
# (compute <= 2 pp mean, <= 5 pp worst, energy <= 5 % mean) on three noise draws; the tenants of
# the time-sliced 1g.10gb are an estimate (an even split), scored on rows of their own.
for seed in $seeds; do
  "$bin" simulate --scenario mig-a100 --seed "$seed" --format json >"$work/a100.json" 2>"$work/a100.log" ||
    { cat "$work/a100.log"; jq '.misses' "$work/a100.json"; fail "mig-a100 seed $seed: targets not met"; }
  # Alone on their instance (the trainer's 3g.40gb, the idle holder's 2g.20gb): measured rows.
  jq -e '[.containers[] | select(.mode == "mig (dcgm)")] as $a
         | ($a | length) >= 2
         and ([$a[].computeErrorPp] | add / length) <= 2 and ([$a[].computeErrorPp] | max) <= 5
         and ([$a[] | select(.container == "ml/train-resnet-0/trainer") | .energyError] | .[0]) <= 0.05' \
    "$work/a100.json" >/dev/null || { jq '.containers' "$work/a100.json"; fail "mig-a100 seed $seed: containers alone miss the targets"; }
  # The two notebooks time-sliced on the 1g.10gb: an estimated split, on rows of their own.
  [ "$(jq '[.containers[] | select(.mode == "mig (dcgm)/estimate" and .estimate)] | length' "$work/a100.json")" -eq 2 ] ||
    { jq '.containers' "$work/a100.json"; fail "mig-a100: the two notebooks should be scored as estimates"; }
  jq -e '.migIdlePower.source == "fitted"' "$work/a100.json" >/dev/null || { jq '.migIdlePower' "$work/a100.json"; fail "mig-a100 seed $seed: idle power not fitted"; }
  # Memory traffic from DCGM's DRAM_ACTIVE, held with the activity: measured, within 2 pp.
  jq -e '.modes[] | select(.mode == "mig (dcgm)") | .memoryTrafficUnknownSeconds == 0 and .memoryTrafficErrorPp.worst <= 2' \
    "$work/a100.json" >/dev/null || { jq '.modes' "$work/a100.json"; fail "mig-a100 seed $seed: memory traffic from DCGM"; }
done
echo "ok: A100 MIG with DCGM activity"
# At a 15 s step the idle power is still fitted from DCGM windows (the energy counter interpolated
# at the collections' times), and the targets are met.
"$bin" simulate --scenario mig-a100 --step 15 --format json >"$work/a100.json" 2>"$work/a100.log" ||
  { cat "$work/a100.log"; jq '.misses' "$work/a100.json"; fail "mig-a100 at 15 s: targets not met"; }
jq -e '.migIdlePower.source == "fitted" and (.migIdlePower.watts - 60 | fabs) < 3' "$work/a100.json" >/dev/null ||
  { jq '.migIdlePower' "$work/a100.json"; fail "mig-a100 at 15 s: idle power not fitted within 3 W"; }
echo "ok: A100 MIG at a 15 s step: idle power fitted ($(jq '.migIdlePower.watts*10|round/10' "$work/a100.json") W)"

# Runs a harness scenario at steps 1, 5 and 15 s on each seed (the sanitizer pass: step KEEP only)
# and fails unless the jq CHECK holds on its JSON ($step is the step); prints the jq SUMMARY.
matrix() {
  local name=$1 keep=$2 check=$3 summary=$4 file
  file=$(dirname "$0")/../scenarios/harness/$name.yaml
  for step in 1 5 15; do
    for seed in $seeds; do
      [ "$step" = "$keep" ] || [ "$seeds" != 1 ] || continue
      "$bin" simulate --scenario "$file" --step "$step" --seed "$seed" --format json >"$work/m.json" 2>"$work/m.err" || true
      jq -e --argjson step "$step" "$check" "$work/m.json" >/dev/null ||
        { jq '.modes, .misses, .memoryWithinBound' "$work/m.json"; fail "$name step $step seed $seed"; }
      echo "ok: $name step $step seed $seed: $(jq -r "$summary" "$work/m.json")"
    done
  done
}

# DCGM-fed intervals are held until their collection (issue 31 cases 1 and 2): an A30 whose worker
# stops at 137.3 s with its process alive, a trainer starting just after an idle collection, a
# third tenant changing between collections. Compute meets the targets at steps 1, 5 and 15 s on
# every seed (the matrix: first pass only); a pass across a collection's end is split there, so a
# collection is booked whole at any step. Energy inside a collection is an estimate (issue 31
# item 6): each container's follows an activity profile from the board's power samples and
# carries a bound, which must hold the truth in >= 95 % of container-collections (it does in all)
# and whose mean width is printed; the estimate itself is within 5 % for every container (spread
# evenly it was 4.5-7.5 % off at 15 s, unflagged). Idle power is fitted at every step and seed
# (case 3: the counter at each collection's time is placed by the power samples between passes;
# interpolated linearly, seed 1 at 15 s had none and was 13-33 % off).
dcgm_check='.verdict == "met" and (.modes[] | select(.mode == "mig (dcgm)") | .containers == 3
    and .computeUnknownSeconds == 0 and .computeErrorPp.mean <= 2 and .computeErrorPp.worst <= 5
    and .energyBoundIntervals > 0 and .energyWithinBoundFraction >= 0.95)
   and all(.containers[]; .energyEstimate and .energyError <= 0.05)
   and .migIdlePower.source == "fitted" and (.migIdlePower.watts - 31 | fabs) < 2'
dcgm_summary='.modes[0] | "compute \(.computeErrorPp.mean*100|round/100) pp, energy within its bound \(.energyWithinBoundFraction*100|round) %, bound +/-\(.energyBoundMeanWidthPct|round) %"'
matrix dcgm-a30-windows 1 "$dcgm_check" "$dcgm_summary"
# The same with a tenant bursting for 13-35 s at a time, shorter than a collection: spread evenly
# its energy was 26-33 % off, unflagged; now 2.5-4.7 %, an estimate within its bound.
matrix dcgm-a30-bursts 1 "$dcgm_check" "$dcgm_summary"

# A PID taken over by another tenant's process inside one interval (issue 31 case 6): each of the
# two is booked its own memory and its own SM samples (split at the new one's /proc start time).
# Before, the old process's memory went to the new owner: memory outside what sampling can see at
# 5 and 15 s (up to 26 % off at 15 s). The L40S has no GPM: where the samples cover the window,
# their sum is its busy time, not utilization.gpu's last period (which at 15 s gave up to 5.9 s
# of an interval to nobody, or scaled the tenants down by a fifth: 1.3 pp, energy 5.5 % off).
matrix pid-reuse-timeslice 15 \
  '.verdict == "met" and .memoryWithinBound == true and .conservationWorst < 1e-9
   and ([.modes[].containers] | add) == 3
   and all(.modes[]; .computeUnknownSeconds == 0 and .computeErrorPp.mean <= 2
                     and .computeErrorPp.worst <= 5)
   and all(.containers[] | select(.estimate | not); .energyError <= 0.05)' \
  '[.modes[] | "\(.mode): compute \(.computeErrorPp.mean*100|round/100) pp, memory \(.memoryError.mean*1000|round/10) %"] | join("; ")'

# CI jobs whose GPU processes live 5.3-11.8 s, on a time-sliced H100 beside a steady server: at a
# 15 s step most start and exit between two passes, in no process list. The drains between passes
# (every 5 s) hand the PIDs their samples name to the /proc process source, which names the pod
# there and then: every container within max(10 %, 1 s) of its true compute, nothing unknown.
# (With --drain-interval 0 the same jobs read 21-41 s of 53-59 s and the server 15 s too much.)
matrix between-passes-h100 15 \
  '.conservationWorst < 1e-9 and ([.containers[]] | length) == 4
   and all(.containers[]; .computeUnknownSeconds == 0
           and ((.computeSeconds.measured - .computeSeconds.true) | fabs)
               <= ([0.1 * .computeSeconds.true, 1] | max))' \
  '[.containers[] | (.computeSeconds.measured - .computeSeconds.true) * 100 | round / 100] | "compute off by \(.) s"'

# MPS without per-process utilization (an L4), with the control daemon's server listed as real
# nodes list it (a host process without CUDA_MPS_ACTIVE_THREAD_PERCENTAGE). The server is
# infrastructure: the busy time goes by the clients' thread percentages, each client within
# max(10 %, 1 s) of its truth and its bound holding. (Before, the server switched the split off and
# took a third of the busy time: each client read 60 s of 72 and 108.)
matrix mps-server-l4 15 \
  '.verdict == "met" and ([.containers[]] | length) == 2
   and all(.containers[]; ((.computeSeconds.measured - .computeSeconds.true) | fabs)
                          <= ([0.1 * .computeSeconds.true, 1] | max)
                          and (.withinBoundFraction == null or .withinBoundFraction >= 0.95))' \
  '[.containers[] | "\(.container) \(.computeSeconds.measured * 10 | round / 10) s of \(.computeSeconds.true * 10 | round / 10)"] | join(", ")'

# The first interval of a GPU and of a process (issue 31 case 5): two time-sliced H100s, a 2-GPU
# trainer busy from the first sample, an evaluator from 53.3 s. The first busy window of a GPU idle
# since the agent's first read reached back to that read, and the time before the buffer's oldest
# sample counted as idle while the buffer's span was unknown: 3.1-3.8 pp mean, 6.0 worst at 15 s
# (and 1.4 pp at 5 s), none of it flagged. Now per container, every row: compute <= 1 pp mean and
# 2 pp worst at every step and seed; what the buffer lost is an estimate, flagged.
matrix first-interval-h100 15 \
  '.verdict == "met" and ([.containers[]] | length) == 3
   and ([.containers[].computeErrorPp] | add / length) <= 1
   and ([.containers[].computeErrorPp] | max) <= 2
   and ([.containers[] | select(.estimate | not) | .energyError] | all(. <= 0.05))' \
  '[.containers[].computeErrorPp] | "compute \(add / length * 100 | round / 100) pp mean, \(max * 100 | round / 100) worst"'

# Bursts of 1.6-3.9 s on H100s with GPM (issue 31 case 7), alone and time-sliced beside a steady
# tenant. Compute: every container within 2 pp mean / 5 pp worst at every step and seed, estimates
# within their bound. At 15 s a burst can fall out of the driver's 10.7 s buffer of per-process
# samples before the read unless the buffers are drained between passes (the agent's default,
# every 5 s); undrained, the busy time the buffer lost is the unit's (GPM) minus what the samples
# show. Energy (issue 31 item 6): each row's time at the board power drawn in it, from the
# driver's power samples, every container within 5 % at 1, 5 and 15 s (13-68 % off when energy
# followed time at the interval's mean power; 9-18 % at 15 s undrained, when the 10.7 s buffer
# held power for part of the interval only).
matrix bursts-power-h100 15 \
  '.conservationWorst < 1e-9 and ([.containers[]] | length) == 3
   and ([.containers[].computeErrorPp] | add / length) <= 2
   and ([.containers[].computeErrorPp] | max) <= 5
   and all(.containers[]; .computeUnknownSeconds == 0)
   and all(.containers[] | select(.estimate and .withinBoundFraction != null); .withinBoundFraction >= 0.95)
   and ([.containers[].energyError] | max) <= 0.05' \
  '[.containers[].computeErrorPp] as $c | [.containers[].energyError] as $e
   | "compute \($c | add / length * 100 | round / 100) pp mean, \($c | max * 100 | round / 100) worst; energy worst \($e | max * 1000 | round / 10) %"'

# The same at 15 s undrained (--drain-interval 0, an agent run so): the buffer loses the start of
# each interval, the busy time it lost is the unit's (GPM) minus what the samples show, split by
# the covered rates as an estimate that must hold the truth within its bound (the lost-samples
# path, SplitWithLostSamples). Energy is not judged there: power samples cover part of the
# interval only.
for seed in $step_seeds; do
  "$bin" simulate --scenario "$(dirname "$0")/../scenarios/harness/bursts-power-h100.yaml" --step 15 \
    --drain-interval 0 --seed "$seed" --format json >"$work/m.json" 2>"$work/m.err" || true
  jq -e '.samplesUncoveredSeconds > 0 and ([.containers[] | select(.estimate)] | length) > 0
         and ([.containers[].computeErrorPp] | max) <= 5
         and all(.containers[] | select(.estimate); .withinBoundFraction >= 0.95)' "$work/m.json" >/dev/null ||
    { jq '.containers' "$work/m.json"; fail "bursts-power-h100 step 15 undrained seed $seed"; }
  echo "ok: bursts-power-h100 step 15 undrained seed $seed: $(jq -r '.samplesUncoveredSeconds | "\(.) s uncovered"' "$work/m.json"), estimates within their bound"
done

# A MIG instance time-sliced by two notebooks (issue 31 case 4; an H100, GPM per instance, nothing
# per process): the split is an estimate, judged interval by interval against its bound, which
# must hold the truth in >= 95 % of them; its mean width is printed. So is the energy that follows
# it (its bound: the compute's at the unit's most per busy second). The trainer alone on its
# instance is exact. A saturated instance read as unknown before (GPM's 100.00000000000001 %).
matrix mig-h100-shared-notebooks 15 \
  '.verdict == "met" and .conservationWorst < 1e-9
   and (.modes[] | select(.mode == "mig") | .containers == 1 and .computeErrorPp.worst <= 2)
   and (.modes[] | select(.mode == "mig/estimate") | .containers == 2 and .computeUnknownSeconds == 0
        and .withinBoundFraction >= 0.95 and .boundMeanWidthPp > 0 and .boundIntervals > 0
        and .energyBoundIntervals > 0 and .energyWithinBoundFraction >= 0.95)
   and all(.containers[] | select(.estimate); .withinBoundFraction >= 0.95 and .computeBoundPp > 0)' \
  '.modes[] | select(.mode == "mig/estimate") | "estimate \(.computeErrorPp.mean*100|round/100) pp, within its bound \(.withinBoundFraction*100|round) %, bound mean +/-\(.boundMeanWidthPp*10|round/10) pp; energy within its bound \(.energyWithinBoundFraction*100|round) %, +/-\(.energyBoundMeanWidthPct|round) %"'

# Memory traffic, a second measure of use (issue 31 item 8), scored like compute: a memory-bound
# server beside a compute-bound trainer on a time-sliced H100 (per-process memUtil), a decoder
# alone on a 3g.40gb and two notebooks time-slicing a 4g.40gb (GPM DRAM_BW_UTIL per instance), an
# embedding job on an H100 without per-process samples (GPM per GPU); changes at non-round times.
# All but the notebooks (measured, or at 15 s stood for over lost samples): traffic <= 2 pp mean,
# 5 pp worst at every step and seed; the notebooks' even split within its bound in >= 95 % of
# intervals; nothing unknown.
matrix bandwidth-h100 15 \
  '.verdict == "met" and .conservationWorst < 1e-9 and ([.containers[]] | length) == 6
   and ([.containers[] | select(.mode != "mig/estimate") | .memoryTrafficErrorPp] as $e
        | ($e | length) == 4 and ($e | add / length) <= 2 and ($e | max) <= 5)
   and all(.modes[]; .memoryTrafficUnknownSeconds == 0)
   and (.modes[] | select(.mode == "mig/estimate") | .memoryTrafficWithinBoundFraction >= 0.95
        and .memoryTrafficBoundMeanWidthPp > 0)' \
  '[.containers[] | select(.mode != "mig/estimate") | .memoryTrafficErrorPp] as $e | "traffic \($e | add / length * 100 | round / 100) pp mean, \($e | max * 100 | round / 100) worst; " + (.modes[] | select(.mode == "mig/estimate") | "notebooks within their bound \(.memoryTrafficWithinBoundFraction * 100 | round) %, +/-\(.memoryTrafficBoundMeanWidthPp * 10 | round / 10) pp")'

# The same A100 without dcgm-exporter: MIG activity is unknown, so the busy containers' compute is
# unknown seconds (the only misses), not an error against 0; the idle power still belongs to the
# instances by slices, and the idle holder (a 2g.20gb, 2 of 7 slices) gets its share: within 5 %
# with the idle power configured, within 25 % when it comes from the board's power while nothing
# ran (a variant whose processes start at 30 s).
idle_holder_energy() {  # json -> "measured expected"
  jq -r '(.migIdlePower.watts // 0) as $w | (.toS - .fromS) as $t
         | [.containers[] | select(.container == "infra/idle-reserve-0/pause") | .energyJoules.measuredActivityKnownOrNot][0] as $m
         | "\($m) \(60 * 2 / 7 * $t) \($w)"' "$1"
}
rc=0
"$bin" simulate --scenario mig-a100 --no-dcgm-exporter --idle-power "NVIDIA A100-SXM4-80GB=60" --format json >"$work/blind.json" 2>/dev/null || rc=$?
[ "$rc" -eq 1 ] || fail "mig-a100 without dcgm: expected NOT met (compute unknown), got $rc"
jq -e '.misses | length == 1 and (.[0] | test("compute unknown"))' "$work/blind.json" >/dev/null || { jq '.misses' "$work/blind.json"; fail "mig-a100 without dcgm: a miss other than unknown compute"; }
jq -e '[.containers[] | select(.container == "ml/train-resnet-0/trainer") | .computeUnknownSeconds][0] > 500' "$work/blind.json" >/dev/null || fail "the trainer's compute is not unknown"
# Its memory traffic is unknown too (reported, not a miss), where DCGM's DRAM_ACTIVE measured it.
jq -e '[.containers[] | select(.container == "ml/train-resnet-0/trainer") | .memoryTrafficUnknownSeconds][0] > 500' "$work/blind.json" >/dev/null || fail "the trainer's memory traffic is not unknown without DCGM"
read -r measured expected watts <<<"$(idle_holder_energy "$work/blind.json")"
awk -v m="$measured" -v e="$expected" 'BEGIN { d = (m - e) / e; if (d < 0) d = -d; exit !(d <= 0.05) }' || fail "idle holder, idle power configured: $measured J, expected $expected J"
echo "ok: without dcgm, configured idle power: idle holder $measured J of $expected J; busy compute unknown"
rc=0
"$bin" simulate --scenario "$(dirname "$0")/../scenarios/harness/mig-a100-blind-late.yaml" --format json >"$work/late.json" 2>/dev/null || rc=$?
[ "$rc" -eq 1 ] || fail "blind-late: expected NOT met (compute unknown), got $rc"
jq -e '.migIdlePower.source | test("seen idle")' "$work/late.json" >/dev/null || { jq '.migIdlePower' "$work/late.json"; fail "blind-late: idle power not from the board"; }
read -r measured expected watts <<<"$(idle_holder_energy "$work/late.json")"
awk -v m="$measured" -v e="$expected" 'BEGIN { d = (m - e) / e; if (d < 0) d = -d; exit !(d <= 0.25) }' || fail "idle holder, idle power seen: $measured J, expected $expected J"
echo "ok: without dcgm, idle power from the board ($watts W): idle holder $measured J of $expected J"

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
for seed in $seeds; do
  "$bin" simulate --scenario "$growth" --seed "$seed" >"$work/gf" 2>&1 || { cat "$work/gf"; fail "growth-fault seed $seed: targets not met"; }
  grep -q '^memory: every container within' "$work/gf" || { cat "$work/gf"; fail "growth-fault: memory bound"; }
done
"$bin" simulate --scenario "$growth" --format json >"$work/gf.json" 2>"$work/gf.err" || { cat "$work/gf.err"; fail "growth-fault json: not met"; }
jq -e '.verdict == "met" and .memoryWithinBound
       and ([.containers[] | select(.container == "ml/growing-0/trainer")][0].unknownSeconds >= 4)
       and ([.containers[] | select(.container == "ml/capped-0/server")][0].unknownSeconds >= 4)' \
  "$work/gf.json" >/dev/null || { cat "$work/gf.json"; fail "growth-fault json: fault seconds not reported as unknown"; }
echo "ok: growth and a fault window are not errors"

# A fault on per-process utilization hides nothing from the score (the ledger says what it lost):
# the agent must flag the split it could not see as an estimate, not book every tenant as idle.
putil=$(dirname "$0")/../scenarios/harness/process-util-fault.yaml
"$bin" simulate --scenario "$putil" --format json >"$work/pu.json" 2>"$work/pu.err" || { cat "$work/pu.err"; fail "process-util-fault: not met"; }
jq -e '.verdict == "met" and ([.containers[] | select(.estimate)] | length) == 2' "$work/pu.json" >/dev/null \
  || { cat "$work/pu.json"; fail "process-util-fault: the split the agent could not see is not flagged"; }
echo "ok: a failed per-process utilization read is an estimate, not idle"

# A real error still fails: the r470 MIG run above (compute unknown outside any fault) and, on
# hand-made ledgers with a wrong split, short memory or an estimate losing activity,
# src/sim/score/tests/simulate_score_test.cpp.

# JSON: per mode and per container, parsed; the table's verdict and the JSON's agree.
"$bin" simulate --scenario timeslice-h100 --format json >"$work/ts.json" 2>"$work/ts.err" || { cat "$work/ts.err"; fail "json run failed"; }
jq -e '.verdict == "met"
       and (.modes | map(.mode) | index("time-slicing")) != null
       and (.modes[] | select(.mode == "time-slicing") | .computeErrorPp.mean < 2 and .naiveComputeErrorPp.mean > 20 and .estimate == false)
       and (.containers | length) == 3
       and all(.containers[]; (.container | test("^[^/]+/[^/]+/[^/]+$")) and .computeErrorPp < 2
               and (.memoryError | type) == "number" and (.energyError | type) == "number"
               and (.unknownSeconds | type) == "number" and (.estimate | type) == "boolean")' \
  "$work/ts.json" >/dev/null || { cat "$work/ts.json"; fail "json scores"; }
echo "ok: --format json"

# Bad input is refused with the loader's message.
rc=0
"$bin" simulate --scenario nope >"$work/bad" 2>&1 || rc=$?
[ "$rc" -eq 2 ] && grep -q "no bundled scenario named 'nope'" "$work/bad" || fail "bad scenario not refused"
rc=0
"$bin" simulate --scenario exclusive --from 100 --to 100.5 >"$work/bad" 2>&1 || rc=$?
[ "$rc" -eq 2 ] && grep -q "must span more than one --step" "$work/bad" || { cat "$work/bad"; fail "short run not refused"; }
# Scenario times are durations like every other flag's: with a unit, or bare seconds.
rc=0
"$bin" simulate --scenario exclusive --from 100s --to 100.5 >"$work/bad" 2>&1 || rc=$?
[ "$rc" -eq 2 ] && grep -q "must span more than one --step" "$work/bad" || { cat "$work/bad"; fail "--from 100s is not second 100"; }
rc=0
"$bin" simulate --scenario exclusive --step 2m >"$work/bad" 2>&1 || rc=$?
[ "$rc" -eq 2 ] && grep -qF -- "--step: '2m': not within [0.2s, 1m]" "$work/bad" || { cat "$work/bad"; fail "--step 2m not refused by name"; }
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
# 10.7 s). Undrained (--drain-interval 0): the lost seconds are counted
# (gpumeter_process_samples_uncovered_seconds_total) and the covered part's shares stand for them,
# flagged as estimates; compute stays within 2 pp mean. At a 1 s step nothing is lost (issue 18).
# Drained every 5 s between passes (the agent's default), nothing is lost at 15 s either, and
# nothing is an estimate.
for seed in $step_seeds; do
  "$bin" simulate --scenario timeslice-h100 --step 15 --seed "$seed" --format json >"$work/drained.json" 2>"$work/drained.log" ||
    { cat "$work/drained.log"; fail "step 15 drained, seed $seed: targets not met"; }
  jq -e '.drainIntervalS == 5 and .samplesUncoveredSeconds == 0 and ([.containers[] | .estimate] | any | not)
         and ([.containers[] | .computeErrorPp] | add / length <= 0.5)' "$work/drained.json" >/dev/null ||
    { jq '.samplesUncoveredSeconds, .containers' "$work/drained.json"; fail "step 15 drained, seed $seed: samples lost or estimated"; }
  "$bin" simulate --scenario timeslice-h100 --step 15 --drain-interval 0 --seed "$seed" --format json >"$work/step15.json" 2>"$work/step15.log" ||
    { cat "$work/step15.log"; fail "step 15, seed $seed: targets not met"; }
  jq -e '.samplesUncoveredSeconds > 100' "$work/step15.json" >/dev/null || fail "step 15, seed $seed: lost samples not counted"
  jq -e '[.containers[] | .computeErrorPp] | add / length <= 2' "$work/step15.json" >/dev/null ||
    fail "step 15, seed $seed: compute error above 2 pp mean"
  jq -e '[.containers[] | .estimate] | all' "$work/step15.json" >/dev/null || fail "step 15, seed $seed: extrapolated shares not flagged"
  jq -e '[.containers[] | .withinBoundFraction >= 0.95 and .computeBoundPp > 0] | all' "$work/step15.json" >/dev/null ||
    { jq '.containers' "$work/step15.json"; fail "step 15, seed $seed: extrapolated shares outside their bound"; }
done
"$bin" simulate --scenario timeslice-h100 --step 1 --format json >"$work/step1.json" 2>/dev/null || fail "step 1"
jq -e '.samplesUncoveredSeconds == 0 and ([.containers[] | .estimate] | any | not)' "$work/step1.json" >/dev/null ||
  fail "step 1: samples counted as lost"
echo "ok: lost samples at a 15 s step undrained counted and extrapolated (compute within 2 pp); none drained, none at 1 s"
echo "simulate end-to-end: all passed"
