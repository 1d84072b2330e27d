#!/usr/bin/env bash
# Command names that are not UTF-8, through the demo agent (tests/scenarios/guard/hostile-names.yaml:
# two host processes whose names are bytes that read the same once made valid, and one whose name
# the kernel cut inside a character):
#  1. /metrics, in both formats, is valid UTF-8, and `promtool check metrics` passes the text one
#     (promtool refuses a page with one invalid byte: checked first, so this proves something);
#  2. a real Prometheus scrapes the agent (OpenMetrics first): up == 1, no scrape error, and the
#     host-process findings' series are there, `process` with U+FFFD where the bad bytes were;
#  3. every /api/v1 and /api/v2 endpoint answers 200 with valid UTF-8 JSON, and `gpumeter top`
#     lists the findings.
# Usage: hostile_names_test.sh GPUMETER SOURCE_DIR
set -euo pipefail
. "$(dirname "$0")/lib.sh"
bin=$1 src=$2
for tool in prometheus promtool jq python3 curl; do
  command -v "$tool" >/dev/null || { echo "FAIL: $tool is not installed (scripts/setup.sh installs it)"; exit 1; }
done
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; for f in "$work"/*.log; do [ -f "$f" ] && { echo "== $f"; tail -30 "$f"; }; done >&2; exit 1; }

# valid_utf8 FILE: by Python's strict decoder (no overlong form, surrogate or code point above
# U+10FFFF). valid_json FILE: that, and JSON.
valid_utf8() { python3 -c 'import sys; open(sys.argv[1], "rb").read().decode("utf-8")' "$1" 2>/dev/null; }
valid_json() { python3 -c 'import json, sys; json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))' "$1" 2>/dev/null; }
fffd=$(printf '\xef\xbf\xbd')

# The checks must be able to fail: promtool and the decoder refuse a label value with \xff\xfe,
# and take the same page without it.
page() { printf '# HELP gpumeter_x A test.\n# TYPE gpumeter_x gauge\ngpumeter_x{process="%b"} 1\n' "$1"; }
page 'gpu-burn' >"$work/good.prom"
page '\xff\xfegpu-burn' >"$work/bad.prom"
promtool check metrics <"$work/good.prom" >/dev/null 2>&1 || fail "promtool refuses a valid page"
if promtool check metrics <"$work/bad.prom" >/dev/null 2>&1; then fail "promtool takes invalid UTF-8: the check below would prove nothing"; fi
if valid_utf8 "$work/bad.prom"; then fail "valid_utf8 takes \\xff"; fi

"$bin" demo --scenario "$src/tests/scenarios/guard/hostile-names.yaml" --duration 3600 --refresh 600 --interval 0.5 \
  --speedup 20 --listen 127.0.0.1:0 >"$work/demo.log" 2>&1 &
url=$(wait_for_match "$work/demo.log" 's|^metrics: \(http://[^ ]*\)/metrics.*|\1|p')
[ -n "$url" ] || fail "the demo printed no address"
for _ in $(seq 1 300); do
  n=$(curl -sf "$url/api/v1/findings" | jq '.findings | length' 2>/dev/null || echo 0)
  [ "${n:-0}" -ge 2 ] && break
  sleep 0.1
done
[ "${n:-0}" -ge 2 ] || fail "fewer than 2 findings after 30 s"

# 1. /metrics.
curl -sSf "$url/metrics" >"$work/metrics.prom" || fail "GET /metrics"
curl -sSf -H 'Accept: application/openmetrics-text; version=1.0.0' "$url/metrics" >"$work/metrics.om" || fail "GET /metrics (OpenMetrics)"
for f in metrics.prom metrics.om; do
  valid_utf8 "$work/$f" || fail "$f is not UTF-8"
  for want in "process=\"$fffd${fffd}gpu-burn\"" "process=\"tensor-worker-$fffd\""; do
    grep -qF "$want" "$work/$f" || { grep finding_first_seen "$work/$f" >&2; fail "$f lacks $want"; }
  done
done
promtool check metrics <"$work/metrics.prom" >"$work/promtool.log" 2>&1 || fail "promtool check metrics"
echo "ok: /metrics is UTF-8 in both formats, U+FFFD in the process names, and promtool passes it"

# 2. A real Prometheus.
start_prometheus "$work" "" "${url#http://}" || fail "prometheus did not start"
names='[.data.result[].metric.process] | sort'
want='["tensor-worker-\ufffd", "\ufffd\ufffdgpu-burn"]'
for _ in $(seq 1 60); do
  [ "$(query 'count(up{job="gpumeter"} == 1)' | jq -r '.data.result[0].value[1] // 0')" = 1 ] &&
    query 'gpumeter_finding_first_seen_timestamp_seconds{kind="host-process"}' | jq -e "$names == $want" >/dev/null && break
  sleep 0.5
done
health=$(curl -fsS "$api/api/v1/targets" | jq -r '[.data.activeTargets[] | "\(.health) \(.lastError)"] | unique | join(";")')
[ "$health" = "up " ] || fail "target not healthy: $health"
[ "$(query 'up{job="gpumeter"}' | jq -r '.data.result[0].value[1]')" = 1 ] || fail "up is not 1"
query 'gpumeter_finding_first_seen_timestamp_seconds{kind="host-process"}' | jq -e "$names == $want" >/dev/null ||
  fail "host-process findings in Prometheus: $(query 'gpumeter_finding_first_seen_timestamp_seconds' | jq -c "$names")"
[ "$(query 'count(gpumeter_compute_seconds_total{node="gpu-node-hostile"})' | jq -r '.data.result[0].value[1] // 0')" -gt 0 ] ||
  fail "the node's other series are missing"
echo "ok: Prometheus scrapes the agent (up 1, no error) and holds the host-process findings"

# 3. The JSON API and top.
for v in v1 v2; do
  for ep in units ledger processes findings sources; do
    code=$(curl -sS -o "$work/$v-$ep.json" -w '%{http_code}' "$url/api/$v/$ep") || fail "GET /api/$v/$ep"
    [ "$code" = 200 ] || fail "/api/$v/$ep answered $code"
    valid_json "$work/$v-$ep.json" || fail "/api/$v/$ep is not UTF-8 JSON"
  done
done
# The pass's snapshot carries the raw command names: written with U+FFFD, valid UTF-8 JSON.
code=$(curl -sS -o "$work/v2-snapshot.json" -w '%{http_code}' "$url/api/v2/snapshot") || fail "GET /api/v2/snapshot"
[ "$code" = 200 ] || fail "/api/v2/snapshot answered $code"
valid_json "$work/v2-snapshot.json" || fail "/api/v2/snapshot is not UTF-8 JSON"
jq -e "[.processes[].comm] | map(select(test(\"gpu-burn\"))) | length == 2" "$work/v2-snapshot.json" >/dev/null ||
  fail "the snapshot lacks the host processes' names"
jq -e "[.findings[].process] | sort == $want" "$work/v2-findings.json" >/dev/null || fail "findings' process in /api/v2/findings"
grep -qF "$fffd" "$work/v2-processes.json" || fail "the host processes' cgroup paths in /api/v2/processes lost their U+FFFD"
"$bin" top --agent "$url" --view findings --once >"$work/top.txt" || fail "top --once"
valid_utf8 "$work/top.txt" || fail "top's output is not UTF-8"
{ grep -q 'gpu-burn' "$work/top.txt" && grep -q 'tensor-worker-' "$work/top.txt"; } || { cat "$work/top.txt"; fail "top lacks the findings"; }
echo "ok: every /api endpoint answers 200 with UTF-8 JSON; top lists the findings"
