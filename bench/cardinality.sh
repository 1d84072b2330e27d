#!/usr/bin/env bash
# The cardinality budget (docs/fleet.md, "Cardinality"): the series one node's
# /metrics holds, per metric family, for the bundled 8-GPU scenario and for a node of 400
# containers (8 H100s, each time-sliced 50 ways, a process per container), each scraped from a
# real `gpumeter demo` (fake NVML, fake kubelet, the agent's own pipeline) after it has run a
# while, with the default set of per-container series and with `--container-series full`.
# Prints one row per family, the totals per node and per 1,000 nodes, and the series per
# container of each set (docs/metrics.md, "Default set": at most 8 per container and unit by
# default). The demo keeps the per-process series on, which an agent leaves off: they are in the
# family rows and totals, not in the per-container figures. Not in CI.
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

# Runs the demo on scenario $1 with the per-container series $3 (default or full) for a while; its
# /metrics (text format) into $2.
scrape() {
  "$BUILD/gpumeter" demo --scenario "$1" --duration 60 --speedup 10 --refresh 1000 \
    --container-series "$3" --listen 127.0.0.1:0 >"$work/demo.log" 2>&1 &
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

# The per-container figures of a scrape, one line: containers, their (unit, container) rows, the
# owner series per row (mean, max), and every series naming a pod or a container (owner rows,
# workload and pod labels, rightsizing, findings; not the per-process series) per container.
per_container() {
  grep -v '^#' "$1" | grep -v '^gpumeter_process_' | awk '
    function label(l, k) {
      return match(l, "[{,]" k "=\"[^\"]*\"") ? substr(l, RSTART + 1, RLENGTH - 1) : ""
    }
    {
      ns = label($0, "namespace"); pod = label($0, "pod"); c = label($0, "container")
      if ((pod == "" || pod == "pod=\"\"") && (c == "" || c == "container=\"\"")) next
      named++
      if (index($0, "owner_kind=\"container\"") && index($0, "gpu_uuid=")) {
        row = label($0, "unit") ns pod c
        if (!((ns pod c) in seen)) { seen[ns pod c] = 1; n++ }
        if (!(row in rows)) r++
        rows[row]++; owner++
      }
    }
    END {
      for (k in rows) if (rows[k] > max) max = rows[k]
      printf "%d %d %.2f %d %.2f\n", n, r, r ? owner / r : 0, max, n ? named / n : 0 }'
}

scenario_400 >"$work/node-400.yaml"
for set in default full; do
  scrape node-8gpu "$work/a-$set.prom" "$set"
  scrape "$work/node-400.yaml" "$work/b-$set.prom" "$set"
done
families() { grep -v '^#' "$1" | sed 's/[{ ].*//' | sort | uniq -c | awk '{ print $2, $1 }'; }
join -a1 -a2 -e0 -o 0,1.2,2.2 <(families "$work/a-default.prom") <(families "$work/a-full.prom") >"$work/a"
join -a1 -a2 -e0 -o 0,1.2,2.2 <(families "$work/b-default.prom") <(families "$work/b-full.prom") >"$work/b"
join -a1 -a2 -e0 -o 0,1.2,1.3,2.2,2.3 "$work/a" "$work/b" | sort -k5,5nr -k1,1 >"$work/rows"
printf '%-52s %21s %21s\n' "" node-8gpu node-400
printf '%-52s %10s %10s %10s %10s\n' family default full default full
awk '{ printf "%-52s %10d %10d %10d %10d\n", $1, $2, $3, $4, $5 }' "$work/rows"
awk '{ a += $2; b += $3; c += $4; d += $5 } END {
  printf "%-52s %10d %10d %10d %10d\n", "total per node", a, b, c, d
  printf "%-52s %10d %10d %10d %10d\n", "per 1,000 nodes", a * 1000, b * 1000, c * 1000, d * 1000 }' "$work/rows"
paste <(per_container "$work/a-default.prom") <(per_container "$work/a-full.prom") \
  <(per_container "$work/b-default.prom") <(per_container "$work/b-full.prom") | awk '{
  printf "%-52s %10d %10d %10d %10d\n", "containers", $1, $6, $11, $16
  printf "%-52s %10d %10d %10d %10d\n", "(unit, container) rows", $2, $7, $12, $17
  printf "%-52s %10.2f %10.2f %10.2f %10.2f\n", "owner series per container and unit, mean", $3, $8, $13, $18
  printf "%-52s %10d %10d %10d %10d\n", "owner series per container and unit, most", $4, $9, $14, $19
  printf "%-52s %10.2f %10.2f %10.2f %10.2f\n", "series naming a pod or container, per container", $5, $10, $15, $20 }'
