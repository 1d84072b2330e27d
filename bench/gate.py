#!/usr/bin/env python3
"""The hot path's regression gate.

Runs the gated benchmarks of gpumeter_bench (medians of 5) beside the reference workload
(BM_Reference, bench/reference_bench.cpp) in the same process, and reads each figure as a ratio to
the reference's median: a slower or loaded machine slows both, a slower hot path only its own
ratio. `check` fails when a ratio is over MAX_REGRESSION times the committed baseline's
(bench/baseline.json); `update` writes the baseline anew, with the reason, which is kept in its
history: a slower hot path is a decision someone made and wrote down.

  bench/gate.py check  BUILD/bench/gpumeter_bench bench/baseline.json
  bench/gate.py update BUILD/bench/gpumeter_bench bench/baseline.json --reason "why"
"""
import argparse
import datetime
import json
import subprocess
import sys

REFERENCE = "BM_Reference"
GATED = [
    "BM_SamplePass/node8gpu_r580",
    "BM_PipelinePass",
    "BM_RenderMetrics",
    "BM_AttributeLargeNode",
    "BM_AccountantStepLargeNode",
    "BM_StoreWriteInterval",
    "BM_Report30Days",
]
MAX_REGRESSION = 1.5
REPETITIONS = 5


def run(binary):
    names = [REFERENCE] + GATED
    pattern = "^(" + "|".join(names) + ")$"
    cmd = [binary, "--benchmark_filter=" + pattern,
           "--benchmark_repetitions=%d" % REPETITIONS,
           "--benchmark_report_aggregates_only=true", "--benchmark_format=json"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=900).stdout
    medians = {}
    for b in json.loads(out)["benchmarks"]:
        if b.get("aggregate_name") != "median":
            continue
        scale = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}[b["time_unit"]]
        medians[b["run_name"]] = b["real_time"] * scale  # µs
    missing = [n for n in names if n not in medians]
    if missing:
        sys.exit("bench gate: no figure for " + ", ".join(missing) + " (renamed or removed?)")
    return medians


def ratios(medians):
    ref = medians[REFERENCE]
    if ref <= 0:
        sys.exit("bench gate: the reference workload took no time")
    return {n: medians[n] / ref for n in GATED}


def check(binary, path):
    with open(path) as f:
        base = json.load(f)
    medians = run(binary)
    now = ratios(medians)
    print("bench gate: medians of %d, as ratios to %s (%.1f us now)"
          % (REPETITIONS, REFERENCE, medians[REFERENCE]))
    print("%-32s %12s %10s %10s %8s" % ("benchmark", "median us", "ratio", "baseline", "x"))
    failed = []
    for n in GATED:
        b = base["benchmarks"].get(n)
        if b is None:
            print("%-32s %12.1f %10.3f %10s %8s" % (n, medians[n], now[n], "-", "new"))
            continue
        x = now[n] / b["ratio"]
        flag = "  <-- over %.1fx" % MAX_REGRESSION if x > MAX_REGRESSION else ""
        print("%-32s %12.1f %10.3f %10.3f %8.2f%s" % (n, medians[n], now[n], b["ratio"], x, flag))
        if x > MAX_REGRESSION:
            failed.append(n)
    if failed:
        print("bench gate: FAILED: %s slower than the baseline by more than %.1fx. If that is "
              "intended, run `make bench-baseline REASON=\"...\"` and commit bench/baseline.json."
              % (", ".join(failed), MAX_REGRESSION))
        return 1
    print("bench gate: passed")
    return 0


def update(binary, path, reason):
    try:
        with open(path) as f:
            history = json.load(f).get("history", [])
    except FileNotFoundError:
        history = []
    medians = run(binary)
    now = ratios(medians)
    history.append({"date": datetime.date.today().isoformat(), "reason": reason})
    doc = {
        "reference": REFERENCE,
        "max_regression": MAX_REGRESSION,
        "repetitions": REPETITIONS,
        "benchmarks": {n: {"ratio": round(now[n], 4), "median_us": round(medians[n], 1)}
                       for n in GATED},
        "reference_median_us": round(medians[REFERENCE], 1),
        "history": history,
    }
    with open(path, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    print("bench gate: baseline written to %s" % path)
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("mode", choices=["check", "update"])
    p.add_argument("binary")
    p.add_argument("baseline")
    p.add_argument("--reason", default="")
    a = p.parse_args()
    if a.mode == "update":
        if not a.reason.strip():
            sys.exit("bench gate: --reason is required: say why the baseline moves")
        return update(a.binary, a.baseline, a.reason.strip())
    return check(a.binary, a.baseline)


if __name__ == "__main__":
    sys.exit(main())
