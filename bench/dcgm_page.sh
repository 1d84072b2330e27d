#!/usr/bin/env bash
# The dcgm-exporter page benchmark (`make dcgm-bench`; not in CI, under a minute): a 16 and a
# 64 MiB page (this node's DCGM series among many other families), served on loopback and read
# through the agent's DCGM source, `audit` and `audit --gzip`, a fresh process each; prints the
# peak RSS above idle of each read (bench/dcgm_page_bench.cpp). Target: the same for both sizes,
# at most 16 MiB. DCGM_BENCH_WHOLE=1 adds the page read whole and then parsed whole (the path
# before streaming) for comparison: hundreds of MiB.
set -euo pipefail
build=${BUILD:-build}
bench=$build/bench/gpumeter_dcgm_page_bench
[ -x "$bench" ] || { echo "build first: $bench" >&2; exit 2; }
modes="source audit audit-gzip"
[ "${DCGM_BENCH_WHOLE:-0}" = 1 ] && modes="$modes whole"
for mode in $modes; do
  for mib in 16 64; do
    "$bench" "$mib" "$mode" 2>&1 >/dev/null  # the figure is on stderr; audit's table is dropped
  done
done
