#!/usr/bin/env bash
# `gpumeter audit` on dcgm-exporter pages: a virtual-GPU page (three pods copying one GPU) gives
# the factor 3 and, with --fail-on warning, exit 1; JSON says the same; a malformed page is a
# clear error naming the line (exit 2); a dcgm-exporter page fetched over HTTP audits; a page with
# no dcgm-exporter sample is an error (exit 2).
# Usage: audit_test.sh GPUMETER
set -euo pipefail
. "$(dirname "$0")/lib.sh"
bin=$1
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

{
  echo '# HELP DCGM_FI_DEV_FB_USED Framebuffer memory used (in MiB).'
  echo '# TYPE DCGM_FI_DEV_FB_USED gauge'
  for i in 0 1 2; do
    echo "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-5fb5b3d2-11c7-4a9c-9d0e-2f3a4b5c6d7e\",pci_bus_id=\"00000000:18:00.0\",device=\"nvidia0\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"gpu-node-1\",container=\"server\",namespace=\"search\",pod=\"embed-$i\",vgpu=\"$i\"} 61440"
    echo "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-5fb5b3d2-11c7-4a9c-9d0e-2f3a4b5c6d7e\",pci_bus_id=\"00000000:18:00.0\",device=\"nvidia0\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"gpu-node-1\",container=\"server\",namespace=\"search\",pod=\"embed-$i\",vgpu=\"$i\"} 95"
  done
  echo 'DCGM_FI_DEV_GPU_UTIL{gpu="1",UUID="GPU-1",modelName="NVIDIA H100 80GB HBM3",Hostname="gpu-node-1"} 12'
} >"$work/vgpu.prom"

"$bin" audit --dcgm-metrics "$work/vgpu.prom" >"$work/table.txt" || fail "audit exited non-zero without --fail-on"
grep -q '1 of 1 GPUs with per-pod series add up to more than the GPU' "$work/table.txt" || { cat "$work/table.txt"; fail "summary"; }
grep -qE 'DCGM_FI_DEV_FB_USED +3 +61440 +184320 +3.00x' "$work/table.txt" || { cat "$work/table.txt"; fail "factor 3 for FB_USED"; }
grep -q 'virtual GPUs' "$work/table.txt" || fail "mode not recognised"
rc=0; "$bin" audit --dcgm-metrics "$work/vgpu.prom" --fail-on warning >/dev/null || rc=$?
[ "$rc" = 1 ] || fail "--fail-on warning must exit 1 on inflation (got $rc)"
json=$("$bin" audit --dcgm-metrics "$work/vgpu.prom" --format json)
[ "$(jq -r '.inflatedGpus' <<<"$json")" = 1 ] || fail "json inflatedGpus"
[ "$(jq -r '.gpus[0].worstFactor' <<<"$json")" = 3 ] || fail "json worstFactor"

printf 'DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-1" 5\n' >"$work/bad.prom"
rc=0; "$bin" audit --dcgm-metrics "$work/bad.prom" >"$work/bad.out" 2>&1 || rc=$?
[ "$rc" = 2 ] && grep -q "bad.prom: line 1: expected ',' or '}' after label UUID" "$work/bad.out" || { cat "$work/bad.out"; fail "malformed page (rc $rc)"; }
rc=0; "$bin" audit --dcgm-metrics "$work/none.prom" >"$work/none.out" 2>&1 || rc=$?
[ "$rc" != 0 ] && grep -q "none.prom" "$work/none.out" || fail "missing file"

# Over HTTP: the mig-a100 demo serves its node's (fake) dcgm-exporter page, one series per MIG
# instance and no per-pod series: read, nothing inflated. Its own /metrics has no dcgm-exporter
# sample at all: an audit of it has checked nothing, and says so (exit 2), not "0 of 0".
"$bin" demo --scenario mig-a100 --duration 0 --refresh 600 --listen 127.0.0.1:0 >"$work/demo.log" 2>&1 &
url=$(wait_for_match "$work/demo.log" 's|^metrics: \(http://[^ ]*/metrics\).*|\1|p')
dcgm=$(wait_for_match "$work/demo.log" 's|^dcgm-exporter: \(http://[^ ]*\) .*|\1|p')
[ -n "$url" ] && [ -n "$dcgm" ] || { cat "$work/demo.log"; fail "demo printed no addresses"; }
"$bin" audit --dcgm-metrics "$dcgm" --fail-on warning >"$work/url.txt" || { cat "$work/url.txt"; fail "audit over HTTP"; }
grep -qE '^dcgm-exporter page http://[^ ]+: [1-9][0-9]* samples' "$work/url.txt" || { cat "$work/url.txt"; fail "the page's samples"; }
rc=0; "$bin" audit --dcgm-metrics "$url" >"$work/nodcgm.out" 2>&1 || rc=$?
[ "$rc" = 2 ] && grep -q "no usable dcgm-exporter sample" "$work/nodcgm.out" || { cat "$work/nodcgm.out"; fail "a page with no dcgm-exporter sample must be an error (rc $rc)"; }
echo "ok: audit finds the 3x copy, exits 1 with --fail-on warning, names bad lines, reads over HTTP, refuses a page with nothing to audit"
