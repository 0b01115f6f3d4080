#!/usr/bin/env bash
# Rewrites image/inputs.lock with the current versions and checksums of the image's inputs: the Node binary
# packages of NODE_VERSION (npm) and the Debian packages below, for every image architecture. Run it (make
# image-pins) to take Debian's security updates, or when the mirror no longer has a pinned version; review and
# commit the diff.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

node_version=${1:?usage: pin-inputs.sh <node version>}
# What a Node binary needs at run time (glibc, libstdc++, libgcc and the copyright of gcc's runtime libraries),
# plus CA certificates and time zones.
debian_packages=(libc6 libgcc-s1 gcc-12-base libstdc++6 ca-certificates tzdata)

# The fields of the version apt would install now.
debian_candidate() {
  apt_private apt-cache show --no-all-versions "$1" 2>/dev/null || true
}

apt_private apt-get -q update >/dev/null
{
  echo "# Pinned inputs of 'make image', written by image/pin-inputs.sh (make image-pins); review and commit."
  echo "# kind package version architecture checksum"
  for arch in "${image_arches[@]}"; do
    package=$(node_package "$arch")
    integrity=$(npm view "$package@$node_version" dist.integrity)
    [[ -n $integrity ]] || { echo "npm has no $package@$node_version" >&2; exit 1; }
    echo "node $package $node_version $arch $integrity"
  done
  for arch in "${image_arches[@]}"; do
    for package in "${debian_packages[@]}"; do
      fields=$(debian_candidate "$package:$arch")
      [[ -n $fields ]] || fields=$(debian_candidate "$package:all")
      [[ -n $fields ]] || { echo "apt knows no $package for $arch" >&2; exit 1; }
      version=$(awk '/^Version: / { print $2; exit }' <<<"$fields")
      sha=$(awk '/^SHA256: / { print $2; exit }' <<<"$fields")
      package_arch=$(awk '/^Architecture: / { print $2; exit }' <<<"$fields")
      echo "deb $package $version $package_arch sha256:$sha"
    done
  done
} | awk '!seen[$0]++' >"$lock_file.tmp"
mv "$lock_file.tmp" "$lock_file"
echo "pinned $(grep -c '^node ' "$lock_file") Node packages and $(grep -c '^deb ' "$lock_file") Debian packages in $lock_file" >&2
