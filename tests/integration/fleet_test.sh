#!/usr/bin/env bash
# Fleet rightsizing through a real Prometheus (issue 21): three agents — node-8gpu (H100s, among
# them an OCR and an ETL worker on whole GPUs), a second H100 node whose one GPU a small tagger
# holds (tests/scenarios/harness/fleet-h100-b.yaml), and mig-h200 (another model) — scraped by
# Prometheus. `gpumeter rightsize --source prometheus:` must pack the tagger with node-8gpu's
# workers onto one GPU across the two nodes (a store sees one node and cannot), and, narrowed to
# one node, give what that node's own store gives. Also the auth flags' refusals on the real
# command. Usage: fleet_test.sh GPUMETER SOURCE_DIR
set -euo pipefail
. "$(dirname "$0")/lib.sh"
bin=$1 src=$2
command -v prometheus >/dev/null || { echo "FAIL: prometheus is not installed (scripts/setup.sh)"; exit 1; }
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; for f in "$work"/*.log; do [ -f "$f" ] && { echo "== $f"; tail -20 "$f"; }; done >&2; exit 1; }
monitoring=$src/deploy/kubernetes/monitoring
sed -n '/^spec:/,$p' "$monitoring/prometheusrule.yaml" | sed '1d; s/^  //' >"$work/rules.yaml"

# The full set of per-container series: memory traffic too, which the stores record, so that the
# two paths compared below read the same data (with the default set, Prometheus has a
# workload's memory traffic as not measured, and rightsizing then does not check it).
i=0 targets=()
for scenario in node-8gpu "$src/tests/scenarios/harness/fleet-h100-b.yaml" mig-h200; do
  i=$((i + 1))
  "$bin" demo --scenario "$scenario" --duration 0 --refresh 600 --interval 0.5 --speedup 1 --listen 127.0.0.1:0 \
    --container-series full --shutdown-grace 3 --store "$work/node$i.db" >"$work/demo$i.log" 2>&1 &
  eval "demo$i=$!"
done
for i in 1 2 3; do
  t=$(wait_for_match "$work/demo$i.log" 's|^metrics: http://\([^ ]*\)/metrics.*|\1|p')
  [ -n "$t" ] || fail "demo $i printed no address"
  targets+=("$t")
done
start_prometheus "$work" "$work/rules.yaml" "${targets[@]}" || fail "prometheus did not start"
# Two minutes and more of per-minute history (wall-clock minutes at speedup 1), stopping well
# (slow sanitizer builds start late) before node-8gpu's reranker steps from 10 % to 50 % at its 180th second: the share in a last,
# partial minute depends on where each path's minute boundary falls in it, and a step there makes
# the two paths' compute targets differ by chance, not by error.
sleep 160
kill -TERM "$demo1" "$demo2" "$demo3"
wait "$demo1" "$demo2" "$demo3" || fail "a demo did not stop cleanly"
sleep 1
[ "$(query 'count(count by (node) (last_over_time(gpumeter_unit_info[5m])))' | jq -r '.data.result[0].value[1]')" = 3 ] || fail "three nodes in Prometheus"
[ "$(query 'count(last_over_time(gpumeter_pod_workload_info{workload="tagger",workload_kind="Deployment"}[5m]))' | jq -r '.data.result[0].value[1]')" = 1 ] ||
  fail "the agent exports the tagger's workload"

args=(--min-history 1m --window 1h --format json)
"$bin" rightsize --source "prometheus:$api" "${args[@]}" >"$work/fleet.json" 2>"$work/fleet.err" || { cat "$work/fleet.err" "$work/fleet.json"; fail "rightsize from Prometheus"; }
jq -e '.readFrom | test("per-minute raw series")' "$work/fleet.json" >/dev/null || fail "the output says what it read: $(jq .readFrom "$work/fleet.json")"
# The tagger (node h100-b) shares one GPU with node-8gpu's workers: packed across nodes.
tagger=$(jq -c '.recommendations[] | select(.workload == "Deployment/tagger")' "$work/fleet.json")
[ "$(jq -r .action <<<"$tagger")" = share ] || { jq . "$work/fleet.json" >&2; fail "the tagger is not packed: $tagger"; }
jq -e '.shareWith | any(startswith("batch/") or startswith("vision/Deployment/ocr"))' <<<"$tagger" >/dev/null ||
  fail "the tagger shares with no node-8gpu worker: $tagger"
jq -e '.reason | contains("(node gpu-node-dgx-07)")' <<<"$tagger" >/dev/null || fail "the reason names the other node: $tagger"
echo "ok: rightsizing from Prometheus packs the tagger with node-8gpu's workers across nodes: $(jq -r .reason <<<"$tagger")"
# Alone, the tagger's store knows no one to share with.
"$bin" rightsize --source "sqlite:$work/node2.db" "${args[@]}" >"$work/node2.json" || fail "rightsize from node 2's store"
[ "$(jq -r '.recommendations[] | select(.workload == "Deployment/tagger") | .action' "$work/node2.json")" != share ] ||
  fail "node 2's store alone must not pack the tagger"

# The same data, one node: Prometheus (--node) and that node's store give the same answer.
for pair in 1:gpu-node-dgx-07 3:gpu-node-h200; do
  n=${pair%%:*} node=${pair#*:}
  "$bin" rightsize --source "sqlite:$work/node$n.db" "${args[@]}" >"$work/s$n.json" || fail "rightsize from store $n"
  "$bin" rightsize --source "prometheus:$api" --node "$node" "${args[@]}" >"$work/p$n.json" || fail "rightsize from Prometheus --node $node"
  pick='[.recommendations[] | "\(.namespace)/\(.workload)/\(.container) \(.action) \(.recommended) \(.shareWith | sort | join(","))"] | sort | .[]'
  diff <(jq -r "$pick" "$work/s$n.json") <(jq -r "$pick" "$work/p$n.json") >"$work/diff$n.txt" ||
    { cat "$work/diff$n.txt" >&2; fail "store and Prometheus disagree on node $node"; }
  [ "$(jq '.recommendations | length' "$work/s$n.json")" -gt 0 ] || fail "no recommendation on node $node"
  # The evidence agrees too: memory targets within 2 %, compute targets within 0.02 of a GPU.
  jq -s -r '(.[0].recommendations | map({key: "\(.namespace)/\(.workload)/\(.container)", value: .evidence}) | from_entries) as $s
    | .[1].recommendations[] | "\(.namespace)/\(.workload)/\(.container)" as $k
    | "\($k) \($s[$k].memoryTargetBytes) \(.evidence.memoryTargetBytes) \($s[$k].computeTarget) \(.evidence.computeTarget)"' \
    "$work/s$n.json" "$work/p$n.json" >"$work/evidence$n.txt"
  awk '{ dm = $2 > 0 ? ($3 - $2) / $2 : $3; if (dm < 0) dm = -dm; dc = $5 - $4; if (dc < 0) dc = -dc
         if (dm > 0.02 || dc > 0.02) { print "  " $0; bad = 1 } } END { exit bad }' "$work/evidence$n.txt" ||
    fail "targets differ between store and Prometheus on node $node (workload, store/prometheus memory, compute)"
  echo "ok: node $node: store and Prometheus give the same $(jq '.recommendations | length' "$work/s$n.json") recommendations"
done
# --namespace narrows the fleet.
"$bin" rightsize --source "prometheus:$api" --namespace search "${args[@]}" >"$work/ns.json" || fail "rightsize --namespace"
[ "$(jq -r '[.recommendations[].namespace] | unique | join(",")' "$work/ns.json")" = search ] || fail "--namespace search: $(jq -c '[.recommendations[].namespace]' "$work/ns.json")"

# Bad access flags: clear errors naming the flag, exit 2, before any query.
rc=0; "$bin" rightsize --source "prometheus:$api" --prometheus-token-file "$work/absent" >"$work/bad.out" 2>&1 || rc=$?
[ "$rc" = 2 ] && grep -q -- "--prometheus-token-file" "$work/bad.out" || { cat "$work/bad.out"; fail "a missing token file (rc $rc)"; }
rc=0; "$bin" report --source "prometheus:$api" --window 1h --prometheus-user u >"$work/bad.out" 2>&1 || rc=$?
[ "$rc" = 2 ] && grep -q "go together" "$work/bad.out" || { cat "$work/bad.out"; fail "a user without a password file (rc $rc)"; }
rc=0; "$bin" rightsize --source "mysql:x" >"$work/bad.out" 2>&1 || rc=$?
[ "$rc" = 2 ] && grep -q "expected sqlite:PATH or prometheus:URL" "$work/bad.out" || { cat "$work/bad.out"; fail "a bad source (rc $rc)"; }
echo "ok: bad access flags are refused with the flag named"

# The same Prometheus behind TLS and basic auth (its own --web.config.file): reached with
# --prometheus-ca-file and --prometheus-user/--prometheus-password-file, and refused without them.
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=prometheus -addext subjectAltName=IP:127.0.0.1 \
  -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null || fail "openssl could not make a test certificate"
printf 'fin-ops-pass\n' >"$work/password"
# bcrypt of "fin-ops-pass" (cost 10), as Prometheus's web config wants it; made once with
# python3's crypt module, which a test machine need not have.
hash='$2b$10$2y11daUTl80BwNcxOshQhe/2/3Ji4/6Df4EPwqhuVmmha2kge3z5y'
printf 'tls_server_config: {cert_file: %s, key_file: %s}\nbasic_auth_users: {fin: "%s"}\n' \
  "$work/cert.pem" "$work/key.pem" "$hash" >"$work/web.yml"
port=${api##*:}
pkill -f -- "--storage.tsdb.path=$work/data" || true
for _ in $(seq 1 50); do pgrep -f -- "--storage.tsdb.path=$work/data" >/dev/null || break; sleep 0.2; done
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/data" --web.config.file="$work/web.yml" \
  --web.listen-address="127.0.0.1:$port" >"$work/prometheus-tls.log" 2>&1 &
sapi="https://127.0.0.1:$port"
for _ in $(seq 1 150); do curl -fs --cacert "$work/cert.pem" -u fin:fin-ops-pass "$sapi/-/ready" >/dev/null 2>&1 && break; sleep 0.2; done
auth=(--prometheus-ca-file "$work/cert.pem" --prometheus-user fin --prometheus-password-file "$work/password")
"$bin" rightsize --source "prometheus:$sapi" "${auth[@]}" "${args[@]}" >"$work/tls.json" || { cat "$work/tls.json"; fail "rightsize over TLS with basic auth"; }
pick='[.recommendations[] | "\(.namespace)/\(.workload)/\(.container) \(.action)"] | sort | .[]'
diff <(jq -r "$pick" "$work/fleet.json") <(jq -r "$pick" "$work/tls.json") >/dev/null || fail "the answer over TLS differs"
rc=0; "$bin" report --source "prometheus:$sapi" --window 1h --prometheus-user fin --prometheus-password-file "$work/password" >"$work/bad.out" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -qi "unreachable\|ssl\|certificate" "$work/bad.out" || { cat "$work/bad.out"; fail "an unknown CA must fail (rc $rc)"; }
# The file's name is printed (with a warning: it is 0644); its content never.
printf 'wr0ng-s3cret\n' >"$work/bad-password"; chmod 0644 "$work/bad-password"
rc=0; "$bin" report --source "prometheus:$sapi" --window 1h --prometheus-ca-file "$work/cert.pem" --prometheus-user fin \
  --prometheus-password-file "$work/bad-password" >"$work/bad.out" 2>&1 || rc=$?
grep -q "bad-password: mode 0644, readable by group or others" "$work/bad.out" || { cat "$work/bad.out"; fail "a world-readable password file is not warned about"; }
[ "$rc" = 1 ] && grep -q "HTTP 401 (the credentials were refused)" "$work/bad.out" && ! grep -q wr0ng-s3cret "$work/bad.out" ||
  { cat "$work/bad.out"; fail "a wrong password must be refused without printing it (rc $rc)"; }
echo "ok: Prometheus behind TLS and basic auth: reached with the CA and the credentials, refused without"
