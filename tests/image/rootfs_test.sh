#!/usr/bin/env bash
# The image's root filesystem as the Dockerfile's build stage assembles it (scripts/image_rootfs.sh),
# on this build's binary, without a container tool: the binary and every library ldd lists, the
# SBOM, gpumeter's licence and every shipped package's copyright file, and the third-party notices
# naming each package with the licences its copyright file gives. Also the licence everywhere it is
# declared: LICENSE is the Apache License 2.0, the image's OCI label says so, the Dockerfile copies
# it into the build stage. Usage: rootfs_test.sh SOURCE_DIR GPUMETER
set -euo pipefail
src=$1 bin=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

grep -q 'Apache License' "$src/LICENSE" && grep -q 'Version 2.0, January 2004' "$src/LICENSE" ||
  fail "LICENSE is not the Apache License 2.0"
cmp -s "$src/LICENSE" /usr/share/common-licenses/Apache-2.0 || fail "LICENSE differs from Debian's Apache-2.0 text"
grep -q 'org.opencontainers.image.licenses="Apache-2.0"' "$src/Dockerfile" || fail "the image's licenses label is not Apache-2.0"
grep -q '^COPY LICENSE LICENSE$' "$src/Dockerfile" || fail "the Dockerfile does not copy LICENSE for image_rootfs.sh"

root=$work/rootfs
bash "$src/scripts/image_rootfs.sh" "$bin" "$root" >"$work/log" 2>&1 || { cat "$work/log"; fail "image_rootfs.sh failed"; }
[ -x "$root/usr/bin/gpumeter" ] || fail "no /usr/bin/gpumeter"
cmp -s "$src/LICENSE" "$root/usr/share/doc/gpumeter/LICENSE" || fail "the image's LICENSE is not the repository's"
sbom=$root/usr/share/gpumeter/packages.tsv notices=$root/usr/share/gpumeter/THIRD-PARTY-NOTICES
[ -s "$sbom" ] && [ -s "$notices" ] || fail "no SBOM or no notices"
packages=0
while IFS=$'\t' read -r pkg version _arch; do
  packages=$((packages + 1))
  [ -s "$root/usr/share/doc/$pkg/copyright" ] || fail "no copyright file for $pkg"
  cmp -s "/usr/share/doc/$pkg/copyright" "$root/usr/share/doc/$pkg/copyright" || fail "$pkg's copyright file differs"
  line=$(awk -F'\t' -v p="$pkg" '$1 == p' "$notices")
  [ -n "$line" ] || fail "THIRD-PARTY-NOTICES lacks $pkg"
  [ "$(cut -f2 <<<"$line")" = "$version" ] || fail "THIRD-PARTY-NOTICES: $pkg's version is not the SBOM's $version"
  [ -n "$(cut -f3 <<<"$line")" ] || fail "THIRD-PARTY-NOTICES: no licence for $pkg"
done <"$sbom"
# Every library the binary loads is a package in the SBOM (so its notice is there).
while read -r lib; do
  owner=$(dpkg -S "$(realpath "$lib")" 2>/dev/null || dpkg -S "$lib") || fail "$lib: no package"
  grep -q "^${owner%%:*}	" "$sbom" || fail "$lib (${owner%%:*}) is not in the SBOM"
done < <(ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }')
# OpenSSL with the licences its machine-readable copyright file gives; glibc's file is free-form,
# and its notice points at it rather than guessing.
grep -q '^libssl3	.*Apache-2.0' "$notices" || fail "libssl3's Apache-2.0 is not named"
grep -q '^libc6	[^	]*	see copyright$' "$notices" || fail "libc6 (a free-form copyright file) is not 'see copyright'"
echo "ok: rootfs with $packages packages, each with its copyright file and a notice; LICENSE Apache-2.0"
