#!/usr/bin/env bash
# The image's files against the manifests, without building or running anything (a ctest, in CI:
# needs kubectl only). The Dockerfile's comments name the capabilities only the MPS overlay adds
# and the user the DaemonSet sets; its EXPOSE is the manifest's containerPort; the DaemonSet's
# image tag is the project version `make image` tags; the build stage installs
# `setup.sh --build-only`, a strict subset of what the tests install.
# Usage: static_test.sh SOURCE_DIR
set -euo pipefail
src=$1
dockerfile=$src/Dockerfile
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
render() { kubectl kustomize "$src/deploy/kubernetes/$1" 2>/dev/null; }
# The `add:` list under the agent's securityContext.capabilities, one name a line.
caps_added() { awk '/^ *add:$/ { d = index($0, "add:"); on = 1; next }
                    on && match($0, /^ *- /) && RSTART == 1 && RLENGTH > d { sub(/^ *- */, ""); print; next }
                    { on = 0 }'; }

base=$(render base) || { echo "FAIL: kubectl kustomize base" >&2; exit 1; }
mps=$(render overlays/mps) || { echo "FAIL: kubectl kustomize overlays/mps" >&2; exit 1; }
base_caps=$(caps_added <<<"$base" | sort -u)
mps_caps=$(caps_added <<<"$mps" | sort -u)
[ -n "$mps_caps" ] || fail "the MPS overlay adds no capability (the Dockerfile's comment says it does)"
[ -z "$base_caps" ] || fail "the base DaemonSet adds capabilities: $base_caps"

# Capability names the Dockerfile mentions: each must be one the MPS overlay adds (and the base
# does not), and every one the overlay adds must be mentioned.
known='CHOWN DAC_OVERRIDE DAC_READ_SEARCH FOWNER FSETID KILL SETGID SETUID SETPCAP NET_BIND_SERVICE
NET_ADMIN NET_RAW IPC_LOCK SYS_MODULE SYS_RAWIO SYS_CHROOT SYS_PTRACE SYS_ADMIN SYS_BOOT SYS_NICE
SYS_RESOURCE SYS_TIME MKNOD AUDIT_WRITE SETFCAP MAC_ADMIN SYSLOG BPF PERFMON CHECKPOINT_RESTORE'
named=$(grep -o '[A-Z_]\{3,\}' "$dockerfile" | sort -u | grep -Fxf <(tr ' ' '\n' <<<"$known" | grep .) || true)
for c in $named; do
  grep -qx "$c" <<<"$mps_caps" || fail "Dockerfile names $c, which the MPS overlay does not add"
done
for c in $mps_caps; do
  grep -qx "$c" <<<"$named" || fail "the MPS overlay adds $c; the Dockerfile's comment does not say so"
done
grep -qi 'only the MPS overlay adds' "$dockerfile" || fail "Dockerfile must say only the MPS overlay adds capabilities"

# The user: the DaemonSet's runAsUser is what the Dockerfile says the DaemonSet runs it as.
uid=$(sed -n 's/^ *runAsUser: \([0-9]*\)$/\1/p' <<<"$base" | head -1)
[ -n "$uid" ] || fail "the base DaemonSet sets no runAsUser"
grep -q "runAsUser: $uid" "$dockerfile" || fail "Dockerfile does not mention the DaemonSet's runAsUser: $uid"
grep -q '^USER ' "$dockerfile" || fail "Dockerfile sets no USER"

# Port and tag.
ports=$(sed -n 's/^ *- containerPort: \([0-9]*\)$/\1/p' <<<"$base")
[ -n "$ports" ] || fail "the DaemonSet declares no containerPort"
for port in $ports; do
  grep -qx "EXPOSE $port" "$dockerfile" || fail "Dockerfile does not EXPOSE the manifest's containerPort $port"
done
port=$(tr '\n' ' ' <<<"$ports")
version=$(sed -n 's/^project(gpumeter VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
for r in "$base" "$mps"; do
  tag=$(sed -n 's/^ *image: \(.*\)$/\1/p' <<<"$r" | head -1)
  [ "$tag" = "gpumeter:$version" ] || fail "the DaemonSet runs image $tag; make image tags gpumeter:$version"
done

# The build stage's packages: setup.sh --build-only, a strict subset of the full list.
grep -q 'setup.sh --build-only' "$dockerfile" || fail "the Dockerfile's build stage does not use setup.sh --build-only"
build=$(bash "$src/scripts/setup.sh" --list --build-only | sort -u)
all=$(bash "$src/scripts/setup.sh" --list | sort -u)
extra=$(comm -23 <(echo "$build") <(echo "$all"))
[ -z "$extra" ] || fail "setup.sh --build-only installs what the full set-up does not: $extra"
[ "$build" != "$all" ] || fail "setup.sh --build-only installs everything"
for p in chromium prometheus libgtest-dev clang; do
  if grep -qx "$p" <<<"$build"; then fail "setup.sh --build-only installs the test package $p"; fi
done

[ "$failures" -eq 0 ] || exit 1
echo "ok: Dockerfile and setup.sh --build-only agree with the manifests (caps: $(echo "$mps_caps" | tr '\n' ' ')uid $uid, port $port, gpumeter:$version)"
