#!/usr/bin/env bash
# A day of cost from backfilled blocks (issue 32): the agent's pipeline runs node-8gpu for 24 h of
# scenario time at a clock the tool sets (gpumeter_cost_history: passes every ~5 s at odd
# offsets, the store recorded as the agent's --store records it, /metrics "scraped" every 60 s
# into timestamped OpenMetrics); promtool turns the scrapes into TSDB blocks, a real Prometheus
# serves them, and the query runs half an hour after the data ends. A day's increase() of
# gpumeter_cost_total by namespace equals `gpumeter report --by namespace` from the store within
# 0.2 % under --idle separate; under share the totals must agree and the per-namespace difference
# is printed (docs/pricing.md). The same day priced from an hourly bill read against Prometheus
# (report --bill) costs the same per namespace (bill_day). Heavy: ~90 s.
# Usage: cost_day_test.sh GPUMETER COST_HISTORY SCENARIOS
set -euo pipefail
export LC_ALL=C  # sort and join must agree on the order
. "$(dirname "$0")/lib.sh"
bin=$1 history=$2 scenarios=$3
command -v prometheus >/dev/null && command -v promtool >/dev/null || { echo "FAIL: prometheus is not installed"; exit 1; }
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; for f in "$work"/*.log; do [ -f "$f" ] && { echo "== $f"; tail -20 "$f"; }; done >&2; exit 1; }

# The day priced from a bill read against Prometheus (report --bill, issue 34): an hourly FOCUS
# line of 40.80 for the node's VM (node-8gpu's providerID), all of it GPU, is 5.10 per GPU-hour,
# the price a pricing file gives the same day: under compute/separate, where splitting hour by
# hour and splitting the window agree, every namespace costs the same both ways (0.01 %; measured
# 0.001 %, the raw counters' births read per hour), and the bill's lines reconcile to the cent.
bill_day() {  # dir last
  local d=$1 last=$2 h0 h1 h
  h0=$(( (last - 25 * 3600) / 3600 * 3600 )) h1=$(( (last + 3600) / 3600 * 3600 + 3600 ))
  { echo "ChargePeriodStart,ChargePeriodEnd,ChargeCategory,EffectiveCost,BilledCost,ListCost,BillingCurrency,ResourceId,ServiceCategory"
    for ((h = h0; h < h1; h += 3600)); do
      echo "$(date -u -d "@$h" +%FT%TZ),$(date -u -d "@$((h + 3600))" +%FT%TZ),Usage,40.80,40.80,55.04,USD,arn:aws:ec2:us-east-1:1:instance/i-0a1b2c3d4e5f60718,Compute"
    done
  } >"$d/bill.csv"
  printf 'gpu_models: {"H100": 5.10}\ndefaults: false\n' >"$d/pricing.yaml"
  local common=(--source "prometheus:$api" --from "$h0" --to "$h1" --by namespace --policy compute --idle separate --format json)
  "$bin" report "${common[@]}" --bill "$d/bill.csv" --bill-split 1.0 >"$d/bill.json" 2>"$d/bill.log" ||
    { cat "$d/bill.log"; fail "report --bill from Prometheus"; }
  "$bin" report "${common[@]}" --pricing "$d/pricing.yaml" >"$d/priced.json" || fail "report with a price from Prometheus"
  jq -e --argjson n $(( (h1 - h0) / 3600 )) '.bill.allocation.addsUp and (.bill.nodes | length) == 1
         and (.bill.nodesWithoutLines | length) == 0 and .bill.allocation.containers > 0
         and .bill.gpuNodeLines.lines == $n' "$d/bill.json" >/dev/null ||
    { jq '.bill | {allocation, nodes, nodesWithoutLines}' "$d/bill.json"; fail "the bill from Prometheus: no node matched, or it does not add up"; }
  jq -s -r '(.[0].groups | map({key: .group.namespace, value: .cost}) | from_entries) as $b
    | .[1].groups[] | select(.group.namespace | test("^(__idle__|system|unattributed)$") | not)
    | "\(.group.namespace) \(.cost) \($b[.group.namespace] // 0)"' "$d/bill.json" "$d/priced.json" >"$d/bill.txt"
  [ -s "$d/bill.txt" ] || fail "bill: nothing to compare"
  awk '{ d = $2 > 0 ? ($3 - $2) / $2 : 0; if (d < 0) d = -d; if (d > m) m = d
         printf "  bill      %-10s priced %.4f  billed %.4f  %+.3f%%\n", $1, $2, $3, 100 * d }
       END { exit !(m <= 0.0001) }' "$d/bill.txt" || fail "a day priced from the bill and from the price disagree"
}

day() {  # idle rule: compares the day from Prometheus with the store's report, prints the rows
  local idle=$1 bound=$2 d=$work/$1
  mkdir -p "$d"
  "$history" "$scenarios/node-8gpu.yaml" 24 60 "$idle" "$d/day.om" "$d/store.db" >"$d/history.out" 2>"$d/history.log" ||
    { cat "$d/history.out" "$d/history.log"; fail "gpumeter_cost_history ($idle)"; }
  local last
  last=$(sed -n 's/^[0-9]\{1,\} \([0-9]\{1,\}\)$/\1/p' "$d/history.out")
  [ -n "$last" ] || { cat "$d/history.out"; fail "gpumeter_cost_history printed no time span"; }
  promtool tsdb create-blocks-from openmetrics "$d/day.om" "$d/data" >"$d/promtool.log" 2>&1 || { cat "$d/promtool.log"; fail "promtool create-blocks-from"; }
  rm -f "$d/day.om"
  start_prometheus "$d" "" || fail "prometheus did not start"
  # Half an hour after the data: the 25 h window reaches back to half an hour before it, so every
  # series is born inside it (a pod that starts mid-day in general) and counted from 0 before its
  # first scrape: plain increase() loses that first scrape's amount, the form of the hourly rules
  # (prometheusrule.yaml) keeps it.
  local at=$((last + 1800)) m='gpumeter_cost_total{owner_kind="container"}'
  q() { curl -fsS --get "$api/api/v1/query" --data-urlencode "query=$1" --data-urlencode "time=$at" |
          jq -r '.data.result[] | "\(.metric.namespace // "total") \(.value[1])"' | sort; }
  q "sum by (namespace) ((increase($m[25h]) and last_over_time($m[25h] offset 25h)) or (last_over_time($m[25h]) unless last_over_time($m[25h] offset 25h)))" >"$d/prom.txt"
  q "sum by (namespace) (increase($m[25h]))" >"$d/plain.txt"
  local total
  total=$(q "sum((increase(gpumeter_cost_total[25h]) and last_over_time(gpumeter_cost_total[25h] offset 25h)) or (last_over_time(gpumeter_cost_total[25h]) unless last_over_time(gpumeter_cost_total[25h] offset 25h)))" | awk '{ print $2 }')
  [ "$idle" = separate ] && bill_day "$d" "$last"
  kill %% 2>/dev/null || true; wait 2>/dev/null || true
  # The whole store: the recorder stamps intervals on its own wall clock, the scrapes on the scenario's.
  "$bin" report --source "sqlite:$d/store.db" --by namespace --idle "$idle" --format json >"$d/report.json" ||
    fail "report from the day's store"
  jq -r '.groups[] | select(.group.namespace | test("^(__idle__|system|unattributed)$") | not) | "\(.group.namespace) \(.cost)"' "$d/report.json" | sort >"$d/report.txt"
  local report_total
  report_total=$(jq -r '.total.cost' "$d/report.json")
  [ -s "$d/prom.txt" ] && [ -s "$d/report.txt" ] || fail "$idle: nothing to compare"
  # Plain increase(), printed: the birth it misses, by namespace (a 100-second pod loses most).
  join -a1 -a2 -e 0 -o 0,1.2,2.2 "$d/plain.txt" "$d/report.txt" |
    awk -v idle="$idle" '{ printf "  %-9s %-10s increase() %.4f  report %.4f  %+.3f%%\n", idle, $1, $2, $3, ($3 > 0 ? 100 * ($2 - $3) / $3 : 0) }'
  join -a1 -a2 -e 0 -o 0,1.2,2.2 "$d/prom.txt" "$d/report.txt" |
    awk -v idle="$idle" -v bound="$bound" -v pt="$total" -v rt="$report_total" '
      { d = $3 > 0 ? ($2 - $3) / $3 : ($2 > 0); if (d < 0) d = -d; if (d > m) m = d
        printf "  %-9s %-10s prometheus %.4f  report %.4f  %+.3f%%\n", idle, $1, $2, $3, 100 * d }
      END { td = (pt - rt) / rt; if (td < 0) td = -td
        printf "  %-9s %-10s prometheus %.4f  report %.4f  %+.3f%%\n", idle, "total", pt, rt, 100 * td
        exit !(td <= 0.002 && (bound == 0 || m <= bound)) }' ||
    fail "$idle: a day's cost from Prometheus and from report disagree"
}
# Measured: 0.064 % (the last minute, which the final scrape did not see); the bound leaves
# room for the scrape phase, not for a change in method.
day separate 0.002
day share 0
echo "ok: a day of backfilled cost counters, queried after the data, equals report by namespace within 0.2 % (separate) and in total (share); priced from an hourly bill through Prometheus it costs the same"
