#!/usr/bin/env bash
# Builds the container image gpumeter:<version> (`make image`) and exports it to
# build/image/gpumeter-<version>.oci.tar, with the runtime's Debian package list (the SBOM) and a
# provenance note beside it; prints the image's size and digest.
# - With a running Docker daemon: `docker build`, then `docker save` (a docker-archive).
# - Without one (CI machines, this sandbox): buildah/podman/skopeo from Debian 12, no daemon. Their
#   storage lives under build/image (CONTAINERS_STORAGE_CONF), never in /var/lib/containers.
#   No registry needs to be reachable: the base image debian:12 is made with mmdebstrap from the
#   Debian mirror apt uses, and imported under the name the Dockerfile's FROM line uses.
# Usage: scripts/image.sh [--env]   (--env: print the storage environment for the image test)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
version=$(sed -n 's/^project(gpumeter VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
[ -n "$version" ] || { echo "image: no version in CMakeLists.txt" >&2; exit 1; }
out=$root/build/image
image=gpumeter:$version
archive=$out/gpumeter-$version.oci.tar
base=docker.io/library/debian:12

# The daemonless tools keep everything under build/image. The overlay driver works here; the
# default OCI isolation does not (`crun: cgroups in hybrid mode not supported`), hence chroot.
storage_env() {
  mkdir -p "$out/storage" "$out/run"
  cat >"$out/storage.conf" <<CONF
[storage]
driver = "overlay"
graphroot = "$out/storage"
runroot = "$out/run"
CONF
  export CONTAINERS_STORAGE_CONF=$out/storage.conf
}
if [ "${1:-}" = --env ]; then
  storage_env
  echo "export CONTAINERS_STORAGE_CONF=$CONTAINERS_STORAGE_CONF"
  exit 0
fi

revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD 2>/dev/null || revision="$revision-dirty"
source_url=$(git config --get remote.origin.url 2>/dev/null || echo NOASSERTION)
created=$(date -u +%Y-%m-%dT%H:%M:%SZ)
build_args=(--build-arg "VERSION=$version" --build-arg "REVISION=$revision"
  --build-arg "SOURCE=$source_url" --build-arg "CREATED=$created")
mkdir -p "$out"
start=$SECONDS

if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
  echo "image: building $image with docker" >&2
  docker build "${build_args[@]}" -t "$image" .
  docker save -o "$archive" "$image"
  # docker's image ID is the config digest; the archive is a docker-archive (docker load).
  digest=$(docker image inspect -f '{{.Id}}' "$image")
  size=$(docker image inspect -f '{{.Size}}' "$image")
  docker run --rm --entrypoint /usr/bin/gpumeter "$image" --version >/dev/null
  docker create --name gpumeter-sbom-$$ "$image" >/dev/null
  docker cp gpumeter-sbom-$$:/usr/share/gpumeter/packages.tsv "$out/gpumeter-$version.packages.tsv"
  docker rm gpumeter-sbom-$$ >/dev/null
  builder="docker $(docker version -f '{{.Server.Version}}')"
else
  bash scripts/setup.sh --image
  storage_env
  if ! podman image exists "$base"; then
    echo "image: making $base with mmdebstrap (minbase, merged /usr)" >&2
    mirror=$(sed -n 's|^URIs: \(http[^ ]*/debian\)$|\1|p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)
    mmdebstrap --quiet --variant=minbase --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
      bookworm "$out/debian-12.tar" "${mirror:-http://deb.debian.org/debian}"
    podman import --quiet "$out/debian-12.tar" "$base" >/dev/null
    rm -f "$out/debian-12.tar"
  fi
  echo "image: building $image with buildah (daemonless)" >&2
  # The build stage first, tagged: tests/image runs the demo's fake kubelet and fake NVML from
  # it. The full build right after reuses its layers (--layers) as long as the context is the same.
  buildah bud --pull=never --isolation chroot --layers "${build_args[@]}" --target build \
    -t "gpumeter-build:$version" .
  buildah bud --pull=never --isolation chroot --layers "${build_args[@]}" -t "$image" .
  rm -f "$archive"
  skopeo copy --quiet "containers-storage:localhost/$image" "oci-archive:$archive:$image"
  digest=$(skopeo inspect --format '{{.Digest}}' "oci-archive:$archive")
  size=$(podman image inspect --format '{{.Size}}' "$image")
  # The SBOM from the image itself (the file image_rootfs.sh wrote while building it).
  mnt_ctr=$(buildah from --pull=never "$image")
  trap 'buildah rm "$mnt_ctr" >/dev/null 2>&1 || true' EXIT
  cp "$(buildah mount "$mnt_ctr")/usr/share/gpumeter/packages.tsv" "$out/gpumeter-$version.packages.tsv"
  buildah umount "$mnt_ctr" >/dev/null
  builder="buildah $(buildah --version | awk '{print $3}')"
fi

seconds=$((SECONDS - start))
cat >"$out/gpumeter-$version.provenance.txt" <<PROV
image: $image
digest: $digest
size_bytes: $size
version: $version
revision: $revision
source: $source_url
created: $created
builder: $builder
base: $base (build stage); scratch (runtime)
build_seconds: $seconds
sbom: gpumeter-$version.packages.tsv (Debian packages of the runtime's files: name, version, arch)
PROV
echo "image: $image  digest $digest"
echo "image: size $((size / 1000000)) MB uncompressed ($size bytes); archive $archive $(du -m "$archive" | cut -f1) MiB"
echo "image: SBOM $out/gpumeter-$version.packages.tsv ($(wc -l <"$out/gpumeter-$version.packages.tsv") packages); built in ${seconds}s"
