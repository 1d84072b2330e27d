#!/usr/bin/env python3
"""NVIDIA's own Python bindings (nvidia-ml-py) read the same calls as gpumeter's loader, for
scripts/device_check.sh to compare with `gpumeter probe`.

Usage: device_crosscheck.py SECONDS OUT_JSON   (samples GPU 0 once a second)
"""
import json
import sys
import time

import pynvml as N


def call(fn, *args):
    try:
        return fn(*args)
    except N.NVMLError as e:  # a failed call is recorded, not fatal
        return {"error": str(e)}


def procs(fn, h):
    r = call(fn, h)
    if isinstance(r, dict):
        return r
    return [{"pid": p.pid, "used_memory_bytes": p.usedGpuMemory} for p in r]


def main() -> int:
    seconds, out = float(sys.argv[1]), sys.argv[2]
    N.nvmlInit()
    h = N.nvmlDeviceGetHandleByIndex(0)
    info = {"driver": N.nvmlSystemGetDriverVersion(), "name": N.nvmlDeviceGetName(h),
            "uuid": N.nvmlDeviceGetUUID(h)}
    samples = []
    last_seen = int((time.time() - 1) * 1e6)
    end = time.time() + seconds
    while time.time() < end:
        t = time.time()
        util = call(N.nvmlDeviceGetProcessUtilization, h, last_seen)
        if not isinstance(util, dict):
            util = [{"pid": u.pid, "timestamp_us": u.timeStamp, "sm_percent": u.smUtil,
                     "memory_percent": u.memUtil} for u in util]
            if util:
                last_seen = max(u["timestamp_us"] for u in util)
        mem = call(N.nvmlDeviceGetMemoryInfo, h)
        rates = call(N.nvmlDeviceGetUtilizationRates, h)
        samples.append({
            "time_s": t,
            "compute_processes": procs(N.nvmlDeviceGetComputeRunningProcesses, h),
            "mps_processes": procs(N.nvmlDeviceGetMPSComputeRunningProcesses, h),
            "process_util": util,
            "memory_used_bytes": None if isinstance(mem, dict) else mem.used,
            "utilization_gpu_percent": None if isinstance(rates, dict) else rates.gpu,
            "power_mw": call(N.nvmlDeviceGetPowerUsage, h),
            "energy_mj": call(N.nvmlDeviceGetTotalEnergyConsumption, h),
        })
        time.sleep(max(0.0, 1.0 - (time.time() - t)))
    N.nvmlShutdown()
    with open(out, "w") as f:
        json.dump({"info": info, "samples": samples}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
