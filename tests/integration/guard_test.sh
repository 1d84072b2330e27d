#!/usr/bin/env bash
# Guardrails end to end, through the running demo agent and `gpumeter audit --agent`:
#  1. node-8gpu (with its leak): the audit lists the leak's findings, --fail-on critical exits 1,
#     JSON says the same, and beside an inflated dcgm-exporter page for a time-sliced GPU it prints
#     the agent's split of that GPU.
#  2. tests/scenarios/guard/leak.yaml, whose leaking process has secrets in its environment: the
#     secrets appear in no output — stdout, log, /metrics, any /api/v1 endpoint, the audit, the
#     store file — while the findings built from the same environment do.
#  3. tests/scenarios/guard/clean.yaml: no finding, and --fail-on info exits 0.
# Usage: guard_test.sh GPUMETER SOURCE_DIR
set -euo pipefail
. "$(dirname "$0")/lib.sh"
bin=$1 src=$2
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; for f in "$work"/*.log; do [ -f "$f" ] && { echo "== $f"; tail -30 "$f"; }; done >&2; exit 1; }

# start_demo NAME SCENARIO [ARGS...]: runs the demo in the background (in this shell, so it can be
# stopped) and sets $url and $pid.
start_demo() {
  local name=$1 scenario=$2
  shift 2
  # An end, though each demo is stopped long before it: a kept store at --speedup needs one.
  "$bin" demo --scenario "$scenario" --duration 3600 --refresh 600 --interval 0.5 --listen 127.0.0.1:0 "$@" >"$work/$name.log" 2>&1 &
  pid=$!
  url=$(wait_for_match "$work/$name.log" 's|^metrics: \(http://[^ ]*\)/metrics.*|\1|p')
  [ -n "$url" ] || fail "$name: demo printed no address"
}

# wait_for_findings URL N: until the agent has at least N open findings (30 s at most).
wait_for_findings() {
  for _ in $(seq 1 300); do
    n=$(curl -sf "$1/api/v1/findings" | jq '.findings | length' 2>/dev/null || echo 0)
    [ "${n:-0}" -ge "$2" ] && return 0
    sleep 0.1
  done
  curl -s "$1/api/v1/findings" >&2 || true
  fail "fewer than $2 findings at $1"
}

# 1. The demo's 8-GPU node. The leak starts at scenario second 30 (speedup 20: 1.5 s).
start_demo node8 node-8gpu --speedup 20
wait_for_findings "$url" 5
"$bin" audit --agent "$url" >"$work/audit.txt" || fail "audit exited non-zero without --fail-on"
for want in 'critical unallocated-device +sandbox/debug-shell/shell +GPU-7e1d0000-aa' \
            'critical unallocated-device +sandbox/debug-shell/shell +GPU-7e1d0001-aa' \
            'critical no-gpu-request +sandbox/debug-shell/shell' \
            'warning +visible-devices-all +sandbox/debug-shell/shell' \
            'warning +mps-no-limits +llm/chat-1/vllm'; do
  grep -qE "$want" "$work/audit.txt" || { cat "$work/audit.txt"; fail "audit table lacks: $want"; }
done
grep -q 'allocated to vision/detector-train-0/trainer' "$work/audit.txt" || fail "evidence names the GPUs' holder"
if grep -qE 'train-0/trainer +GPU' "$work/audit.txt"; then fail "the trainer is where it should be: no finding about it"; fi
rc=0; "$bin" audit --agent "$url" --fail-on critical >/dev/null || rc=$?
[ "$rc" = 1 ] || fail "--fail-on critical must exit 1 with critical findings (got $rc)"
json=$("$bin" audit --agent "$url" --format json)
[ "$(jq '[.agent.findings[] | select(.severity == "critical")] | length' <<<"$json")" = 3 ] || { echo "$json"; fail "3 critical findings in JSON"; }
[ "$(jq -r '.worstSeverity' <<<"$json")" = critical ] || fail "worstSeverity"
[ "$(jq -r '.agent.node' <<<"$json")" = gpu-node-dgx-07 ] || fail "node in JSON"
# Saved first: `curl | grep -q` fails under pipefail when grep stops reading a large page early.
curl -sf "$url/metrics" >"$work/guard.prom" || fail "scrape for the findings counter"
grep -q '^gpumeter_findings_opened_total{node="gpu-node-dgx-07",kind="unallocated-device",severity="critical"} 2' "$work/guard.prom" ||
  fail "findings counter on /metrics"

# dcgm-exporter in virtual-GPU mode on the time-sliced GPU 2: each of its 3 pods copies the GPU.
g2=GPU-7e1d0002-aa10-4c2b-9e3f-5b6a7c8d9e02
{
  for p in search/embedder-0 search/reranker-0 ads/ctr-0; do
    echo "DCGM_FI_DEV_GPU_UTIL{gpu=\"2\",UUID=\"$g2\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"gpu-node-dgx-07\",namespace=\"${p%/*}\",pod=\"${p#*/}\",container=\"c\",vgpu=\"0\"} 60"
  done
} >"$work/dcgm.prom"
"$bin" audit --agent "$url" --dcgm-metrics "$work/dcgm.prom" >"$work/both.txt" || fail "audit --agent --dcgm-metrics"
grep -qE 'DCGM_FI_DEV_GPU_UTIL +3 +60 +180 +3.00x' "$work/both.txt" || { cat "$work/both.txt"; fail "3x inflation of GPU 2"; }
grep -q "gpumeter's split" "$work/both.txt" || { cat "$work/both.txt"; fail "no corrected split beside the inflated GPU"; }
grep -qE 'whole GPU +search/embedder-0/server +[0-9.]+ %' "$work/both.txt" || { cat "$work/both.txt"; fail "split names the tenants"; }
jq -e '.gpus[0].gpumeterSplit | length >= 3' <<<"$("$bin" audit --agent "$url" --dcgm-metrics "$work/dcgm.prom" --format json)" >/dev/null ||
  fail "gpumeterSplit in JSON"
# The split adds up to the GPU: the owners' compute ratios of GPU 2 sum to 1.
sum=$("$bin" audit --agent "$url" --dcgm-metrics "$work/dcgm.prom" --format json | jq '[.gpus[0].gpumeterSplit[].computeRatio // 0] | add')
awk -v s="$sum" 'BEGIN { exit !(s > 0.999 && s < 1.001) }' || fail "split of GPU 2 sums to $sum, not 1"
kill "$pid"; wait "$pid" 2>/dev/null || true

rc=0; "$bin" audit --agent "http://127.0.0.1:1" >"$work/down.out" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q -- '--agent http://127.0.0.1:1/api/v1/findings: unreachable' "$work/down.out" || { cat "$work/down.out"; fail "unreachable agent (rc $rc)"; }
rc=0; "$bin" audit --agent node:9402 >"$work/bad.out" 2>&1 || rc=$?
[ "$rc" = 2 ] && grep -q "expected an http(s):// URL" "$work/bad.out" || fail "--agent without a scheme (rc $rc)"
rc=0; "$bin" audit >"$work/none.out" 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "audit without a source must be bad input (rc $rc)"

# 2. Secrets in the leaking process's environment never leave the agent.
start_demo leak "$src/tests/scenarios/guard/leak.yaml" --speedup 20 --store "$work/usage.db"
wait_for_findings "$url" 4
for ep in metrics api/v1/findings api/v1/processes api/v1/units api/v1/ledger api/v1/sources; do
  curl -sf "$url/$ep" >"$work/out-${ep//\//_}.txt" || fail "GET $ep"
done
"$bin" audit --agent "$url" >"$work/out-audit.txt"
"$bin" audit --agent "$url" --format json >"$work/out-audit-json.txt"
grep -q 'unallocated-device' "$work/out-audit.txt" || fail "the leak scenario gave no finding: the secret check would prove nothing"
grep -q 'NVIDIA_VISIBLE_DEVICES=all' "$work/out-api_v1_findings.txt" || fail "the GPU variable read from the same environ is in the evidence"
kill -INT "$pid"; wait "$pid" || fail "the leak demo did not stop cleanly"
"$bin" report --source "sqlite:$work/usage.db" --window all --format csv >"$work/out-report.txt" || fail "report from the leak store"
for canary in gpumeter-canary wJalrXUtnFEMI hunter2 AWS_SECRET_ACCESS_KEY DB_PASSWORD; do
  if grep -a -l "$canary" "$work"/out-*.txt "$work"/leak.log "$work"/usage.db* 2>/dev/null; then fail "secret '$canary' leaked into the files above"; fi
done

# 3. A clean node: nothing to report, and the gate passes.
start_demo clean "$src/tests/scenarios/guard/clean.yaml" --speedup 20
ok=0
for _ in $(seq 1 200); do
  [ "$(curl -sf "$url/api/v1/ledger" | jq '.intervals' 2>/dev/null || echo 0)" -ge 4 ] && { ok=1; break; }
  sleep 0.1
done
[ "$ok" = 1 ] || fail "the clean demo accounted fewer than 4 intervals in 20 s"
[ "$(curl -sf "$url/api/v1/findings" | jq '.checked')" = true ] || fail "the clean agent has not checked anything"
"$bin" audit --agent "$url" --fail-on info >"$work/clean.txt" || { cat "$work/clean.txt"; fail "a clean node must pass --fail-on info"; }
grep -q '(node gpu-node-clean): 0 open finding(s)' "$work/clean.txt" || { cat "$work/clean.txt"; fail "clean summary"; }
kill "$pid"; wait "$pid" 2>/dev/null || true

# 4. GPU health (tests/scenarios/guard/health.yaml): each fault's series on /metrics, its finding
# naming the pods on the GPU in the audit, in top's findings view, and --fail-on critical.
start_demo health "$src/tests/scenarios/guard/health.yaml" --speedup 20
# 13: the lost GPU, the ECC rise, the failed remap, two slowdowns (once held 60 s: 3 s here), two pending
# remaps, two of each XID, the pending page retirement and the retired pages at the limit.
wait_for_findings "$url" 13
"$bin" audit --agent "$url" >"$work/health.txt" || fail "audit of the health node"
for want in 'critical +ecc-uncorrectable +vision/train-0/trainer +GPU-9a000000' \
            'critical +row-remap-failed +- +GPU-9a000003' \
            'warning +clocks-slowdown +search/embed-0/server +GPU-9a000001' \
            'warning +clocks-slowdown +search/rerank-0/server +GPU-9a000001' \
            'warning +row-remap-pending +llm/chat-0/vllm +GPU-9a000002' \
            'warning +row-remap-pending +llm/chat-1/vllm +GPU-9a000002' \
            'critical +xid +llm/chat-0/vllm +GPU-9a000002' \
            'critical +xid +llm/chat-1/vllm +GPU-9a000002' \
            'info +xid-application +search/embed-0/server +GPU-9a000001' \
            'info +xid-application +search/rerank-0/server +GPU-9a000001' \
            'warning +retired-pages-pending +research/nb-0/jupyter +GPU-9a000004' \
            'critical +retired-pages-limit +research/nb-0/jupyter +GPU-9a000004' \
            'critical +gpu-lost +batch/etl-0/worker +GPU-9a000005'; do
  grep -qE -- "$want" "$work/health.txt" || { cat "$work/health.txt"; fail "health audit lacks: $want"; }
done
grep -q 'runs slower than set: its clocks are held down (hw_thermal;' "$work/health.txt" || { cat "$work/health.txt"; fail "slowdown evidence names the reason"; }
grep -q 'reported XID 95 (an uncontained memory error)' "$work/health.txt" || { cat "$work/health.txt"; fail "the XID's meaning"; }
grep -q '1 new uncorrectable ECC error(s)' "$work/health.txt" || { cat "$work/health.txt"; fail "the ECC rise"; }
if grep -q 'GPU-9a000001.*sw_power_cap' "$work/health.txt"; then fail "the power cap is no slowdown"; fi
rc=0; "$bin" audit --agent "$url" --fail-on critical >/dev/null || rc=$?
[ "$rc" = 1 ] || fail "health: --fail-on critical must exit 1 (got $rc)"
curl -sf "$url/metrics" >"$work/health.prom" || fail "scrape the health node"
for want in 'gpumeter_gpu_ecc_errors_total{node="gpu-node-health",gpu="0",gpu_uuid="GPU-9a000000-0000-4000-8000-000000000000",type="uncorrected"} 1' \
            'gpumeter_gpu_clock_event_reason{node="gpu-node-health",gpu="1",gpu_uuid="GPU-9a000001-0000-4000-8000-000000000001",reason="hw_thermal"} 1' \
            'gpumeter_gpu_clock_event_reason{node="gpu-node-health",gpu="0",gpu_uuid="GPU-9a000000-0000-4000-8000-000000000000",reason="hw_thermal"} 0' \
            'gpumeter_gpu_row_remap_pending{node="gpu-node-health",gpu="2",gpu_uuid="GPU-9a000002-0000-4000-8000-000000000002"} 1' \
            'gpumeter_gpu_remapped_rows{node="gpu-node-health",gpu="3",gpu_uuid="GPU-9a000003-0000-4000-8000-000000000003",cause="uncorrectable"} 2' \
            'gpumeter_gpu_row_remap_failed{node="gpu-node-health",gpu="3",gpu_uuid="GPU-9a000003-0000-4000-8000-000000000003"} 1' \
            'gpumeter_findings_opened_total{node="gpu-node-health",kind="ecc-uncorrectable",severity="critical"} 1' \
            'gpumeter_gpu_xid_errors_total{node="gpu-node-health",gpu="2",gpu_uuid="GPU-9a000002-0000-4000-8000-000000000002",xid="95"} 1' \
            'gpumeter_gpu_xid_errors_total{node="gpu-node-health",gpu="1",gpu_uuid="GPU-9a000001-0000-4000-8000-000000000001",xid="13"} 1' \
            'gpumeter_gpu_retired_pages{node="gpu-node-health",gpu="4",gpu_uuid="GPU-9a000004-0000-4000-8000-000000000004",cause="single_bit_ecc"} 62' \
            'gpumeter_gpu_retired_pages{node="gpu-node-health",gpu="4",gpu_uuid="GPU-9a000004-0000-4000-8000-000000000004",cause="double_bit_ecc"} 1' \
            'gpumeter_gpu_retired_pages_pending{node="gpu-node-health",gpu="4",gpu_uuid="GPU-9a000004-0000-4000-8000-000000000004"} 1' \
            'gpumeter_gpu_lost{node="gpu-node-health",gpu="5",gpu_uuid="GPU-9a000005-0000-4000-8000-000000000005"} 1' \
            'gpumeter_xid_watch_up{node="gpu-node-health"} 1'; do
  grep -qF -- "$want" "$work/health.prom" || { grep -E 'ecc|remap|clock_event|findings_opened' "$work/health.prom"; fail "health series: $want"; }
done
"$bin" top --agent "$url" --view findings --once >"$work/health-top.txt" || fail "top --once on the health node"
for want in ecc-uncorrectable row-remap-failed clocks-slowdown row-remap-pending xid xid-application \
            retired-pages-pending retired-pages-limit gpu-lost; do
  grep -q -- "$want" "$work/health-top.txt" || { cat "$work/health-top.txt"; fail "top's findings view lacks $want"; }
done
kill "$pid"; wait "$pid" 2>/dev/null || true
echo "ok: leak, no-request, visible-devices and MPS findings through the agent; corrected split beside dcgm inflation; no secret in any output; a clean node passes; GPU health named with its pods"
