# shellcheck shell=bash
# Sourced by every script that builds a Go binary from the module proxy and caches it outside the work tree
# (tools/build.sh, test/controlplane/kwok/build.sh, image/go-tool.sh): each decides its own cache key; this is the
# one place for how a cached build is found, locked, built and published.
#
#   cached_go_build <target dir> <binary> <what, for messages> <build function>
#
# Prints the target directory on stdout once <target dir>/<binary> exists; progress goes to stderr. The build
# function is called with a scratch directory to write the binary into; the scratch directory is renamed into
# place only when the binary is there, so an interrupted build never leaves a cached directory that looks usable.

cached_go_build() {
  local target=$1 binary=$2 what=$3 build=$4
  if [[ -x "$target/$binary" ]]; then
    echo "$target"
    return 0
  fi
  command -v go >/dev/null || {
    echo "Go >= 1.26 is needed to build $what; 'go' is not on PATH" >&2
    return 1
  }
  mkdir -p "$(dirname "$target")"
  # One build per target at a time; a second caller waits, then finds the finished binary.
  (
    exec 9>"$target.lock"
    flock 9
    [[ -x "$target/$binary" ]] && exit 0
    scratch=$(mktemp -d "$(dirname "$target")/.building.XXXXXX")
    trap 'rm -rf "$scratch"' EXIT
    echo "building $what from the Go module proxy (first time only)" >&2
    started=$SECONDS
    CGO_ENABLED=0 "$build" "$scratch" >&2
    [[ -x "$scratch/$binary" ]] || {
      echo "building $what left no $binary" >&2
      exit 1
    }
    echo "built $binary in $((SECONDS - started)) s" >&2
    rm -rf "$target"
    mv "$scratch" "$target"
    trap - EXIT
  ) || return 1
  echo "$target"
}
