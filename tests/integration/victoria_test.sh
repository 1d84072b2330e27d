#!/usr/bin/env bash
# A second engine (issue 30): VictoriaMetrics as a user runs it — vmagent scrapes two demo agents
# and writes to a single-node VictoriaMetrics, vmalert evaluates the rules — and gpumeter reads it
# through the Prometheus query API it serves. `report` by node and namespace and by team, from
# VictoriaMetrics and from the agents' stores, agree within 2 % per group; `top` shows both nodes;
# the rule file parses in MetricsQL and vmalert, running beside them, writes the recording group.
# MetricsQL's increase() does not extrapolate and starts from the sample before the window
# (billing-and-scaling.md §6): gpumeter's counters start at 0 and series born in the window are
# read from their last value, so both engines give the same growth.
# Usage: victoria_test.sh GPUMETER SOURCE_DIR
set -euo pipefail
. "$(dirname "$0")/lib.sh"
bin=$1 src=$2
for b in victoria-metrics vmagent vmalert; do
  command -v "$b" >/dev/null || { echo "FAIL: $b is not installed (scripts/setup.sh installs victoria-metrics)"; exit 1; }
done
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; [ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; for f in "$work"/*.log; do [ -f "$f" ] && { echo "== $f"; tail -20 "$f"; }; done >&2; exit 1; }
# The recording group runs every 2 s here, not 30 s: vmalert delays a group's first evaluation by
# up to its interval and aligns the query time down to it, so at 30 s the first result could land
# after the test ends (a red CI did). Which interval is a deployment's choice; the rules are the same.
sed -n '/^spec:/,$p' "$src/deploy/kubernetes/monitoring/prometheusrule.yaml" | sed '1d; s/^  //' >"$work/rules.yaml"
grep -q '^    interval: 30s$' "$work/rules.yaml" || fail "the recording group's interval is no longer 30 s: update this test"
sed -i 's/^    interval: 30s$/    interval: 2s/' "$work/rules.yaml"
vmalert -rule="$work/rules.yaml" -dryRun -loggerLevel=ERROR >"$work/vmalert-dry.log" 2>&1 ||
  fail "vmalert does not take the rule file: $(tail -1 "$work/vmalert-dry.log")"

pids=()
for s in node-8gpu mig-h200; do
  "$bin" demo --scenario "$s" --duration 0 --refresh 600 --interval 0.5 --speedup 1 --listen 127.0.0.1:0 \
    --store "$work/$s.db" >"$work/$s.log" 2>&1 &
  pids+=($!)
done
targets=""
for s in node-8gpu mig-h200; do
  t=$(wait_for_match "$work/$s.log" 's|^metrics: http://\([^ ]*\)/metrics.*|\1|p')
  [ -n "$t" ] || fail "demo $s printed no address"
  targets+="\"$t\", "
done
printf 'global: {scrape_interval: 1s}\nscrape_configs:\n  - job_name: gpumeter\n    static_configs: [{targets: [%s]}]\n' \
  "${targets%, }" >"$work/scrape.yml"

# The single node answers queries at once (-search.latencyOffset: by default the last 30 s are
# held back from queries, docs/fleet.md); vmagent flushes every second.
vm_port=$(free_port) || fail "no free port"
victoria-metrics -storageDataPath="$work/vm" -httpListenAddr="127.0.0.1:$vm_port" -search.latencyOffset=0s \
  -loggerLevel=ERROR >"$work/victoria.log" 2>&1 &
vm="http://127.0.0.1:$vm_port"
for _ in $(seq 1 100); do curl -fs "$vm/health" >/dev/null 2>&1 && break; sleep 0.1; done
curl -fs "$vm/health" >/dev/null || fail "victoria-metrics did not start"
agent_port=$(free_port) || fail "no free port"
vmagent -promscrape.config="$work/scrape.yml" -remoteWrite.url="$vm/api/v1/write" -remoteWrite.flushInterval=1s \
  -remoteWrite.tmpDataPath="$work/vmagent" -httpListenAddr="127.0.0.1:$agent_port" -loggerLevel=ERROR >"$work/vmagent.log" 2>&1 &
alert_port=$(free_port) || fail "no free port"
# The alerts go to a notifier nobody listens on: this test judges the recording rules.
vmalert -rule="$work/rules.yaml" -datasource.url="$vm" -remoteWrite.url="$vm" -remoteWrite.flushInterval=1s \
  -notifier.url=http://127.0.0.1:1 \
  -httpListenAddr="127.0.0.1:$alert_port" -loggerLevel=ERROR >"$work/vmalert.log" 2>&1 &
vmq() { curl -fsS --get "$vm/api/v1/query" --data-urlencode "query=$1"; }
for _ in $(seq 1 100); do
  [ "$(vmq 'count(last_over_time(gpumeter_unit_info[1m]))' | jq -r '.data.result[0].value[1] // 0')" -ge 15 ] && break
  sleep 0.3
done
sleep 25
# Each demo stops as soon as vmagent has scraped it again (its targets API: at once, where
# VictoriaMetrics has it a flush later); then vmagent's last flush lands. What a demo counts
# between that scrape and its stop is in its store only: about 50 ms of the run.
i=0
for t in ${targets//[\",]/ }; do
  last_scrape() { curl -fsS "http://127.0.0.1:$agent_port/api/v1/targets" |
    jq -r --arg t "$t" '.data.activeTargets[] | select(.labels.instance == $t) | .lastScrape'; }
  before=$(last_scrape)
  for _ in $(seq 1 100); do [ "$(last_scrape)" != "$before" ] && break; sleep 0.02; done
  kill -TERM "${pids[$i]}"
  i=$((i + 1))
done
wait "${pids[@]}" || fail "a demo did not stop cleanly"
sleep 3

# Per group with at least 1 % of the cost (and of the compute, for compute): |VictoriaMetrics -
# stores| <= 2 % of the stores'.
for by in node,namespace label:team; do
  "$bin" report --source "prometheus:$vm" --window 10m --by "$by" --format json >"$work/vm-$by.json" 2>"$work/vm-report.log" ||
    fail "report --by $by from VictoriaMetrics: $(cat "$work/vm-report.log")"
  for s in node-8gpu mig-h200; do
    "$bin" report --source "sqlite:$work/$s.db" --window 10m --by "$by" --format json >"$work/store-$s-$by.json" ||
      fail "report --by $by from $s's store"
  done
  # The stores' groups added up (a team spans both nodes).
  jq -s '[.[].groups[]] | group_by(.group) | map({group: .[0].group, cost: (map(.cost) | add),
           computeHours: (map(.computeHours) | add)})' "$work/store-node-8gpu-$by.json" "$work/store-mig-h200-$by.json" \
    >"$work/stores-$by.json"
  jq -s -r '(.[0].groups | map({key: (.group | tostring), value: .}) | from_entries) as $v
    | ([.[1][].cost] | add) as $total | ([.[1][].computeHours] | add) as $compute
    | .[1][] | select(.cost >= 0.01 * $total and (.group | tostring | test("__idle__") | not))
    | "\(.group | tostring | gsub(" "; "_")) \(.cost) \($v[.group | tostring].cost // 0) \(.computeHours) \($v[.group | tostring].computeHours // 0) \(.computeHours >= 0.01 * $compute)"' \
    "$work/vm-$by.json" "$work/stores-$by.json" >"$work/compare-$by.txt"
  [ "$(wc -l <"$work/compare-$by.txt")" -ge 4 ] || { cat "$work/compare-$by.txt"; fail "too few groups by $by to compare"; }
  echo "by $by:"
  awk '{ d = ($3 - $2) / $2; if (d < 0) d = -d; if (d > m) m = d
         if ($6 == "true") { e = ($5 - $4) / $4; if (e < 0) e = -e; if (e > m) m = e }
         printf "  %-55s cost store %.6f victoria %.6f (%+.2f%%)\n", $1, $2, $3, 100 * ($3 - $2) / $2 }
       END { exit !(m <= 0.02) }' "$work/compare-$by.txt" || fail "the stores and VictoriaMetrics disagree by more than 2 % by $by"
done

# top from VictoriaMetrics: both nodes, at an instant while both ran.
"$bin" top --once --source "prometheus:$vm" --window 20s --at $(($(date +%s) - 8)) --format json >"$work/top.json" ||
  fail "top from VictoriaMetrics"
[ "$(jq -r '[.units[].node] | unique | join(",")' "$work/top.json")" = "gpu-node-dgx-07,gpu-node-h200" ] ||
  fail "nodes in top's frame: $(jq -c '[.units[].node] | unique' "$work/top.json")"

# vmalert, running beside them, evaluated the recording group and wrote it back.
n=0
for _ in $(seq 1 50); do
  n=$(vmq 'count(last_over_time(namespace:gpumeter_compute_seconds:rate5m[10m]))' | jq -r '.data.result[0].value[1] // 0')
  [ "$n" -ge 5 ] && break
  sleep 0.2
done
[ "$n" -ge 5 ] || fail "vmalert wrote $n namespace:gpumeter_compute_seconds:rate5m series: $(tail -3 "$work/vmalert.log")"
echo "ok: VictoriaMetrics (vmagent, single node, vmalert) and the stores agree within 2 % by node, namespace and team; top and the rules work on it"
