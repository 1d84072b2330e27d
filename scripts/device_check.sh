#!/usr/bin/env bash
# Checks the NVML path against a real driver on a GPU machine that may lack the build's Debian
# packages. Here: `scripts/device_check.sh bundle` (a stripped build/gpumeter and its shared
# libraries into devcheck/, which git ignores through .git/info/exclude). There, with devcheck
# carried: `scripts/device_check.sh run` (needs PyTorch and nvidia-ml-py, root for cgroups).
# What it does there, all on GPU 0 (docs/nvml.md, "Checked on a real driver"):
#   1. nvidia-smi, then two PyTorch workloads with known schedules (scripts/device_workload.py:
#      A busy 0.05-0.55 s and B 0.60-0.80 s of every second, never at once, 6 and 2 GiB), each in
#      a kubepods cgroup of a pod in a pods file, time-sliced;
#   2. the agent on the real driver (no kubelet: pods from the file) with a store, scraped;
#      `gpumeter probe` and NVIDIA's bindings (scripts/device_crosscheck.py) beside it;
#   3. the same two workloads as MPS clients, probed, where nvidia-cuda-mps-control exists.
# Results go to $OUT; scripts/device_compare.py reads them back here.
set -uo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  bundle)
    set -e
    grep -qx '/devcheck/' .git/info/exclude 2>/dev/null || echo /devcheck/ >>.git/info/exclude
    rm -rf devcheck && mkdir -p devcheck/lib
    strip -o devcheck/gpumeter build/gpumeter
    ldd build/gpumeter | awk '/=> \//{print $3}' | grep -v -E 'libc\.so|libm\.so|libpthread|libdl\.so|ld-linux' |
      xargs -r -I{} cp -L {} devcheck/lib/
    du -sh devcheck ;;
  run)
    # Everything lands in one archive: the device tool brings back at most 8 files.
    final=${OUT:-$PWD/devcheck-out}; mkdir -p "$final"; work=$(mktemp -d); out=$work/out; mkdir "$out"
    exec > >(tee "$final/run.log") 2>&1
    bin=$PWD/devcheck/gpumeter; export LD_LIBRARY_PATH=$PWD/devcheck/lib
    nvidia-smi >"$out/nvidia-smi.txt" 2>&1
    nvidia-smi --query-gpu=index,uuid,name,driver_version,memory.total,memory.used,power.draw,mig.mode.current,compute_mode \
      --format=csv >>"$out/nvidia-smi.txt" 2>&1
    uuid=$(nvidia-smi --query-gpu=uuid --format=csv,noheader | head -1)
    echo "GPU 0: $uuid"; python3 -c 'import torch, pynvml; print("torch", torch.__version__)'
    phase() {  # NAME SECONDS [env...]: two workloads, each in its pod's cgroup
      local name=$1 secs=$2; shift 2
      for w in "a 6 0.05 0.55" "b 2 0.60 0.80"; do
        set -- $w
        cg=$(cat "$work/cgroup-$1" 2>/dev/null || true)
        sh -c '[ -n "$1" ] && echo $$ >"$1/cgroup.procs"; shift; exec "$@"' _ "$cg" \
          python3 scripts/device_workload.py "$name-$1" "$2" "$3" "$4" "$secs" "$out/$name-$1.json" \
          >"$work/$name-$1.log" 2>&1 &
      done
      for _ in $(seq 120); do
        [ "$(cat "$work/$name"-*.log 2>/dev/null | grep -c ready)" = 2 ] && break; sleep 0.5
      done
      cat "$work/$name"-*.log
    }
    python3 scripts/device_check_pods.py "$work" >"$work/pods.log" 2>&1 || cat "$work/pods.log"
    # 1+2: time-sliced, the agent attributing
    "$bin" agent --node-name devcheck --pod-resources-socket '' --pods-file "$work/pods.json" \
      --resource-slices false --sharing "$uuid=time-slicing:2" --store "$work/usage.db" \
      --listen 127.0.0.1:9402 --interval 1 --rightsize-interval 0 >"$out/agent.log" 2>&1 &
    agent=$!
    phase ts 40
    python3 scripts/device_crosscheck.py 20 "$out/cross-ts.json" & cross=$!
    "$bin" probe --interval 1 --samples 20 >"$out/probe-ts.json" 2>"$out/probe-ts.err"; echo "probe exit $?"
    wait $cross
    curl -s -m 5 http://127.0.0.1:9402/readyz; echo
    curl -s -m 5 -o "$out/metrics-ts.txt" http://127.0.0.1:9402/metrics; echo "metrics exit $?"
    while pgrep -f device_workload.py >/dev/null; do sleep 0.5; done
    sleep 3; kill -TERM $agent; wait $agent; echo "agent exit $?"
    "$bin" report --source "sqlite:$work/usage.db" --window all --by pod --format json >"$out/report-ts.json"
    "$bin" report --source "sqlite:$work/usage.db" --window all --by pod >"$out/report-ts.txt"; echo "report exit $?"
    cat "$out/report-ts.txt"
    # 3: MPS
    if command -v nvidia-cuda-mps-control >/dev/null; then
      export CUDA_MPS_PIPE_DIRECTORY=$work/mps CUDA_MPS_LOG_DIRECTORY=$work/mps-log
      mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
      nvidia-cuda-mps-control -d; echo "mps daemon $?"
      phase mps 25
      python3 scripts/device_crosscheck.py 12 "$out/cross-mps.json" &
      "$bin" probe --interval 1 --samples 12 >"$out/probe-mps.json" 2>"$out/probe-mps.err"; echo "probe exit $?"
      wait
      echo quit | nvidia-cuda-mps-control; cp "$CUDA_MPS_LOG_DIRECTORY"/control.log "$out/mps-control.log" 2>/dev/null
    else echo "no nvidia-cuda-mps-control: MPS not checked"; fi
    cp "$work/pods.json" "$out/" 2>/dev/null; ls -la "$out"
    tar czf "$final/devcheck.tgz" -C "$out" . ;;
  *) echo "usage: $0 bundle|run" >&2; exit 2 ;;
esac
