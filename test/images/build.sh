#!/usr/bin/env bash
# Builds the images the real-node e2e test runs, from Debian's busybox-static and the scripts in mesh/, and caches
# them outside the work tree as docker-archive tarballs for `ctr images import`:
#   pause.tar   the pod sandbox (containerd's sandbox_image): sleeps until killed
#   mesh.tar    busybox and the scripts: the validators (mesh/validate.sh 126 | 95), the CNI agent and the app
#               (mesh/serve.sh); each pod names its command
# Prints the directory holding them and `names` (the image references they are tagged with) on stdout; progress on
# stderr. The cache key is busybox's bytes, this script and mesh/, so the same inputs give the same images: every
# file time is SOURCE_DATE_EPOCH (image/layer-tar.sh) and crane writes no timestamps of its own.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$here/../.." && pwd)
# shellcheck source=image/crane-registry.sh
source "$repo_root/image/crane-registry.sh"

busybox=${BUSYBOX:-/bin/busybox}
file -L "$busybox" 2>/dev/null | grep -q 'statically linked' || {
  echo "test/images/build.sh: $busybox is not a static busybox (Debian: apt-get install busybox-static; make node)" >&2
  exit 1
}
key=$(cat "$busybox" "$here/build.sh" "$here"/mesh/* | sha256sum | cut -c1-12)
cache_root=${CNI_REPAIR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cni-repair}/node-images
target="$cache_root/$key"
if [[ -f "$target/names" ]]; then
  echo "$target"
  exit 0
fi

crane=$("$repo_root/image/go-tool.sh" github.com/google/go-containerregistry/cmd/crane "${CRANE_VERSION:-v0.22.1}")
export SOURCE_DATE_EPOCH=0
mkdir -p "$cache_root"
crane_work_dir "$cache_root/.building.XXXXXX"

# One root file system for both: busybox with the applets the scripts call, and the scripts.
mkdir -p "$work/rootfs/bin" "$work/rootfs/mesh" "$work/rootfs/tmp"
cp "$busybox" "$work/rootfs/bin/busybox"
for applet in sh nc echo sleep kill cat test true ls; do ln -s busybox "$work/rootfs/bin/$applet"; done
cp "$here"/mesh/* "$work/rootfs/mesh/"
"$repo_root/image/layer-tar.sh" "$work/rootfs" "$work/layer.tar" tmp:0:1777

start_crane_registry "$crane" "$work/registry.log"
registry="127.0.0.1:$crane_registry_port/cni-repair-test"
"$crane" append --oci-empty-base -t "$registry:layer" -f "$work/layer.tar" >/dev/null 2>"$work/crane.log" ||
  { cat "$work/crane.log" >&2; exit 1; }
# The pause process only has to hold the sandbox's namespaces; containerd kills it with SIGKILL.
"$crane" mutate "$registry:layer" -t "$registry:pause" --set-platform linux/amd64 \
  --entrypoint /bin/sleep,2147483647 --env PATH=/bin >/dev/null 2>>"$work/crane.log"
"$crane" mutate "$registry:layer" -t "$registry:mesh" --set-platform linux/amd64 \
  --entrypoint /mesh/serve.sh --env PATH=/bin >/dev/null 2>>"$work/crane.log"
mkdir -p "$work/out"
for image in pause mesh; do
  "$crane" pull --format=tarball "$registry:$image" "$work/out/$image.tar" 2>>"$work/crane.log"
  # The name the archive carries (the build's loopback registry) and the one the tests use.
  echo "$image $registry:$image cni-repair.test/$image:$key" >>"$work/out/names"
done
rm -rf "$target"
mv "$work/out" "$target"
echo "built the real-node test images into $target" >&2
echo "$target"
