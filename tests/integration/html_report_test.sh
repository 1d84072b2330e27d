#!/usr/bin/env bash
# The HTML chargeback in a real browser: a demo writes its store, `gpumeter report --format html`
# renders it, headless Chromium (Debian's) loads the file with the network off, and
#   - the page text (the DOM after load) contains the total cost the JSON report gives;
#   - its screenshot is not blank: the PNG is far larger than the screenshot of an empty page of
#     the same size (charts and text do not compress like a flat colour), and not an error page.
# Usage: html_report_test.sh GPUMETER
set -euo pipefail
bin=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || fail "chromium is not installed (scripts/setup.sh installs Debian's chromium)"

"$bin" demo --scenario node-8gpu --duration 6 --speedup 30 --refresh 100 --interval 0.5 --listen 127.0.0.1:0 \
  --store "$work/usage.db" >"$work/demo.log" 2>&1 || { tail -20 "$work/demo.log"; fail "demo"; }
"$bin" report --source "sqlite:$work/usage.db" --by namespace --format html -o "$work/report.html" || fail "html report"
total=$("$bin" report --source "sqlite:$work/usage.db" --by namespace --format json | jq -r '.total.cost')
want=$(printf '%.2f USD' "$total")
grep -q '<script' "$work/report.html" && fail "the report must not need scripts"

run() {  # headless, no network, a throwaway profile
  timeout 60 "$browser" --headless --no-sandbox --disable-gpu --no-first-run --disable-extensions \
    --user-data-dir="$work/profile" --proxy-server=127.0.0.1:9 --proxy-bypass-list='<-loopback>' \
    --window-size=1200,1600 "$@" 2>>"$work/chromium.log"
}
run --dump-dom "file://$work/report.html" >"$work/dom.html" || { tail "$work/chromium.log"; fail "chromium could not load the report"; }
grep -qF "$want" "$work/dom.html" || fail "the page does not show the total $want"
grep -q '<svg' "$work/dom.html" || fail "no chart in the rendered page"
grep -q '<h2>Rightsizing</h2>' "$work/dom.html" || fail "no rightsizing section"
grep -q 'research/Pod/forgotten-notebook/jupyter' "$work/dom.html" || fail "the rightsizing table lists no workload"
(cd "$work" && run --screenshot="$work/report.png" "file://$work/report.html") || fail "screenshot"
printf '<!DOCTYPE html><html><body></body></html>' >"$work/blank.html"
(cd "$work" && run --screenshot="$work/blank.png" "file://$work/blank.html") || fail "blank screenshot"
[ "$(head -c 8 "$work/report.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "the screenshot is not a PNG"
size=$(stat -c %s "$work/report.png") blank=$(stat -c %s "$work/blank.png")
[ "$size" -gt $((blank * 5)) ] || fail "the screenshot looks blank ($size bytes; an empty page is $blank)"
echo "ok: Chromium shows the report with its total ($want); screenshot $size bytes vs $blank for an empty page"

# No text is clipped (issue 35: the GPU bar labels were cut at the left edge): a copy of the page
# with a script that measures, after layout, every SVG text against its chart's box and writes
# the ones outside into the page; Chromium dumps the DOM after it ran. The product page has no
# script; the check is the test's. It is first shown to catch a label drawn off a chart's edge.
measure='<script>
window.addEventListener("load", () => {
  const out = [];
  for (const t of document.querySelectorAll("svg text")) {
    const r = t.getBoundingClientRect(), s = t.ownerSVGElement.getBoundingClientRect();
    if (r.left < s.left - 0.5 || r.right > s.right + 0.5 || r.top < s.top - 0.5 || r.bottom > s.bottom + 0.5)
      out.push(t.textContent);
  }
  const p = document.createElement("pre");
  p.id = "clipped";
  p.textContent = "clipped " + out.length + ": " + out.join(" | ");
  document.body.appendChild(p);
});
</script>'
clipped() {  # PAGE -> the measuring line
  sed "s#</body>#$(printf '%s' "$measure" | tr '\n' ' ' | sed 's/[#&]/\\&/g')</body>#" "$1" >"$work/measured.html"
  run --virtual-time-budget=3000 --dump-dom "file://$work/measured.html" | grep -o 'clipped [0-9]*:[^<]*'
}
printf '<!DOCTYPE html><html><body><svg width="60" height="20"><text x="-30" y="14">cut on purpose</text></svg></body></html>' >"$work/cut.html"
clipped "$work/cut.html" | grep -q '^clipped 1: cut on purpose' || fail "the clipping check does not catch a cut label"
line=$(clipped "$work/report.html") || fail "the clipping check did not run on the report"
[ "${line%%:*}" = "clipped 0" ] || fail "text cut at a chart's edge: $line"
echo "ok: no chart text is cut at its edge (checked by Chromium's layout; a cut label is caught)"
