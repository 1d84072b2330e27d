#!/usr/bin/env bash
# The fleet scale benchmark (docs/fleet.md, "Scale"). Not in CI: it writes gigabytes and
# runs for many minutes. `make fleet-bench` builds what it needs and runs it.
#
# 1. gpumeter_fleet_synth writes one seeded fleet (10 nodes x 8 H100, 1,000 workloads whose pods
#    come and go over 30 days) twice: OpenMetrics files (raw counters at a 15 s scrape for the last
#    2 days, the gpumeter.hourly recorded series for 30 days), converted into TSDB blocks by
#    `promtool tsdb create-blocks-from openmetrics` as they appear and then deleted; and one usage
#    store per node.
# 2. Debian's prometheus serves the blocks on loopback (a free port), once its compactions are done.
# 3. Side by side, each timed as the median of FLEET_RUNS runs: the chargeback from Prometheus
#    (2 days of raw series; 30 days, which needs a gpumeter that reads the recorded series) and
#    from the stores (one report per store, summed), both windows; the rightsizing from Prometheus
#    (needs `rightsize --source prometheus:URL`) and from the stores. A row whose command this
#    gpumeter lacks says "not available" rather than failing, so the script can be rerun later.
# Prints a table, `ratio:` lines (Prometheus / stores), Prometheus's memory, and fails (exit 1)
# when a Prometheus report's totals and the stores' differ by more than 1 %.
#
# Environment: BUILD (build), FLEET_WORK (/tmp/gpumeter-fleet; needs ~10 GB free while it
# synthesizes), FLEET_RUNS (3), FLEET_SEED (1), FLEET_NODES (10), FLEET_WORKLOADS (1000),
# FLEET_RAW_HOURS (50: 2 days and the hours before them that a 2-day increase() looks back on),
# FLEET_NODE_CHECKS (every node) and FLEET_NODE_WINDOW (2d): the per-node rightsizing check,
# FLEET_KEEP=1 keeps the work folder.
set -euo pipefail

BUILD=${BUILD:-build}
WORK=${FLEET_WORK:-/tmp/gpumeter-fleet}
RUNS=${FLEET_RUNS:-3}
GPUMETER=$BUILD/gpumeter
SYNTH=$BUILD/bench/gpumeter_fleet_synth
for f in "$GPUMETER" "$SYNTH"; do
  [[ -x $f ]] || { echo "fleet: $f missing (make fleet-bench builds it)" >&2; exit 2; }
done
for t in prometheus promtool jq curl; do
  command -v $t >/dev/null || { echo "fleet: $t missing (scripts/setup.sh installs it)" >&2; exit 2; }
done

PROM_PID=
cleanup() {
  [[ -n $PROM_PID ]] && kill "$PROM_PID" 2>/dev/null && wait "$PROM_PID" 2>/dev/null
  [[ ${FLEET_KEEP:-0} == 1 ]] || rm -rf "$WORK"
}
trap cleanup EXIT
rm -rf "$WORK" && mkdir -p "$WORK/tsdb" "$WORK/out"
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
used_gb() { du -sb "$WORK" 2>/dev/null | awk '{ printf "%.2f", $1 / 1e9 }'; }

# --- 1. synthesize, converting each 2-hour file as soon as it is whole --------------------------
echo "fleet: synthesizing into $WORK ($(df -h --output=avail "$WORK" | tail -1 | tr -d ' ') free)"
t0=$(now)
"$SYNTH" --out "$WORK/synth" --seed "${FLEET_SEED:-1}" --nodes "${FLEET_NODES:-10}" \
  --workloads "${FLEET_WORKLOADS:-1000}" --raw-hours "${FLEET_RAW_HOURS:-50}" \
  >"$WORK/synth.txt" 2>"$WORK/synth.err" &
synth_pid=$!
convert_s=0 peak_gb=0
om=$WORK/synth/openmetrics
while :; do
  shopt -s nullglob
  files=("$om"/block-*.om)
  shopt -u nullglob
  if ((${#files[@]} == 0)); then
    [[ -e $om/DONE ]] && break
    kill -0 $synth_pid 2>/dev/null || break
    sleep 0.5
    continue
  fi
  for f in "${files[@]}"; do
    peak_gb=$(awk -v a="$peak_gb" -v b="$(used_gb)" 'BEGIN { print (b > a ? b : a) }')
    c0=$(now)
    promtool tsdb create-blocks-from openmetrics -q "$f" "$WORK/tsdb" >/dev/null
    convert_s=$(awk -v a="$convert_s" -v b="$(elapsed "$c0")" 'BEGIN { print a + b }')
    rm -f "$f"
  done
done
wait $synth_pid || { cat "$WORK/synth.err" >&2; exit 1; }
synth_s=$(elapsed "$t0")
val() { awk -v k="$1" '$1 == k { print $2 }' "$WORK/synth.txt"; }
END_S=$(val end)
echo "fleet: $(val workloads) workloads, $(val pods) pods ($(val containers) containers), mean" \
  "$(val mean_containers_alive) alive; raw $(val raw_series) series, $(val raw_samples) samples;" \
  "recorded $(val recorded_samples) samples; $(val openmetrics_files) files," \
  "$(awk -v b="$(val openmetrics_bytes)" 'BEGIN { printf "%.2f", b / 1e9 }') GB of text"
echo "fleet: synthesis + conversion ${synth_s} s (promtool ${convert_s} s), work folder peak" \
  "${peak_gb} GB; TSDB $(du -sh "$WORK/tsdb" | cut -f1), stores $(du -sh "$WORK/synth/stores" | cut -f1)"

# --- 2. prometheus on the blocks ---------------------------------------------------------------
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
URL=http://127.0.0.1:$port
printf 'global: {}\nscrape_configs: []\n' >"$WORK/prometheus.yml"
prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/tsdb" \
  --storage.tsdb.retention.time=400d --web.listen-address=127.0.0.1:$port \
  >"$WORK/prometheus.log" 2>&1 &
PROM_PID=$!
for _ in $(seq 300); do curl -sf "$URL/-/ready" >/dev/null && break; sleep 1; done
curl -sf "$URL/-/ready" >/dev/null || { tail "$WORK/prometheus.log" >&2; exit 1; }
# Prometheus compacts the many 2-hour blocks into larger ones on a one-minute tick; queries are
# timed once the block count has stood still for two ticks, as on a server that has been running.
prom_metric() { curl -sf "$URL/metrics" | awk -v k="$1" '$1 == k { print $2 }'; }
t0=$(now) last=-1 still=0
while ((still < 13)) && awk -v e="$(elapsed "$t0")" 'BEGIN { exit !(e < 1200) }'; do
  state="$(prom_metric prometheus_tsdb_blocks_loaded) $(prom_metric prometheus_tsdb_compactions_total)"
  if [[ $state == "$last" ]]; then still=$((still + 1)); else still=0 last=$state; fi
  sleep 10
done
echo "fleet: prometheus $URL ready, blocks and compactions: $last ($(elapsed "$t0") s)"

# --- 3. the commands, side by side -------------------------------------------------------------
# Windows are given as --from/--to: the data ends at the synthesizer's last whole hour, not now.
FROM_2D=$((END_S - 2 * 86400)) FROM_30D=$((END_S - 30 * 86400))
STORES=("$WORK"/synth/stores/*.db)
REPORT_TOTALS='[.total.computeHours, .total.gpuHoursHeld, .total.memoryGiBHours, .total.energyKWh, .total.cost]'

# Runs "$@" RUNS times; prints the median wall seconds. Output of the last run: $WORK/out/$name.
median_of() {
  local name=$1; shift
  local times=()
  for _ in $(seq "$RUNS"); do
    local s; s=$(now)
    "$@" >"$WORK/out/$name" 2>"$WORK/out/$name.err" || return 1
    times+=("$(elapsed "$s")")
  done
  printf '%s\n' "${times[@]}" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'
}
report_stores() {  # one report per store, totals summed
  for db in "${STORES[@]}"; do
    "$GPUMETER" report --source "sqlite:$db" --from "$1" --to "$END_S" --format json | jq -c "$REPORT_TOTALS"
  done | jq -s -c 'transpose | map(add)'
}
report_prom() {  # FROM [--recorded-series off]
  "$GPUMETER" report --source "prometheus:$URL" --from "$1" --to "$END_S" "${@:2}" --format json | jq -c "$REPORT_TOTALS"
}
rightsize_stores() {  # per store: its recommendations and savings, summed
  for db in "${STORES[@]}"; do
    "$GPUMETER" rightsize --source "sqlite:$db" --to "$END_S" --format json |
      jq -c '[(.recommendations | length), ([.recommendations[].monthlySavings // 0] | add // 0)]'
  done | jq -s -c 'transpose | map(add)'
}
rightsize_prom() {
  # --to: the synthesized data ends at END_S, not now (without it the read was anchored at now
  # and found no workload: 0 rows, exit 0, before the command refused an empty read).
  "$GPUMETER" rightsize --source "prometheus:$URL" --to "$END_S" --format json |
    jq -c '[(.recommendations | length), ([.recommendations[].monthlySavings // 0] | add // 0)]'
}
has_recorded() { grep -q 'increase1h' "$GPUMETER"; }
has_prom_rightsize() { "$GPUMETER" rightsize --help 2>&1 | grep -q 'prometheus'; }

declare -A SECONDS_OF TOTALS_OF
row() {  # name, availability test, function, args
  local name=$1 test=$2; shift 2
  if ! $test; then SECONDS_OF[$name]="not available"; return; fi
  if SECONDS_OF[$name]=$(median_of "$name" "$@"); then
    TOTALS_OF[$name]=$(cat "$WORK/out/$name")
  else
    SECONDS_OF[$name]="failed"
    TOTALS_OF[$name]=$(head -c 300 "$WORK/out/$name.err")
  fi
}
row report_prom_2d_raw true report_prom "$FROM_2D" --recorded-series off
row report_prom_2d true report_prom "$FROM_2D"
row report_stores_2d true report_stores "$FROM_2D"
row report_prom_30d has_recorded report_prom "$FROM_30D"
row report_stores_30d true report_stores "$FROM_30D"
row rightsize_prom has_prom_rightsize rightsize_prom
row rightsize_stores true rightsize_stores
rss_kb=$(awk '/^VmRSS/ { print $2 }' "/proc/$PROM_PID/status")
hwm_kb=$(awk '/^VmHWM/ { print $2 }' "/proc/$PROM_PID/status")

echo
echo "report totals: [computeHours, gpuHoursHeld, memoryGiBHours, energyKWh, cost];" \
  "rightsize: [recommendations, savings/month]; seconds: median of $RUNS"
printf '%-20s %14s  %s\n' what seconds totals
for name in report_prom_2d_raw report_prom_2d report_stores_2d report_prom_30d report_stores_30d rightsize_prom \
  rightsize_stores; do
  printf '%-20s %14s  %s\n' "$name" "${SECONDS_OF[$name]}" "${TOTALS_OF[$name]:-}"
done
ratio() {
  local a=${SECONDS_OF[$2]} b=${SECONDS_OF[$3]}
  if [[ $a =~ ^[0-9.]+$ && $b =~ ^[0-9.]+$ ]]; then
    # Parenthesised: awk reads a bare `printf …, b > 0` as output redirected to a file "0".
    echo "ratio: $1 prometheus/stores $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')"
  else
    echo "ratio: $1 not available"
  fi
}
ratio "report 2d raw series" report_prom_2d_raw report_stores_2d
ratio "report 2d" report_prom_2d report_stores_2d
ratio "report 30d" report_prom_30d report_stores_30d
ratio "rightsize" rightsize_prom rightsize_stores
echo "prometheus memory: RSS $((rss_kb / 1024)) MiB, peak $((hwm_kb / 1024)) MiB" \
  "(process_resident_memory_bytes $(prom_metric process_resident_memory_bytes))"

# --- 4. the totals must agree ------------------------------------------------------------------
status=0
agree() {
  local a=${TOTALS_OF[$2]:-} b=${TOTALS_OF[$3]:-}
  [[ ${SECONDS_OF[$2]} =~ ^[0-9.]+$ && ${SECONDS_OF[$3]} =~ ^[0-9.]+$ ]] || return 0
  local worst
  worst=$(jq -n --argjson a "$a" --argjson b "$b" \
    '[range(0; $a | length) | (($a[.] - $b[.]) | fabs) / ([($b[.] | fabs), 1e-9] | max)] | max')
  if awk -v w="$worst" 'BEGIN { exit !(w <= 0.01) }'; then
    echo "agree: $1 within $(awk -v w="$worst" 'BEGIN { printf "%.4f", 100 * w }') %"
  else
    echo "DISAGREE: $1 differs by $(awk -v w="$worst" 'BEGIN { printf "%.2f", 100 * w }') % (> 1 %)"
    status=1
  fi
}
agree "report 2d raw series" report_prom_2d_raw report_stores_2d
agree "report 2d" report_prom_2d report_stores_2d
agree "report 30d" report_prom_30d report_stores_30d
# Rightsizing per node: Prometheus with --node (nothing packed with other nodes) against that
# node's store, over the last FLEET_NODE_WINDOW (2d): the time both hold per minute. Over the
# default 14 days they read different things by design: the store keeps minutes for 14 days,
# Prometheus's reader takes the raw series for --minute-history (48 h) and the hourly recorded
# series before, whose daily memory peaks are hourly means (docs/fleet.md). Same actions for the
# same workloads, savings within 2 % (the store's minutes and Prometheus's 15 s scrapes sample the
# same counters at other instants). FLEET_NODE_CHECKS (all) checks the first N stores only.
NODE_WINDOW=${FLEET_NODE_WINDOW:-2d}
pick='[.recommendations[] | "\(.namespace)/\(.workload)/\(.container) \(.action)"] | sort'
savings='[.recommendations[].monthlySavings // 0] | add // 0'
checked=0
for db in "${STORES[@]}"; do
  ((checked < ${FLEET_NODE_CHECKS:-${#STORES[@]}})) || break
  checked=$((checked + 1))
  a=$("$GPUMETER" rightsize --source "sqlite:$db" --window "$NODE_WINDOW" --to "$END_S" --format json) ||
    { echo "DISAGREE: rightsize from $db failed"; status=1; continue; }
  node=$(jq -r '[.recommendations[].node] | first // empty' <<<"$a")
  [ -n "$node" ] || { echo "DISAGREE: rightsize: $db gives no recommendation"; status=1; continue; }
  b=$("$GPUMETER" rightsize --source "prometheus:$URL" --node "$node" --window "$NODE_WINDOW" \
    --to "$END_S" --format json) ||
    { echo "DISAGREE: rightsize --node $node from Prometheus failed"; status=1; continue; }
  if [ "$(jq -c "$pick" <<<"$a")" != "$(jq -c "$pick" <<<"$b")" ]; then
    echo "DISAGREE: rightsize node $node: the actions differ (< store, > prometheus):"
    diff <(jq -r "$pick | .[]" <<<"$a") <(jq -r "$pick | .[]" <<<"$b") | grep '^[<>]' | head -10
    status=1; continue
  fi
  sa=$(jq "$savings" <<<"$a") sb=$(jq "$savings" <<<"$b")
  if awk -v a="$sa" -v b="$sb" 'BEGIN { d = a - b; if (d < 0) d = -d; m = (b > 0 ? b : 1); exit !(d / m <= 0.02) }'; then
    echo "agree: rightsize node $node ($NODE_WINDOW): $(jq length <<<"$(jq -c "$pick" <<<"$a")") actions, savings $sa vs $sb"
  else
    echo "DISAGREE: rightsize node $node: savings $sa (store) vs $sb (prometheus), > 2 %"; status=1
  fi
done
for name in "${!SECONDS_OF[@]}"; do [[ ${SECONDS_OF[$name]} == failed ]] && status=1; done
exit $status
