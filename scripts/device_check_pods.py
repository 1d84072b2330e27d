#!/usr/bin/env python3
"""For scripts/device_check.sh: two pods in a pods file (kubectl get pods -o json's shape) and, on
cgroup v2, a kubepods cgroup for each one's container as the kubelet's systemd driver names it
(pod UIDs with '_' for '-'). Writes DIR/pods.json and DIR/cgroup-a, DIR/cgroup-b (the cgroup
directory each workload moves itself into). Usage: device_check_pods.py DIR
"""
import json
import os
import sys
import uuid

ROOT = "/sys/fs/cgroup"


def main() -> int:
    work = sys.argv[1]
    pods = []
    for key, ns, name in (("a", "ml", "trainer-a"), ("b", "research", "notebook-b")):
        uid = str(uuid.uuid4())
        cid = uuid.uuid4().hex + uuid.uuid4().hex
        pods.append({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "uid": uid, "labels": {"team": ns}},
            "spec": {"nodeName": "devcheck", "containers": [{"name": "main", "image": "torch"}]},
            "status": {"phase": "Running", "qosClass": "BestEffort",
                       "containerStatuses": [{"name": "main", "containerID": "containerd://" + cid,
                                              "ready": True}]},
        })
        if os.path.exists(os.path.join(ROOT, "cgroup.controllers")):
            path = os.path.join(ROOT, "kubepods.slice", "kubepods-besteffort.slice",
                                f"kubepods-besteffort-pod{uid.replace('-', '_')}.slice",
                                f"cri-containerd-{cid}.scope")
            try:
                os.makedirs(path, exist_ok=True)
                with open(os.path.join(work, f"cgroup-{key}"), "w") as f:
                    f.write(path)
            except OSError as e:
                print(f"cgroup for {name}: {e}: its processes will have no pod")
        else:
            print("no cgroup v2 at /sys/fs/cgroup: the workloads will have no pod")
    with open(os.path.join(work, "pods.json"), "w") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": pods}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
