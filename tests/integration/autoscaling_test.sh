#!/usr/bin/env bash
# The scaling signals end to end (issue 32): a real Prometheus with gpumeter's rules scrapes the
# demo's node-8gpu at its real pace (--speedup 1: a rate over a minute of Prometheus time is a
# minute of GPU time), and the exact queries of deploy/kubernetes/autoscaling — the KEDA trigger,
# and the adapter's metricsQuery filled in as prometheus-adapter fills it — give each steady pod
# its true use in GPUs, from the scenario, within 2 pp: on a time-sliced GPU, an MPS GPU and MIG
# instances. The dcgm-style reading (the device's utilization joined to each pod on it) gives a
# time-sliced pod its whole device's, which is what scales shared pods wrongly.
# Heavy: about 75 s of real time.
# Usage: autoscaling_test.sh GPUMETER SOURCE_DIR
set -euo pipefail
. "$(dirname "$0")/lib.sh"
bin=$1 src=$2
command -v prometheus >/dev/null || { echo "FAIL: prometheus is not installed"; exit 1; }
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; for f in "$work"/*.log; do [ -f "$f" ] && { echo "== $f"; tail -20 "$f"; }; done >&2; exit 1; }

sed -n '/^spec:/,$p' "$src/deploy/kubernetes/monitoring/prometheusrule.yaml" | sed '1d; s/^  //' >"$work/rules.yaml"
"$bin" demo --scenario node-8gpu --duration 0 --refresh 600 --interval 0.5 --speedup 1 --listen 127.0.0.1:0 \
  >"$work/demo.log" 2>&1 &
target=$(wait_for_match "$work/demo.log" 's|^metrics: http://\([^ ]*\)/metrics.*|\1|p')
[ -n "$target" ] || fail "the demo printed no address"
start_prometheus "$work" "$work/rules.yaml" "$target" || fail "prometheus did not start"

# The ground truth, from the scenario (scenarios/node-8gpu.yaml), steady over the first 150 s:
# SM busy % of its unit × the unit's share of its GPU.
#   embedder-0   time-slicing (4 replicas) on GPU 2   25 %        0.25 GPU
#   chat-1       MPS on GPU 3 (chat-0 starts at 150 s) 30 %       0.30 GPU
#   summarizer-0 MIG 3g.40gb of 7 slices              20 % × 3/7  0.0857 GPU
#   etl-0        a whole GPU                          30 %        0.30 GPU
truth="search embedder-0 0.25
llm chat-1 0.30
llm summarizer-0 0.0857142857
batch etl-0 0.30"

# A full minute of scrapes (a loaded machine may miss a few of the 60) behind the rule's latest
# evaluation (every 15 s).
n=0
for _ in $(seq 1 120); do
  n=$(query 'count_over_time(up{job="gpumeter"}[1m])' | jq -r '.data.result[0].value[1] // 0') || n=0
  [ "$n" -ge 55 ] && break
  sleep 1
done
[ "$n" -ge 55 ] || fail "Prometheus has no minute of scrapes ($n)"
sleep 17

within() {  # label, got, want: |got - want| <= 0.02
  awk -v g="$2" -v w="$3" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(g != "" && d <= 0.02) }' ||
    fail "$1: got ${2:-nothing}, the pod's true use is $3 GPU"
  printf '  %-48s %.4f GPU (true %.4f)\n' "$1" "$2" "$3"
}

# KEDA: the trigger's query, exactly as the file has it (the embedder's sum over its replicas).
keda=$(sed -n 's/^ *query: //p' "$src/deploy/kubernetes/autoscaling/keda-scaledobject.yaml")
[ -n "$keda" ] || fail "no query in keda-scaledobject.yaml"
got=$(query "$keda" | jq -r '.data.result[0].value[1] // ""') || got=""
within "KEDA query" "$got" 0.25

# prometheus-adapter: each rule's metricsQuery as the adapter fills it for one pod.
adapter=$src/deploy/kubernetes/autoscaling/prometheus-adapter-rules.yaml
series=$(sed -n "s/^ *- seriesQuery: '\([^{]*\){.*/\1/p" "$adapter" | head -1)
template=$(sed -n "s/^ *metricsQuery: '\(.*\)'$/\1/p" "$adapter" | head -1)
[ "$series" = "pod:gpumeter_compute_gpus:rate1m" ] && [ -n "$template" ] || fail "adapter rule: $series / $template"
while read -r ns pod want; do
  q=${template//<<.Series>>/$series}
  q=${q//<<.LabelMatchers>>/namespace=\"$ns\",pod=~\"$pod\"}
  q=${q//<<.GroupBy>>/pod}
  got=$(query "$q" | jq -r '.data.result[0].value[1] // ""') || got=""
  within "adapter gpumeter_compute_gpus $ns/$pod" "$got" "$want"
done <<<"$truth"

# The HPA names the adapter's metric.
grep -q "name: gpumeter_compute_gpus" "$src/deploy/kubernetes/autoscaling/hpa.yaml" || fail "hpa.yaml does not use gpumeter_compute_gpus"

# The dcgm-style reading: the device's utilization, joined to each pod that holds a share of it
# (dcgm-exporter labels the device's series with the pod). The time-sliced embedder is shown its
# device's whole busy time, not its 0.25 (0.70 while ctr-0 runs, to 100 s; 0.35 after).
dcgm='max by (namespace, pod) ((rate(gpumeter_requested_share_seconds_total{owner_kind="container"}[1m]) > 0) * 0 + on (node, gpu_uuid) group_left () gpumeter_gpu_busy_ratio)'
got=$(query "$dcgm" | jq -r '.data.result[] | select(.metric.pod == "embedder-0") | .value[1]') || got=""
awk -v g="$got" 'BEGIN { exit !(g != "" && g - 0.25 > 0.05) }' ||
  fail "the dcgm-style reading for embedder-0 is ${got:-nothing}: expected its device's whole utilization, above its own 0.25"
printf '  %-48s %.4f (the device'"'"'s, not the pod'"'"'s 0.25)\n' "dcgm-style reading embedder-0" "$got"
echo "ok: the KEDA and prometheus-adapter queries give each pod its own GPU use within 2 pp (time-slicing, MPS, MIG, exclusive)"
