#!/usr/bin/env bash
# Lays out the two per-architecture layers of the image as directories, from the inputs pinned in inputs.lock:
#   OUT/base  the files of the Debian packages a Node binary needs (glibc, libgcc, libstdc++), CA certificates and
#             time zones, with /etc/passwd and /etc/group for the non-root user 65532. No shell, no package
#             manager: the packages' programs and maintainer scripts are left out, only libraries and data stay.
#   OUT/node  the official Node binary (npm node-linux-*) as /usr/local/bin/node, with its licence.
# Usage: base-layers.sh ARCH OUT   (ARCH: amd64 or arm64; run fetch-inputs.sh first)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

arch=${1:?usage: base-layers.sh ARCH OUT}
out=${2:?usage: base-layers.sh ARCH OUT}
base="$out/base"
node="$out/node"
rm -rf "$base" "$node"
mkdir -p "$base/var/lib/dpkg/status.d" "$base/home/nonroot" "$base/tmp" "$node/usr/local/bin" "$node/usr/local/share/doc/node"

while read -r _ package version package_arch _; do
  [[ $package_arch == "$arch" || $package_arch == all ]] || continue
  deb="$inputs_cache/debs/${package}_${version}_$package_arch.deb"
  dpkg-deb --extract "$deb" "$base"
  # The package's control fields where scanners (syft, trivy, grype) look for packages in distroless images.
  dpkg-deb --field "$deb" >"$base/var/lib/dpkg/status.d/$package"
done < <(lock_lines deb)

# Programs (ldd and update-ca-certificates are shell scripts, with no shell to run them), documentation other
# than the copyright files, debugger helpers, and glibc's iconv modules (Node converts text with its own ICU).
(
  cd "$base"
  rm -rf bin sbin usr/bin usr/sbin usr/libexec usr/share/man usr/share/info usr/share/lintian usr/share/gdb \
    usr/share/gcc usr/share/locale usr/lib/*/gconv etc/ca-certificates
  find usr/share/doc -mindepth 2 ! -name copyright ! -type d -delete
  find usr/share/doc -mindepth 1 -type d -empty -delete
)
# The bundle update-ca-certificates would write: every certificate the package ships, in name order.
find "$base/usr/share/ca-certificates" -name '*.crt' -print0 | LC_ALL=C sort -z | xargs -0 cat \
  >"$base/etc/ssl/certs/ca-certificates.crt"
cp -R "$image_dir/rootfs/." "$base/"

node_package=$(node_package "$arch")
node_version=$(lock_lines node | awk -v p="$node_package" '$2 == p { print $3 }')
tar --extract --gzip --file "$inputs_cache/node/$node_package-$node_version.tgz" --directory "$node/usr/local/bin" \
  --strip-components=2 package/bin/node
tar --extract --gzip --file "$inputs_cache/node/$node_package-$node_version.tgz" \
  --directory "$node/usr/local/share/doc/node" --strip-components=1 package/LICENSE
