#!/usr/bin/env bash
# Chaos (issue 17): what a hostile client, a sabotaged node or a broken server does to the built
# binary, each row asserted. Loopback only; bounded in count (500 connections a port) and time.
# Usage: chaos_test.sh GPUMETER FAKE_NODE FAKE_NVML_LIBRARY SCENARIO_DIR STUB_HTTP
set -euo pipefail
. "$(dirname "$0")/../integration/lib.sh"
bin=$1 fake_node=$2 nvml=$3 scenarios=$4 stub=$5
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; [ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
# Servers close the connections this script floods them with: a write to a closed socket must be
# an error (EPIPE) that the writer handles, not a SIGPIPE that ends the test.
trap '' PIPE
trap 'echo "FAIL: line $LINENO: $BASH_COMMAND" >&2' ERR
fail() { echo "FAIL: $*" >&2; for f in "$work"/*.log; do echo "== $f"; tail -20 "$f"; done >&2; exit 1; }
ulimit -n 8192 2>/dev/null || ulimit -n "$(ulimit -Hn)"
[ "$(ulimit -n)" -ge 2200 ] || fail "needs 2200 open files (ulimit -n is $(ulimit -n))"

# --- A node whose /proc is sabotaged: a FIFO for one process's stat, /dev/zero for another's
# cgroup. The agent reads a frozen copy of the fake node's /proc, so the node cannot repair it.
scenario=$scenarios/timeslice-h100.yaml
export GPUMETER_FAKE_NVML_SCENARIO=$scenario GPUMETER_FAKE_NVML_START_S=200
start_fake_node "$fake_node" "$scenario" "$work/node" 200 || fail "fake node did not start"
sleep 0.3
cp -r "$work/node/proc" "$work/proc"
mapfile -t pids < <(find "$work/proc" -mindepth 1 -maxdepth 1 -regex '.*/[0-9]+' -printf '%f\n' | sort -n)
[ ${#pids[@]} -ge 2 ] || fail "the scenario has fewer than two processes"
rm "$work/proc/${pids[0]}/stat" && mkfifo "$work/proc/${pids[0]}/stat"
rm "$work/proc/${pids[1]}/cgroup" && ln -s /dev/zero "$work/proc/${pids[1]}/cgroup"

"$bin" agent --nvml-library "$nvml" --node-name chaos --pod-resources-socket "$work/node/kubelet.sock" \
  --proc-root "$work/proc" --pods-file "$work/node/pods.json" --interval 0.25 \
  --listen 127.0.0.1:0 --probe-listen 127.0.0.1:0 >"$work/agent.log" 2>&1 &
agent=$!
url=$(wait_for_match "$work/agent.log" 's|.*serving \(http://[^ ]*\)/metrics.*|\1|p')
probe=$(wait_for_match "$work/agent.log" 's|.*probes on \(http://[^ ]*\).*|\1|p')
[ -n "$url" ] && [ -n "$probe" ] || fail "agent printed no addresses"
for _ in $(seq 1 100); do curl -fs "$probe/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
curl -fsS "$probe/readyz" | grep -qx ready || fail "agent not ready with a FIFO and /dev/zero under --proc-root"
sleep 2
curl -fsS "$url/metrics" >"$work/m.prom" || fail "scrape"
age=$(sed -n 's/^gpumeter_source_last_success_age_seconds{node="chaos",source="nvml"} //p' "$work/m.prom")
awk -v a="$age" 'BEGIN { exit !(a != "" && a < 1.0) }' || fail "NVML's last success is $age s old: passes are blocked"
grep -q '^gpumeter_source_up{node="chaos",source="nvml"} 1$' "$work/m.prom" || fail "nvml not up"
rss_kb=$(awk '/^VmRSS/ { print $2 }' "/proc/$agent/status")
[ "$rss_kb" -lt 300000 ] || fail "agent RSS ${rss_kb} kB after reading a /dev/zero cgroup"
echo "ok: FIFO stat and /dev/zero cgroup refused; passes go on; RSS ${rss_kb} kB"

# --- Two pipelined GETs on one connection: both answered in order, or the first with an honest
# Connection: close.
exec {fd}<>"/dev/tcp/127.0.0.1/${url##*:}" || fail "cannot connect for the pipelined requests"
# The write may fail (EPIPE): a server that answers the first request with Connection: close may
# have closed before the second arrived. The reply below is what is judged.
printf 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /readyz HTTP/1.1\r\nHost: x\r\n\r\n' >&"$fd" 2>/dev/null || true
reply=$(timeout 3 cat <&"$fd" || true)
exec {fd}>&-
answered=$(grep -c '^HTTP/1.1 200' <<<"$reply" || true)
if [ "$answered" -lt 2 ]; then
  grep -qi '^Connection: close' <<<"$reply" || fail "pipelined: $answered answered, no Connection: close"
fi
echo "ok: pipelined requests: $answered answered$( [ "$answered" -lt 2 ] && echo ', Connection: close advertised')"

# --- 500 idle and 20 dribbling connections on each port, renewed as the server closes them:
# the probes still answer, every time, for 8 s. Within 10 s: a bound that holds on a loaded
# 2-core machine, so what fails it is a starved or hung probe listener, not a slow one. How fast
# they answer under this load is a figure, not a pass/fail: bench/chaos_latency.sh.
port_of() { sed 's|.*:\([0-9]*\)$|\1|' <<<"$1"; }
hold() {  # PORT SECONDS: keeps 500 idle connections open, reopening them every 2 s
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
for p in "$(port_of "$url")" "$(port_of "$probe")"; do
  hold "$p" 10 &
  for _ in $(seq 1 20); do dribble "$p" 10 & done
done
sleep 1.5
# Scrapes of the main port meanwhile (issue 30: from 16 dribblers on, scrapes took 8.5-10 s or
# failed, and every failed scrape set `up` to 0): each within Prometheus's 10 s, every time.
( for _ in $(seq 1 12); do
    curl -fsS -o /dev/null --max-time 10 -w '%{time_total}\n' "$url/metrics" 2>/dev/null || echo failed
    sleep 0.5
  done >"$work/scrapes.txt" ) &
scraper=$!
probes=0 slow=0
for _ in $(seq 1 40); do
  for path in healthz readyz; do
    probes=$((probes + 1))
    # The first failure ends the loop: 80 probes of 10 s each would outlast the test's timeout.
    curl -fsS --max-time 10 "$probe/$path" >/dev/null 2>&1 || { slow=$((slow + 1)); break 2; }
  done
  sleep 0.2
done
echo "probes under 1000 idle and 40 dribbling connections: $((probes - slow)) of $probes answered within 10 s"
[ "$slow" -eq 0 ] || fail "$slow of $probes probes failed or took over 10 s"
wait "$scraper"
worst=$(sort -g "$work/scrapes.txt" | tail -1)
! grep -q failed "$work/scrapes.txt" || fail "scrapes failed under the flood: $(tr '\n' ' ' <"$work/scrapes.txt")"
echo "scrapes of /metrics under the flood: $(wc -l <"$work/scrapes.txt") of 12, the slowest ${worst} s"
awk -v w="$worst" 'BEGIN { exit !(w < 10) }' || fail "a scrape took ${worst} s under the flood"
sleep 9  # the holders end; the main port serves again
curl -fsS --max-time 5 "$url/metrics" -o "$work/after-flood.prom" || fail "main port does not recover after the flood"
# The dribblers cut at the header deadline are counted where an operator looks.
cut=$(sed -n 's/^gpumeter_http_connections_cut_total{node="chaos"} \([0-9]*\)$/\1/p' "$work/after-flood.prom")
[ -n "$cut" ] && [ "$cut" -ge 20 ] || fail "gpumeter_http_connections_cut_total is '${cut}' after 20 dribblers (want >= 20)"
echo "connections cut at the header deadline, as /metrics counts them: $cut"

# --- The same over TLS: 500 idle connections and 20 that trickle a ClientHello a byte every
# 0.3 s hold the HTTPS port; scrapes over TLS finish within 10 s, every time, and the trickled
# handshakes are cut at the header deadline (5 s).
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=gpumeter -addext subjectAltName=IP:127.0.0.1 \
  -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null || fail "openssl could not make a test certificate"
"$bin" agent --nvml-library "$nvml" --node-name chaos --pod-resources-socket "$work/node/kubelet.sock" \
  --proc-root "$work/node/proc" --pods-file "$work/node/pods.json" --interval 0.25 \
  --tls-cert "$work/cert.pem" --tls-key "$work/key.pem" --listen 127.0.0.1:0 >"$work/tls-agent.log" 2>&1 &
tagent=$!
turl=$(wait_for_match "$work/tls-agent.log" 's|.*serving \(https://[^ ]*\)/metrics.*|\1|p')
[ -n "$turl" ] || fail "TLS agent printed no address"
trickle_tls() {  # PORT SECONDS: a TLS ClientHello's record header and body, a byte every 0.3 s
  local port=$1 until=$((SECONDS + $2))
  while [ $SECONDS -lt $until ]; do
    exec {fd}<>"/dev/tcp/127.0.0.1/$port" 2>/dev/null || { sleep 0.3; continue; }
    for b in 16 03 01 02 00 01 00 01 fc 03 03 $(seq 10 60); do
      printf "\\x$b" >&"$fd" 2>/dev/null || break; sleep 0.3
    done
    exec {fd}>&-
  done
}
hold "$(port_of "$turl")" 10 &
for _ in $(seq 1 20); do trickle_tls "$(port_of "$turl")" 10 & done
sleep 1.5
for _ in $(seq 1 10); do
  curl -fsS -o /dev/null --cacert "$work/cert.pem" --max-time 10 -w '%{time_total}\n' "$turl/metrics" 2>/dev/null || echo failed
  sleep 0.5
done >"$work/tls-scrapes.txt"
worst=$(sort -g "$work/tls-scrapes.txt" | tail -1)
! grep -q failed "$work/tls-scrapes.txt" || fail "TLS scrapes failed under the flood: $(tr '\n' ' ' <"$work/tls-scrapes.txt")"
awk -v w="$worst" 'BEGIN { exit !(w < 10) }' || fail "a TLS scrape took ${worst} s under the flood"
echo "ok: HTTPS scrapes under 500 idle and 20 trickled handshakes: 10 of 10, the slowest ${worst} s"
kill "$tagent"; wait "$tagent" 2>/dev/null || true

# --- SIGTERM stops the agent within 2 s (no --shutdown-grace).
# stop_ms PID: sends SIGTERM, waits up to 4 s for the process to end, prints the milliseconds.
stop_ms() {
  local t0 pid=$1
  t0=$(date +%s%N)
  kill -TERM "$pid"
  for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$pid" 2>/dev/null && fail "agent $pid still running 4 s after SIGTERM"
  echo $(( ($(date +%s%N) - t0) / 1000000 ))
}
ms=$(stop_ms "$agent")
[ "$ms" -le 2500 ] || fail "agent took $ms ms to stop"
echo "ok: SIGTERM: stopped in $ms ms"

# --- A driver call that never returns: within two intervals plus one call deadline the probes
# say not ready and NVML is down; SIGTERM still ends the agent within 2 s.
{ cat "$scenario"; printf 'faults:\n  - {kind: delay, call: "*", delay_ms: 600000, from_s: 203, to_s: 900}\n'; } >"$work/hang.yaml"
GPUMETER_FAKE_NVML_SCENARIO=$work/hang.yaml "$bin" agent --nvml-library "$nvml" --node-name chaos \
  --pod-resources-socket "$work/node/kubelet.sock" --proc-root "$work/node/proc" --pods-file "$work/node/pods.json" \
  --interval 0.25 --call-deadline 0.5 --listen 127.0.0.1:0 --probe-listen 127.0.0.1:0 >"$work/hang.log" 2>&1 &
hung=$!
hurl=$(wait_for_match "$work/hang.log" 's|.*serving \(http://[^ ]*\)/metrics.*|\1|p')
hprobe=$(wait_for_match "$work/hang.log" 's|.*probes on \(http://[^ ]*\).*|\1|p')
[ -n "$hurl" ] && [ -n "$hprobe" ] || fail "hanging agent printed no addresses"
for _ in $(seq 1 100); do curl -fs "$hprobe/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
curl -fsS "$hprobe/readyz" >/dev/null || fail "agent never ready before the hang"
code=200
for _ in $(seq 1 100); do  # the fault starts 3 scenario seconds in; then 2 x 0.25 s + 0.5 s
  code=$(curl -s -o "$work/readyz.txt" -w '%{http_code}' --max-time 1 "$hprobe/readyz")
  [ "$code" = 503 ] && break; sleep 0.1
done
[ "$code" = 503 ] || fail "/readyz still $code with a driver call hung"
grep -q "no sampling pass finished for" "$work/readyz.txt" || fail "/readyz does not say why: $(cat "$work/readyz.txt")"
down=""
for _ in 1 2 3; do  # a scrape on a loaded machine may time out: the state is what is checked
  if curl -fsS --max-time 3 "$hurl/metrics" >"$work/hang.prom" 2>"$work/hang-curl.log"; then
    down=$(sed -n 's/^gpumeter_source_up{node="chaos",source="nvml"} //p' "$work/hang.prom"); break
  fi
  sleep 1
done
[ "$down" = 0 ] || fail "nvml is '$down' (want 0) with a driver call hung: $(cat "$work/hang-curl.log")"
ms=$(stop_ms "$hung")
[ "$ms" -le 2600 ] || fail "hung agent took $ms ms to stop"
grep -q "sampling did not stop within 2 s" "$work/hang.log" || fail "the forced stop is not logged"
echo "ok: a hung driver call: /readyz 503 ($(head -c 80 "$work/readyz.txt")), nvml down, SIGTERM in $ms ms"

# --- The store sabotaged (issue 30): its directory unusable at start (a file where the
# directory should be), then usable; the store and its -wal/-shm deleted while the agent writes.
# Each is noticed (the store is a source: /api/v1/sources, gpumeter_source_up), the store is
# opened again, and after SIGTERM the file on disk holds the usage of the whole run.
printf 'not a directory\n' >"$work/storedir"
"$bin" agent --nvml-library "$nvml" --node-name chaos --pod-resources-socket "$work/node/kubelet.sock" \
  --proc-root "$work/node/proc" --pods-file "$work/node/pods.json" --interval 0.25 --store "$work/storedir/usage.db" \
  --listen 127.0.0.1:0 --probe-listen 127.0.0.1:0 >"$work/store-agent.log" 2>&1 &
sagent=$!
surl=$(wait_for_match "$work/store-agent.log" 's|.*serving \(http://[^ ]*\)/metrics.*|\1|p')
[ -n "$surl" ] || fail "store agent printed no address"
sleep 1
# To a file first: `grep -q` stops reading at its match, and under pipefail curl's failure to
# write the rest would fail the line.
curl -fsS "$surl/metrics" -o "$work/store-m.prom" || fail "scrape of the store agent"
grep -q '^gpumeter_source_up{node="chaos",source="store"} 0$' "$work/store-m.prom" || fail "an unopenable store is not down in /metrics"
curl -fsS "$surl/api/v1/sources" | jq -e '.sources[] | select(.name == "store") | .up == false and (.last_error | test("usage.db"))' >/dev/null ||
  fail "an unopenable store is not in /api/v1/sources: $(curl -fsS "$surl/api/v1/sources")"
rm "$work/storedir" && mkdir "$work/storedir"
for _ in $(seq 1 40); do [ -f "$work/storedir/usage.db" ] && break; sleep 0.25; done
[ -f "$work/storedir/usage.db" ] || fail "the store was not opened once its directory could be used"
sleep 2
rm -f "$work/storedir/usage.db" "$work/storedir/usage.db-wal" "$work/storedir/usage.db-shm"
for _ in $(seq 1 40); do grep -q "was deleted while the agent wrote" "$work/store-agent.log" && break; sleep 0.25; done
grep -q "was deleted while the agent wrote" "$work/store-agent.log" || fail "a deleted store is not noticed within 10 s"
sleep 1
[ -f "$work/storedir/usage.db" ] || fail "the deleted store was not opened again"
curl -fsS "$surl/metrics" -o "$work/store-m.prom" || fail "scrape of the store agent"
grep -q '^gpumeter_source_up{node="chaos",source="store"} 1$' "$work/store-m.prom" || fail "the store is not up again"
ms=$(stop_ms "$sagent")
held=$("$bin" report --source "sqlite:$work/storedir/usage.db" --window 1h --format json | jq '.total.gpuHoursHeld')
awk -v h="$held" 'BEGIN { exit !(h > 0) }' || fail "the store holds no usage after SIGTERM (gpuHoursHeld $held)"
stat -c %a "$work/storedir/usage.db" | grep -qx 600 || fail "the store is not 0600: $(stat -c %a "$work/storedir/usage.db")"
echo "ok: an unopenable store is retried and shown down, a deleted one opened again; $held GPU-h held on disk after SIGTERM ($ms ms)"

# --- A Prometheus that answers with the wrong shapes, +Inf or deep nesting: a clear error, rc 1.
report_against() {  # BODY WANT [WINDOW]: 30 m by default (no hourly-rules marker query: the
  # replies below are for the vector queries); 2h asks for the marker (a matrix) first.
  printf '%s' "$1" >"$work/reply.json"
  "$stub" 200 "$work/reply.json" >"$work/stub.log" 2>&1 &
  local stub_pid=$! port
  port=$(wait_for_match "$work/stub.log" 's/^port \([0-9]*\)$/\1/p')
  set +e
  "$bin" report --source "prometheus:http://127.0.0.1:$port" --window "${3:-30m}" >"$work/report.err" 2>&1
  local rc=$?
  set -e
  kill "$stub_pid"; wait "$stub_pid" 2>/dev/null || true
  [ "$rc" -eq 1 ] || fail "report rc $rc on '${1:0:60}' (want 1): $(cat "$work/report.err")"
  grep -qF "$2" "$work/report.err" || fail "report error lacks '$2': $(cat "$work/report.err")"
}
report_against '{"status":"success","data":{"resultType":"vector","result":"oops"}}' 'data.result: expected an array'
report_against "$(printf '[%.0s' $(seq 1 5000))" 'nested deeper than 16'
report_against '{"status":"success","data":{"resultType":"vector","result":[{"metric":{"node":"n"},"value":[1,"+Inf"]}]}}' "'+Inf' is not a finite number"
report_against '{"status":"success","data":{"resultType":"vector","result":[]}}' 'data.resultType: expected "matrix", found "vector"' 2h
report_against '{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1,"NaN"]]}]}}' "'NaN' is not a finite number" 2h
echo "ok: bad Prometheus replies are clear errors (rc 1)"
# --- Expect rc and a message from a command: expect RC WANT CMD...
expect() {
  local rc=$1 want=$2; shift 2
  set +e
  "$@" >"$work/cmd.out" 2>&1
  local got=$?
  set -e
  [ "$got" -eq "$rc" ] || fail "$* -> rc $got (want $rc): $(head -c 400 "$work/cmd.out")"
  grep -qF -- "$want" "$work/cmd.out" || fail "$* -> message lacks '$want': $(head -c 400 "$work/cmd.out")"
}

# --- The agent on another program's SQLite file: refused, rc 2, the file left as it was.
sqlite3 "$work/other.db" 'CREATE TABLE invoices(id INTEGER PRIMARY KEY, total REAL); INSERT INTO invoices VALUES (1, 9.5);'
sum_before=$(md5sum <"$work/other.db")
expect 2 "not a gpumeter store (application_id 0, user_version 0, tables: invoices)" \
  timeout 10 "$bin" agent --nvml-library "$nvml" --node-name chaos --pod-resources-socket "$work/node/kubelet.sock" \
  --proc-root "$work/node/proc" --pods-file "$work/node/pods.json" --listen 127.0.0.1:0 --store "$work/other.db"
[ "$(md5sum <"$work/other.db")" = "$sum_before" ] || fail "another program's database was changed"
[ ! -e "$work/other.db-wal" ] || fail "another program's database was switched to WAL"
echo "ok: another program's SQLite file refused and left unchanged"

# --- Duplicate keys in a scenario, a pricing file and a guard config: refused with both lines.
printf 'currency: USD\ngpu_models:\n  H100: 5\n  H100: 1\n' >"$work/dup-pricing.yaml"
expect 2 "dup-pricing.yaml: gpu_models: duplicate key 'H100' (line 4, first at line 3)" \
  "$bin" report --source "sqlite:$work/none.db" --pricing "$work/dup-pricing.yaml"
printf 'idle:\n  below: 0.1\n  below: 0.5\n' >"$work/dup-guard.yaml"
expect 2 "dup-guard.yaml: idle: duplicate key 'below' (line 3, first at line 2)" \
  "$bin" demo --guard-config "$work/dup-guard.yaml" --duration 1 --listen 127.0.0.1:0
{ cat "$scenario"; printf 'duration_s: 5\n'; } >"$work/dup-scenario.yaml"
expect 2 "duplicate field 'duration_s'" "$bin" simulate --scenario "$work/dup-scenario.yaml"
echo "ok: duplicate keys refused in pricing, guard config and scenario"

# --- Out-of-range numbers and oversize files.
printf 'gpu_models:\n  H100: 1e308\n' >"$work/huge-price.yaml"
expect 2 "a price per hour must be a number in [0, 10000] (line 2)" \
  "$bin" report --source "sqlite:$work/none.db" --pricing "$work/huge-price.yaml"
sed 's/max_watts: [0-9.]*/max_watts: 1e300/' "$scenario" >"$work/watts.yaml"
grep -q 'max_watts: 1e300' "$work/watts.yaml" || fail "the scenario has no max_watts to break"
expect 2 "watts must be in [0, 5000]" "$bin" simulate --scenario "$work/watts.yaml"
head -c $((9 << 20)) /dev/zero | tr '\0' '#' >"$work/big-scenario.yaml"
expect 2 "larger than 8388608 bytes" "$bin" simulate --scenario "$work/big-scenario.yaml"
expect 2 "--window: '0m': not within [1s" "$bin" report --source prometheus:http://127.0.0.1:1 --window 0m
echo "ok: out-of-range prices, watts, durations and an oversize scenario refused"

# --- A dcgm-exporter page with a series twice, and with NaN/Inf/negative values.
line='DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-0",Hostname="n",namespace="a",pod="p1"} 100'
printf '%s\n%s\n' "$line" "$line" >"$work/dup.prom"
expect 2 "line 2: series DCGM_FI_DEV_FB_USED repeats the one on line 1" "$bin" audit --dcgm-metrics "$work/dup.prom"
{ printf 'DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-0",Hostname="n"} 1000\n'
  printf 'DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-0",Hostname="n",namespace="a",pod="p%s"} %s\n' 1 400 2 NaN 3 +Inf 4 -5
} >"$work/badvalues.prom"
set +e; "$bin" audit --dcgm-metrics "$work/badvalues.prom" >"$work/badvalues.out" 2>&1; set -e
grep -qF "3 sample(s) left out as unknown: NaN, ±Inf or negative (lines 3, 4, 5)" "$work/badvalues.out" || fail "NaN audit: $(cat "$work/badvalues.out")"
grep -qiE 'nan|inf' <(grep -v 'left out as unknown' "$work/badvalues.out") && fail "NaN or Inf printed: $(cat "$work/badvalues.out")"
echo "ok: audit refuses a repeated series and leaves NaN/Inf/negative out"

# --- audit reads a dcgm-exporter page as the agent does (issue 30): a page that never ends, a
# 200 MiB page and one that trickles a byte every 0.5 s each end within the deadline (3 s) with a
# clear error, memory bounded by the cap (64 MiB); a page with no usable sample is an error.
audit_against() {  # MODE WANT RC [EXTRA AUDIT FLAGS...]
  local mode=$1 want=$2 rc_want=$3; shift 3
  "$stub" 200 "$work/page.prom" "$mode" >"$work/stub.log" 2>&1 &
  local stub_pid=$! port t0 ms rc
  port=$(wait_for_match "$work/stub.log" 's/^port \([0-9]*\)$/\1/p')
  t0=$(date +%s%N)
  set +e
  /usr/bin/env time -f '%M' -o "$work/audit.rss" "$bin" audit --dcgm-metrics "http://127.0.0.1:$port/metrics" "$@" >"$work/audit.err" 2>&1
  rc=$?
  set -e
  ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  kill "$stub_pid"; wait "$stub_pid" 2>/dev/null || true
  [ "$rc" -eq "$rc_want" ] || fail "audit on a $mode page: rc $rc (want $rc_want): $(cat "$work/audit.err")"
  grep -qF "$want" "$work/audit.err" || fail "audit on a $mode page lacks '$want': $(cat "$work/audit.err")"
  [ "$ms" -le 8000 ] || fail "audit on a $mode page took $ms ms (deadline 3 s)"
  rss=$(tail -1 "$work/audit.rss")
  [ "$rss" -lt 400000 ] || fail "audit on a $mode page: peak RSS $rss kB"
  echo "  $mode: rc $rc in $ms ms, peak RSS $rss kB"
}
printf 'DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-0",Hostname="n",namespace="a",pod="p%s"} 100\n' $(seq 1 2000) >"$work/page.prom"
audit_against endless "reply larger than 67108864 bytes (refused; raise it with --max-reply-mb)" 1
audit_against big:200 "reply larger than 67108864 bytes" 1
audit_against trickle "no complete reply within 3 s (raise it with --timeout)" 1
audit_against whole "1 of 1 GPUs with per-pod series add up to more than the GPU" 0
printf '# just a comment\nnode_load1 0.5\n' >"$work/page.prom"
audit_against whole "no usable dcgm-exporter sample (1 samples, 0 of them invalid" 2
echo "ok: audit bounds a never-ending, a 200 MiB and a trickled page; a page with nothing to audit is an error"

# --- Names that attack their reader (issue 30), as a pods file or a non-validating API server
# may give them: a namespace that is a spreadsheet formula, a pod name with a newline and U+202E
# (which displays what follows it reversed), a team label `@ads`. Through the demo's pipeline and
# store into every output: tables keep one row per owner with the characters escaped; CSV and
# FOCUS cells that start with = + @ get a leading ' (JSON keeps the names as they are).
sed -e "s/^  - namespace: ads\$/  - namespace: \"=cmd|' -C calc'!A0\"/" \
  -e "s|container: ads/ctr-model-0/triton|container: \"=cmd\|' -C calc'!A0/ctr-model-0/triton\"|" \
  -e 's/^    name: embedder-5c7b9-x2k4p$/    name: "emb\\nedder\\u202Egnp.exe"/' \
  -e 's|container: search/embedder-5c7b9-x2k4p/server|container: "search/emb\\nedder\\u202Egnp.exe/server"|' \
  -e 's/labels: {team: search, app: reranker}/labels: {team: "@ads", app: reranker}/' \
  "$scenarios/timeslice-h100.yaml" >"$work/hostile.yaml"
[ "$(grep -c 'cmd\|u202E\|@ads' "$work/hostile.yaml")" = 5 ] || fail "the hostile scenario was not written"
"$bin" demo --scenario "$work/hostile.yaml" --duration 3 --refresh 600 --interval 0.5 --speedup 1 \
  --store "$work/hostile.db" --listen 127.0.0.1:0 >"$work/hostile-demo.out" 2>"$work/hostile-demo.log" || fail "demo on hostile names"
"$bin" report --source "sqlite:$work/hostile.db" --window 1h --by pod >"$work/hostile-table.out" || fail "report table"
"$bin" report --source "sqlite:$work/hostile.db" --window 1h --by pod --format csv >"$work/hostile.csv" || fail "report csv"
"$bin" report --source "sqlite:$work/hostile.db" --window 1h --by label:team --format csv >"$work/hostile-team.csv" || fail "report csv by team"
"$bin" report --source "sqlite:$work/hostile.db" --window 1h --format focus >"$work/hostile-focus.csv" || fail "report focus"
"$bin" report --source "sqlite:$work/hostile.db" --window 1h --by pod --format json >"$work/hostile.json" || fail "report json"
for f in hostile-demo.out hostile-table.out; do
  ! grep -qP '\xE2\x80\xAE' "$work/$f" || fail "$f prints U+202E raw"
  grep -q 'search/emb\\x0aedder\\u{202e}gnp.exe' "$work/$f" || fail "$f lacks the escaped pod name: $(grep -a edder "$work/$f")"
  ! grep -q '^edder' "$work/$f" || fail "$f broke a row at the pod name's newline"
done
grep -q "^'=cmd|' -C calc'!A0/ctr-model-0," "$work/hostile.csv" || fail "the formula namespace is not neutralised in CSV: $(grep -a cmd "$work/hostile.csv")"
grep -q "^'@ads," "$work/hostile-team.csv" || fail "the @ads team is not neutralised in CSV"
! grep -qE '(^|,)"?[=+@]' "$work/hostile.csv" "$work/hostile-team.csv" "$work/hostile-focus.csv" || fail "a CSV cell starts with = + or @"
grep -q ",'=cmd|' -C calc'!A0" "$work/hostile-focus.csv" || fail "the formula namespace is not neutralised in FOCUS"
jq -e '[.groups[].group.pod] | index("=cmd|'"'"' -C calc'"'"'!A0/ctr-model-0") != null and index("search/emb\nedder\u202egnp.exe") != null' \
  "$work/hostile.json" >/dev/null || fail "JSON changed the names: $(jq -c '[.groups[].group.pod]' "$work/hostile.json")"
echo "ok: formula, newline and U+202E names escaped in tables, neutralised in CSV and FOCUS, kept in JSON"

echo "chaos: all rows hold"
