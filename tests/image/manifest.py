#!/usr/bin/env python3
"""The rendered DaemonSet (`kubectl kustomize`) as `podman run` options, for tests/image/run.sh.

Every field of the pod and container spec is either translated into what the container runtime
would do on a node, or named below as not applying to a single container (scheduling, probes the
test performs itself). Any other field fails: a setting added to the manifest must be added here,
so the image test cannot silently run the image differently from the DaemonSet.

Usage: manifest.py RENDERED.yaml FIXTURES.json OUTDIR
  FIXTURES.json: {"hostPath": {"/var/lib/...": "/host/dir", ...}, "node_name": ...,
                  "nvml_library": path, "sa_dir": path, "api_host": ip, "api_port": port}
Writes OUTDIR/podman.args (one option a line), OUTDIR/agent.args (the container's args, one a
line), OUTDIR/facts.json (image, user, port, probe paths, capabilities) and OUTDIR/configmaps/.
"""
import json
import os
import sys

import yaml

# The only differences from the manifest, each also listed in tests/image/run.sh:
# 1. --proc-root=/host/proc: a runtime cannot bind-mount a fixture over /proc; the manifest reads
#    the host's /proc through hostPID. The fixture tree is mounted read-only at /host.
# 2. A stub API server with a service-account token: KUBERNETES_SERVICE_HOST/PORT and the
#    token/ca.crt the kubelet would mount for serviceAccountName.
PROC_ROOT_DEVIATION = ("--proc-root=/proc", "--proc-root=/host/proc")
SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
# Where the NVIDIA container runtime puts the driver's NVML (Debian/Ubuntu multiarch layout).
NVML_PATH = "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1"

# Fields that do not change how the container runs on its node (scheduling, metadata), or that
# the test checks itself (probes, ports): accepted, not translated.
POD_NOT_RUNTIME = {"affinity", "tolerations"}
CONTAINER_CHECKED_BY_TEST = {"name", "image", "livenessProbe", "readinessProbe", "ports"}


class Unknown(Exception):
    pass


def fail_unknown(where, keys):
    if keys:
        raise Unknown(f"{where}: no translation for {sorted(keys)}; add it to tests/image/manifest.py")


def quantity_bytes(q):
    units = {"Ki": 1024, "Mi": 1024**2, "Gi": 1024**3, "k": 1000, "M": 1000**2, "G": 1000**3}
    for suffix, factor in units.items():
        if str(q).endswith(suffix):
            return int(float(str(q)[: -len(suffix)]) * factor)
    return int(q)


def cpus(q):
    q = str(q)
    return float(q[:-1]) / 1000 if q.endswith("m") else float(q)


def security_options(sc, out, facts):
    known = {"privileged", "allowPrivilegeEscalation", "readOnlyRootFilesystem", "runAsUser",
             "runAsGroup", "runAsNonRoot", "capabilities", "seccompProfile"}
    fail_unknown("securityContext", set(sc) - known)
    if sc.get("privileged"):
        out.append("--privileged")
    if sc.get("allowPrivilegeEscalation") is False:
        out += ["--security-opt", "no-new-privileges"]
    if sc.get("readOnlyRootFilesystem"):
        # podman would otherwise mount tmpfs on /tmp, /var/tmp and /run: a pod gets none of them.
        out += ["--read-only", "--read-only-tmpfs=false"]
    if "runAsUser" in sc:
        user = str(sc["runAsUser"]) + (f":{sc['runAsGroup']}" if "runAsGroup" in sc else "")
        out += ["--user", user]
        facts["uid"] = int(sc["runAsUser"])
    if sc.get("runAsNonRoot") and facts.get("uid", -1) == 0:
        raise Unknown("runAsNonRoot with runAsUser 0 would not start")
    caps = sc.get("capabilities", {})
    fail_unknown("capabilities", set(caps) - {"drop", "add"})
    for c in caps.get("drop", []):
        out += ["--cap-drop", c]
    for c in caps.get("add", []):
        out += ["--cap-add", c]
    facts["cap_add"] = sorted(caps.get("add", []))
    facts["cap_drop"] = sorted(caps.get("drop", []))
    seccomp = sc.get("seccompProfile", {}).get("type")
    if seccomp not in (None, "RuntimeDefault"):
        raise Unknown(f"seccompProfile {seccomp}")  # RuntimeDefault: podman's default profile


def env_options(c, configmaps, fx, out, facts):
    names = {}
    for e in c.get("env", []):
        fail_unknown("env " + e["name"], set(e) - {"name", "value", "valueFrom"})
        if "value" in e:
            value = e["value"]
        elif e["valueFrom"].get("fieldRef", {}).get("fieldPath") == "spec.nodeName":
            value = fx["node_name"]
        else:
            raise Unknown(f"env {e['name']}: valueFrom {e['valueFrom']}")
        out += ["--env", f"{e['name']}={value}"]
        names[e["name"]] = value
    for src in c.get("envFrom", []):
        fail_unknown("envFrom", set(src) - {"configMapRef"})
        for k, v in configmaps[src["configMapRef"]["name"]].items():
            out += ["--env", f"{k}={v}"]
            names[k] = v
    facts["env"] = names


def volume_options(pod, c, configmaps, fx, outdir, out, facts):
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    facts["mounts"] = {}
    for m in c.get("volumeMounts", []):
        fail_unknown("volumeMount " + m["name"], set(m) - {"name", "mountPath", "readOnly"})
        v = volumes[m["name"]]
        mode = "ro" if m.get("readOnly") else "rw"
        if "hostPath" in v:
            host = fx["hostPath"].get(v["hostPath"]["path"])
            if host is None:
                raise Unknown(f"hostPath {v['hostPath']['path']}: the test has no fixture for it")
            if v["hostPath"].get("type") == "DirectoryOrCreate":
                os.makedirs(host, exist_ok=True)
            elif not os.path.isdir(host):
                raise Unknown(f"hostPath {v['hostPath']['path']} (Directory): fixture {host} missing")
            out += ["--volume", f"{host}:{m['mountPath']}:{mode}"]
        elif "configMap" in v:
            d = os.path.join(outdir, "configmaps", v["configMap"]["name"])
            os.makedirs(d, exist_ok=True)
            for k, text in configmaps[v["configMap"]["name"]].items():
                with open(os.path.join(d, k), "w") as f:
                    f.write(text)
            out += ["--volume", f"{d}:{m['mountPath']}:ro"]
        elif "emptyDir" in v:
            # A tmpfs of the emptyDir's size limit: writable by the container's user, like one.
            size = v["emptyDir"].get("sizeLimit")
            out += ["--mount", f"type=tmpfs,destination={m['mountPath']},tmpfs-mode=1777"
                    + (f",tmpfs-size={quantity_bytes(size)}" if size else "")]
        else:
            raise Unknown(f"volume {m['name']}: {sorted(v)}")
        facts["mounts"][m["mountPath"]] = m["name"]


def translate(docs, fx, outdir):
    configmaps = {d["metadata"]["name"]: d.get("data", {}) for d in docs if d["kind"] == "ConfigMap"}
    ds = [d for d in docs if d["kind"] == "DaemonSet"]
    assert len(ds) == 1, "one DaemonSet"
    pod = ds[0]["spec"]["template"]["spec"]
    known_pod = {"serviceAccountName", "runtimeClassName", "hostPID", "containers", "volumes"}
    fail_unknown("pod spec", set(pod) - known_pod - POD_NOT_RUNTIME)
    assert len(pod["containers"]) == 1, "one container"
    c = pod["containers"][0]
    known_c = {"args", "env", "envFrom", "resources", "securityContext", "volumeMounts",
               "imagePullPolicy"}
    fail_unknown("container", set(c) - known_c - CONTAINER_CHECKED_BY_TEST)
    out, facts = [], {"image": c["image"]}
    if pod.get("hostPID"):
        out += ["--pid", "host"]
    if pod.get("runtimeClassName") == "nvidia":
        # What the NVIDIA runtime does for NVIDIA_VISIBLE_DEVICES/NVIDIA_DRIVER_CAPABILITIES=utility:
        # the driver's NVML, read-only, where the loader finds it (no GPU here: no device nodes).
        out += ["--volume", f"{fx['nvml_library']}:{NVML_PATH}:ro"]
    elif "runtimeClassName" in pod:
        raise Unknown(f"runtimeClassName {pod['runtimeClassName']}")
    if "serviceAccountName" in pod:  # deviation 2: the stub API server's token
        out += ["--volume", f"{fx['sa_dir']}:{SA_DIR}:ro",
                "--env", f"KUBERNETES_SERVICE_HOST={fx['api_host']}",
                "--env", f"KUBERNETES_SERVICE_PORT={fx['api_port']}"]
    if c.get("imagePullPolicy") in ("IfNotPresent", "Never"):
        out.append("--pull=never")  # the node has the image (loaded, docs/deploy.md)
    elif "imagePullPolicy" in c:
        raise Unknown(f"imagePullPolicy {c['imagePullPolicy']}")
    limits = c.get("resources", {}).get("limits", {})
    fail_unknown("resources.limits", set(limits) - {"cpu", "memory"})
    if "memory" in limits:
        out += ["--memory", str(quantity_bytes(limits["memory"]))]
    if "cpu" in limits:
        out += ["--cpus", str(cpus(limits["cpu"]))]
    security_options(c.get("securityContext", {}), out, facts)
    env_options(c, configmaps, fx, out, facts)
    volume_options(pod, c, configmaps, fx, outdir, out, facts)
    ports = {p["name"]: p["containerPort"] for p in c.get("ports", [])}
    for p in c.get("ports", []):
        if p.get("protocol", "TCP") != "TCP":
            raise Unknown(f"port {p}")
        out += ["--publish", f"127.0.0.1::{p['containerPort']}"]
    facts["ports"] = ports
    for probe in ("livenessProbe", "readinessProbe"):
        get = c[probe]["httpGet"]
        port = get["port"]
        facts[probe] = {"path": get["path"], "port": ports.get(port, port)}
    args = list(c.get("args", []))
    if PROC_ROOT_DEVIATION[0] not in args:
        raise Unknown(f"args {args}: expected {PROC_ROOT_DEVIATION[0]} (deviation 1)")
    args[args.index(PROC_ROOT_DEVIATION[0])] = PROC_ROOT_DEVIATION[1]
    out += ["--volume", f"{fx['node_dir']}:/host:ro"]  # deviation 1: the fixture /proc under /host
    facts["args"] = c.get("args", [])
    return out, args, facts


def main():
    rendered, fixtures, outdir = sys.argv[1:4]
    with open(rendered) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    with open(fixtures) as f:
        fx = json.load(f)
    try:
        out, args, facts = translate(docs, fx, outdir)
    except Unknown as e:
        print(f"manifest.py: {e}", file=sys.stderr)
        return 1
    with open(os.path.join(outdir, "podman.args"), "w") as f:
        f.write("".join(a + "\n" for a in out))
    with open(os.path.join(outdir, "agent.args"), "w") as f:
        f.write("".join(a + "\n" for a in args))
    with open(os.path.join(outdir, "facts.json"), "w") as f:
        json.dump(facts, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
