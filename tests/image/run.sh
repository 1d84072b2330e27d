#!/usr/bin/env bash
# `make image-test`: runs the image `make image` built the way the DaemonSet runs it, for the base
# manifest and for the MPS overlay (the one with extra capabilities). Everything about the run is
# taken from `kubectl kustomize` (tests/image/manifest.py translates each field of the pod and
# container spec into podman options and refuses fields it does not know): the user, read-only
# root filesystem, capabilities, no privilege escalation, args, env and envFrom, the volumes, the
# resource limits, the port and the probes. The host paths are the demo's fixtures: its node
# directory (the fake kubelet's socket) for the kubelet's pod-resources directory, a fresh
# directory for the store's hostPath, the rendered ConfigMaps for theirs, and the fake NVML where
# the NVIDIA runtime puts the driver's.
#
# The only deviations from the manifest:
#  1. --proc-root=/host/proc instead of /proc: a runtime cannot mount the fixture /proc tree over
#     /proc (the manifest reads the host's through hostPID); the demo's node directory is mounted
#     read-only at /host.
#  2. A stub API server (tests/image/stub_apiserver.py) with a service-account token and CA in
#     /var/run/secrets/kubernetes.io/serviceaccount and KUBERNETES_SERVICE_HOST/PORT, instead of
#     the cluster's.
#  And, as inputs of the fake NVML library rather than of the agent: GPUMETER_FAKE_NVML_SCENARIO
#  (with the scenario file mounted) and GPUMETER_FAKE_NVML_START_S, which the real driver has no
#  use for.
#
# Needs: the images gpumeter:<version> and gpumeter-build:<version> (`make image`), podman, kubectl,
# python3 with yaml, openssl, curl, jq (`scripts/setup.sh --image`). Not in CI (.ci/run): the image
# build takes minutes and CI machines have no container tools; see docs/deploy.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
bash scripts/setup.sh --image
eval "$(bash scripts/image.sh --env)"
version=$(sed -n 's/^project(gpumeter VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
image=gpumeter:$version
build_image=gpumeter-build:$version
# The sandbox lacks CAP_SYS_RESOURCE: runc with limits it may set (crun fails even with them).
podman_run=(podman run --runtime runc --ulimit nofile=20000:20000 --ulimit nproc=4096:4096)
for img in "$image" "$build_image"; do
  podman image exists "$img" || { echo "image-test: no image $img; run make image first" >&2; exit 1; }
done
mkdir -p build/image-test
work=$(mktemp -d "$root/build/image-test/run-XXXXXX")
containers=()
pids=()
cleanup() {
  for c in "${containers[@]}"; do podman rm -f -t 2 "$c" >/dev/null 2>&1 || true; done
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  # Files the containers wrote as root, under build/: kept with KEEP=1 for a look.
  [ -n "${KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
die() { echo "FAIL: $*" >&2; for f in "$work"/*/*.log; do [ -f "$f" ] && { echo "== $f"; tail -15 "$f"; }; done >&2; exit 1; }

# --- The image itself: user, size, labels, no shell, SBOM. ---------------------------------
user=$(podman image inspect --format '{{.Config.User}}' "$image")
[ "$user" = 65532:65532 ] || fail "image user is '$user', expected 65532:65532 (nonroot)"
size=$(podman image inspect --format '{{.Size}}' "$image")
[ "$size" -le 120000000 ] || fail "image is $size bytes, over 120 MB"
for label in version revision source licenses created; do
  v=$(podman image inspect --format "{{index .Labels \"org.opencontainers.image.$label\"}}" "$image")
  if [ -z "$v" ] || [ "$v" = "<no value>" ]; then fail "label org.opencontainers.image.$label missing"; fi
done
[ "$(podman image inspect --format '{{index .Labels "org.opencontainers.image.version"}}' "$image")" = "$version" ] \
  || fail "label version is not $version"
out=$("${podman_run[@]}" --rm "$image" --version 2>&1) || fail "the image's default user cannot run gpumeter --version: $out"
grep -q "$version" <<<"$out" || fail "gpumeter --version says '$out', expected $version"
if "${podman_run[@]}" --rm --entrypoint /bin/sh "$image" -c true >/dev/null 2>&1; then
  fail "the image has a shell (/bin/sh runs)"
fi
sbom=build/image/gpumeter-$version.packages.tsv
[ -s "$sbom" ] || fail "no SBOM $sbom (make image writes it)"
for p in libc6 libgrpc++1.51 libssl3 ca-certificates; do
  grep -q "^$p	" "$sbom" || fail "SBOM lacks $p"
done
# The archive `make image` wrote is a complete OCI image: unpacked with umoci, the binary runs.
archive=build/image/gpumeter-$version.oci.tar
if [ -s "$archive" ]; then
  skopeo copy --quiet "oci-archive:$archive" "oci:$work/oci:$version"
  umoci unpack --image "$work/oci:$version" "$work/bundle" >/dev/null
  out=$(chroot "$work/bundle/rootfs" /usr/bin/gpumeter --version 2>&1) || fail "the archive's gpumeter does not run: $out"
  [ "$out" = "gpumeter $version" ] || fail "the archive's gpumeter --version says '$out'"
else
  fail "no archive $archive (make image writes it)"
fi
echo "ok: image $image: user $user, $((size / 1000000)) MB, OCI labels, no shell, SBOM $(wc -l <"$sbom") packages, archive unpacks and runs"

# --- The fixtures shared by both runs. -------------------------------------------------------
# The fake NVML from the build stage, as the driver's libnvidia-ml.so.1 would be.
ctr=$(podman create --pull=never "$build_image" true)
podman cp "$ctr:/build/fake_nvml/r580/libnvidia-ml.so.1" "$work/libnvidia-ml.so.1"
podman rm "$ctr" >/dev/null
# The stub API server on the host, reached from the pod network through its gateway.
gateway=$(podman network inspect podman --format '{{range .Subnets}}{{.Gateway}}{{end}}')
[ -n "$gateway" ] || die "no gateway on podman's default network"
mkdir -p "$work/sa"
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=stub-apiserver \
  -addext "subjectAltName=IP:$gateway" -keyout "$work/apiserver.key" -out "$work/sa/ca.crt" 2>/dev/null
head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$work/sa/token"
echo gpumeter >"$work/sa/namespace"

# run_variant NAME OVERLAY_DIR SCENARIO: the demo's node for SCENARIO, then the agent as the
# manifest of OVERLAY_DIR runs it; checks readiness, /metrics with pods, the store, the process.
run_variant() {
  local name=$1 overlay=$2 scenario=$3
  local w=$work/$name before=$failures
  mkdir -p "$w/fixture" "$w/store"
  kubectl kustomize "$overlay" >"$w/rendered.yaml" 2>"$w/kustomize.log" || die "$name: kubectl kustomize $overlay"

  # The node: `gpumeter demo` in the build image keeps its node directory (fake kubelet socket,
  # pods file, /proc tree refreshed at scenario time) under TMPDIR, a host directory.
  local demo=gpumeter-image-test-demo-$name-$$
  containers+=("$demo")
  "${podman_run[@]}" -d --name "$demo" --network none -v "$w/fixture:/fixture" -e TMPDIR=/fixture \
    "$build_image" /build/gpumeter demo --scenario "/src/scenarios/$scenario.yaml" --speedup 1 \
    --duration 0 --refresh 3600 --listen 127.0.0.1:0 >/dev/null
  local demo_start=$SECONDS node_dir=""
  for _ in $(seq 1 150); do
    node_dir=$(find "$w/fixture" -maxdepth 2 -name kubelet.sock -type s -printf '%h\n' 2>/dev/null | head -1)
    [ -n "$node_dir" ] && [ -s "$node_dir/pods.json" ] && break
    sleep 0.2
  done
  [ -n "$node_dir" ] || { podman logs "$demo" >"$w/demo.log" 2>&1; die "$name: the demo made no node directory"; }
  local node_name
  node_name=$(jq -r '.items[0].spec.nodeName' "$node_dir/pods.json")

  # The stub API server with this node's pods.
  python3 tests/image/stub_apiserver.py "$work/sa/ca.crt" "$work/apiserver.key" "$work/sa/token" \
    "$node_dir/pods.json" "$w/apiserver.requests" "$w/apiserver.port" >"$w/apiserver.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 50); do [ -s "$w/apiserver.port" ] && break; sleep 0.1; done
  [ -s "$w/apiserver.port" ] || die "$name: stub API server did not start"

  jq -n --arg node "$node_dir" --arg store "$w/store" --arg nn "$node_name" \
    --arg nvml "$work/libnvidia-ml.so.1" --arg sa "$work/sa" --arg host "$gateway" \
    --argjson port "$(cat "$w/apiserver.port")" \
    '{hostPath: {"/var/lib/kubelet/pod-resources": $node, "/var/lib/gpumeter": $store},
      node_name: $nn, node_dir: $node, nvml_library: $nvml, sa_dir: $sa, api_host: $host, api_port: $port}' \
    >"$w/fixtures.json"
  python3 tests/image/manifest.py "$w/rendered.yaml" "$w/fixtures.json" "$w" || die "$name: manifest translation"
  local manifest_image
  manifest_image=$(jq -r .image "$w/facts.json")
  [ "$manifest_image" = "$image" ] || fail "$name: the DaemonSet runs $manifest_image, make image tags $image"
  local podman_args agent_args
  mapfile -t podman_args <"$w/podman.args"
  mapfile -t agent_args <"$w/agent.args"
  # The per-process series are opt-in; this test reads them to see /proc resolve PIDs to pods, and
  # the holders' shares from gpumeter_requested_share_ratio, of the full set.
  agent_args+=(--process-series --container-series full)

  local agent=gpumeter-image-test-agent-$name-$$
  containers+=("$agent")
  # The fake NVML's own inputs: its scenario, and the scenario time the demo's /proc tree is at.
  "${podman_run[@]}" -d --name "$agent" "${podman_args[@]}" \
    -v "$root/scenarios/$scenario.yaml:/fixture-scenario.yaml:ro" \
    -e GPUMETER_FAKE_NVML_SCENARIO=/fixture-scenario.yaml -e "GPUMETER_FAKE_NVML_START_S=$((SECONDS - demo_start))" \
    "$image" "${agent_args[@]}" >/dev/null || die "$name: podman run refused the manifest's settings"

  # The process as the kernel sees it: user, capabilities, no_new_privs, seccomp, read-only /.
  local pid status
  pid=$(podman inspect --format '{{.State.Pid}}' "$agent")
  status=$(cat "/proc/$pid/status" 2>/dev/null) || { podman logs "$agent" >"$w/agent.log" 2>&1; die "$name: agent exited at once"; }
  local uid want_caps=0 cap
  uid=$(jq -r .uid "$w/facts.json")
  grep -qP "^Uid:\t$uid\t$uid\t$uid\t$uid$" <<<"$status" || fail "$name: not running as uid $uid: $(grep ^Uid <<<"$status")"
  for cap in $(jq -r '.cap_add[]' "$w/facts.json"); do
    case $cap in
      SYS_PTRACE) want_caps=$((want_caps | 1 << 19)) ;;
      DAC_READ_SEARCH) want_caps=$((want_caps | 1 << 2)) ;;
      *) fail "$name: no bit known for capability $cap" ;;
    esac
  done
  local capeff
  capeff=$(awk '/^CapEff:/ { print $2 }' <<<"$status")
  [ $((16#$capeff)) -eq "$want_caps" ] || fail "$name: effective capabilities $capeff, expected $(printf '%016x' "$want_caps")"
  grep -qP '^NoNewPrivs:\t1$' <<<"$status" || fail "$name: privilege escalation not blocked"
  grep -qP '^Seccomp:\t2$' <<<"$status" || fail "$name: no seccomp filter (RuntimeDefault)"
  awk '$5 == "/" { split($6, o, ","); if (o[1] == "ro") ok = 1 } END { exit !ok }' "/proc/$pid/mountinfo" \
    || fail "$name: root filesystem is not read-only"

  # Ready, live, and /metrics with the pods, through the manifest's port and probe paths.
  local port addr
  port=$(jq -r '.readinessProbe.port' "$w/facts.json")
  addr=$(podman port "$agent" "$port/tcp" | head -1)
  [ -n "$addr" ] || die "$name: container port $port not published"
  local ready="" path
  path=$(jq -r '.readinessProbe.path' "$w/facts.json")
  for _ in $(seq 1 60); do
    ready=$(curl -fsS "http://$addr$path" 2>/dev/null) && break
    sleep 0.5
  done
  podman logs "$agent" >"$w/agent.log" 2>&1
  [ "$ready" = ready ] || die "$name: $path never said ready (got '$ready')"
  path=$(jq -r '.livenessProbe.path' "$w/facts.json")
  local live_port live_addr
  live_port=$(jq -r '.livenessProbe.port' "$w/facts.json")
  live_addr=$(podman port "$agent" "$live_port/tcp" | head -1)
  [ "$(curl -fsS "http://$live_addr$path")" = ok ] || fail "$name: $path on port $live_port is not ok"
  # /metrics on the port the manifest names `metrics` (the probes have a port of their own).
  local metrics_port metrics_addr
  metrics_port=$(jq -r '.ports.metrics' "$w/facts.json")
  metrics_addr=$(podman port "$agent" "$metrics_port/tcp" | head -1)
  [ -n "$metrics_addr" ] || die "$name: the metrics port $metrics_port not published"
  sleep 3  # a few sampling intervals
  curl -fsS "http://$metrics_addr/metrics" >"$w/metrics.prom" || die "$name: scrape failed"
  local src
  for src in nvml kubelet pods proc; do
    grep -q "^gpumeter_source_up{node=\"$node_name\",source=\"$src\"} 1$" "$w/metrics.prom" \
      || fail "$name: source $src not up on node $node_name"
  done
  local holders attributed
  holders=$(grep -c '^gpumeter_requested_share_ratio{.*namespace="[^"]\+",pod="[^"]\+"' "$w/metrics.prom" || true)
  attributed=$(grep -c '^gpumeter_process_memory_used_bytes{.*pod="[^"]\+".*owner_kind="container"}' "$w/metrics.prom" || true)
  [ "$holders" -gt 0 ] || fail "$name: no pod holds a GPU in /metrics"
  [ "$attributed" -gt 0 ] || fail "$name: no GPU process attributed to a pod's container"
  # The API server was asked with the token, for this node's pods (NODE_NAME from the manifest),
  # and never for ResourceSlices (GPUMETER_RESOURCE_SLICES=false in the settings ConfigMap).
  jq -e -s --arg nn "spec.nodeName=$node_name" 'length > 0 and all(.[]; .authorized)
      and any(.[]; .path == "/api/v1/pods" and .query.fieldSelector == [$nn])
      and all(.[]; .path | startswith("/apis/resource.k8s.io") | not)' "$w/apiserver.requests" >/dev/null \
    || fail "$name: API server requests: $(head -c 400 "$w/apiserver.requests")"
  # The store: GPUMETER_STORE (settings ConfigMap) must lie in the store volume's mount.
  local store_path store_mount
  store_path=$(jq -r '.env.GPUMETER_STORE' "$w/facts.json")
  store_mount=$(jq -r --arg d "$(dirname "$store_path")" '.mounts[$d] // empty' "$w/facts.json")
  [ "$store_mount" = store ] || fail "$name: GPUMETER_STORE=$store_path is not on the store volume"
  grep -qF "recording usage in $store_path" "$w/agent.log" || fail "$name: the agent does not record to $store_path"
  if jq -e '.env | has("GPUMETER_DEVICE_PLUGIN_CONFIG")' "$w/facts.json" >/dev/null; then
    grep -q '^gpumeter_unit_info{.*evidence="device plugin config (sharing.mps)"} 1$' "$w/metrics.prom" \
      || fail "$name: the mounted device plugin config is not the units' evidence"
  fi

  # SIGTERM as the kubelet stops it: exit 0, and the store on the hostPath holds the pods.
  podman stop -t 20 "$agent" >/dev/null
  local rc
  rc=$(podman inspect --format '{{.State.ExitCode}}' "$agent")
  podman logs "$agent" >"$w/agent.log" 2>&1
  [ "$rc" = 0 ] || fail "$name: agent exit code $rc after SIGTERM"
  local db
  db=$w/store/$(basename "$store_path")
  [ -s "$db" ] || die "$name: no usage store written to the store's hostPath ($db)"
  "${podman_run[@]}" --rm --user 0 --read-only -v "$w/store:$(dirname "$store_path")" "$image" \
    report --source "sqlite:$store_path" --by namespace,pod --format csv >"$w/report.csv" 2>"$w/report.log" \
    || fail "$name: gpumeter report cannot read the store: $(cat "$w/report.log")"
  local pod
  pod=$(jq -r '[.items[] | select(.spec.nodeName == "'"$node_name"'")][0].metadata | "\(.namespace)/\(.name)"' "$node_dir/pods.json")
  grep -q ",$pod," "$w/report.csv" || fail "$name: the store's report lacks pod $pod"
  podman stop -t 5 "$demo" >/dev/null 2>&1 || true
  [ "$failures" -eq "$before" ] || return 0
  echo "ok: $name ($overlay, scenario $scenario): uid $uid, caps ${capeff}, read-only /, ready," \
    "$holders holder series, $attributed attributed processes, store $(du -k "$db" | cut -f1) KB"
}

run_variant base deploy/kubernetes/base node-8gpu
run_variant mps deploy/kubernetes/overlays/mps mps-a100
[ "$failures" -eq 0 ] || { echo "image-test: $failures failure(s); logs in $work (KEEP=1 keeps them)" >&2; exit 1; }
echo "image-test: passed"
