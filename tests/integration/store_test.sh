#!/usr/bin/env bash
# The usage store end to end: `gpumeter agent --store` against a node served by another process,
# killed with SIGKILL at random moments and restarted on the same file; after every kill the store
# passes SQLite's integrity check, `gpumeter report` reads it, and its totals never go backwards.
# A store held locked by another process is logged while /metrics keeps being served, and writes
# resume when the lock goes. Then `gpumeter report` on bad input: each a clear error, non-zero exit.
# Usage: store_test.sh GPUMETER FAKE_NODE FAKE_NVML_LIBRARY SCENARIO_DIR
set -euo pipefail
. "$(dirname "$0")/lib.sh"
bin=$1 fake_node=$2 nvml=$3 scenarios=$4
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; [ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; for f in "$work"/*.log; do [ -f "$f" ] && { echo "== $f"; tail -20 "$f"; }; done >&2; exit 1; }

scenario=$scenarios/timeslice-h100.yaml
export GPUMETER_FAKE_NVML_SCENARIO=$scenario GPUMETER_FAKE_NVML_START_S=100
start_fake_node "$fake_node" "$scenario" "$work/node" 100 || fail "fake node did not start"
db=$work/usage.db

start_agent() {  # $1: log file
  "$bin" agent --nvml-library "$nvml" --node-name node-a --pod-resources-socket "$work/node/kubelet.sock" \
    --proc-root "$work/node/proc" --pods-file "$work/node/pods.json" --interval 0.1 --listen 127.0.0.1:0 \
    --store "$db" >"$1" 2>&1 &
  agent=$!
}
held() {  # total GPU-hours held in the store, as a plain number; 0 while nothing was recorded yet
  local out rc=0
  out=$("$bin" report --source "sqlite:$db" --format json 2>&1) || rc=$?
  if [ "$rc" = 0 ]; then jq -r '.total.gpuHoursHeld' <<<"$out"; return; fi
  # Killed before its first interval (or before the schema's first transaction committed): an
  # empty store is not a damaged one, as long as nothing had been recorded before.
  if [ "$prev" = 0 ] && grep -qE 'empty \(no interval recorded yet\)|no such file|schema version 0' <<<"$out"; then echo 0; return; fi
  echo "$out" >&2
  return 1
}

prev=0
for round in 1 2 3 4 5 6; do
  start_agent "$work/agent$round.log"
  sleep "1.$((RANDOM % 10))"  # 1.0 .. 1.9 s: some intervals (also under ASan), then a kill mid-write or between
  kill -9 "$agent"
  wait "$agent" 2>/dev/null || true
  if [ -e "$db" ]; then
    [ "$(sqlite3 "$db" 'PRAGMA integrity_check')" = ok ] || fail "round $round: integrity check failed"
  fi
  now=$(held) || fail "round $round: report cannot read the store"
  awk -v a="$prev" -v b="$now" 'BEGIN { exit !(b >= a) }' || fail "round $round: total went backwards ($prev -> $now)"
  prev=$now
done
awk -v a="$prev" 'BEGIN { exit !(a > 0) }' || fail "nothing recorded in six rounds"
echo "ok: six SIGKILLs, store intact, GPU-hours held $prev, never backwards"

# Locked by another process: the agent logs it and keeps serving; writes resume afterwards.
start_agent "$work/locked.log"
url=$(wait_for_match "$work/locked.log" 's|.*serving \(http://[^ ]*\)/metrics.*|\1|p')
[ -n "$url" ] || fail "agent printed no address"
before=$(held)
# The holder waits for the agent's write in flight (.timeout), then keeps the lock for 4 s.
(echo '.timeout 5000'; echo 'BEGIN IMMEDIATE;'; sleep 4; echo 'ROLLBACK;') | sqlite3 "$db" &
locker=$!
for _ in $(seq 1 35); do grep -q "another process holds the database" "$work/locked.log" && break; sleep 0.1; done
grep -q "another process holds the database" "$work/locked.log" || fail "a locked store is not logged clearly"
curl -fsS "$url/metrics" >"$work/during.prom" || fail "metrics not served while the store is locked"
grep -q '^gpumeter_compute_seconds_total{' "$work/during.prom" || fail "metrics incomplete while the store is locked"
sleep 0.5
curl -fsS "$url/metrics" >"$work/during.prom" || fail "metrics not served while the store is locked"
pending=$(sed -n 's/^gpumeter_store_pending_intervals{node="node-a"} //p' "$work/during.prom")
awk -v p="$pending" 'BEGIN { exit !(p > 0) }' || fail "no intervals pending while the store is locked ($pending)"
wait "$locker"
for _ in $(seq 1 100); do grep -q "writing again after" "$work/locked.log" && break; sleep 0.1; done
grep -q "writing again after" "$work/locked.log" || fail "writes did not resume after the lock"
sleep 0.5
curl -fsS "$url/metrics" >"$work/after.prom" || fail "metrics after the lock"
grep -q '^gpumeter_store_pending_intervals{node="node-a"} 0$' "$work/after.prom" || fail "intervals still pending after the lock"
grep -q '^gpumeter_store_dropped_intervals_total{node="node-a"} 0$' "$work/after.prom" || fail "intervals dropped in a 4 s lock"
failures=$(sed -n 's/^gpumeter_store_write_failures_total{node="node-a"} //p' "$work/after.prom")
awk -v f="$failures" 'BEGIN { exit !(f > 0) }' || fail "the lock's write failures are not counted"
echo "ok: a 4 s lock: $pending intervals pending during it, all written after, $failures failed attempts counted"
after=$(held)
awk -v a="$before" -v b="$after" 'BEGIN { exit !(b > a) }' || fail "no usage recorded after the lock ($before -> $after)"
kill "$agent"; wait "$agent" 2>/dev/null || true

# Every format from the same store; the totals agree.
table=$("$bin" report --source "sqlite:$db" --by namespace,pod)
grep -q '^TOTAL' <<<"$table" || fail "table without a total line"
"$bin" report --source "sqlite:$db" --format csv -o "$work/r.csv" || fail "csv"
head -1 "$work/r.csv" | grep -q '^namespace,gpu_hours_held,' || fail "csv header"
json_total=$("$bin" report --source "sqlite:$db" --format json | jq -r '.total.cost')
csv_total=$(awk -F, '$1 == "TOTAL" { print $7 }' "$work/r.csv")
awk -v a="$json_total" -v b="$csv_total" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a > 0 && d <= 1e-9 * a) }' \
  || fail "csv total $csv_total != json total $json_total"
"$bin" report --source "sqlite:$db" --format focus -o "$work/focus.csv" || fail "focus"
focus_total=$(awk -F, 'NR > 1 { s += $1 } END { printf "%.12g", s }' "$work/focus.csv")
awk -v a="$json_total" -v b="$focus_total" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-6 * a) }' \
  || fail "FOCUS BilledCost sums to $focus_total, not $json_total"
"$bin" report --source "sqlite:$db" --format html -o "$work/r.html" || fail "html"
grep -q '<svg' "$work/r.html" && grep -q 'id="total-cost"' "$work/r.html" || fail "html without charts or total"
echo "ok: table, csv, json, focus and html agree on the total ($json_total)"

# Bad input: a clear message naming the input, a non-zero exit, nothing written over.
expect_error() {  # expected-rc message-fragment args...
  local want=$1 msg=$2 rc=0; shift 2
  "$bin" report "$@" >"$work/err.out" 2>"$work/err.log" || rc=$?
  [ "$rc" = "$want" ] || fail "report $* exited $rc, expected $want"
  cat "$work/err.out" >>"$work/err.log"  # the logger writes to stdout
  grep -qF -- "$msg" "$work/err.log" || { cat "$work/err.log"; fail "report $*: message lacks '$msg'"; }
  # One style for a bad flag and a failure alike (issue 35): "gpumeter: error: ...", no timestamp.
  grep -q '^gpumeter: error: ' "$work/err.log" || { cat "$work/err.log"; fail "report $*: not in the 'gpumeter: error:' style"; }
}
printf 'gpu_models:\n  H100: -3\n' >"$work/bad-pricing.yaml"
expect_error 2 "bad-pricing.yaml: gpu_models.H100: a price per hour must be a number in [0, 10000]" --source "sqlite:$db" --pricing "$work/bad-pricing.yaml"
expect_error 2 "--window: '7x'" --source "sqlite:$db" --window 7x
expect_error 2 "--window and --from: give one of them" --source "sqlite:$db" --window all --from 1796083200
expect_error 2 "policy 'usage'" --source "sqlite:$db" --policy usage
expect_error 2 "--by 'team'" --source "sqlite:$db" --by team
expect_error 1 "$work/none.db: no such file" --source "sqlite:$work/none.db"
expect_error 2 "expected sqlite:PATH" --source "mysql://db"
: >"$work/empty-file.db"
expect_error 2 "not a gpumeter store" --source "sqlite:$work/empty-file.db"
"$bin" agent --nvml-library "$work/no-nvml.so" --store "$work/fresh.db" --listen 127.0.0.1:0 >"$work/fresh.log" 2>&1 || true
# The agent runs for long: its log lines carry their time.
grep -qE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+ error ' "$work/fresh.log" || { cat "$work/fresh.log"; fail "the agent's log lines are not timestamped"; }
expect_error 1 "empty (no interval recorded yet)" --source "sqlite:$work/fresh.db"
echo "ok: bad input refused with clear messages"
