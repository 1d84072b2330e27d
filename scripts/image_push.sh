#!/usr/bin/env bash
# Pushes the image `make image` exported (build/image/gpumeter-<version>.oci.tar) to a registry
# with skopeo (no daemon), and prints its digest and the Helm values that pin it
# (`make image-push REGISTRY=registry.example.com/team`; docs/install.md).
# Environment: REGISTRY (required: host[:port][/path]), IMAGE_PUSH_TLS_VERIFY (true; false for a
# plain-HTTP registry on loopback), IMAGE_PUSH_CREDS (user:password, else skopeo's auth file).
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(sed -n 's/^project(gpumeter VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
archive=build/image/gpumeter-$version.oci.tar
registry=${REGISTRY:?image-push: set REGISTRY=host[:port][/path] (where the nodes pull from)}
[[ $registry =~ ^[a-z0-9.-]+(:[0-9]+)?(/[a-z0-9._/-]+)?$ ]] ||
  { echo "image-push: REGISTRY '$registry' is not host[:port][/path]" >&2; exit 2; }
[ -f "$archive" ] || { echo "image-push: $archive missing: run make image first" >&2; exit 1; }
command -v skopeo >/dev/null || { echo "image-push: skopeo missing (scripts/setup.sh --image)" >&2; exit 1; }
dest=docker://$registry/gpumeter:$version
digestfile=$(mktemp)
trap 'rm -f "$digestfile"' EXIT
args=(--dest-tls-verify="${IMAGE_PUSH_TLS_VERIFY:-true}" --digestfile "$digestfile")
[ -n "${IMAGE_PUSH_CREDS:-}" ] && args+=(--dest-creds "$IMAGE_PUSH_CREDS")
skopeo copy "${args[@]}" "oci-archive:$archive" "$dest"
digest=$(cat "$digestfile")
[[ $digest =~ ^sha256:[0-9a-f]{64}$ ]] || { echo "image-push: no digest from skopeo ('$digest')" >&2; exit 1; }
echo "image-push: $registry/gpumeter:$version@$digest"
echo "helm: --set image.repository=$registry/gpumeter --set image.digest=$digest"
