#!/usr/bin/env bash
# `gpumeter top` against the demo's agent (node-8gpu):
#  1. --once: every pod of the scenario is shown, each under the unit(s) the scenario allocates
#     to it (read from the scenario file, not from gpumeter), and every unit's rows add up to it
#     (compute 100 %, memory = the unit's total).
#  2. --format json: the same data, adding up per unit; read back with --source file: it gives
#     the same JSON again (round trip through FrameFromJson).
#  3. The interactive view in tmux: units, pods, sort, the filter (namespace, pod or container
#     substring), findings, quit; each
#     captured screen is checked (and, with GPUMETER_UPDATE_DOCS=1, kept as docs/top-*.txt).
#  4. The agent stopped mid-run: the view says stale and why, and still answers keys.
#  5. Ctrl-C quits and gives the terminal back (canonical mode on again).
#  6. Colours in a colour terminal; none with NO_COLOR.
# Also --by label:team against the scenario's labels.
# Usage: top_test.sh GPUMETER SOURCE_DIR
set -euo pipefail
. "$(dirname "$0")/lib.sh"
bin=$1 src=$2
command -v tmux >/dev/null || { echo "FAIL: tmux is not installed (scripts/setup.sh installs it)"; exit 1; }
work=$(mktemp -d)
sock="gpumeter-top-$$"
trap 'tmux -L "$sock" kill-server 2>/dev/null || true; kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; for f in "$work"/*.log "$work"/*.txt; do [ -f "$f" ] && { echo "== $f"; tail -40 "$f"; }; done >&2; exit 1; }

"$bin" demo --scenario node-8gpu --duration 0 --refresh 600 --interval 0.5 --speedup 20 --listen 127.0.0.1:0 >"$work/demo.log" 2>&1 &
demo=$!
url=$(wait_for_match "$work/demo.log" 's|^metrics: \(http://[^ ]*\)/metrics.*|\1|p')
[ -n "$url" ] || fail "the demo printed no address"
# A few intervals in, and the leak's findings open (scenario second 30: 1.5 s at speedup 20).
for _ in $(seq 1 100); do
  n=$(curl -sf "$url/api/v1/findings" | jq '.findings | length' 2>/dev/null || echo 0)
  [ "${n:-0}" -ge 5 ] && break
  sleep 0.1
done

# The scenario's containers and the units it allocates to each: "ns/pod/container unit..." (a
# time-sliced replica GPU-x::N is on unit GPU-x).
awk '/^pods:/ { p = 1; next } /^[a-z_]+:/ { p = 0 }
     p && /^  - namespace:/ { ns = $3 } p && /^    name:/ { pod = $2 }
     p && /^      - name:/ { c = $3; print ns "/" pod "/" c }
     p && /^        devices:/ { gsub(/[][,]/, " "); $1 = ""; gsub(/::[0-9]+/, ""); print "  " $0 }' \
  "$src/scenarios/node-8gpu.yaml" >"$work/scenario-containers"
[ "$(grep -c '^[a-z]' "$work/scenario-containers")" -ge 10 ] || fail "could not read the scenario's pods"

# --at is for Prometheus's past: an agent has only now, and the error says so.
rc=0; "$bin" top --once --agent "$url" --at 2026-12-01T00:00:00Z >/dev/null 2>"$work/at.log" || rc=$?
[ "$rc" = 2 ] && grep -q -- '--at goes with --once and --source prometheus:URL' "$work/at.log" ||
  fail "top --at with an agent: exit $rc, $(cat "$work/at.log")"
rc=0; "$bin" top --once --source prometheus:http://127.0.0.1:1 --at 12:00 >/dev/null 2>"$work/at.log" || rc=$?
[ "$rc" != 0 ] && grep -q -- '--at' "$work/at.log" || fail "top --at 12:00: exit $rc, $(cat "$work/at.log")"

# 1. --once, plain text.
"$bin" top --once --agent "$url" >"$work/once.txt" 2>"$work/once.log" || fail "top --once"
# Blocks: a unit's header line starts at column 0 with its label, then its owners.
while IFS= read -r line; do
  case "$line" in
    "  "*) for unit in $line; do
             awk -v u="$unit" -v c="$container" '/^GPU/ { inside = index($0, " " u " ") > 0 }
               inside && $1 == c { found = 1 } END { exit !found }' "$work/once.txt" ||
               fail "$container is not shown under its unit $unit"
           done ;;
    *) container=$line
       grep -qE "^  $container " "$work/once.txt" || fail "$container of the scenario is not shown" ;;
  esac
done <"$work/scenario-containers"
# Every unit's total row: 100 % of compute and of memory busy time; memory = the unit's total (to
# the printed 0.01 GiB).
awk '/^  busy/ { match($0, /\/ [0-9.]+ GiB/); total = substr($0, RSTART + 2, RLENGTH - 6) }
     /^  = total/ {  # = total HELD COMPUTE MEMBUSY MEMORY GiB ...
       n++; if ($4 != "100.0%") { print "compute adds up to " $4; bad = 1 }
       if ($5 != "100.0%") { print "memory busy time adds up to " $5; bad = 1 }
       d = $6 - total; if (d < 0) d = -d; if (d > 0.015) { print "memory " $6 " of " total; bad = 1 } }
     END { if (n < 8) { print "only " n " units"; bad = 1 } exit bad }' "$work/once.txt" ||
  fail "a unit's rows do not add up to it"
echo "ok: top --once shows every pod of the scenario under its unit, and every unit adds up"

# 2. --format json: adds up per unit; round trip through --source file:.
"$bin" top --once --agent "$url" --format json >"$work/frame.json" || fail "top --once --format json"
jq -e '[.units[] | ([.owners[].computeRatio] | add) - 1 | fabs < 1e-6] | all' "$work/frame.json" >/dev/null ||
  fail "JSON: a unit's compute ratios do not add up to 1"
jq -e '[.units[] | ([.owners[].memoryBytes] | add) - .memoryTotalBytes | fabs < 1e3] | all' "$work/frame.json" >/dev/null ||
  fail "JSON: a unit's memory does not add up to its total"
for c in $(grep '^[a-z]' "$work/scenario-containers"); do
  jq -e --arg c "$c" '[.pods[].key | join("/")] | index($c)' "$work/frame.json" >/dev/null || fail "JSON lacks $c"
done
"$bin" top --once --source "file:$work/frame.json" --format json >"$work/again.json" || fail "top --source file:"
cmp -s "$work/frame.json" "$work/again.json" || { diff "$work/frame.json" "$work/again.json" | head; fail "JSON does not round-trip"; }
# --by label:team: the scenario's teams (its pods' labels).
teams=$(sed -n 's/^    labels: {team: \([a-z-]*\)}.*/\1/p' "$src/scenarios/node-8gpu.yaml" | sort -u | tr '\n' ' ')
[ -n "$teams" ] || fail "no teams in the scenario"
"$bin" top --once --agent "$url" --by label:team --format json >"$work/teams.json" || fail "top --by label:team"
for t in $teams; do
  jq -e --arg t "$t" '[.pods[].key[0]] | index($t)' "$work/teams.json" >/dev/null || fail "team $t is not a row of --by label:team"
done
echo "ok: --format json adds up per unit and round-trips; --by label:team groups by the pods' labels"

# 3. Interactive, in tmux (a real terminal: ncurses, keys, screen).
tmux -L "$sock" new-session -d -x 170 -y 60 \
  "TERM=xterm-256color '$bin' top --agent '$url' --interval 0.5 2>'$work/tui.log'; echo \"top exited \$?\"; sleep 60"
screen() { tmux -L "$sock" capture-pane -p; }
# wait_screen PATTERN: until the screen shows it (5 s); the screen is left in $work/screen.txt.
wait_screen() {
  for _ in $(seq 1 50); do
    screen >"$work/screen.txt"
    grep -qE -- "$1" "$work/screen.txt" && return 0
    sleep 0.1
  done
  fail "the screen never showed: $1"
}
# stable_screen: the screen once two captures 0.2 s apart agree. A key's header line is drawn
# before the rows under it: a capture between the two (likelier under ASan) shows the new sort
# over the old order.
stable_screen() {
  local prev=""
  for _ in $(seq 1 50); do
    screen >"$work/screen.txt"
    [ -n "$prev" ] && [ "$(cat "$work/screen.txt")" = "$prev" ] && return 0
    prev=$(cat "$work/screen.txt")
    sleep 0.2
  done
  fail "the screen never settled for a frame"
}
# keep NAME: the screen, without trailing blanks and blank lines, as docs/top-NAME.txt.
keep() {
  [ "${GPUMETER_UPDATE_DOCS:-}" = 1 ] || return 0
  sed 's/[[:space:]]*$//' "$work/screen.txt" |
    awk '{ line[NR] = $0 } NF { last = NR } END { for (i = 1; i <= last; i++) print line[i] }' >"$src/docs/top-$1.txt"
}
wait_screen '^GPU0 .*H100'
# Colours in a terminal that has them (SGR foreground codes in the pane's contents).
colour='\x1b\[[0-9;]*(3[0-7]|38;5;[0-9]+)m'
tmux -L "$sock" capture-pane -p -e | grep -qP "$colour" || fail "no colours in a colour terminal"
grep -q 'q quit' "$work/screen.txt" || fail "the header names the keys"
grep -q '\[units\]' "$work/screen.txt" || fail "units view first"
keep units
grep -q '^GPU7 ' "$work/screen.txt" && fail "the units view fits the screen: nothing to scroll in this test"
tmux -L "$sock" send-keys NPage  # scrolls under the title and status lines, which stay
wait_screen '^GPU7 '
head -1 "$work/screen.txt" | grep -q '\[units\]' || fail "the title line scrolled away"
tmux -L "$sock" send-keys p
wait_screen '\[pods\]'
wait_screen 'vision/detector-train-0/trainer'
keep pods
tmux -L "$sock" send-keys s
wait_screen 'sort memory'
stable_screen
grep -q 'sort memory' "$work/screen.txt" || fail "the memory sort did not hold"
# Sorted by memory: the MEMORY column (GiB) never grows down the rows.
awk '/NAMESPACE\/POD/ { on = 1; next } on && /GiB/ { for (i = 1; i <= NF; i++) if ($i == "GiB") { m = $(i-1); break }
     if (prev != "" && m + 0 > prev + 0) bad = 1; prev = m } END { exit bad }' "$work/screen.txt" ||
  fail "pods not sorted by memory"
tmux -L "$sock" send-keys / l l m Enter
wait_screen 'filter "llm"'
wait_screen 'llm/chat-0/vllm'
grep -E '^  [a-z]+/' "$work/screen.txt" | grep -qv '^  llm/' && fail "the filter lets other namespaces through"
# A substring of a pod's name (issue 35: the filter matched whole namespace names only).
tmux -L "$sock" send-keys / BSpace BSpace BSpace h a t Enter
wait_screen 'filter "hat"'
wait_screen 'llm/chat-0/vllm'
grep -E '^  [a-z]+/' "$work/screen.txt" | grep -qv 'hat' && fail "the filter 'hat' lets rows without it through"
tmux -L "$sock" send-keys Escape f
wait_screen '\[findings\]'
wait_screen 'unallocated-device +sandbox/debug-shell/shell'
keep findings
echo "ok: the interactive view scrolls, switches views, sorts, filters by namespace"

# 3b. At 80x24 (issue 35: WASTE, COST/H and GPUS were lost off the right edge with no way to
# reach them): the pods view's right columns start off the edge, Right brings them in (the
# title stays), Left takes them back; ? shows the keys and the columns' units, any key closes it.
tmux -L "$sock" new-session -d -s narrow -x 80 -y 24 \
  "TERM=xterm-256color '$bin' top --agent '$url' --interval 0.5 2>/dev/null; sleep 60"
# wait_narrow PATTERN: as wait_screen, on the 80x24 session; left in $work/narrow.txt.
wait_narrow() {
  for _ in $(seq 1 50); do
    tmux -L "$sock" capture-pane -p -t narrow >"$work/narrow.txt"
    grep -qE -- "$1" "$work/narrow.txt" && return 0
    sleep 0.1
  done
  cat "$work/narrow.txt"
  fail "the 80x24 screen never showed: $1"
}
wait_narrow '^GPU0 '
# The two fixed lines fit in whole words (issue 35: the status line was cut mid-word): the keys
# give way to '? help  q quit', and the status line keeps only whole parts.
head -1 "$work/narrow.txt" | grep -q '? help  q quit' || fail "the title at 80 columns lacks '? help  q quit'"
sed -n 2p "$work/narrow.txt" | sed 's/ *$//' | awk -F'  ' '{
  for (i = 1; i <= NF; i++)
    if ($i !~ /^(agent http[^ ]+|data at [0-9:]+Z \(means over [0-9]+ s\)|filter ".*"|namespace [^ ]+|sort [a-z]+|by [^ ]+|every [0-9.]+ s|PAUSED)$/) {
      print "a part cut: " $i; bad = 1 }
  exit bad }' || fail "the status line at 80 columns is cut mid-word: $(sed -n 2p "$work/narrow.txt")"
tmux -L "$sock" send-keys -t narrow p
wait_narrow 'NAMESPACE/POD/CONTAINER'
grep -qE 'WASTE +GPUS' "$work/narrow.txt" && fail "at 80 columns the pods view was expected to be wider than the screen"
tmux -L "$sock" send-keys -t narrow Right Right Right Right Right
wait_narrow 'WASTE +GPUS'
head -1 "$work/narrow.txt" | grep -q '\[pods\]' || fail "the title line scrolled sideways"
grep -q 'NAMESPACE/POD/CONTAINER' "$work/narrow.txt" && fail "Right did not move the columns"
tmux -L "$sock" send-keys -t narrow Left Left Left Left Left
wait_narrow 'NAMESPACE/POD/CONTAINER'
tmux -L "$sock" send-keys -t narrow '?'
wait_narrow 'Left Right +scroll the columns'
grep -q '% of one GPU' "$work/narrow.txt" || fail "the help does not state the pods view's unit"
tmux -L "$sock" send-keys -t narrow q  # closes the help, does not quit
wait_narrow 'NAMESPACE/POD/CONTAINER'
# The detail pane (issue 35): Down selects the second row, Enter opens it; Escape goes back.
# Each check waits for its own line: a capture can come while a frame is half drawn.
tmux -L "$sock" send-keys -t narrow Down Enter
wait_narrow 'held +[0-9.]+% of one GPU'
wait_narrow '^    GPU[0-9]+: [a-z0-9-]+/'  # a container of the row, on its unit
tmux -L "$sock" send-keys -t narrow Escape
wait_narrow 'NAMESPACE/POD/CONTAINER'
wait_narrow '^> '  # the selected row is marked
# A finding in full: the list cuts its evidence at the edge; the pane shows its last word.
tmux -L "$sock" send-keys -t narrow f Enter
wait_narrow '^  Evidence'
wait_narrow 'Finding  critical'  # critical findings first
curl -sf "$url/api/v1/findings" | jq -r '.findings[] | select(.severity == "critical") | .evidence | split(" ") | .[-1]' >"$work/last-words.txt"
[ -s "$work/last-words.txt" ] || fail "the demo has no critical finding"
found=0
for _ in $(seq 1 50); do
  tmux -L "$sock" capture-pane -p -t narrow >"$work/narrow.txt"
  while read -r w; do grep -qF -- "$w" "$work/narrow.txt" && found=1; done <"$work/last-words.txt"
  [ "$found" = 1 ] && break
  sleep 0.1
done
[ "$found" = 1 ] || { cat "$work/narrow.txt"; fail "the finding's evidence is cut in the detail pane"; }
tmux -L "$sock" send-keys -t narrow Enter
wait_narrow 'SEVERITY +KIND'
tmux -L "$sock" kill-session -t narrow
echo "ok: at 80x24 every column is reachable with Left/Right; ? shows the help; Enter shows a row or a finding in full"

# 4. The agent goes away: stale, since when and why; keys still answered; q quits.
kill "$demo"; wait "$demo" 2>/dev/null || true
wait_screen 'STALE since [0-9:]+Z \([0-9]+ s\): .*unreachable'
tmux -L "$sock" send-keys u
wait_screen '\[units\]'
grep -q 'GPU0 ' "$work/screen.txt" || fail "the last good frame is kept while stale"
tmux -L "$sock" send-keys q
wait_screen 'top exited 0'
echo "ok: with the agent gone the view says stale, keeps answering keys and quits"

# 5. Ctrl-C quits too, and leaves the terminal as it was (canonical mode back on).
tmux -L "$sock" new-window -n ctrlc \
  "TERM=xterm-256color '$bin' top --agent '$url' 2>/dev/null; echo \"top exited \$?\"; stty -a | tr ' ' '\n' | grep -x -- '-*icanon'; sleep 60"
wait_screen 'STALE since'
tmux -L "$sock" send-keys C-c
wait_screen 'top exited 0'
wait_screen '^-?icanon$'  # stty's word for canonical mode, printed after top
grep -qx 'icanon' "$work/screen.txt" || fail "the terminal was not restored after Ctrl-C"
echo "ok: Ctrl-C quits and restores the terminal"

# 6. NO_COLOR: the same view without colours.
tmux -L "$sock" new-window -n nocolor "NO_COLOR=1 TERM=xterm-256color '$bin' top --agent '$url' 2>/dev/null; sleep 60"
wait_screen 'STALE since'
tmux -L "$sock" capture-pane -p -e | grep -qP "$colour" && fail "colours despite NO_COLOR"
echo "ok: colours in a terminal, none with NO_COLOR"
