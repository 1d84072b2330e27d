#!/usr/bin/env bash
# The Helm chart cannot read files outside itself, so what it shares with deploy/kubernetes is
# generated into deploy/helm/gpumeter/files from there, never edited by hand: the recording and
# alerting rules (the PrometheusRule's spec), the Grafana dashboard and the pricing file.
# `scripts/sync_chart.sh` writes them; `--check` exits 1 naming each file that differs (a test).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
src=$root/deploy/kubernetes
dst=$root/deploy/helm/gpumeter/files
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The rule file's plain form, as monitoring/prometheusrule.yaml's header says to make it.
sed -n '/^spec:/,$p' "$src/monitoring/prometheusrule.yaml" | sed '1d; s/^  //' >"$tmp/rules.yaml"
cp "$src/monitoring/gpumeter-dashboard.json" "$tmp/gpumeter-dashboard.json"
cp "$src/base/pricing.yaml" "$tmp/pricing.yaml"
status=0
for f in rules.yaml gpumeter-dashboard.json pricing.yaml; do
  if [[ ${1:-} == --check ]]; then
    cmp -s "$tmp/$f" "$dst/$f" || { echo "chart: $dst/$f differs from its source: run scripts/sync_chart.sh" >&2; status=1; }
  else
    mkdir -p "$dst" && cp "$tmp/$f" "$dst/$f"
  fi
done
exit $status
