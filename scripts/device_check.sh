#!/usr/bin/env bash
# Checks the NVML path against a real driver on a GPU machine that may lack the build's Debian
# packages: run `scripts/device_check.sh bundle` here (copies the binary's shared libraries into
# build/devlibs), carry build/gpumeter and build/devlibs, then run `scripts/device_check.sh run`
# there. Output: probe.json (what the driver returned) and nvidia-smi.txt to compare with.
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  bundle)
    mkdir -p build/devlibs
    ldd build/gpumeter | awk '/=> \//{print $3}' | grep -v -E 'libc\.so|libm\.so|libpthread|libdl\.so|ld-linux' |
      xargs -r -I{} cp -L {} build/devlibs/
    du -sh build/devlibs ;;
  run)
    out=${OUT:-.}
    nvidia-smi >"$out/nvidia-smi.txt" 2>&1 || true
    nvidia-smi --query-gpu=index,uuid,name,memory.total,memory.used,power.draw,mig.mode.current \
      --format=csv >>"$out/nvidia-smi.txt" 2>&1 || true
    LD_LIBRARY_PATH=build/devlibs build/gpumeter probe --interval 1 >"$out/probe.json" 2>"$out/probe.err"
    echo "probe exit $?"; head -c 2000 "$out/probe.json" ;;
  *) echo "usage: $0 bundle|run" >&2; exit 2 ;;
esac
