#!/usr/bin/env bash
# Builds the images of Istio's data plane the real-node e2e test runs (test/istio/build.sh builds the binaries from
# Istio's sources) and caches them outside the work tree as docker-archive tarballs for `ctr images import`:
#   install-cni.tar  Istio's CNI node agent image: install-cni on PATH, the istio-cni plugin in /opt/cni/bin (where
#                    the agent copies it from), and iptables (nft and legacy, with their libraries and their
#                    extensions, from this machine's Debian iptables package) for the agent's in-place repair, as
#                    Istio's image has them
#   proxyv2.tar      pilot-agent as the entrypoint, as Istio's proxyv2 image: the injector's istio-validation runs it
#                    with `istio-iptables ... --run-validation --skip-rule-apply`
# Prints the directory holding them and `names` (the references they are tagged with) on stdout; progress on stderr.
# The cache key is the binaries' directory (named by Istio's pin), the iptables files and this script.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$here/../.." && pwd)
# shellcheck source=image/crane-registry.sh
source "$repo_root/image/crane-registry.sh"

binaries=$("$here/build.sh")
# The iptables Istio's agent runs inside a pod's network namespace: both variants, as Istio picks one by the rules
# present (none in a fresh pod: nft).
multis=(/usr/sbin/xtables-nft-multi /usr/sbin/xtables-legacy-multi)
for multi in "${multis[@]}"; do
  [[ -x $multi ]] || { echo "test/istio/images.sh: $multi is missing (Debian: apt-get install iptables; make node)" >&2; exit 1; }
done
# iptables loads its extensions (targets such as RETURN and REDIRECT, matches) at run time from the directory built
# into libxtables (XTABLES_LIBDIR): without them `-j RETURN` reads as a jump to a chain named RETURN, which does not
# exist, and Istio's agent finds "no loaded kernel support" in iptables.
libxtables=$(ldd "${multis[0]}" | awk '$1 ~ /^libxtables\.so/ { print $3 }')
extensions=$(tr '\0' '\n' <"$libxtables" | grep -axE '/[[:alnum:]_./-]+/xtables' | head -n 1 || true)
[[ -d $extensions ]] || { echo "test/istio/images.sh: no iptables extensions in '$extensions'" >&2; exit 1; }
mapfile -t extension_files < <(find "$extensions" -maxdepth 1 -name '*.so' | sort)
mapfile -t libraries < <(ldd "${multis[@]}" "${extension_files[@]}" |
  awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\/lib/ { print $1 }' | sort -u)

key=$(printf '%s\n' "$binaries" | cat - "$here/images.sh" "${multis[@]}" "${libraries[@]}" "${extension_files[@]}" |
  sha256sum | cut -c1-12)
cache_root=${CNI_REPAIR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cni-repair}/istio-images
target="$cache_root/$key"
if [[ -f "$target/names" ]]; then
  echo "$target"
  exit 0
fi

crane=$("$repo_root/image/go-tool.sh" github.com/google/go-containerregistry/cmd/crane "${CRANE_VERSION:-v0.22.1}")
export SOURCE_DATE_EPOCH=0
mkdir -p "$cache_root"
crane_work_dir "$cache_root/.building.XXXXXX"

# The agent: its binary, the plugin it installs, iptables and the C libraries iptables needs.
agent=$work/install-cni
mkdir -p "$agent/usr/local/bin" "$agent/opt/cni/bin" "$agent/usr/sbin" "$agent/tmp" "$agent/run" "$agent/etc"
cp "$binaries/install-cni" "$agent/usr/local/bin/"
cp "$binaries/istio-cni" "$agent/opt/cni/bin/"
for multi in "${multis[@]}"; do cp "$multi" "$agent/usr/sbin/"; done
for variant in nft legacy; do
  for command in iptables iptables-save iptables-restore ip6tables ip6tables-save ip6tables-restore; do
    ln -s "xtables-$variant-multi" "$agent/usr/sbin/${command/tables/tables-$variant}"
  done
done
for command in iptables iptables-save iptables-restore ip6tables ip6tables-save ip6tables-restore; do
  ln -s "xtables-nft-multi" "$agent/usr/sbin/$command"
done
for library in "${libraries[@]}"; do
  mkdir -p "$agent$(dirname "$library")"
  cp -L "$library" "$agent$library"
done
mkdir -p "$agent$extensions"
cp -L "${extension_files[@]}" "$agent$extensions/"
"$repo_root/image/layer-tar.sh" "$agent" "$work/install-cni.tar" tmp:0:1777

# The validator's image: pilot-agent only (the validation needs nothing else).
proxy=$work/proxyv2
mkdir -p "$proxy/usr/local/bin" "$proxy/tmp"
cp "$binaries/pilot-agent" "$proxy/usr/local/bin/"
"$repo_root/image/layer-tar.sh" "$proxy" "$work/proxyv2.tar" tmp:0:1777

start_crane_registry "$crane" "$work/registry.log"
registry="127.0.0.1:$crane_registry_port/istio"
path=PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
for image in install-cni proxyv2; do
  "$crane" append --oci-empty-base -t "$registry/$image:layer" -f "$work/$image.tar" >/dev/null 2>"$work/crane.log" ||
    { cat "$work/crane.log" >&2; exit 1; }
done
"$crane" mutate "$registry/install-cni:layer" -t "$registry/install-cni:built" --set-platform linux/amd64 \
  --entrypoint /usr/local/bin/install-cni --env "$path" >/dev/null 2>>"$work/crane.log"
"$crane" mutate "$registry/proxyv2:layer" -t "$registry/proxyv2:built" --set-platform linux/amd64 \
  --entrypoint /usr/local/bin/pilot-agent --env "$path" >/dev/null 2>>"$work/crane.log"
mkdir -p "$work/out"
istio_version=$(awk '{ for (i = 1; i < NF; i++) if ($i == "istio.io/istio") { print $(i + 1); exit } }' "$here/go.mod")
for image in install-cni proxyv2; do
  "$crane" pull --format=tarball "$registry/$image:built" "$work/out/$image.tar" 2>>"$work/crane.log"
  # The name the archive carries (the build's loopback registry) and the one the pods use.
  echo "$image $registry/$image:built cni-repair.test/istio/$image:$key" >>"$work/out/names"
done
# The Istio the images were built from, for the tests' reports and recorded fixtures.
echo "istio.io/istio $istio_version" >"$work/out/version"
rm -rf "$target"
mv "$work/out" "$target"
echo "built Istio's install-cni and proxyv2 images into $target" >&2
echo "$target"
