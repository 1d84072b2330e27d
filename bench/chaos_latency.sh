#!/usr/bin/env bash
# Probe and scrape latency under hostile clients (not in CI: figures, not pass/fail). The chaos
# test (tests/chaos/chaos_test.sh) holds the same load and only checks that every probe and
# scrape is answered within a loose bound (10 s, so that it holds on a loaded machine); this
# measures how fast. An agent against the simulated 8-GPU node, first unloaded, then with 500 idle
# and 20 dribbling connections on each port (renewed as the server closes them, as in the chaos
# test), while /healthz and /readyz on the probe port and /metrics on the main port are timed.
# Prints, for each, the count, median, p95 and max in milliseconds, and the failures.
# Usage: bench/chaos_latency.sh [BUILD_DIR=build]   (from the repository root, after a build);
# LOAD_S (20) is how long the load is held, PROBE_EVERY (0.1 s) the pause between probes.
set -euo pipefail
build=${1:-${BUILD:-build}}
load_s=${LOAD_S:-20} every=${PROBE_EVERY:-0.1}
bin=$build/gpumeter fake_node=$build/tests/integration/gpumeter_fake_node
nvml=$build/fake_nvml/r580/libnvidia-ml.so.1 scenario=scenarios/node-8gpu.yaml
for f in "$bin" "$fake_node" "$nvml"; do
  [ -e "$f" ] || { echo "chaos_latency: $f missing: build first" >&2; exit 2; }
done
. tests/integration/lib.sh
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
trap '' PIPE  # the servers close what the load opens: a write to a closed socket is EPIPE
ulimit -n 8192 2>/dev/null || ulimit -n "$(ulimit -Hn)"
[ "$(ulimit -n)" -ge 2200 ] || { echo "chaos_latency: needs 2200 open files" >&2; exit 2; }

export GPUMETER_FAKE_NVML_SCENARIO=$scenario GPUMETER_FAKE_NVML_START_S=0
start_fake_node "$fake_node" "$scenario" "$work/node" 0 || { echo "fake node did not start" >&2; exit 1; }
"$bin" agent --nvml-library "$nvml" --node-name bench --pod-resources-socket "$work/node/kubelet.sock" \
  --proc-root "$work/node/proc" --pods-file "$work/node/pods.json" --interval 0.25 \
  --listen 127.0.0.1:0 --probe-listen 127.0.0.1:0 >"$work/agent.log" 2>&1 &
url=$(wait_for_match "$work/agent.log" 's|.*serving \(http://[^ ]*\)/metrics.*|\1|p')
probe=$(wait_for_match "$work/agent.log" 's|.*probes on \(http://[^ ]*\).*|\1|p')
[ -n "$url" ] && [ -n "$probe" ] || { echo "agent printed no addresses" >&2; cat "$work/agent.log" >&2; exit 1; }
for _ in $(seq 1 100); do curl -fs "$probe/readyz" >/dev/null 2>&1 && break; sleep 0.1; done

# The load, as the chaos test holds it.
hold() {  # PORT SECONDS: 500 idle connections, reopened every 2 s
  local port=$1 until=$((SECONDS + $2))
  while [ $SECONDS -lt $until ]; do
    local fds=()
    for _ in $(seq 1 500); do exec {fd}<>"/dev/tcp/127.0.0.1/$port" 2>/dev/null && fds+=("$fd"); done
    sleep 2
    for fd in "${fds[@]}"; do exec {fd}>&-; done
  done
}
dribble() {  # PORT SECONDS: a request's headers, one byte every 0.3 s
  local port=$1 until=$((SECONDS + $2))
  while [ $SECONDS -lt $until ]; do
    exec {fd}<>"/dev/tcp/127.0.0.1/$port" 2>/dev/null || { sleep 0.3; continue; }
    local line="GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaa"
    for ((i = 0; i < ${#line}; i++)); do printf '%s' "${line:$i:1}" >&"$fd" 2>/dev/null || break; sleep 0.3; done
    exec {fd}>&-
  done
}

# time_requests OUT SECONDS URL...: requests the URLs in turn for SECONDS, one line per request
# to OUT: seconds taken, or "failed" (none takes longer than 30 s).
time_requests() {
  local out=$1 until=$((SECONDS + $2)); shift 2
  while [ $SECONDS -lt $until ]; do
    for u in "$@"; do
      curl -fsS -o /dev/null --max-time 30 -w '%{time_total}\n' "$u" 2>/dev/null || echo failed
    done
    sleep "$every"
  done >"$out"
}

# stats NAME FILE: count, median, p95 and max (ms), and failures.
stats() {
  local failed
  failed=$(grep -c failed "$2" || true)
  grep -v failed "$2" | sort -g | awk -v name="$1" -v failed="$failed" '
    { v[NR] = $1 * 1000 }
    END {
      if (NR == 0) { printf "%-28s no answer (%d failed)\n", name, failed; exit }
      p50 = v[int((NR + 1) / 2)]; i95 = int(NR * 0.95 + 0.999); if (i95 < 1) i95 = 1
      printf "%-28s n=%-4d median %7.1f ms  p95 %7.1f ms  max %7.1f ms  failed %d\n",
             name, NR, p50, v[i95], v[NR], failed
    }'
}

port_of() { sed 's|.*:\([0-9]*\)$|\1|' <<<"$1"; }
time_requests "$work/idle-probes.txt" 5 "$probe/healthz" "$probe/readyz"
time_requests "$work/idle-scrapes.txt" 5 "$url/metrics"
for p in "$(port_of "$url")" "$(port_of "$probe")"; do
  hold "$p" $((load_s + 3)) &
  for _ in $(seq 1 20); do dribble "$p" $((load_s + 3)) & done
done
sleep 1.5  # the load in place
time_requests "$work/load-scrapes.txt" "$load_s" "$url/metrics" &
scraper=$!
time_requests "$work/load-probes.txt" "$load_s" "$probe/healthz" "$probe/readyz"
wait "$scraper"
echo "agent on the simulated 8-GPU node, $(nproc) CPUs; load: 500 idle + 20 dribbling connections a port"
stats "probes, unloaded" "$work/idle-probes.txt"
stats "probes, under the load" "$work/load-probes.txt"
stats "scrapes, unloaded" "$work/idle-scrapes.txt"
stats "scrapes, under the load" "$work/load-scrapes.txt"
