#!/usr/bin/env python3
"""A GPU workload with a known schedule, for scripts/device_check.sh (needs PyTorch and a GPU).

Usage: device_workload.py NAME MEMORY_GIB BUSY_FROM BUSY_TO SECONDS OUT_JSON

Holds MEMORY_GIB of GPU memory and, in every wall-clock second, keeps the GPU busy with matrix
products while (time mod 1) lies in [BUSY_FROM, BUSY_TO); idle otherwise. Two workloads with
disjoint ranges share one GPU without ever running at the same time, so each one's true busy
time is known. Writes the busy intervals it measured (epoch seconds, each ending after the
device synchronised) to OUT_JSON.
"""
import json
import os
import sys
import time

import torch


def main() -> int:
    name, gib, lo, hi, seconds, out = sys.argv[1:7]
    lo, hi, seconds = float(lo), float(hi), float(seconds)
    dev = torch.device("cuda")
    hold = torch.empty(int(float(gib) * 2**30), dtype=torch.uint8, device=dev)
    a = torch.randn(4096, 4096, dtype=torch.bfloat16, device=dev)
    b = torch.randn(4096, 4096, dtype=torch.bfloat16, device=dev)
    torch.cuda.synchronize()
    intervals = []
    start = time.time()
    print(f"{name}: pid {os.getpid()} ready", flush=True)
    while time.time() - start < seconds:
        now = time.time()
        phase = now % 1.0
        if lo <= phase < hi:
            t0 = now
            while lo <= time.time() % 1.0 < hi:
                for _ in range(4):
                    a = (a @ b) * 1e-3
                torch.cuda.synchronize()
            intervals.append([t0, time.time()])
        else:
            # Sleep to the next start of the busy range.
            wait = (lo - phase) % 1.0
            time.sleep(min(wait, 0.05))
    del hold
    with open(out, "w") as f:
        json.dump({"name": name, "pid": os.getpid(), "busy_from": lo, "busy_to": hi,
                   "memory_gib": float(gib), "intervals": intervals}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
