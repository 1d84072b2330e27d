#!/usr/bin/env bash
# `gpumeter top --source prometheus:` against a real Prometheus scraping two demo agents (two
# scenarios, two nodes; the set-up of prometheus_test.sh): both nodes' pods appear, and the
# per-namespace totals of the frame (rates over --window) equal `gpumeter report`'s for the same
# window evaluated at the same settled instant (--at), within 2 %, and the agents' open findings are listed: cost (rate × window) and compute. The demos
# run in real time (--speedup 1), so a unit accounts as many seconds as the window has.
#
# The window is 40 s, not a few: the agents' counters move in steps of one pass (--interval 0.5),
# scraped at another phase every second, so increase() over a window reads a unit's seconds to
# within a step over the scraped span: +-0.5 s of 39 s, 1.3 % at most. `top` divides each owner by
# its unit's seconds (a rate) and cancels that; `report` bills them as read. Over 5 s the same
# step was +-12.5 % (4.375 or 5.625 s of 5), and the runs disagreed either way by up to 12.4 %;
# the report now caps a unit at the window (no reading above it), the reading below it stays.
# Usage: top_prometheus_test.sh GPUMETER
set -euo pipefail
. "$(dirname "$0")/lib.sh"
bin=$1
command -v prometheus >/dev/null || { echo "FAIL: prometheus is not installed (scripts/setup.sh installs it)"; exit 1; }
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; for f in "$work"/*.log; do [ -f "$f" ] && { echo "== $f"; tail -20 "$f"; }; done >&2; exit 1; }

for s in node-8gpu mig-h200; do
  "$bin" demo --scenario "$s" --duration 0 --refresh 600 --interval 0.5 --speedup 1 --listen 127.0.0.1:0 >"$work/$s.log" 2>&1 &
done
target1=$(wait_for_match "$work/node-8gpu.log" 's|^metrics: http://\([^ ]*\)/metrics.*|\1|p')
target2=$(wait_for_match "$work/mig-h200.log" 's|^metrics: http://\([^ ]*\)/metrics.*|\1|p')
[ -n "$target1" ] && [ -n "$target2" ] || fail "a demo printed no address"
start_prometheus "$work" "" "$target1" "$target2" || fail "prometheus did not start"
# Scrapes from both agents over more than the window.
window=40
for _ in $(seq 1 240); do
  n=$(query 'min(count_over_time(up{job="gpumeter"}[1m]))' | jq -r '.data.result[0].value[1] // 0')
  [ "$(query 'count(up{job="gpumeter"} == 1)' | jq -r '.data.result[0].value[1] // 0')" = 2 ] && [ "$n" -ge $((window + 2)) ] && break
  sleep 0.25
done

# One instant for both, once it is settled: every scrape that began before it has landed (a
# target's scrapes run one after another, so a later `up` sample from each says so). A frame of
# "now" can still gain the scrape in flight, and a slow agent (a sanitizer build) made top and a
# report run a second later disagree by 14 %.
at=$(date +%s)
for _ in $(seq 1 80); do
  [ "$(query "count(timestamp(up{job=\"gpumeter\"}) > $at)" | jq -r '.data.result[0].value[1] // 0')" = 2 ] && break
  sleep 0.25
done
"$bin" top --once --source "prometheus:$api" --window "${window}s" --at "$at" --by pod --format json >"$work/top.json" || fail "top from Prometheus"
"$bin" top --once --source "prometheus:$api" --window "${window}s" --at "$at" >"$work/top.txt" || fail "top from Prometheus, text"
[ "$(jq -r '.atUnixS' "$work/top.json")" = "$at" ] || fail "the frame is not at --at $at: $(jq -r '.atUnixS' "$work/top.json")"
"$bin" report --source "prometheus:$api" --window "${window}s" --to "$at" --by namespace --format json >"$work/report.json" || fail "report"
nodes=$(jq -r '[.units[].node] | unique | join(",")' "$work/top.json")
[ "$nodes" = "gpu-node-dgx-07,gpu-node-h200" ] || fail "nodes in the frame: $nodes"
# Both nodes' pods: every pod the report's Prometheus holds for each node is in the frame.
for node in gpu-node-dgx-07 gpu-node-h200; do
  pods=$(query "group by (namespace, pod) (gpumeter_compute_seconds_total{node=\"$node\",owner_kind=\"container\"})" |
    jq -r '.data.result[].metric | "\(.namespace)/\(.pod)"')
  [ -n "$pods" ] || fail "no pods of $node in Prometheus"
  for p in $pods; do
    jq -e --arg p "$p" '[.pods[].key | join("/")] | index($p)' "$work/top.json" >/dev/null || fail "$p of $node is not in the frame"
    grep -q " $p/" "$work/top.txt" || fail "$p of $node is not in the text frame"
  done
done
# The agents' open findings, as they export them: node-8gpu's MPS client without limits is one.
# Every finding its agent had open a scrape before is in the frame.
for t in "$target1" "$target2"; do
  curl -fsS "http://$t/api/v1/findings" | jq -r --argjson at "$at" \
    '.findings[] | select(.first_seen < $at - 2) | "\(.node) \(.kind) \(.namespace)/\(.pod)/\(.container)"'
done | sed 's|  *//$| -|' >"$work/agent-findings.txt"
grep -q 'gpu-node-dgx-07 mps-no-limits llm/chat-1/vllm' "$work/agent-findings.txt" || fail "the demo has no MPS finding to look for"
while read -r node kind who; do
  jq -e --arg n "$node" --arg k "$kind" --arg w "$who" \
    '[.findings[] | select(.node == $n and .kind == $k and (.who == $w or ($w == "-" and (.who | test("/") | not))))] | length > 0' \
    "$work/top.json" >/dev/null || fail "finding $node $kind $who is not in the frame"
done <"$work/agent-findings.txt"
# Per namespace: top's cost per hour × the window = the report's cost; compute GPU-equivalents ×
# the window = the report's compute hours. Namespaces with at least 1 % of the cost, and of the
# compute for compute (the report's __idle__, the cost no tenant can be charged, is no namespace:
# top shows it under its unit).
jq -s -r '(.[0].namespaces | map({key: .key[0], value: .}) | from_entries) as $t
  | (.[1].groups | map({key: .group.namespace, value: .}) | from_entries) as $r
  | ([.[1].groups[].cost] | add) as $total | ([.[1].groups[].computeHours] | add) as $compute
  | $r | to_entries[] | select(.value.cost >= 0.01 * $total and .key != "__idle__")
  | "\(.key) \(.value.cost) \(($t[.key].costPerHour // 0) * $w / 3600) \(.value.computeHours) \(($t[.key].computeGpus // 0) * $w / 3600) \(.value.computeHours >= 0.01 * $compute)"' \
  --argjson w "$window" "$work/top.json" "$work/report.json" >"$work/compare.txt"
[ "$(wc -l <"$work/compare.txt")" -ge 6 ] || { cat "$work/compare.txt"; fail "too few namespaces to compare"; }
awk '{ d = ($3 - $2) / $2; if (d < 0) d = -d; if (d > m) m = d
       if ($6 == "true") { e = ($5 - $4) / $4; if (e < 0) e = -e; if (e > m) m = e }
       printf "  %-10s cost report %.6f top %.6f  compute report %.6f top %.6f\n", $1, $2, $3, $4, $5 }
     END { exit !(m <= 0.02) }' "$work/compare.txt" || fail "top and report disagree by more than 2 %"
echo "ok: top from Prometheus shows both nodes' pods and the agents' findings; per-namespace totals equal the report's within 2 %"
