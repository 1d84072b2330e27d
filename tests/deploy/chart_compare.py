#!/usr/bin/env python3
"""Compares two renderings of Kubernetes objects (YAML streams) as objects: the chart's and the
kustomize overlay's. Ignored: Helm's standard labels wherever labels are (metadata, selectors,
pod templates), the Namespace object, and order (of the objects, and of the lists Kubernetes
merges by name: a kustomize patch puts its env variables and mounts first). Prints each
difference; exit 1 when any."""
import sys
import yaml

BY_NAME = {"env", "volumeMounts", "volumes", "ports", "containers"}
HELM_LABELS = {"app.kubernetes.io/instance", "app.kubernetes.io/version",
               "app.kubernetes.io/managed-by", "helm.sh/chart"}


def strip(node):
    if isinstance(node, dict):
        out = {}
        for k, v in node.items():
            if k in ("labels", "matchLabels", "selector") and isinstance(v, dict):
                v = {lk: lv for lk, lv in v.items() if lk not in HELM_LABELS}
            if k in BY_NAME and isinstance(v, list) and all(isinstance(x, dict) and "name" in x for x in v):
                v = sorted(v, key=lambda x: x["name"])
            out[k] = strip(v)
        return out
    if isinstance(node, list):
        return [strip(x) for x in node]
    return node


def objects(path):
    with open(path) as f:
        docs = [d for d in yaml.safe_load_all(f) if isinstance(d, dict)]
    out = {}
    for d in docs:
        if d.get("kind") == "Namespace":
            continue
        key = (d["kind"], d["metadata"]["name"])
        if key in out:
            sys.exit(f"{path}: {key} twice")
        out[key] = strip(d)
    return out


def diff(a, b, path=""):
    if type(a) is not type(b):
        yield f"{path}: {a!r} vs {b!r}"
    elif isinstance(a, dict):
        for k in sorted(set(a) | set(b), key=str):
            if k not in a:
                yield f"{path}.{k}: only in the overlay: {b[k]!r}"[:300]
            elif k not in b:
                yield f"{path}.{k}: only in the chart: {a[k]!r}"[:300]
            else:
                yield from diff(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list):
        if len(a) != len(b):
            yield f"{path}: {len(a)} items vs {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            yield from diff(x, y, f"{path}[{i}]")
    elif a != b:
        yield f"{path}: {a!r} vs {b!r}"[:300]


chart, overlay = objects(sys.argv[1]), objects(sys.argv[2])
problems = []
for key in sorted(set(chart) | set(overlay)):
    if key not in overlay:
        problems.append(f"{key}: only in the chart")
    elif key not in chart:
        problems.append(f"{key}: only in the overlay")
    else:
        problems += [f"{key[0]}/{key[1]}{d}" for d in diff(chart[key], overlay[key])]
for p in problems:
    print(p)
sys.exit(1 if problems else 0)
