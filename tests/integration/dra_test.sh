#!/usr/bin/env bash
# DRA end to end (scenarios/dra-h100.yaml): a whole-GPU claim, a MIG claim and one claim shared by
# two pods, through the production path - the fake kubelet's dynamic_resources, the node's
# ResourceSlices file, cgroups in /proc. `simulate`: every claim's pod owned and scored (compute
# <= 2 pp mean), the shared GPU split between its two pods, not doubled; on two seeds. `demo`:
# /metrics shows each claim's pod on its unit.
# Usage: dra_test.sh PATH/TO/gpumeter
set -euo pipefail
. "$(dirname "$0")/lib.sh"
bin=$1
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

shared=GPU-d7a00000-0000-4000-8000-000000000002
for seed in 1 4; do
  "$bin" simulate --scenario dra-h100 --seed "$seed" --format json >"$work/dra.json" 2>"$work/dra.err" \
    || { cat "$work/dra.err" "$work/dra.json"; fail "dra-h100 seed $seed: targets not met"; }
  # Every claim's container is owned (measured compute > 0) and scored under "dra".
  for c in training/finetune-0/trainer inference/llm-small-0/vllm research/notebook-a/jupyter research/notebook-b/jupyter; do
    jq -e --arg c "$c" '[.containers[] | select(.container == $c and .mode == "dra" and .computeSeconds.measured > 0 and .computeErrorPp <= 2)] | length == 1' \
      "$work/dra.json" >/dev/null || { cat "$work/dra.json"; fail "seed $seed: $c not owned or off"; }
  done
  jq -e '(.modes[] | select(.mode == "dra") | .computeErrorPp.mean <= 2) and .verdict == "met"' "$work/dra.json" >/dev/null \
    || { cat "$work/dra.json"; fail "seed $seed: dra compute mean"; }
  # The shared claim is split, not doubled: its two pods' compute adds up to the GPU's truth (no
  # more), while naive labelling (each pod shown the whole GPU) is far off.
  jq -e --arg u "$shared" '[.containers[] | select(.unit == $u)] as $s | ($s | length) == 2
        and (($s | map(.computeSeconds.measured) | add) - ($s | map(.computeSeconds.true) | add) | fabs) < 0.02 * ($s | map(.computeSeconds.true) | add)
        and ($s | all(.naiveComputeErrorPp > 10))' "$work/dra.json" >/dev/null \
    || { cat "$work/dra.json"; fail "seed $seed: shared claim not split"; }
  echo "ok: dra-h100 simulate seed $seed"
done

# The table says the same, with a dra row.
"$bin" simulate --scenario dra-h100 >"$work/dra.txt" 2>&1 || { cat "$work/dra.txt"; fail "dra-h100 table: not met"; }
grep -q '^dra ' "$work/dra.txt" && grep -q '^targets: met$' "$work/dra.txt" || { cat "$work/dra.txt"; fail "dra-h100 table"; }

# The demo: the same node live; each claim's pod shows on its unit in /metrics.
out=$work/demo.out
"$bin" demo --scenario dra-h100 --duration 4 --refresh 2 --interval 0.2 --listen 127.0.0.1:0 >"$out" 2>&1 &
pid=$!
url=$(wait_for_match "$out" 's|^metrics: \(http://[^ ]*\)/metrics.*|\1|p')
[ -n "$url" ] || { cat "$out"; fail "demo printed no metrics address"; }
for _ in $(seq 1 100); do
  grep -q '^--- t=' "$out" && break
  sleep 0.1
done
sleep 0.5
curl -fsS "$url/metrics" >"$work/demo.prom" || fail "demo scrape failed"
wait "$pid" || { cat "$out"; fail "demo exited non-zero"; }
grep -q 'resource slices: .*resourceslices.json' "$out" || { cat "$out"; fail "demo: no resource slices file"; }
for pod in finetune-0 llm-small-0 notebook-a notebook-b; do
  grep -qE "^gpumeter_compute_seconds_total\{[^}]*pod=\"$pod\"" "$work/demo.prom" \
    || { grep compute_seconds "$work/demo.prom" | head; fail "demo: $pod has no compute on /metrics"; }
done
grep -qE '^gpumeter_allocation_problems\{[^}]*\} 0$' "$work/demo.prom" \
  || { grep allocation_problems "$work/demo.prom"; fail "demo: claims not placed (allocation problems)"; }
# Each claim placed through the ResourceSlices, with the mode its claim gives it.
for want in 'unit="GPU-d7a00000-0000-4000-8000-000000000000".*sharing_mode="exclusive".*evidence="DRA claim device \(ResourceSlice uuid\)"' \
            'unit="MIG-d7a00000-0000-4000-8000-000000000101".*sharing_mode="mig".*evidence="MIG instance \(NVML\); via a DRA claim"' \
            'unit="GPU-d7a00000-0000-4000-8000-000000000002".*sharing_mode="time-slicing",replicas="2",evidence="DRA claim device shared by 2 containers"'; do
  grep -qE "^gpumeter_unit_info\{.*$want" "$work/demo.prom" || { grep unit_info "$work/demo.prom"; fail "demo: no unit_info matching $want"; }
done
grep -q '^gpumeter_source_up{node="gpu-node-dra",source="resourceslices"} 1$' "$work/demo.prom" || fail "demo: resourceslices source not up"
echo "ok: dra-h100 demo"
echo "dra end-to-end: all passed"
