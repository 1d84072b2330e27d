#!/usr/bin/env bash
# End to end: `gpumeter agent` against a node served by another process — the fake NVML loaded by
# path, a fake kubelet on a unix socket, a pods file and a /proc tree — with the device plugin's
# config file as sharing evidence. Checks owners, holders, conservation on a real scrape, a kubelet
# outage survived, SIGTERM, and flags refused with a clear message.
# Usage: agent_test.sh GPUMETER FAKE_NODE FAKE_NVML_LIBRARY SCENARIO_DIR
set -euo pipefail
. "$(dirname "$0")/lib.sh"
bin=$1 fake_node=$2 nvml=$3 scenarios=$4
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; [ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; for f in "$work"/*.log; do echo "== $f"; tail -20 "$f"; done >&2; exit 1; }

scenario=$scenarios/timeslice-h100.yaml
export GPUMETER_FAKE_NVML_SCENARIO=$scenario GPUMETER_FAKE_NVML_START_S=200
start_fake_node "$fake_node" "$scenario" "$work/node" 200 || fail "fake node did not start"
node_pid=$fake_node_pid

cat >"$work/plugin.yaml" <<'YAML'
version: v1
sharing:
  timeSlicing:
    resources:
      - name: nvidia.com/gpu
        replicas: 4
YAML
"$bin" agent --nvml-library "$nvml" --node-name node-a --pod-resources-socket "$work/node/kubelet.sock" \
  --proc-root "$work/node/proc" --pods-file "$work/node/pods.json" --device-plugin-config "$work/plugin.yaml" \
  --pod-label team --interval 0.25 --process-series --container-series full --listen 127.0.0.1:0 >"$work/agent.log" 2>&1 &
agent_pid=$!
url=$(wait_for_match "$work/agent.log" 's|.*serving \(http://[^ ]*\)/metrics.*|\1|p')
[ -n "$url" ] || fail "agent printed no address"
for _ in $(seq 1 100); do curl -fs "$url/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
curl -fsS "$url/readyz" | grep -qx ready || fail "agent not ready"
sleep 2  # a few intervals
curl -fsS "$url/metrics" >"$work/m1.prom" || fail "scrape failed"
if command -v promtool >/dev/null; then promtool check metrics <"$work/m1.prom" || fail "promtool found problems"; fi

for src in nvml kubelet pods proc; do
  grep -q "^gpumeter_source_up{node=\"node-a\",source=\"$src\"} 1$" "$work/m1.prom" || fail "source $src not up"
done
grep -q '^gpumeter_unit_info{node="node-a",unit="GPU-8c5e0f6a-7d3b-4a9e-b1c2-3d4e5f6a7b01",.*sharing_mode="time-slicing",replicas="4",evidence="device plugin config (sharing.timeSlicing)"} 1$' "$work/m1.prom" \
  || fail "unit mode and evidence from the device-plugin config"
for p in 'search",pod="embedder-5c7b9-x2k4p' 'search",pod="reranker-6f8d1-q9w2e' 'ads",pod="ctr-model-0'; do
  grep -q "^gpumeter_requested_share_ratio{.*namespace=\"$p\",container=\"[a-z]*\",owner_kind=\"container\"} 0.25$" "$work/m1.prom" \
    || fail "holder $p with share 1/4"
  grep -q "^gpumeter_pod_labels_info{node=\"node-a\",namespace=\"$p\",label_team=\"[a-z]*\"} 1$" "$work/m1.prom" \
    || fail "the team label of $p on its info series"
  grep -q "^gpumeter_process_memory_used_bytes{.*namespace=\"$p\",container=\"[a-z]*\",owner_kind=\"container\"}" "$work/m1.prom" \
    || fail "process of $p not resolved to its container"
done
grep -q '^gpumeter_process_[a-z_]*{.*owner_kind="unattributed"' "$work/m1.prom" && fail "a process is unattributed"
conserved() {  # file: the owners' compute-seconds and memory byte-seconds add up to each unit
  awk '
    function unit() { match($0, /unit="[^"]*"/); return substr($0, RSTART, RLENGTH) }
    /^gpumeter_unit_seconds_total\{/ { cap[unit()] = $NF }
    /^gpumeter_unit_memory_capacity_byte_seconds_total\{/ { mcap[unit()] = $NF }
    /^gpumeter_compute_seconds_total\{/ { c[unit()] += $NF }
    /^gpumeter_memory_byte_seconds_total\{/ { m[unit()] += $NF }
    function off(a, b) { d = a - b; if (d < 0) d = -d; return b <= 0 || d > 1e-9 * b }
    END { n = 0; for (u in cap) { n++; if (off(c[u], cap[u]) || off(m[u], mcap[u])) { print u, c[u], cap[u], m[u], mcap[u]; bad = 1 } } exit bad || n == 0 }' "$1"
}
conserved "$work/m1.prom" || fail "owners do not add up to the unit"

# What Prometheus asks for first: OpenMetrics; gzip when accepted (both formats).
om='Accept: application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5'
curl -fsS -H "$om" -D "$work/om.hdr" "$url/metrics" >"$work/om.txt" || fail "OpenMetrics scrape"
grep -qi '^content-type: application/openmetrics-text; version=1.0.0' "$work/om.hdr" || fail "OpenMetrics content type"
[ "$(tail -1 "$work/om.txt")" = "# EOF" ] || fail "OpenMetrics must end with # EOF"
grep -q '^# TYPE gpumeter_compute_seconds counter$' "$work/om.txt" || fail "OpenMetrics counter family"
grep -q '^gpumeter_compute_seconds_total{' "$work/om.txt" || fail "OpenMetrics counter samples"
# Prometheus sends Accept-Encoding: gzip (curl --compressed would also offer br, which httplib prefers).
curl -fsS -H 'Accept-Encoding: gzip' -H "$om" -D "$work/omgz.hdr" "$url/metrics" >"$work/omgz.bin" || fail "gzip OpenMetrics scrape"
grep -qi '^content-encoding: gzip' "$work/omgz.hdr" || fail "OpenMetrics not gzipped"
[ "$(gzip -dc "$work/omgz.bin" | tail -1)" = "# EOF" ] || fail "gzipped OpenMetrics does not decode"
curl -fsS -H 'Accept-Encoding: gzip' -D "$work/gz.hdr" "$url/metrics" >"$work/gz.bin" || fail "gzip text scrape"
grep -qi '^content-encoding: gzip' "$work/gz.hdr" || fail "text format not gzipped"
gzip -dc "$work/gz.bin" >"$work/gz.txt" || fail "gzipped text does not decode"
grep -q '^gpumeter_unit_info{' "$work/gz.txt" || fail "gzipped text lacks the unit series"

# An Accept the agent does not know gets the text format.
curl -fsS -H 'Accept: application/vnd.google.protobuf' -D "$work/pb.hdr" "$url/metrics" >/dev/null || fail "unknown Accept"
grep -qi '^content-type: text/plain; version=0.0.4' "$work/pb.hdr" || fail "unknown Accept: not the text format"

# The JSON API.
curl -fsS "$url/api/v1/units" | jq -e '.units | length == 1 and .[0].sharing_mode == "time-slicing" and .[0].replicas == 4
  and (.[0].holders | length) == 3 and all(.[0].holders[]; .share == 0.25)' >/dev/null || fail "/api/v1/units"
curl -fsS "$url/api/v1/ledger" | jq -e '.units[0] | ((([.owners[].compute_seconds] | add) / .seconds) - 1 | fabs) < 1e-9' >/dev/null \
  || fail "/api/v1/ledger: owners do not add up"
curl -fsS "$url/api/v1/processes" | jq -e '(.processes | length) == 3 and all(.processes[]; .owner.kind == "container" and .owner.how != "")' >/dev/null \
  || fail "/api/v1/processes"
curl -fsS "$url/api/v1/sources" | jq -e '[.sources[] | select(.up) | .name] | sort == ["kubelet", "nvml", "pods", "proc"]' >/dev/null \
  || fail "/api/v1/sources"
# /api/v2: the same documents in camelCase (no '_' in any key but a pod label's); /api/v1 says it
# is deprecated and names its successor.
for r in units ledger processes findings sources; do
  curl -fsS "$url/api/v2/$r" >"$work/v2-$r.json" || fail "GET /api/v2/$r"
  jq -e 'del(.podLabels) | [.. | objects | keys[] | select(test("_"))] | length == 0' "$work/v2-$r.json" >/dev/null \
    || { jq -c '[.. | objects | keys[] | select(test("_"))] | unique' "$work/v2-$r.json"; fail "/api/v2/$r has snake_case keys"; }
  curl -fsS -D "$work/v1-$r.headers" -o "$work/v1-$r.json" "$url/api/v1/$r" || fail "GET /api/v1/$r"
  grep -qi '^Deprecation: @1796601600' "$work/v1-$r.headers" || fail "/api/v1/$r lacks Deprecation"
  grep -qi "^Link: </api/v2/$r>; rel=\"successor-version\"" "$work/v1-$r.headers" || fail "/api/v1/$r lacks its successor link"
done
jq -e '.units[0].sharingMode == "time-slicing" and .units[0].holders[0].replicasHeld == 1 and .units[0].gpuUuid != null' "$work/v2-units.json" >/dev/null \
  || { cat "$work/v2-units.json"; fail "/api/v2/units in camelCase"; }
jq -e '.units[0] | ((([.owners[].computeSeconds] | add) / .seconds) - 1 | fabs) < 1e-9' "$work/v2-ledger.json" >/dev/null \
  || fail "/api/v2/ledger: owners do not add up"
code=$(curl -s -o /dev/null -w '%{http_code}' "$url/api/v3/units")
[ "$code" = 404 ] || fail "/api/v3/units answered $code"

# The kubelet goes away: the agent keeps serving, reports the source down and keeps the holders.
kill "$node_pid"; wait "$node_pid" || true
sleep 2.5
curl -fsS "$url/metrics" >"$work/m2.prom" || fail "scrape during the outage"
grep -q '^gpumeter_source_up{node="node-a",source="kubelet"} 0$' "$work/m2.prom" || fail "kubelet not reported down"
age=$(sed -n 's/^gpumeter_source_last_success_age_seconds{node="node-a",source="kubelet"} //p' "$work/m2.prom")
awk -v a="$age" 'BEGIN { exit !(a >= 2) }' || fail "the kubelet's last-success age ($age s) does not show the outage"
grep -q '^gpumeter_source_up{node="node-a",source="nvml"} 1$' "$work/m2.prom" || fail "sampling must go on during the outage"
[ "$(grep -c '^gpumeter_requested_share_ratio{.*} 0.25$' "$work/m2.prom")" -eq 3 ] || fail "holders lost in the outage"
grep -q 'kubelet PodResources List at .*keeping the last good allocations' "$work/agent.log" || fail "outage not logged"
conserved "$work/m2.prom" || fail "owners do not add up during the outage"

kill -TERM "$agent_pid"
rc=0; wait "$agent_pid" || rc=$?
[ "$rc" -eq 0 ] || fail "agent exit code $rc on SIGTERM"
grep -q 'stopping on signal 15' "$work/agent.log" || fail "no stop message"
echo "ok: agent end to end"

# HTTPS and a bearer token: everything but the probes needs the token.
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=gpumeter -addext subjectAltName=IP:127.0.0.1 \
  -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null || fail "openssl could not make a test certificate"
echo "s3cret-token" >"$work/token"
"$bin" agent --nvml-library "$nvml" --pod-resources-socket '' --proc-root "$work/node/proc" --interval 0.25 \
  --listen 127.0.0.1:0 --tls-cert "$work/cert.pem" --tls-key "$work/key.pem" --bearer-token-file "$work/token" >"$work/tls.log" 2>&1 &
tls_pid=$!
turl=$(wait_for_match "$work/tls.log" 's|.*serving \(https://[^ ]*\)/metrics.*|\1|p')
[ -n "$turl" ] || fail "TLS agent printed no https address"
code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$work/cert.pem" "$turl/metrics")
[ "$code" = 401 ] || fail "no token: HTTP $code, expected 401"
code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$work/cert.pem" -H 'Authorization: Bearer wrong' "$turl/api/v1/units")
[ "$code" = 401 ] || fail "wrong token: HTTP $code, expected 401"
curl -fsS --cacert "$work/cert.pem" -H 'Authorization: Bearer s3cret-token' "$turl/metrics" >"$work/tls.prom" 2>"$work/tls-curl.log" \
  || fail "token: scrape failed: $(cat "$work/tls-curl.log")"
grep -q '^gpumeter_source_up{' "$work/tls.prom" || fail "token: no metrics in $(head -c 300 "$work/tls.prom")"
curl -fsS --cacert "$work/cert.pem" "$turl/healthz" | grep -qx ok || fail "/healthz must not need the token"
curl -fsS --cacert "$work/cert.pem" -H 'Authorization: bearer s3cret-token' "$turl/api/v1/units" >/dev/null \
  || fail "the scheme is case-insensitive: 'bearer' refused"
# `top` and `audit` reach it with --agent-ca-file and --agent-token-file, and not without the CA.
"$bin" top --once --agent "$turl" --agent-ca-file "$work/cert.pem" --agent-token-file "$work/token" >"$work/tls-top.txt" 2>&1 \
  || fail "top over HTTPS with the CA and the token: $(cat "$work/tls-top.txt")"
grep -q '^GPU0 ' "$work/tls-top.txt" || fail "top over HTTPS shows no unit: $(head -5 "$work/tls-top.txt")"
"$bin" top --once --agent "$turl" --agent-token-file "$work/token" >"$work/tls-top-noca.txt" 2>&1 \
  && fail "top trusted a self-signed certificate without --agent-ca-file"
"$bin" audit --agent "$turl" --agent-ca-file "$work/cert.pem" --agent-token-file "$work/token" >"$work/tls-audit.txt" 2>&1 \
  || fail "audit over HTTPS with the CA and the token: $(cat "$work/tls-audit.txt")"
kill -TERM "$tls_pid"; wait "$tls_pid" || fail "TLS agent exit code"
echo "ok: HTTPS and bearer token"

refuse() {  # expected text, args...
  local text=$1; shift
  local rc=0
  "$bin" agent --nvml-library "$nvml" --listen 127.0.0.1:0 "$@" >"$work/bad.log" 2>&1 || rc=$?
  [ "$rc" -eq 2 ] || fail "agent $*: exit $rc, expected 2"
  grep -qF -- "$text" "$work/bad.log" || fail "agent $*: message lacks '$text'"
}
refuse "replicas must be an integer >= 2" --sharing GPU-1=mps:1
refuse "--device-plugin-config $work/none.yaml: cannot open" --device-plugin-config "$work/none.yaml"
printf 'version: v1\nsharing:\n  timeSlicing:\n    resources:\n      - name: nvidia.com/gpu\n        replicas: 1\n' >"$work/bad-plugin.yaml"
refuse "--device-plugin-config $work/bad-plugin.yaml:" --device-plugin-config "$work/bad-plugin.yaml"
refuse "watts must be a number > 0" --idle-power X=0
refuse "both become label label_a_b" --pod-label a.b --pod-label a_b
refuse "--tls-cert and --tls-key go together" --tls-cert "$work/cert.pem"
refuse "cannot load the certificate and key" --tls-cert "$work/token" --tls-key "$work/token"
refuse "--bearer-token-file $work/none: cannot read" --bearer-token-file "$work/none"
refuse "--dcgm-metrics 'node:9400/metrics': expected an http(s):// URL" --dcgm-metrics node:9400/metrics
rc=0
"$bin" agent --nvml-library "$work/no/libnvidia-ml.so.1" --listen 127.0.0.1:0 >"$work/nonvml.log" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "agent without NVML: exit $rc"
grep -q "$work/no/libnvidia-ml.so.1" "$work/nonvml.log" || fail "missing NVML: message does not name the library"
echo "ok: agent refuses bad flags"

# DRA without an API server: the claims from the kubelet's dynamic_resources, the devices from
# --resource-slices-file (the node's ResourceSliceList), each claim placed on its unit.
dra=$scenarios/dra-h100.yaml
GPUMETER_FAKE_NVML_SCENARIO=$dra GPUMETER_FAKE_NVML_START_S=100 start_fake_node "$fake_node" "$dra" "$work/dra" 100 ||
  fail "DRA fake node did not start"
dra_node=$fake_node_pid
GPUMETER_FAKE_NVML_SCENARIO=$dra GPUMETER_FAKE_NVML_START_S=100 "$bin" agent --nvml-library "$nvml" --node-name node-d \
  --pod-resources-socket "$work/dra/kubelet.sock" --proc-root "$work/dra/proc" --pods-file "$work/dra/pods.json" \
  --resource-slices-file "$work/dra/resourceslices.json" --interval 0.25 --listen 127.0.0.1:0 >"$work/dra-agent.log" 2>&1 &
dra_agent=$!
url=$(wait_for_match "$work/dra-agent.log" 's|.*serving \(http://[^ ]*\)/metrics.*|\1|p')
[ -n "$url" ] || fail "DRA agent printed no address"
sleep 1.5
curl -fsS "$url/metrics" >"$work/dra.prom" || fail "DRA scrape failed"
grep -q '^gpumeter_source_up{node="node-d",source="resourceslices"} 1$' "$work/dra.prom" || fail "resourceslices file source not up"
grep -q '^gpumeter_unit_info{node="node-d",unit="GPU-d7a00000-0000-4000-8000-000000000002",.*sharing_mode="time-slicing",replicas="2",evidence="DRA claim device shared by 2 containers"} 1$' "$work/dra.prom" \
  || fail "shared DRA claim not placed through the slices file"
grep -q '^gpumeter_allocation_problems{node="node-d"} 0$' "$work/dra.prom" || fail "DRA claims left unplaced"
kill -TERM "$dra_agent" "$dra_node"; wait "$dra_agent" || fail "DRA agent exit code"
echo "ok: DRA through --resource-slices-file"

# An A100 MIG node with dcgm-exporter (the fake node serves the scenario's page): with
# --dcgm-metrics, the trainer's MIG instance gets compute from DCGM activity; with an exporter
# that is down, the dcgm source is down, the instances' compute is unattributed and /readyz is
# still ready (an optional source).
# Collections every 2 s (the exporter's -c 2000): the agent books a DCGM-fed interval once the
# collection that covers it is seen, which the default 30 s would not bring within the test.
a100=$work/mig-a100-dcgm2.yaml
sed 's/^    dcgm_exporter: true$/    dcgm_exporter: true\n    dcgm_interval_s: 2/' "$scenarios/mig-a100.yaml" >"$a100"
grep -q 'dcgm_interval_s: 2' "$a100" || fail "could not shorten the A100 scenario's DCGM interval"
GPUMETER_FAKE_NVML_SCENARIO=$a100 start_fake_node "$fake_node" "$a100" "$work/a100" 200 || fail "A100 fake node did not start"
a100_node=$fake_node_pid
for _ in $(seq 1 100); do [ -s "$work/a100/dcgm.url" ] && break; sleep 0.1; done
dcgm_url=$(cat "$work/a100/dcgm.url" 2>/dev/null) || fail "the fake node wrote no dcgm-exporter URL"
trainer='^gpumeter_compute_seconds_total[{].*pod="train-resnet-0",container="trainer",owner_kind="container"'
run_a100() {  # name dcgm-url [wait]
  GPUMETER_FAKE_NVML_SCENARIO=$a100 "$bin" agent --nvml-library "$nvml" --node-name gpu-node-a100 \
    --pod-resources-socket "$work/a100/kubelet.sock" --proc-root "$work/a100/proc" \
    --pods-file "$work/a100/pods.json" --interval 0.25 --listen 127.0.0.1:0 --dcgm-metrics "$2" \
    >"$work/$1.log" 2>&1 &
  local pid=$! u
  u=$(wait_for_match "$work/$1.log" 's|.*serving \(http://[^ ]*\)/metrics.*|\1|p')
  [ -n "$u" ] || fail "$1: agent printed no address"
  for _ in $(seq 1 100); do curl -fs "$u/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
  curl -fsS "$u/readyz" | grep -qx ready || fail "$1: agent not ready"
  # The DCGM source reads every 2 s; with it up, until a collection has booked the trainer.
  local tries=1
  [ "${3:-}" = wait ] && tries=20
  for _ in $(seq 1 "$tries"); do
    sleep 1
    curl -fsS "$u/metrics" >"$work/$1.prom" || fail "$1: scrape failed"
    awk -v re="$trainer" '$0 ~ re { if ($NF > 0) found = 1 } END { exit !found }' "$work/$1.prom" && break
  done
  [ "${3:-}" = wait ] || { sleep 2; curl -fsS "$u/metrics" >"$work/$1.prom" || fail "$1: scrape failed"; }
  kill -TERM "$pid"; wait "$pid" || fail "$1: agent exit code"
}
run_a100 dcgm-up "$dcgm_url" wait
grep -q '^gpumeter_source_up{node="gpu-node-a100",source="dcgm"} 1$' "$work/dcgm-up.prom" || fail "dcgm source not up"
awk -v re="$trainer" '$0 ~ re { if ($NF > 0) found = 1 } END { exit !found }' "$work/dcgm-up.prom" \
  || fail "the trainer has no compute from DCGM activity"
run_a100 dcgm-down "http://127.0.0.1:1/metrics"
grep -q '^gpumeter_source_up{node="gpu-node-a100",source="dcgm"} 0$' "$work/dcgm-down.prom" || fail "dcgm source not reported down"
awk -v re="$trainer" '$0 ~ re { if ($NF > 0) found = 1 } END { exit found }' "$work/dcgm-down.prom" \
  || fail "the trainer has compute while DCGM is down (unknown must not be a measurement)"
grep -q '^gpumeter_compute_seconds_total{.*unit="MIG-1c2d3e4f-5a6b-5c7d-8e9f-a00000000001".*owner_kind="unattributed"' "$work/dcgm-down.prom" \
  || fail "the trainer's instance: compute not unattributed with DCGM down"
kill "$a100_node"; wait "$a100_node" || true
echo "ok: agent with dcgm-exporter, up and down"
