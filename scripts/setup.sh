#!/usr/bin/env bash
# Installs the Debian 12 packages gpumeter needs to build, test and run its demo.
# Idempotent and quiet when everything is present; needs root only when something is missing.
set -euo pipefail

packages=(
  build-essential cmake pkg-config ninja-build
  libyaml-cpp-dev nlohmann-json3-dev libcli11-dev libspdlog-dev libfmt-dev
  libcpp-httplib-dev libmicrohttpd-dev libexpected-dev libsqlite3-dev
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc
  libgtest-dev libgmock-dev libbenchmark-dev clang libclang-rt-14-dev
  prometheus curl jq openssl sqlite3 chromium
  # The house rules checked by the tests: formatting, function length (docs/architecture.md).
  clang-format universal-ctags
  # `gpumeter top`: its terminal view (ncurses, docs/top.md) and tmux, which drives it in a test.
  libncurses-dev tmux
)
# kubectl renders the Kubernetes manifests in a test (`kubectl kustomize`); Debian's is in
# kubernetes-client. A kubectl already installed from elsewhere does as well.
command -v kubectl >/dev/null 2>&1 || packages+=(kubernetes-client)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "setup: missing Debian packages: ${missing[*]}" >&2
  echo "setup: run as root (or: sudo apt-get install ${missing[*]})" >&2
  exit 1
fi
echo "setup: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
