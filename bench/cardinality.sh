#!/usr/bin/env bash
# The cardinality budget (docs/fleet.md, "Cardinality"): the series one node's
# /metrics holds, per metric family, for the bundled 8-GPU scenario and for a node of 400
# containers (8 H100s, each time-sliced 50 ways, a process per container), each scraped from a
# real `gpumeter demo` (fake NVML, fake kubelet, the agent's own pipeline) after it has run a
# while. Prints one row per family and the totals per node and per 1,000 nodes. Not in CI.
# Usage: bench/cardinality.sh [BUILD_DIR]
set -euo pipefail
BUILD=${1:-build}
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

# 400 containers: 8 GPUs x 50 time-slicing replicas, one pod (one container, one process) each.
scenario_400() {
  local gpus=8 per=50 g i n uuid
  echo "name: node-400"
  echo "description: 400 containers time-slicing 8 H100s (replicas 50)."
  echo "node: gpu-node-400"
  echo "duration_s: 3600"
  echo "gpus:"
  for ((g = 0; g < gpus; g++)); do
    printf '  - {index: %d, uuid: GPU-4000%04d-aa10-4c2b-9e3f-5b6a7c8d9e00, model: NVIDIA H100 80GB HBM3, memory_mib: 81559, reserved_mib: 548, power: {idle_watts: 70, max_watts: 700}, gpm: true, sharing: {mode: time-slicing, replicas: %d}}\n' \
      "$g" "$g" "$per"
  done
  echo "pods:"
  for ((g = 0; g < gpus; g++)); do
    for ((i = 0; i < per; i++)); do
      n=$((g * per + i)) uuid=GPU-4000$(printf %04d "$g")-aa10-4c2b-9e3f-5b6a7c8d9e00
      printf '  - {namespace: ns-%d, name: infer-%03d-7f9c6d5b8f-x%04d, uid: 40000000-0000-4000-8000-%012d, labels: {team: t%d, pod-template-hash: 7f9c6d5b8f}, containers: [{name: server, id: "containerd://%064x", devices: ["%s::%d"], requests: {nvidia.com/gpu: "1"}}]}\n' \
        $((n % 20)) "$n" "$n" "$n" $((n % 20)) $((n + 1)) "$uuid" "$i"
    done
  done
  echo "processes:"
  for ((g = 0; g < gpus; g++)); do
    for ((i = 0; i < per; i++)); do
      n=$((g * per + i)) uuid=GPU-4000$(printf %04d "$g")-aa10-4c2b-9e3f-5b6a7c8d9e00
      printf '  - {pid: %d, name: python, container: ns-%d/infer-%03d-7f9c6d5b8f-x%04d/server, usage: [{unit: %s, memory_mib: 1500, sm_pct: %d}]}\n' \
        $((200000 + n)) $((n % 20)) "$n" "$n" "$uuid" $((1 + n % 3))
    done
  done
}

# Runs the demo on scenario $1 for a while; its /metrics (text format) into $2.
scrape() {
  "$BUILD/gpumeter" demo --scenario "$1" --duration 60 --speedup 10 --refresh 1000 \
    --listen 127.0.0.1:0 >"$work/demo.log" 2>&1 &
  local pid=$! url=""
  for _ in $(seq 100); do
    url=$(sed -n 's|.*metrics: \(http://[^ ]*/metrics\).*|\1|p' "$work/demo.log" | head -1)
    [[ -n $url ]] && break
    sleep 0.2
  done
  [[ -n $url ]] || { cat "$work/demo.log" >&2; exit 1; }
  sleep 15  # past the first passes, so every counter and gauge has its series
  curl -fsS "$url" >"$2"
  kill "$pid" && wait "$pid" 2>/dev/null || true
}

scenario_400 >"$work/node-400.yaml"
scrape node-8gpu "$work/a.prom"
scrape "$work/node-400.yaml" "$work/b.prom"
families() { grep -v '^#' "$1" | sed 's/[{ ].*//' | sort | uniq -c | awk '{ print $2, $1 }'; }
join -a1 -a2 -e0 -o 0,1.2,2.2 <(families "$work/a.prom") <(families "$work/b.prom") |
  sort -k3,3nr -k1,1 >"$work/rows"
printf '%-52s %10s %10s\n' family node-8gpu node-400
awk '{ printf "%-52s %10d %10d\n", $1, $2, $3 }' "$work/rows"
awk '{ a += $2; b += $3 } END {
  printf "%-52s %10d %10d\n", "total per node", a, b
  printf "%-52s %10d %10d\n", "per 1,000 nodes", a * 1000, b * 1000 }' "$work/rows"
