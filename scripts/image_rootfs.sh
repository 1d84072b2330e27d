#!/usr/bin/env bash
# The image's runtime root filesystem, assembled in the Dockerfile's build stage (Debian 12, merged
# /usr): BINARY at /usr/bin/gpumeter, every shared library `ldd` lists for it (the loader too),
# the CA bundle, a non-root user, and usr/share/gpumeter/packages.tsv: the Debian package (name,
# version, architecture) of every file copied, taken here because the runtime image has no dpkg;
# gpumeter's LICENSE and each package's copyright file, with THIRD-PARTY-NOTICES listing them.
# Usage: image_rootfs.sh BINARY ROOTFS
set -euo pipefail
bin=$1 root=$2
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
libdir=usr/lib/$multiarch

mkdir -p "$root/usr/bin" "$root/$libdir" "$root/usr/lib64" "$root/etc/ssl/certs" \
  "$root/usr/lib/ssl" "$root/usr/share/gpumeter" "$root/var/lib/gpumeter"
# Merged /usr as in Debian: the paths compiled into binaries (/lib64/ld-linux-x86-64.so.2,
# /lib/<multiarch>) resolve, and the NVIDIA runtime's library directory is the loader's default.
for d in bin lib lib64 sbin; do ln -sfn "usr/$d" "$root/$d"; done
mkdir -p "$root/usr/sbin"
install -m 0755 "$bin" "$root/usr/bin/gpumeter"

owners=()
# ldd prints "libX.so.N => /lib/.../libX.so.N (0x...)" and the loader as "/lib64/ld-linux... (0x...)".
while read -r path; do
  real=$(realpath "$path")
  # Under its soname in the multiarch directory, the file's content (not the symlink chain).
  install -m 0644 "$real" "$root/$libdir/$(basename "$path")"
  owners+=("$(dpkg -S "$real" 2>/dev/null || dpkg -S "$path")")
done < <(ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }')
loader=$(ldd "$bin" | awk '$1 ~ /^\// { print $1 }')
[ -n "$loader" ] || { echo "image_rootfs: no loader in ldd $bin" >&2; exit 1; }
chmod 0755 "$root/$libdir/$(basename "$loader")"
[ -e "$root$loader" ] || ln -sfn "../lib/$multiarch/$(basename "$loader")" "$root/usr/lib64/$(basename "$loader")"

# CA certificates for the API server (and OpenSSL's default paths pointing at them).
install -m 0644 /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
ln -sfn /etc/ssl/certs "$root/usr/lib/ssl/certs"
ln -sfn /etc/ssl/certs/ca-certificates.crt "$root/usr/lib/ssl/cert.pem"
owners+=("$(dpkg -S /etc/ssl/certs/ca-certificates.crt 2>/dev/null || echo ca-certificates:)")

# Users: root (the DaemonSet's runAsUser 0) and nonroot (65532, the image's default user).
printf 'root:x:0:0:root:/root:/usr/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/usr/sbin/nologin\n' >"$root/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' >"$root/etc/group"
mkdir -p "$root/tmp" "$root/home/nonroot"
chmod 1777 "$root/tmp"
chown 65532:65532 "$root/home/nonroot" "$root/var/lib/gpumeter"

# The SBOM: each owning package once, with the version installed here.
printf '%s\n' "${owners[@]}" | cut -d: -f1 | sort -u | while read -r pkg; do
  dpkg-query -W -f='${Package}\t${Version}\t${Architecture}\n' "$pkg"
done >"$root/usr/share/gpumeter/packages.tsv"
[ -s "$root/usr/share/gpumeter/packages.tsv" ] || { echo "image_rootfs: empty package list" >&2; exit 1; }

# Licences: gpumeter's own (LICENSE beside this script's directory, Apache-2.0), and for every
# package whose files the image ships, Debian's copyright file (machine-readable where the package
# has one) under usr/share/doc/<package>/, as Debian installs it; usr/share/gpumeter/
# THIRD-PARTY-NOTICES lists each package, its version and the licences its copyright file names.
here=$(cd "$(dirname "$0")/.." && pwd)
[ -s "$here/LICENSE" ] || { echo "image_rootfs: $here/LICENSE missing" >&2; exit 1; }
install -D -m 0644 "$here/LICENSE" "$root/usr/share/doc/gpumeter/LICENSE"
notices=$root/usr/share/gpumeter/THIRD-PARTY-NOTICES
{
  echo "gpumeter is licensed under the Apache License 2.0 (/usr/share/doc/gpumeter/LICENSE)."
  echo "The image also ships files of these Debian packages; each one's copyright and licence"
  echo "terms are in /usr/share/doc/<package>/copyright."
  echo
  printf 'package\tversion\tlicenses\n'
} >"$notices"
while IFS=$'\t' read -r pkg version _arch; do
  copyright=/usr/share/doc/$pkg/copyright
  [ -s "$copyright" ] || { echo "image_rootfs: $copyright missing (package $pkg)" >&2; exit 1; }
  install -D -m 0644 "$copyright" "$root/usr/share/doc/$pkg/copyright"
  # "License: X" lines of a machine-readable file; "see copyright" for a free-form one.
  licenses=$(sed -n 's/^License: *\([^ ].*\)$/\1/p' "$copyright" | sort -u | paste -sd ';' -)
  printf '%s\t%s\t%s\n' "$pkg" "$version" "${licenses:-see copyright}" >>"$notices"
done <"$root/usr/share/gpumeter/packages.tsv"
echo "image_rootfs: $(wc -l <"$root/usr/share/gpumeter/packages.tsv") packages, $(du -sh "$root" | cut -f1)"
