#!/usr/bin/env bash
# The Helm chart (deploy/helm/gpumeter): lint, the values schema's refusals, the generated files
# against their sources, and for each kustomize overlay the chart's objects equal to it (ignoring
# Helm's labels, the Namespace and order). The checks the overlays pass (security, probes on their
# port, least-privilege RBAC, arguments the agent accepts) run on every case of
# render_chart.sh in manifests_test. Needs helm (GPUMETER_HELM; scripts/setup.sh installs it)
# and kubectl (GPUMETER_KUBECTL).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
chart=$root/deploy/helm/gpumeter
helm=${GPUMETER_HELM:-helm}
kubectl=${GPUMETER_KUBECTL:-kubectl}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
command -v "$helm" >/dev/null || { echo "FAIL: no helm ($helm): scripts/setup.sh test installs it" >&2; exit 1; }

# Lint: clean with an image; without one, the error says what to set.
"$helm" lint "$chart" --strict --set image.repository=gpumeter >"$work/lint" 2>&1 || fail "helm lint: $(cat "$work/lint")"
grep -q '\[ERROR\]\|\[WARNING\]' "$work/lint" && fail "helm lint warns: $(cat "$work/lint")"
if "$helm" template x "$chart" >"$work/out" 2>&1; then fail "rendered without image.repository"; fi
grep -q 'image.repository: set it to where `make image-push' "$work/out" || fail "no image error: $(cat "$work/out")"

# Bad values: refused, naming the value.
refused() {  # WANT ARGS...
  local want=$1; shift
  if "$helm" template gpumeter "$chart" --set image.repository=gpumeter "$@" >"$work/out" 2>&1; then
    fail "accepted: $*"
  elif ! grep -q -- "$want" "$work/out"; then
    fail "$*: the error does not name '$want': $(head -c 400 "$work/out")"
  fi
}
refused 'sharing.mode' --set sharing.mode=mig
refused 'image.digest' --set image.digest=latest
refused 'store.minuteDays' --set store.minuteDays=0
refused 'cost.idle' --set cost.idle=nobody
refused 'cost.policy' --set cost.policy=blend:2
refused 'ports.metrics' --set ports.metrics=70000
refused 'serviceMonitor.interval' --set serviceMonitor.interval=often
refused 'Additional property shareing is not allowed' --set shareing.mode=mps
refused 'extraArgs' --set 'extraArgs[0]=rm -rf'
refused "give sharing.devicePluginConfig" --set sharing.mode=time-slicing

# The generated files are their sources'.
bash "$root/scripts/sync_chart.sh" --check || fail "generated chart files differ"

# Each overlay's objects, from the chart.
compare() {  # CASE KUSTOMIZE_DIR...
  local c=$1; shift
  GPUMETER_HELM=$helm bash "$here/render_chart.sh" "$c" >"$work/chart-$c.yaml" || { fail "render $c"; return; }
  : >"$work/kust-$c.yaml"
  for d in "$@"; do
    { "$kubectl" kustomize "$root/deploy/kubernetes/$d"; echo "---"; } >>"$work/kust-$c.yaml" || { fail "kustomize $d"; return; }
  done
  if python3 "$here/chart_compare.py" "$work/chart-$c.yaml" "$work/kust-$c.yaml" >"$work/diff-$c" 2>&1; then
    echo "chart $c = kustomize $*"
  else
    fail "chart $c differs from kustomize $*:"; head -20 "$work/diff-$c" >&2
  fi
}
compare base base
compare time-slicing overlays/time-slicing
compare mps overlays/mps
compare dra overlays/dra
compare dcgm overlays/dcgm
compare monitoring base monitoring

# Every other case renders.
for c in store-off pinned everything; do
  GPUMETER_HELM=$helm bash "$here/render_chart.sh" "$c" >/dev/null 2>"$work/err" || fail "render $c: $(cat "$work/err")"
done
grep -q 'image: "\?registry.example.com/gpumeter@sha256:0123' <(GPUMETER_HELM=$helm bash "$here/render_chart.sh" pinned) || fail "digest not pinned"

[ $fails -eq 0 ] && echo "chart: all checks passed" || { echo "chart: $fails check(s) failed" >&2; exit 1; }
