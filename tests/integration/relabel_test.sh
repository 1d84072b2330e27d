#!/usr/bin/env bash
# Labels change under running pods (issue 30): while a real Prometheus scrapes the agent, one pod's
# --pod-label label changes, the agent restarts (a container restart: same address, counters from
# 0) while a pod is recreated under its name with a new UID and container ID (a StatefulSet pod
# replaced), and another pod's label changes. `report --by label:team` and `--by pod` from Prometheus
# equal the same reports from the agent's store within 2 % in every group, and both put each
# pod under its latest team. Before labels moved off the counters, a relabelled pod was a new
# series to Prometheus and its whole total counted again (+64 % for the pod).
#
# What Prometheus cannot see, it does not count: the usage between its last scrape of the agent
# and the agent's exit. Each stop is sent as soon as a scrape has landed (polled every 50 ms), so
# the store holds at most a few 0.25 s intervals more, well under 1 % of the run.
# Usage: relabel_test.sh GPUMETER FAKE_NODE FAKE_NVML_LIBRARY SCENARIO_DIR
set -euo pipefail
. "$(dirname "$0")/lib.sh"
bin=$1 fake_node=$2 nvml=$3 scenarios=$4
command -v prometheus >/dev/null || { echo "FAIL: prometheus is not installed (scripts/setup.sh installs it)"; exit 1; }
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; [ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; for f in "$work"/*.log; do [ -f "$f" ] && { echo "== $f"; tail -20 "$f"; }; done >&2; exit 1; }

scenario=$scenarios/timeslice-h100.yaml
export GPUMETER_FAKE_NVML_SCENARIO=$scenario GPUMETER_FAKE_NVML_START_S=200
start_fake_node "$fake_node" "$scenario" "$work/node" 200 || fail "fake node did not start"
printf 'version: v1\nsharing:\n  timeSlicing:\n    resources:\n      - name: nvidia.com/gpu\n        replicas: 4\n' >"$work/plugin.yaml"

port=$(free_port) || fail "no free port"
agent_pid="" proc_root=$work/node/proc
start_agent() {
  "$bin" agent --nvml-library "$nvml" --node-name node-a --pod-resources-socket "$work/node/kubelet.sock" \
    --proc-root "$proc_root" --pods-file "$work/node/pods.json" --device-plugin-config "$work/plugin.yaml" \
    --pod-label team --interval 0.25 --store "$work/usage.db" --listen "127.0.0.1:$port" >>"$work/agent.log" 2>&1 &
  agent_pid=$!
  for _ in $(seq 1 100); do curl -fs "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && return 0; sleep 0.1; done
  fail "agent not ready on port $port"
}
# Stops the agent as soon as Prometheus has a scrape newer than the last one it had.
stop_after_scrape() {
  local before now
  before=$(query 'timestamp(up{job="gpumeter"})' | jq -r '.data.result[0].value[1] // 0')
  for _ in $(seq 1 100); do
    now=$(query 'timestamp(up{job="gpumeter"})' | jq -r '.data.result[0].value[1] // 0')
    [ "$now" != "$before" ] && break
    sleep 0.05
  done
  kill -TERM "$agent_pid"
  wait "$agent_pid" 2>/dev/null || true
}
# Sets the team label of a pod in the pods file (replaced whole, as a kubelet's writer would).
relabel() {
  jq -c --arg pod "$1" --arg team "$2" \
    '(.items[] | select(.metadata.name == $pod) | .metadata.labels.team) = $team' \
    "$work/node/pods.json" >"$work/pods.new" && mv "$work/pods.new" "$work/node/pods.json"
  for _ in $(seq 1 100); do
    curl -fsS "http://127.0.0.1:$port/metrics" >"$work/m.prom" 2>/dev/null &&
      grep -q "pod=\"$1\",label_team=\"$2\"" "$work/m.prom" && return 0
    sleep 0.1
  done
  fail "the agent did not take $1's new team $2"
}

# Recreates a pod under its name: a new UID and container ID in the pods file and in its processes'
# cgroups (a copy of the node's /proc, which the fake node would otherwise rewrite; the scenario's
# processes are steady at this point).
recreate_pod() {
  local pod=$1 uid cid new_uid new_cid
  uid=$(jq -r --arg pod "$pod" '.items[] | select(.metadata.name == $pod) | .metadata.uid' "$work/node/pods.json")
  cid=$(jq -r --arg pod "$pod" '.items[] | select(.metadata.name == $pod) | .status.containerStatuses[0].containerID | sub("^containerd://"; "")' "$work/node/pods.json")
  [ -n "$uid" ] && [ -n "$cid" ] || fail "no uid or container ID for $pod"
  new_uid=${uid%????}beef new_cid=${cid%????}beef
  rm -rf "$work/proc-recreated"; cp -r "$work/node/proc" "$work/proc-recreated"
  grep -l "${uid//-/_}" "$work"/proc-recreated/*/cgroup >"$work/recreated.txt" || fail "no process of $pod in /proc"
  while read -r f; do sed -i "s/${uid//-/_}/${new_uid//-/_}/; s/$cid/$new_cid/" "$f"; done <"$work/recreated.txt"
  sed "s/$uid/$new_uid/; s/$cid/$new_cid/" "$work/node/pods.json" >"$work/pods.new" && mv "$work/pods.new" "$work/node/pods.json"
  grep -q "$new_uid" "$work/node/pods.json" || fail "$pod's new UID is not in the pods file"
  proc_root=$work/proc-recreated
}

start_agent
start_prometheus "$work" "" "127.0.0.1:$port" || fail "prometheus did not start"
for _ in $(seq 1 100); do
  [ "$(query 'count_over_time(up{job="gpumeter"}[1m])' | jq -r '.data.result[0].value[1] // 0')" -ge 3 ] && break
  sleep 0.2
done
sleep 8
relabel embedder-5c7b9-x2k4p vision   # search -> vision, while it runs
sleep 9
stop_after_scrape                       # the agent restarts: counters from 0, same address
recreate_pod reranker-6f8d1-q9w2e       # meanwhile the reranker is recreated: new UID
start_agent
# The recreated pod is attributed (its processes found under the new UID), not unattributed.
reranker_compute() { awk '/^gpumeter_compute_seconds_total\{.*pod="reranker-6f8d1-q9w2e"/ && $NF > 0 { n++ } END { exit !n }' "$work/m.prom"; }
for _ in $(seq 1 50); do
  curl -fsS "http://127.0.0.1:$port/metrics" >"$work/m.prom" 2>/dev/null && reranker_compute && break
  sleep 0.2
done
reranker_compute ||
  fail "the recreated reranker has no compute after the restart: $(grep reranker "$work/m.prom" | head -5)"
sleep 8
relabel ctr-model-0 search              # ads -> search, after the restart
sleep 9
stop_after_scrape
sleep 2                                 # the stale marker and the last scrape land

# The whole run, from both sources: Prometheus's window reaches back before the agent started.
for by in label:team pod; do
  "$bin" report --source "prometheus:$api" --window 10m --by "$by" --format json >"$work/prom-$by.json" ||
    fail "report --by $by from Prometheus"
  "$bin" report --source "sqlite:$work/usage.db" --window 10m --by "$by" --format json >"$work/store-$by.json" ||
    fail "report --by $by from the store"
done
for src in prom store; do
  for pod in search/embedder-5c7b9-x2k4p search/reranker-6f8d1-q9w2e; do
    jq -e --arg pod "$pod" '[.groups[] | select(.group.pod == $pod)] | length == 1' "$work/$src-pod.json" >/dev/null ||
      fail "$pod is not one row in the report by pod from $src"
  done
done
# Each pod under its latest team, in both: vision holds the embedder, ads nothing any more.
for src in prom store; do
  jq -r '.groups[].group["label:team"] // empty' "$work/$src-label:team.json" | sort >"$work/$src-teams.txt"
  grep -qx vision "$work/$src-teams.txt" || fail "$src: no team vision after the relabel: $(tr '\n' ' ' <"$work/$src-teams.txt")"
  ! grep -qx ads "$work/$src-teams.txt" || fail "$src: team ads still has usage after ctr-model-0 moved to search"
done
# Per group with at least 1 % of the cost: cost and compute hours, |Prometheus - store| <= 2 %.
for by in label:team pod; do
  jq -s -r '(.[0].groups | map({key: (.group | tostring), value: .}) | from_entries) as $p
    | ([.[1].groups[].cost] | add) as $total
    | .[1].groups[] | select(.cost >= 0.01 * $total)
    | "\(.group | tostring | gsub(" "; "_")) \(.cost) \($p[.group | tostring].cost // 0) \(.computeHours) \($p[.group | tostring].computeHours // 0)"' \
    "$work/prom-$by.json" "$work/store-$by.json" >"$work/compare-$by.txt"
  want=3; [ "$by" = pod ] || want=2  # three pods; two teams after the relabels (search, vision)
  # The recreated pod is one row, compared like the others (it holds well over 1 % of the cost).
  grep -q "reranker-6f8d1-q9w2e" "$work/compare-$by.txt" || [ "$by" != pod ] ||
    { cat "$work/compare-$by.txt"; fail "the recreated reranker is not compared by pod"; }
  [ "$(wc -l <"$work/compare-$by.txt")" -ge "$want" ] || { cat "$work/compare-$by.txt"; fail "too few groups by $by to compare"; }
  echo "by $by:"
  awk '{ d = ($3 - $2) / $2; if (d < 0) d = -d; if (d > m) m = d
         if ($4 > 0) { e = ($5 - $4) / $4; if (e < 0) e = -e; if (e > m) m = e }
         printf "  %-60s cost store %.6f prometheus %.6f  compute store %.6f prometheus %.6f\n", $1, $2, $3, $4, $5 }
       END { exit !(m <= 0.02) }' "$work/compare-$by.txt" || fail "store and Prometheus disagree by more than 2 % by $by"
done
echo "ok: across two relabels, a pod recreated under its name and an agent restart, Prometheus and the store agree within 2 % by team and by pod"
