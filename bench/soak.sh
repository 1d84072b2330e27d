#!/usr/bin/env bash
# Memory soak (not in CI): the agent with a usage store and rightsizing against a
# simulated 8-GPU node, sampling every INTERVAL seconds and scraped every 5 s (as Prometheus
# would), for DURATION seconds. Its RSS is sampled every 10 s into build/soak/rss.csv; after a
# warm-up (the first WARMUP seconds: caches, SQLite's page cache and WAL fill up) a least-squares
# line through the samples gives the growth, printed per hour and extrapolated per day, for the
# whole RSS and for its anonymous part (heap, stacks: what a leak grows) and file-backed part
# (the binary's and libraries' pages, faulted in as code paths run for the first time: bounded by
# their size). /proc/<pid>/smaps is saved at the end of the warm-up and at the end
# (smaps-warm.txt, smaps-end.txt) so growth can be traced to a mapping.
# Usage: bench/soak.sh [DURATION_S=7200] [INTERVAL_S=0.2] [WARMUP_S=900]   (from the repository root,
# after a build; `make soak` runs 7200 s with a 4500 s warm-up: until the store holds an hour,
# rightsizing's reads, an hour of minutes at a time, grow with every minute stored). To bisect a
# growth, SOAK_RIGHTSIZE=0 turns rightsizing off, SOAK_SCRAPE=0 the scrapes, and SOAK_OUT puts a
# run in a directory of its own (several at once).
# SOAK_STORE_SEED=FILE starts the agent on a copy of a store an earlier soak wrote (node "soak"),
# so that a short soak runs with the store already holding hours: rightsizing's reads at full size.
set -euo pipefail
duration=${1:-7200} interval=${2:-0.2} warmup=${3:-900}
build=${BUILD:-build}
bin=$build/gpumeter fake_node=$build/tests/integration/gpumeter_fake_node
nvml=$build/fake_nvml/r580/libnvidia-ml.so.1 scenario=scenarios/node-8gpu.yaml
for f in "$bin" "$fake_node" "$nvml"; do [ -e "$f" ] || { echo "soak: $f missing: build first" >&2; exit 2; }; done
out=${SOAK_OUT:-$build/soak} rightsize=${SOAK_RIGHTSIZE:-60} scrape=${SOAK_SCRAPE:-1}
rm -rf "$out"; mkdir -p "$out"
if [ -n "${SOAK_STORE_SEED:-}" ]; then  # a consistent copy, WAL included
  command -v sqlite3 >/dev/null || { echo "soak: SOAK_STORE_SEED needs sqlite3" >&2; exit 2; }
  sqlite3 "$SOAK_STORE_SEED" ".backup '$out/usage.db'" || { echo "soak: cannot copy $SOAK_STORE_SEED" >&2; exit 2; }
fi
trap 'kill $(jobs -p) 2>/dev/null || true' EXIT
export GPUMETER_FAKE_NVML_SCENARIO=$scenario GPUMETER_FAKE_NVML_START_S=0
"$fake_node" "$scenario" "$out/node" 0 >"$out/node.log" 2>&1 &
for _ in $(seq 1 100); do [ -S "$out/node/kubelet.sock" ] && break; sleep 0.1; done
"$bin" agent --nvml-library "$nvml" --node-name soak --pod-resources-socket "$out/node/kubelet.sock" \
  --proc-root "$out/node/proc" --pods-file "$out/node/pods.json" --interval "$interval" \
  --store "$out/usage.db" --rightsize-interval "$rightsize" --listen 127.0.0.1:0 >"$out/agent.log" 2>&1 &
agent=$!
url=""
for _ in $(seq 1 100); do
  url=$(sed -n 's|.*serving \(http://[^ ]*\)/metrics.*|\1|p' "$out/agent.log" | head -1)
  [ -n "$url" ] && break; sleep 0.1
done
[ -n "$url" ] || { echo "soak: the agent did not start" >&2; cat "$out/agent.log" >&2; exit 1; }
echo "soak: agent $agent at $url, ${duration}s, interval ${interval}s, warm-up ${warmup}s, rightsizing every ${rightsize}s, scrapes $([ "$scrape" = 1 ] && echo on || echo off)"
echo "t_s,rss_kb,anon_kb,file_kb" >"$out/rss.csv"
saved_warm=0
start=$SECONDS next_scrape=0
while [ $((SECONDS - start)) -lt "$duration" ]; do
  kill -0 "$agent" 2>/dev/null || { echo "soak: the agent died" >&2; tail "$out/agent.log" >&2; exit 1; }
  t=$((SECONDS - start))
  if [ "$scrape" = 1 ] && [ "$t" -ge "$next_scrape" ]; then
    curl -fsS "$url/metrics" >/dev/null && curl -fsS "$url/api/v1/units" >/dev/null || echo "soak: scrape failed at ${t}s" >&2
    next_scrape=$((t + 5))
  fi
  [ $((t % 10)) -eq 0 ] && awk -v t="$t" '/^VmRSS/ { r = $2 } /^RssAnon/ { a = $2 } /^RssFile/ { f = $2 }
    END { print t "," r "," a "," f }' "/proc/$agent/status" >>"$out/rss.csv"
  if [ "$saved_warm" = 0 ] && [ "$t" -ge "$warmup" ]; then cp "/proc/$agent/smaps" "$out/smaps-warm.txt"; saved_warm=1; fi
  sleep 1
done
cp "/proc/$agent/smaps" "$out/smaps-end.txt"
slope() {  # column of rss.csv -> "first last kB/hour MB/day samples"
  awk -F, -v w="$warmup" -v c="$1" 'NR > 1 && !seen[$1]++ {
      if ($1 >= w) { n++; sx += $1; sy += $c; sxx += $1 * $1; sxy += $1 * $c }
      if (NR == 2) first = $c; last = $c }
    END {
      if (n < 3) { print "too few samples after the warm-up"; exit 1 }
      s = (n * sxy - sx * sy) / (n * sxx - sx * sx)  # kB per second
      printf "%d kB at start, %d kB at the end; after the warm-up %+.1f kB/hour, %+.2f MB/day extrapolated (%d samples)", first, last, s * 3600, s * 86400 / 1024, n
    }' "$out/rss.csv"
}
echo "soak: RSS      $(slope 2)"
echo "soak: RssAnon  $(slope 3)"
echo "soak: RssFile  $(slope 4)"
# The same line through each 10-minute window's lowest RssAnon (after the warm-up): what a leak
# raises, without the transient peaks of the passes and rightsizing runs that a sample may catch.
floor=$(awk -F, -v w="$warmup" 'NR > 1 && $1 >= w { k = int(($1 - w) / 600); if (!(k in m) || $3 < m[k]) m[k] = $3; if (k > K) K = k }
  END { for (k = 0; k <= K; k++) if (k in m) { n++; x = w + k * 600 + 300; sx += x; sy += m[k]; sxx += x * x; sxy += x * m[k] }
        if (n < 3) { print "too few 10-minute windows after the warm-up"; exit 1 }
        s = (n * sxy - sx * sy) / (n * sxx - sx * sx)
        printf "%+.1f kB/hour, %+.2f MB/day extrapolated (%d windows)", s * 3600, s * 86400 / 1024, n }' "$out/rss.csv") || true
echo "soak: RssAnon floor (10-minute minima) $floor"
