#!/usr/bin/env bash
# A real Prometheus scrapes two `gpumeter demo` agents (two scenarios, two nodes; Prometheus asks
# for OpenMetrics first, so this checks that exposition end to end) with our recording and alert
# rules loaded; then PromQL checks that the owners of every unit add up to it (rates and totals),
# that no unit's containers add up to more than the unit (the incumbents' 300 %), that every
# dashboard query evaluates and names only catalogued metrics, and that the rules are healthy.
# Also `promtool check rules` and `promtool test rules` on deploy/kubernetes/monitoring.
# Usage: prometheus_test.sh GPUMETER SOURCE_DIR
set -euo pipefail
. "$(dirname "$0")/lib.sh"
bin=$1 src=$2
if ! command -v prometheus >/dev/null || ! command -v promtool >/dev/null; then
  # scripts/setup.sh installs it; a machine set up another way gets Debian's package here.
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q prometheus >/dev/null || { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q prometheus >/dev/null; }
  fi
  command -v prometheus >/dev/null || { echo "FAIL: prometheus is not installed and could not be installed"; exit 1; }
fi
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; for f in "$work"/*.log; do [ -f "$f" ] && { echo "== $f"; tail -20 "$f"; }; done >&2; exit 1; }

# The rules as a plain rule file, taken from the PrometheusRule the way docs/deploy.md says.
monitoring=$src/deploy/kubernetes/monitoring
rules=$work/rules.yaml dashboard=$monitoring/gpumeter-dashboard.json
sed -n '/^spec:/,$p' "$monitoring/prometheusrule.yaml" | sed '1d; s/^  //' >"$rules"
cp "$monitoring/rules_test.yaml" "$work/"
promtool check rules "$rules" || fail "promtool check rules"
(cd "$work" && promtool test rules rules_test.yaml) || fail "promtool test rules"
jq -e '.panels | length > 0' "$dashboard" >/dev/null || fail "dashboard is not valid JSON"
# Every metric the dashboard and the rules query is in the catalogue (or recorded by the rules).
"$bin" metrics-doc >"$work/catalogue.md"
known=$(sed -n 's/^| `\(gpumeter_[a-z0-9_]*\)`.*/\1/p' "$work/catalogue.md"; sed -n 's/^ *- record: //p' "$rules")
for m in $( (jq -r '.panels[] | select(.targets) | .targets[].expr' "$dashboard";
             jq -r '.templating.list[] | .definition // empty' "$dashboard";
             grep -E '^ +expr:|^ +(sum|/|<)' "$rules") | grep -oE '[a-z_:]*gpumeter_[a-z0-9_:]*' | sort -u); do
  grep -qx "$m" <<<"$known" || fail "dashboard or rules query $m, which is not in the catalogue"
done

# node-8gpu with its GPU 7 lost at scenario second 40 instead of 240, inside this run: from then
# on the holder's compute is unknown, on both paths.
sed 's/{kind: gpu-lost, gpu: 7, from_s: 240}/{kind: gpu-lost, gpu: 7, from_s: 40}/' \
  "$(dirname "$0")/../../scenarios/node-8gpu.yaml" >"$work/node-8gpu.yaml"
grep -q 'gpu: 7, from_s: 40}' "$work/node-8gpu.yaml" || fail "node-8gpu: the loss was not moved"
# --duration: a kept store at --speedup needs an end (the demo starts its clock that far back);
# the demos are stopped long before it.
# demo1 keeps idle cost apart (its cost counters are compared with `report` under that rule below);
# demo2 shares it by use (the default). demo1 serves the default set of per-container series,
# demo2 the full set (--container-series full): the rules, the dashboard and `report` work on a
# fleet of both.
"$bin" demo --scenario "$work/node-8gpu.yaml" --duration 600 --refresh 600 --interval 0.5 --speedup 4 --listen 127.0.0.1:0 --shutdown-grace 3 \
  --store "$work/demo1.db" --idle separate >"$work/demo1.log" 2>&1 &
demo1=$!
"$bin" demo --scenario mig-h200 --duration 600 --refresh 600 --interval 0.5 --speedup 4 --listen 127.0.0.1:0 --shutdown-grace 3 \
  --store "$work/demo2.db" --container-series full >"$work/demo2.log" 2>&1 &
demo2=$!
target1=$(wait_for_match "$work/demo1.log" 's|^metrics: http://\([^ ]*\)/metrics.*|\1|p')
target2=$(wait_for_match "$work/demo2.log" 's|^metrics: http://\([^ ]*\)/metrics.*|\1|p')
[ -n "$target1" ] && [ -n "$target2" ] || fail "a demo printed no address"

start_prometheus "$work" "$rules" "$target1" "$target2" || fail "prometheus did not start"

# Wait until a few scrapes are in.
for _ in $(seq 1 60); do
  n=$(query 'min(count_over_time(up{job="gpumeter"}[1m]))' | jq -r '.data.result[0].value[1] // 0')
  [ "$n" -ge 6 ] && break
  sleep 0.5
done
health=$(curl -fsS "$api/api/v1/targets" | jq -r '[.data.activeTargets[] | "\(.health) \(.lastError)"] | unique | join(";")')
[ "$health" = "up " ] || fail "targets not healthy: $health"
[ "$(query 'count(up{job="gpumeter"} == 1)' | jq -r '.data.result[0].value[1]')" = 2 ] || fail "two agents must be up"
nodes=$(query 'count by (node) (gpumeter_unit_info)' | jq -r '[.data.result[].metric.node] | sort | join(",")')
[ "$nodes" = "gpu-node-dgx-07,gpu-node-h200" ] || fail "nodes: $nodes"

# Conservation, in PromQL, on what Prometheus stored.
check_le() {  # expr, bound
  local v
  v=$(query "$1" | jq -r '.data.result[0].value[1] // "none"')
  [ "$v" != none ] || fail "no result for $1"
  awk -v v="$v" -v b="$2" 'BEGIN { exit !(v <= b) }' || fail "$1 = $v, expected <= $2"
}
# Totals since start, and rates over the last minute: containers + idle + system + unattributed
# of every unit = the unit's time, and its memory.
check_le 'max(abs(sum by (node, unit) (gpumeter_compute_seconds_total) / on (node, unit) gpumeter_unit_seconds_total - 1))' 1e-9
check_le 'max(abs(sum by (node, unit) (gpumeter_memory_byte_seconds_total) / on (node, unit) gpumeter_unit_memory_capacity_byte_seconds_total - 1))' 1e-9
# rate() extrapolates each series over its own samples, and in this short run every series began
# inside the window, at different scrapes (a container's first row comes with its process): so
# the rates agree only approximately (within a few %, more on a loaded machine), while the
# totals above agree exactly.
check_le 'max(abs(sum by (node, unit) (rate(gpumeter_compute_seconds_total[1m])) / on (node, unit) rate(gpumeter_unit_seconds_total[1m]) - 1))' 0.05
check_le 'max(abs(sum by (node, unit) (rate(gpumeter_memory_byte_seconds_total[1m])) / on (node, unit) rate(gpumeter_unit_memory_capacity_byte_seconds_total[1m]) - 1))' 0.05
# No unit's containers add up to more than the unit: nobody is shown the device's whole value
# (the gauge: demo2's, of the full set).
check_le 'max(sum by (node, unit) (gpumeter_compute_ratio{owner_kind="container"}))' 1.000001
# The default set (demo1): at most 8 series per container and unit, none of the full set's; the
# full set (demo2) has more. Process series carry owner_kind but no gpu_uuid.
check_le 'max(count by (node, unit, namespace, pod, container) ({__name__=~"gpumeter_.*",node="gpu-node-dgx-07",owner_kind="container",gpu_uuid=~".+"}))' 8
[ "$(query 'count({node="gpu-node-dgx-07",__name__=~"gpumeter_(memory_bytes|compute_ratio|memory_busy_.*|requested_share_ratio|idle_cost_total|compute_gpus|memory_gpus)"})' | jq -r '.data.result | length')" = 0 ] ||
  fail "demo1 (the default set) exports series of the full set"
check_le '-max(count by (node, unit, namespace, pod, container) ({__name__=~"gpumeter_.*",node="gpu-node-h200",owner_kind="container",gpu_uuid=~".+"}))' -9
check_le 'max(sum by (node, unit) (rate(gpumeter_compute_seconds_total{owner_kind="container"}[1m])) / on (node, unit) rate(gpumeter_unit_seconds_total[1m]))' 1.05
# Cost: the owners of every unit add up to its cost, which is its price × its time.
check_le 'max(abs(sum by (node, unit) (gpumeter_cost_total) / on (node, unit) gpumeter_unit_cost_total - 1))' 1e-9
check_le 'max(abs(gpumeter_unit_cost_total / on (node, unit) (gpumeter_unit_seconds_total * on (node, unit) group_left () gpumeter_unit_price_per_hour / 3600) - 1))' 1e-9
[ "$(query 'count(gpumeter_cost_info{policy="memory/idle=separate"})' | jq -r '.data.result[0].value[1]')" = 1 ] || fail "demo1's gpumeter_cost_info does not name memory/idle=separate"
# node-8gpu's Node object (scenario node_object): its facts on gpumeter_node_info, and every unit
# priced by its instance type from the bundled table; mig-h200 has none: priced by model.
[ "$(query 'count(gpumeter_node_info{node="gpu-node-dgx-07",instance_type="p5.48xlarge",region="us-east-1",capacity_type="on-demand",cloud="aws"})' | jq -r '.data.result[0].value[1]')" = 1 ] ||
  fail "gpumeter_node_info of gpu-node-dgx-07: $(query 'gpumeter_node_info' | jq -c '.data.result')"
[ "$(query 'count(gpumeter_unit_price_per_hour{node="gpu-node-dgx-07"})' | jq -r '.data.result[0].value[1]')" -ge 8 ] &&
  [ "$(query 'count(gpumeter_unit_price_per_hour{node="gpu-node-dgx-07",source!~".*instance table: aws p5.48xlarge.*"})' | jq -r '.data.result | length')" = 0 ] ||
  fail "gpu-node-dgx-07 not priced by its instance type: $(query 'gpumeter_unit_price_per_hour{node="gpu-node-dgx-07"}' | jq -c '[.data.result[].metric.source] | unique')"
[ "$(query 'count(gpumeter_node_info{node="gpu-node-h200"})' | jq -r '.data.result | length')" = 0 ] || fail "gpu-node-h200 has no Node object"
namespaces=$(query 'sum by (namespace) (gpumeter_compute_seconds_total{owner_kind="container"})' | jq -r '[.data.result[].metric.namespace] | sort | join(",")')
[ "$namespaces" = "ads,batch,infra,llm,research,sandbox,search,speech,vision" ] || fail "namespaces of both nodes: $namespaces"

# node-8gpu's debug shell (a GPU user without a request, from scenario second 30) opens critical
# findings, and the demos' first rightsizing runs 5 s after their start: wait for both, so that
# the findings and rightsizing panels have their rows.
for _ in $(seq 1 40); do
  [ "$(query 'count(gpumeter_finding_first_seen_timestamp_seconds)' | jq -r '.data.result[0].value[1] // 0')" -gt 0 ] &&
    [ "$(query 'count(gpumeter_rightsize_monthly_savings)' | jq -r '.data.result[0].value[1] // 0')" -gt 0 ] && break
  sleep 0.5
done
# Every dashboard query evaluates (Grafana's variables replaced by what "All" sends).
jq -r '.panels[] | select(.targets) | .targets[].expr' "$dashboard" | while read -r expr; do
  q=${expr//\$cluster/.*}; q=${q//\$node/.*}; q=${q//\$namespace/.*}; q=${q//\$__rate_interval/1m}; q=${q//\$__range/10m}
  status=$(query "$q" | jq -r '.status')
  [ "$status" = success ] || fail "dashboard query failed: $q"
  [ "$(query "$q" | jq -r '.data.result | length')" -gt 0 ] || fail "dashboard query is empty: $q"
done
# The rules evaluate without errors.
sleep 1
bad=$(curl -fsS "$api/api/v1/rules" | jq -r '[.data.groups[].rules[] | select(.health == "err") | .name] | join(",")')
[ -z "$bad" ] || fail "rules in error: $bad"
echo "ok: a real Prometheus scraped the agent; owners add up per unit in PromQL; dashboard and rules evaluate"

# The same run reported from each demo's SQLite store and from Prometheus (PromQL increase over
# the run) agrees per node and namespace. Let a few more scrapes in first, then stop the demos:
# each stops sampling and serves its final counters for 3 s (--shutdown-grace), so Prometheus's
# last scrape holds what the store holds.
sleep 4
kill -TERM "$demo1" "$demo2"
wait "$demo1" "$demo2" || fail "a demo did not stop cleanly"
grep -q -- '--- chargeback' "$work/demo1.log" || fail "the demo did not end with a chargeback"
# The window ends now (no --to): the minute in progress is in it, on this path as on the store's.
"$bin" report --source "prometheus:$api" --window 10m --by node,namespace --format json >"$work/prom.json" \
  || fail "report from Prometheus"
for db in demo1 demo2; do
  "$bin" report --source "sqlite:$work/$db.db" --by node,namespace --format json >"$work/$db.json" || fail "report from $db"
done
# Per (node, namespace) with at least 1 % of the cost: |Prometheus - store| <= 2 % of the store's.
jq -s -r '(.[0].groups | map({key: "\(.group.node)/\(.group.namespace)", value: .cost}) | from_entries) as $p
  | ([.[1].groups[], .[2].groups[]] | map({key: "\(.group.node)/\(.group.namespace)", value: .cost}) | from_entries) as $s
  | ($s | add) as $total
  | $s | to_entries[] | select(.value >= 0.01 * $total)
  | "\(.key) \(.value) \($p[.key] // 0)"' "$work/prom.json" "$work/demo1.json" "$work/demo2.json" >"$work/compare.txt"
[ -s "$work/compare.txt" ] || fail "nothing to compare"
awk '{ d = ($3 - $2) / $2; if (d < 0) d = -d; printf "  %-40s store %.5f  prometheus %.5f  %+.2f%%\n", $1, $2, $3, 100 * ($3 - $2) / $2;
       if (d > m) m = d } END { exit !(m <= 0.02) }' "$work/compare.txt" || { cat "$work/compare.txt"; fail "store and Prometheus disagree by more than 2 %"; }
echo "ok: chargeback from the stores and from Prometheus agree within 2 % per node and namespace"
# Unknown compute (GPU 7 lost at scenario second 40: its holder's use is unknown from then on)
# reads the same from both: the counter and its recording rule, and the store's column.
jq -s -r '(.[0].groups | map({key: "\(.group.node)/\(.group.namespace)", value: .computeUnknownHours}) | from_entries) as $p
  | [.[1].groups[], .[2].groups[]] | map(select(.computeUnknownHours > 0))[]
  | "\(.group.node)/\(.group.namespace) \(.computeUnknownHours) \($p["\(.group.node)/\(.group.namespace)"] // 0)"' \
  "$work/prom.json" "$work/demo1.json" "$work/demo2.json" >"$work/unknown.txt"
[ -s "$work/unknown.txt" ] || { jq '.total' "$work/demo1.json"; fail "no unknown compute in the stores: the GPU loss did not happen in the run"; }
awk '{ d = ($3 - $2) / $2; if (d < 0) d = -d; printf "  %-40s unknown GPU-h store %.5f  prometheus %.5f\n", $1, $2, $3;
       if (d > m) m = d } END { exit !(m <= 0.02) }' "$work/unknown.txt" || { cat "$work/unknown.txt"; fail "unknown compute: store and Prometheus disagree by more than 2 %"; }
echo "ok: unknown compute from the stores and from Prometheus agree within 2 %"
# The cost counters at the end of the run (each agent's last scrape, in its grace) against
# `report` from its store under the agent's own policy, per namespace. demo1 keeps idle apart:
# each interval's split adds up to the window's, so they agree (1 %). demo2 shares idle by use
# per interval where `report` shares the window's idle by the window's use: only the total agrees
# (docs/pricing.md, "Cost on /metrics"); the per-namespace difference is printed.
counters() {  # node
  query "sum by (namespace) (last_over_time(gpumeter_cost_total{node=\"$1\"}[10m]))" |
    jq -r '.data.result[] | "\(.metric.namespace // "__idle__") \(.value[1])"' | sort  # idle, system, unattributed: no namespace
}
store_costs() {  # db, idle rule
  "$bin" report --source "sqlite:$work/$1.db" --by namespace --idle "$2" --format json |
    jq -r '.groups[] | "\(.group.namespace) \(.cost)"' | sort
}
compare_costs() {  # label, bound (fraction; 0: print only), counters file, store file
  join -a1 -a2 -e 0 -o 0,1.2,2.2 "$3" "$4" |
    awk -v label="$1" -v bound="$2" '{ d = $3 > 0 ? ($2 - $3) / $3 : ($2 > 0); if (d < 0) d = -d; t2 += $2; t3 += $3
      printf "  %-10s %-12s counters %.6f  report %.6f  %+.3f%%\n", label, $1, $2, $3, 100 * d
      if (d > m) m = d } END { td = (t2 - t3) / t3; if (td < 0) td = -td
      printf "  %-10s %-12s counters %.6f  report %.6f  %+.4f%%\n", label, "total", t2, t3, 100 * td
      exit !(td <= 0.01 && (bound == 0 || m <= bound)) }'
}
counters gpu-node-dgx-07 >"$work/c1.txt"; store_costs demo1 separate >"$work/s1.txt"
counters gpu-node-h200 >"$work/c2.txt"; store_costs demo2 share >"$work/s2.txt"
[ -s "$work/c1.txt" ] && [ -s "$work/s1.txt" ] || fail "no cost counters or no report"
compare_costs separate 0.01 "$work/c1.txt" "$work/s1.txt" || fail "cost counters and report disagree under --idle separate"
compare_costs share 0 "$work/c2.txt" "$work/s2.txt" || fail "cost counters and report disagree on the total under --idle share"
echo "ok: cost counters equal report per namespace under --idle separate, and in total under share"
# The idle holder (mig-h200's infra/idle-reserve-0 holds a 1g.18gb and runs nothing): under
# every policy and idle rule, both paths charge it the same, and it pays for the instance unless
# the rule keeps idle cost apart (separate, with a basis other than request).
for policy in memory compute blend:0.5 request; do
  for idle in share owner separate; do
    "$bin" report --source "prometheus:$api" --window 10m --by namespace --policy "$policy" --idle "$idle" --format json >"$work/p.json" ||
      fail "report from Prometheus, $policy/$idle"
    "$bin" report --source "sqlite:$work/demo2.db" --by namespace --policy "$policy" --idle "$idle" --format json >"$work/s.json" ||
      fail "report from the store, $policy/$idle"
    p=$(jq -r '[.groups[] | select(.group.namespace == "infra") | .cost] | add // 0' "$work/p.json")
    s=$(jq -r '[.groups[] | select(.group.namespace == "infra") | .cost] | add // 0' "$work/s.json")
    pays=1; [ "$idle" = separate ] && [ "$policy" != request ] && pays=0
    awk -v p="$p" -v s="$s" -v pays="$pays" 'BEGIN { d = p - s; if (d < 0) d = -d
      exit !(pays ? (s > 0 && d <= 0.02 * s) : (s == 0 && p == 0)) }' ||
      fail "idle holder under $policy/$idle: store $s, prometheus $p (pays: $pays)"
  done
done
echo "ok: the idle holder pays the same from the store and from Prometheus under every policy and idle rule"
# A fleet whose agents stopped long ago (issue 30): a window in which Prometheus holds none of
# their series is an error that says so, from report and from rightsize, never an empty answer
# with exit 0 (rightsizing once printed no row and exited 0 on series it could not read).
stale=$(( $(date +%s) - 30 * 86400 ))
rc=0; "$bin" report --source "prometheus:$api" --window 1h --to "$stale" >"$work/stale.out" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q "no gpumeter_unit_info in the window" "$work/stale.out" || { cat "$work/stale.out"; fail "report on a stale window (rc $rc)"; }
rc=0; "$bin" rightsize --source "prometheus:$api" --window 1d --to "$stale" >"$work/stale.out" 2>&1 || rc=$?
[ "$rc" -ne 0 ] && grep -q "no usage recorded in the 1d before --to" "$work/stale.out" || { cat "$work/stale.out"; fail "rightsize on a stale window (rc $rc)"; }
# The same with data: the demos' pods, from Prometheus, are rightsized (kept: minutes of history).
"$bin" rightsize --source "prometheus:$api" --window 1h --min-history 1m --format json >"$work/live.json" 2>"$work/live.err" ||
  { cat "$work/live.err"; fail "rightsize from Prometheus with data"; }
jq -e '.recommendations | length > 0' "$work/live.json" >/dev/null || fail "rightsize from Prometheus with data gave no row"
echo "ok: a window the agents left long ago is an error from report and rightsize; with data, rightsize has rows"
# Bad Prometheus input: unreachable, and not a URL.
rc=0; "$bin" report --source "prometheus:http://127.0.0.1:1" --window 1h >"$work/bad.out" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q "unreachable" "$work/bad.out" || { cat "$work/bad.out"; fail "an unreachable Prometheus must be a clear error (rc $rc)"; }
rc=0; "$bin" report --source "prometheus:$api" >"$work/bad.out" 2>&1 || rc=$?
[ "$rc" = 2 ] && grep -q "needs --window" "$work/bad.out" || { cat "$work/bad.out"; fail "prometheus without a window (rc $rc)"; }
