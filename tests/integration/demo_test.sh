#!/usr/bin/env bash
# End to end: `gpumeter demo` on the bundled scenarios loads the fake NVML through the real
# loader, prints its table, and serves /metrics that promtool accepts. Bad input is refused.
# Usage: demo_test.sh PATH/TO/gpumeter
set -euo pipefail
. "$(dirname "$0")/lib.sh"
bin=$1
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

run_demo() {  # scenario profile
  local out=$work/$1-$2.out
  "$bin" demo --scenario "$1" --driver-profile "$2" --duration 4 --refresh 2 --interval 0.2 \
    --listen 127.0.0.1:0 >"$out" 2>&1 &
  local pid=$!
  local url
  url=$(wait_for_match "$out" 's|^metrics: \(http://[^ ]*\)/metrics.*|\1|p')
  [ -n "$url" ] || { cat "$out"; fail "$1/$2: demo printed no metrics address"; }
  curl -fs "$url/readyz" >/dev/null 2>&1 || true  # may be 503 this early; must not fail
  # The first table appears after two passes (rates need a window); scrape after it.
  for _ in $(seq 1 100); do
    grep -q '^--- t=' "$out" && break
    sleep 0.1
  done
  curl -fsS "$url/readyz" | grep -qx ready || fail "$1/$2: not ready after two passes"
  curl -fsS "$url/metrics" >"$work/$1-$2.prom" || fail "$1/$2: scrape failed"
  curl -fsS "$url/healthz" | grep -qx ok || fail "$1/$2: /healthz"
  wait "$pid" || { cat "$out"; fail "$1/$2: demo exited non-zero"; }
  if command -v promtool >/dev/null; then
    promtool check metrics <"$work/$1-$2.prom" || fail "$1/$2: promtool found problems"
  fi
  grep -q '^gpumeter_source_up{node="[^"]*",source="nvml"} 1$' "$work/$1-$2.prom" || fail "$1/$2: source not up"
  grep -q '^GPU MODEL' "$out" || { cat "$out"; fail "$1/$2: no table printed"; }
  echo "ok: $1 on $2"
}

for s in exclusive timeslice-h100 mps-a100 mig-h200 node-8gpu; do run_demo "$s" r580; done
for p in r535_43 r470 r418; do run_demo node-8gpu "$p"; done

# Content checks on the 8-GPU node: pods by name, the MIG instances, the failing power call.
prom=$work/node-8gpu-r580.prom
out=$work/node-8gpu-r580.out
grep -q '^gpumeter_process_[a-z_]*{.*pod="detector-train-0",container="trainer",owner_kind="container"' "$prom" || fail "no pod labels"
grep -q '^gpumeter_mig_sm_active_ratio{.*unit="MIG-' "$prom" || fail "no MIG GPM activity"
[ "$(grep -c '^gpumeter_gpu_info{' "$prom")" -eq 8 ] || fail "expected 8 GPUs"
grep -q 'vision/detector-train-0/trainer' "$out" || fail "table lacks pod owner"
# Every process resolves through the production path (fake kubelet socket, pods file, /proc tree):
# none is unattributed in the table.
if grep -E '^ +[0-9]+ +(C|MPS) +unattributed' "$out"; then fail "a process is unattributed"; fi
for owner in vision/detector-train-0/trainer search/embedder-0/server search/reranker-0/server ads/ctr-0/triton \
             llm/chat-1/vllm llm/summarizer-0/vllm research/notebook-cy/jupyter batch/etl-0/worker; do
  grep -qE "^ +[0-9]+ +(C|MPS) +$owner " "$out" || fail "table: no process of $owner"
done
grep -qE '^ +[0-9]+ +C +system \(host process\)' "$out" || fail "table: MPS daemon is not a host process"
# Each unit with its mode, replicas, evidence and holders.
grep -q '^  GPU 2 GPU-7e1d0002-aa10-4c2b-9e3f-5b6a7c8d9e02: time-slicing x4 \[configured for this GPU\]' "$out" || fail "time-slicing unit"
grep -q '^  GPU 3 GPU-7e1d0003-aa10-4c2b-9e3f-5b6a7c8d9e03: mps x2 ' "$out" || fail "MPS unit"
grep -q '^  GPU 4 MIG 3g.40gb gi=2 MIG-7e1d00ff-bb20-5c3d-8f4e-6c7d8e9f0a01: mig \[MIG instance (NVML)\]' "$out" || fail "MIG unit"
grep -qE '^    search/embedder-0/server +25% ' "$out" || fail "holder share of a time-sliced GPU"
grep -qE '^    llm/summarizer-0/vllm +100% ' "$out" || fail "holder of a MIG instance"
# Sources are up, and the attributed counters add up to each unit (conservation, on a real scrape).
for src in nvml kubelet pods proc; do
  grep -q "^gpumeter_source_up{node=\"[^\"]*\",source=\"$src\"} 1$" "$prom" || fail "source $src not up"
done
[ "$(grep -c '^gpumeter_unit_info{' "$prom")" -eq 11 ] || fail "expected 11 units (7 GPUs, 3 MIG instances, the MIG GPU's free slices)"
grep -q '^gpumeter_compute_seconds_total{.*namespace="search",pod="embedder-0",container="server",owner_kind="container"}' "$prom" \
  || fail "owner series of search/embedder-0"
grep -q '^gpumeter_pod_labels_info{node="[^"]*",namespace="search",pod="embedder-0",label_team="search"} 1$' "$prom" \
  || fail "the pod's team label on its info series"
! grep -v '^gpumeter_pod_labels_info{' "$prom" | grep -q 'label_team=' || fail "label_team on a series other than gpumeter_pod_labels_info"
awk '
  /^gpumeter_unit_seconds_total\{/ { match($0, /unit="[^"]*"/); cap[substr($0, RSTART, RLENGTH)] = $NF }
  /^gpumeter_compute_seconds_total\{/ { match($0, /unit="[^"]*"/); sum[substr($0, RSTART, RLENGTH)] += $NF }
  END {
    n = 0
    for (u in cap) { n++; d = sum[u] - cap[u]; if (d < 0) d = -d; if (cap[u] <= 0 || d > 1e-9 * cap[u]) { print "unit " u ": owners " sum[u] " vs " cap[u]; bad = 1 } }
    if (n != 11) { print "units with totals: " n; bad = 1 }
    exit bad
  }' "$prom" || fail "compute-seconds of the owners do not add up to the unit"
grep -q 'nvmlDeviceGetPowerUsage: Unknown Error (code 999)' "$out" || fail "table lacks the injected NVML failure"

# A GPU that falls off the bus (node-8gpu's GPU 7, at 240 s of scenario time) is a critical
# finding naming the pod that held it.
"$bin" demo --scenario node-8gpu --speedup 60 --duration 5 --refresh 5 --listen 127.0.0.1:0 \
  >"$work/lost.out" 2>&1 || { cat "$work/lost.out"; fail "demo past the lost GPU"; }
grep -qE '^  critical gpu-lost +batch/etl-0/worker$' "$work/lost.out" || { cat "$work/lost.out"; fail "no gpu-lost finding naming the pod on GPU 7"; }
grep -q 'GPU GPU-7e1d0007-aa10-4c2b-9e3f-5b6a7c8d9e07 (NVIDIA H100 80GB HBM3) fell off the bus (NVML_ERROR_GPU_IS_LOST)' "$work/lost.out" || fail "gpu-lost evidence"
echo "ok: a lost GPU is named with the pod on it"

# Ctrl-C (SIGINT) ends a demo started without a duration, cleanly.
"$bin" demo --scenario exclusive --duration 0 --interval 0.2 --listen 127.0.0.1:0 >"$work/sigint.out" 2>&1 &
demo_pid=$!
for _ in $(seq 1 100); do grep -q '^--- t=' "$work/sigint.out" && break; sleep 0.1; done
kill -INT "$demo_pid"
rc=0; wait "$demo_pid" || rc=$?
[ "$rc" -eq 0 ] || { cat "$work/sigint.out"; fail "SIGINT: exit code $rc"; }
grep -q 'stopping on signal 2' "$work/sigint.out" || fail "SIGINT: no stop message"
echo "ok: stops on Ctrl-C"

# A report right after a short run (issue 18): a window that ends now takes the minute in
# progress, so `--window 1h` finds the run's usage, and its rows equal the demo's closing
# chargeback (which reads the store's whole span).
"$bin" demo --scenario timeslice-h100 --duration 3 --refresh 2 --interval 0.2 --listen 127.0.0.1:0 \
  --store "$work/short.db" >"$work/short.out" 2>&1 || { cat "$work/short.out"; fail "short demo"; }
sed -n '/^--- chargeback/,/^TOTAL/p' "$work/short.out" | sed -n '/^namespace/,/^TOTAL/p' >"$work/closing.txt"
grep -q '^TOTAL' "$work/closing.txt" || { cat "$work/short.out"; fail "short demo: no closing chargeback"; }
"$bin" report --source "sqlite:$work/short.db" --window 1h --by namespace >"$work/window.out" 2>&1 ||
  { cat "$work/window.out"; fail "report --window 1h right after a demo"; }
sed -n '/^namespace/,/^TOTAL/p' "$work/window.out" >"$work/window.txt"
diff "$work/closing.txt" "$work/window.txt" || fail "report --window 1h differs from the demo's closing chargeback"
# A window with nothing in it still says so.
rc=0
"$bin" report --source "sqlite:$work/short.db" --from 2020-01-01T00:00:00Z --to 2020-01-02T00:00:00Z >"$work/empty.out" 2>&1 || rc=$?
[ "$rc" -eq 1 ] && grep -q 'no usage between' "$work/empty.out" || { cat "$work/empty.out"; fail "an empty window: rc $rc"; }
echo "ok: a report right after a short demo includes the minute in progress"

# Faster than real time into a kept store (issue 35 item 5): the scenario clock starts in the past
# and ends now, so the store holds no minute after now (it ran 2 minutes ahead at --speedup 20 for
# 6 s), and a report right after matches the closing chargeback.
"$bin" demo --scenario timeslice-h100 --duration 6 --refresh 3 --interval 0.5 --speedup 20 \
  --listen 127.0.0.1:0 --store "$work/fast.db" >"$work/fast.out" 2>&1 || { cat "$work/fast.out"; fail "fast demo"; }
now=$(date +%s)
end=$(date -d "$("$bin" report --source "sqlite:$work/fast.db" --format json | jq -r '.window.end')" +%s)
[ "$end" -le $(((now / 60 + 1) * 60)) ] || fail "--speedup 20: the store ends at $end, after the minute in progress (now $now)"
sed -n '/^--- chargeback/,/^TOTAL/p' "$work/fast.out" | sed -n '/^namespace/,/^TOTAL/p' >"$work/fast-closing.txt"
"$bin" report --source "sqlite:$work/fast.db" --window 1h --by namespace | sed -n '/^namespace/,/^TOTAL/p' >"$work/fast-window.txt"
grep -q '^TOTAL' "$work/fast-closing.txt" && diff "$work/fast-closing.txt" "$work/fast-window.txt" ||
  fail "--speedup 20: report --window 1h differs from the demo's closing chargeback"
rc=0
"$bin" demo --scenario timeslice-h100 --duration 0 --speedup 10 --store "$work/forever.db" \
  --listen 127.0.0.1:0 >"$work/forever.out" 2>&1 || rc=$?
[ "$rc" -eq 2 ] && grep -q 'give --duration' "$work/forever.out" || { cat "$work/forever.out"; fail "--speedup with --store and --duration 0: rc $rc"; }
echo "ok: --speedup with --store never records past now; without an end it is refused"

# Bad input: the demo refuses to start and says why.
expect_refusal() {  # description, expected text, args...
  local what=$1 text=$2; shift 2
  local rc=0
  "$bin" demo --duration 1 "$@" >"$work/bad.out" 2>&1 || rc=$?
  [ "$rc" -eq 2 ] || { cat "$work/bad.out"; fail "$what: exit code $rc, expected 2"; }
  grep -qF -- "$text" "$work/bad.out" || { cat "$work/bad.out"; fail "$what: message lacks '$text'"; }
  echo "ok: refuses $what"
}
printf 'name: x\ngpus:\n  - {index: 0, uuid: GPU-a, model: T, memory_mib: -1, power: {idle_watts: 1, max_watts: 2}}\n' >"$work/neg.yaml"
expect_refusal "negative memory" "gpus[0].memory_mib" --scenario "$work/neg.yaml" --listen 127.0.0.1:0
expect_refusal "unknown scenario" "no bundled scenario named 'nope'" --scenario nope --listen 127.0.0.1:0
expect_refusal "missing file" "no such scenario file" --scenario "$work/missing.yaml" --listen 127.0.0.1:0
expect_refusal "bad listen" "expected HOST:PORT" --listen nonsense
# probe: without a driver it says where it looked and points to the demo; over the fake it
# prints what the driver returned, unknowns as null.
rc=0
"$bin" probe --nvml-library "$work/no-such/libnvidia-ml.so.1" >"$work/probe.out" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "probe without NVML: exit $rc"
grep -q "no-such/libnvidia-ml.so.1" "$work/probe.out" && grep -q "gpumeter demo" "$work/probe.out" || { cat "$work/probe.out"; fail "probe: unclear message"; }
fake=$(dirname "$bin")/fake_nvml/r470/libnvidia-ml.so.1
GPUMETER_FAKE_NVML_SCENARIO=$(dirname "$0")/../../scenarios/exclusive.yaml "$bin" probe --nvml-library "$fake" --interval 0.3 >"$work/probe.json"
grep -q '"memoryApi": "nvmlDeviceGetMemoryInfo"' "$work/probe.json" || fail "probe: r470 memory API"
grep -q '"reservedBytes": null' "$work/probe.json" || fail "probe: unknown reservation must be null"
grep -q '"uuid": "GPU-2f1a7c3e-5b9d-4e21-9c44-0a1b2c3d4e01"' "$work/probe.json" || fail "probe: device"
GPUMETER_FAKE_NVML_SCENARIO=$(dirname "$0")/../../scenarios/exclusive.yaml "$bin" probe --nvml-library "$fake" --interval 0.2 --samples 3 >"$work/probe3.json"
[ "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["samples"]))' "$work/probe3.json")" = 3 ] || fail "probe --samples 3"
rc=0; "$bin" probe --samples 1 >"$work/probe1.out" 2>&1 || rc=$?
[ "$rc" -ne 0 ] && grep -q -- "--samples" "$work/probe1.out" || fail "probe --samples 1 must be refused naming the flag"
echo "ok: probe"
# A100 MIG without GPM: the demo's node process serves the scenario's dcgm-exporter and the demo's
# agent reads it (--dcgm-metrics), so the trainer's instance has compute, the dcgm source is up,
# and the banner names the exporter. At 20x, the scrape at 4 s comes after two 30 s collections.
out=$work/mig-a100.out
"$bin" demo --scenario mig-a100 --duration 7 --refresh 2 --interval 0.2 --speedup 20 \
  --listen 127.0.0.1:0 >"$out" 2>&1 &
pid=$!
url=$(wait_for_match "$out" 's|^metrics: \(http://[^ ]*\)/metrics.*|\1|p')
[ -n "$url" ] || { cat "$out"; fail "mig-a100: no metrics address"; }
grep -q '^dcgm-exporter: http://127.0.0.1:[0-9]*/metrics' "$out" || { cat "$out"; fail "mig-a100: no dcgm-exporter in the banner"; }
for _ in $(seq 1 60); do
  grep -q "^--- t=[4-6]" "$out" && break
  sleep 0.1
done
curl -fsS "$url/metrics" >"$work/mig-a100.prom" || fail "mig-a100: scrape failed"
# `gpumeter doctor --demo FILE`, the file the banner names: the demo's node checked as its agent
# sees it (fake NVML on the demo's clock, kubelet, /proc, pods, dcgm-exporter), every check ok.
doctor_file=$(sed -n 's/^doctor: gpumeter doctor --demo //p' "$out")
[ -f "$doctor_file" ] || { cat "$out"; fail "mig-a100: the banner names no doctor file"; }
"$bin" doctor --demo "$doctor_file" >"$work/doctor.out" 2>&1 || { cat "$work/doctor.out"; fail "doctor --demo failed"; }
for check in nvml pod-resources proc pods attribution dcgm; do
  grep -q "^ok  *$check " "$work/doctor.out" || { cat "$work/doctor.out"; fail "doctor --demo: $check not ok"; }
done
"$bin" doctor --demo "$doctor_file" --proc-root /proc >/dev/null 2>&1 && fail "doctor --demo took a flag it replaces"
wait "$pid" || { cat "$out"; fail "mig-a100: demo exited non-zero"; }
grep -q '^gpumeter_source_up{node="[^"]*",source="dcgm"} 1$' "$work/mig-a100.prom" || { grep source_up "$work/mig-a100.prom"; fail "mig-a100: dcgm source not up"; }
awk '/^gpumeter_compute_seconds_total\{/ && /pod="train-resnet-0"/ { if ($NF > 0) found = 1 } END { exit !found }' "$work/mig-a100.prom" \
  || { grep train-resnet "$work/mig-a100.prom" | head; fail "mig-a100: the trainer has no compute from DCGM activity"; }
echo "ok: mig-a100 with the node's dcgm-exporter; doctor --demo on it"

# The same node without dcgm-exporter: an A100 MIG instance's activity is unknown to NVML, so the
# busy trainer's compute is unknown, not 0, in /metrics, the store and every report format.
sed 's/dcgm_exporter: true/dcgm_exporter: false/' "$(dirname "$0")/../../scenarios/mig-a100.yaml" >"$work/mig-a100-blind.yaml"
grep -q 'dcgm_exporter: false' "$work/mig-a100-blind.yaml" || fail "mig-a100-blind: scenario not made"
"$bin" demo --scenario "$work/mig-a100-blind.yaml" --duration 4 --speedup 60 --interval 0.5 \
  --store "$work/blind.db" >"$work/blind.out" 2>&1 || { cat "$work/blind.out"; fail "mig-a100-blind demo"; }
"$bin" report --source "sqlite:$work/blind.db" --by pod --format json >"$work/blind.json" || fail "mig-a100-blind: report"
jq -e '.groups[] | select(.group.pod == "ml/train-resnet-0")
       | .computeHours == 0 and .computeUnknownHours > 0 and .efficiency == null
         and .efficiencyBounds[0] == 0 and .efficiencyBounds[1] > 0' "$work/blind.json" >/dev/null ||
  { jq '.groups[] | select(.group.pod == "ml/train-resnet-0")' "$work/blind.json"; fail "mig-a100-blind: the trainer's unmeasured compute must be unknown, not 0 % efficiency"; }
"$bin" report --source "sqlite:$work/blind.db" --by pod >"$work/blind.txt" || fail "mig-a100-blind: table"
grep -q '^compute unknown for [0-9.]* GPU-h' "$work/blind.txt" && grep -qE '^ml/train-resnet-0 .* 0\.0-[0-9.]+%' "$work/blind.txt" ||
  { cat "$work/blind.txt"; fail "mig-a100-blind: the table must show the range and say why"; }
echo "ok: mig-a100 without dcgm-exporter: the trainer's compute is unknown, efficiency a range"
echo "demo end-to-end: all passed"
