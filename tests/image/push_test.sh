#!/usr/bin/env bash
# `make image-push-test`: `make image-push` against a registry on loopback (Debian 12's
# docker-registry, plain HTTP, in a temporary directory): the push succeeds, the digest it prints
# is the registry's manifest digest for the tag, and the image it holds is the archive's (its
# config digest). Needs `make image` first (the OCI archive) and `scripts/setup.sh --image`.
# Not in CI: the image takes minutes to build.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash scripts/setup.sh --image
version=$(sed -n 's/^project(gpumeter VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
archive=build/image/gpumeter-$version.oci.tar
[ -f "$archive" ] || { echo "image-push-test: $archive missing: run make image first" >&2; exit 1; }
work=$(mktemp -d)
reg_pid=
trap '[ -n "$reg_pid" ] && kill "$reg_pid" 2>/dev/null; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$work/config.yml" <<YAML
version: 0.1
storage:
  filesystem:
    rootdirectory: $work/data
http:
  addr: 127.0.0.1:$port
YAML
docker-registry serve "$work/config.yml" >"$work/registry.log" 2>&1 &
reg_pid=$!
for _ in $(seq 50); do curl -fsS "http://127.0.0.1:$port/v2/" >/dev/null 2>&1 && break; sleep 0.2; done
curl -fsS "http://127.0.0.1:$port/v2/" >/dev/null || { cat "$work/registry.log"; fail "registry did not start"; }

# A bad REGISTRY is refused before anything is pushed.
if REGISTRY='not a registry' bash scripts/image_push.sh >"$work/bad.out" 2>&1; then fail "bad REGISTRY accepted"; fi
grep -q "is not host\[:port\]\[/path\]" "$work/bad.out" || { cat "$work/bad.out"; fail "bad REGISTRY not named"; }

REGISTRY=127.0.0.1:$port/team IMAGE_PUSH_TLS_VERIFY=false make -s image-push >"$work/push.out" 2>&1 ||
  { cat "$work/push.out"; fail "make image-push failed"; }
cat "$work/push.out"
digest=$(sed -n "s|^image-push: 127.0.0.1:$port/team/gpumeter:$version@\(sha256:[0-9a-f]*\)$|\1|p" "$work/push.out")
[ -n "$digest" ] || fail "no digest printed"
grep -q "^helm: --set image.repository=127.0.0.1:$port/team/gpumeter --set image.digest=$digest$" "$work/push.out" ||
  fail "no helm values printed"
# The registry serves the tag under that digest.
served=$(curl -fsS -I -H 'Accept: application/vnd.oci.image.manifest.v1+json' \
  -H 'Accept: application/vnd.docker.distribution.manifest.v2+json' \
  "http://127.0.0.1:$port/v2/team/gpumeter/manifests/$version" | tr -d '\r' |
  awk -F': ' 'tolower($1) == "docker-content-digest" { print $2 }')
[ "$served" = "$digest" ] || fail "registry serves $served for the tag, image-push printed $digest"
# And it is the archive's image: the same config digest.
want=$(skopeo inspect --raw "oci-archive:$archive" | jq -r .config.digest)
got=$(skopeo inspect --raw --tls-verify=false "docker://127.0.0.1:$port/team/gpumeter@$digest" | jq -r .config.digest)
[ -n "$want" ] && [ "$want" = "$got" ] || fail "config digest $got in the registry, $want in the archive"
# The chart pins it.
helm template gpumeter deploy/helm/gpumeter --set image.repository=127.0.0.1:$port/team/gpumeter \
  --set image.digest="$digest" | grep -q "image: 127.0.0.1:$port/team/gpumeter@$digest" ||
  fail "the chart does not pin the pushed digest"
echo "image-push-test: pushed, served under $digest, the archive's image, pinned by the chart"
