#!/usr/bin/env bash
# The bill benchmark (`make bill-bench`; not in CI, a few minutes and ~1.5 GB under BILL_WORK):
# a month of a large account's FOCUS export (BILL_BYTES, 1 GB by default: 64 GPU nodes matched,
# 2000 other VMs listed, volumes, taxes, credits) read by `gpumeter report --bill`, plain and
# gzip-compressed, BILL_RUNS times each. Prints the median wall time, the throughput and the
# largest peak RSS of the runs (GNU time). The target: under a minute, under 200 MB.
set -euo pipefail
build=${BUILD:-build}
work=${BILL_WORK:-/tmp/gpumeter-bill-bench}
bytes=${BILL_BYTES:-1073741824}
runs=${BILL_RUNS:-3}
gpumeter=$build/gpumeter
synth=$build/bench/gpumeter_bill_synth
[ -x "$gpumeter" ] && [ -x "$synth" ] || { echo "build first: $gpumeter, $synth" >&2; exit 2; }
command -v /usr/bin/time >/dev/null || { echo "needs GNU time (apt-get install time)" >&2; exit 2; }
rm -rf "$work" && mkdir -p "$work"
"$synth" --bytes "$bytes" --csv "$work/bill.csv" --store "$work/usage.db"
gzip -1 -c "$work/bill.csv" > "$work/bill.csv.gz"
echo "export: $(stat -c %s "$work/bill.csv") bytes, gzip $(stat -c %s "$work/bill.csv.gz") bytes"

measure() {  # name file
  local walls=() rss=0
  for _ in $(seq "$runs"); do
    /usr/bin/time -f "%e %M" -o "$work/time" "$gpumeter" report --source "sqlite:$work/usage.db" \
      --bill "$2" --from 2026-11-01T00:00:00Z --to 2026-12-01T00:00:00Z --format json \
      > "$work/report.json"
    read -r wall kib < "$work/time"
    walls+=("$wall")
    [ "$kib" -gt "$rss" ] && rss=$kib
  done
  local median
  median=$(printf '%s\n' "${walls[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  awk -v n="$1" -v m="$median" -v r="$rss" -v b="$(stat -c %s "$work/bill.csv")" -v runs="$runs" \
    'BEGIN {printf "%-6s median wall %6.2f s over %d runs, %6.1f MB/s of CSV, peak RSS %5.1f MiB\n", n, m, runs, b / m / 1e6, r / 1024}'
}
measure csv "$work/bill.csv"
measure gzip "$work/bill.csv.gz"
jq -r '.bill | "lines \(.total.lines), GPU nodes \(.nodes | length), unmatched VMs \(.unmatchedVmsSummary.vms), adds up: \(.allocation.addsUp)"' "$work/report.json"
