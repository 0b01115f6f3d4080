#!/usr/bin/env bash
# Writes a directory as an image layer tarball that depends only on the files' contents: names sorted, every
# timestamp SOURCE_DATE_EPOCH, owner root, modes normalised (the builder's umask does not leak in).
# Entries listed after the directory get their own owner and mode: PATH:UID:MODE, e.g. home/nonroot:65532:0700.
# Usage: layer-tar.sh DIR OUT.tar [PATH:UID:MODE ...]
set -euo pipefail

dir=${1:?usage: layer-tar.sh DIR OUT.tar [PATH:UID:MODE ...]}
out=${2:?usage: layer-tar.sh DIR OUT.tar [PATH:UID:MODE ...]}
shift 2
: "${SOURCE_DATE_EPOCH:?layer-tar.sh needs SOURCE_DATE_EPOCH}"

common=(--sort=name --mtime="@$SOURCE_DATE_EPOCH" --numeric-owner --format=gnu --directory "$dir")
special=()
for entry in "$@"; do special+=(--exclude="./${entry%%:*}"); done
mapfile -t top < <(cd "$dir" && find . -mindepth 1 -maxdepth 1 | LC_ALL=C sort)
tar --create --file "$out" "${common[@]}" --owner=0 --group=0 --mode=u=rwX,go=rX "${special[@]}" "${top[@]}"
for entry in "$@"; do
  IFS=: read -r path uid mode <<<"$entry"
  tar --append --file "$out" "${common[@]}" --owner="$uid" --group="$uid" --mode="$mode" --no-recursion "./$path"
done
