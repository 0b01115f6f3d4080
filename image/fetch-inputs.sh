#!/usr/bin/env bash
# Downloads the inputs pinned in image/inputs.lock into the cache (once) and checks every checksum, also of files
# already cached. Prints the cache directory on stdout.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

mkdir -p "$inputs_cache/node" "$inputs_cache/debs"
exec 9>"$inputs_cache/.lock"
flock 9
scratch=$(mktemp -d "$inputs_cache/.fetching.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

sha512_integrity() { echo "sha512-$(openssl dgst -sha512 -binary "$1" | base64 -w0)"; }
sha256_checksum() { echo "sha256:$(sha256sum "$1" | cut -d' ' -f1)"; }

# verify FILE EXPECTED ACTUAL: a mismatch is fatal and the file is removed, so the next run downloads it again.
verify() {
  [[ $2 == "$3" ]] && return 0
  rm -f "$1"
  echo "fetch-inputs.sh: checksum mismatch for $1: inputs.lock pins $2, the download has $3" >&2
  exit 1
}

while read -r _ package version arch integrity; do
  file="$inputs_cache/node/$package-$version.tgz"
  if [[ ! -f $file ]]; then
    echo "downloading $package@$version from the npm registry" >&2
    npm pack --silent --pack-destination "$scratch" "$package@$version" >/dev/null
    mv "$scratch/$package-$version.tgz" "$file"
  fi
  verify "$file" "$integrity" "$(sha512_integrity "$file")"
done < <(lock_lines node)

updated=
while read -r _ package version arch checksum; do
  file="$inputs_cache/debs/${package}_${version}_$arch.deb"
  if [[ ! -f $file ]]; then
    [[ -n $updated ]] || { apt_private apt-get -q update >/dev/null; updated=yes; }
    echo "downloading Debian package $package $version ($arch)" >&2
    (cd "$scratch" && apt_private apt-get -q download "$package:$arch=$version" >/dev/null) || {
      echo "fetch-inputs.sh: apt cannot download $package $version for $arch (the mirror may have replaced it):" \
        "run 'make image-pins' to pin the current versions" >&2
      exit 1
    }
    mv "$scratch"/"${package}"_*.deb "$file"
  fi
  verify "$file" "$checksum" "$(sha256_checksum "$file")"
done < <(lock_lines deb)

echo "$inputs_cache"
