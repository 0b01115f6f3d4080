#!/usr/bin/env bash
# make image: the controller's OCI image index (linux/amd64 + linux/arm64) from pinned inputs only, with no
# container engine: layers are tarballs made by GNU tar (layer-tar.sh), crane (go-containerregistry) turns them
# into images and an index through a registry it serves on loopback for the length of the build, and the result
# is written as an OCI image layout. Same inputs and SOURCE_DATE_EPOCH give the same index digest.
#
# Layers, from the least to the most often changed (the app's two are the same blobs in both architectures):
#   1 base: files of the pinned Debian packages + passwd/group (base-layers.sh)   2 node: /usr/local/bin/node
#   3 /app/node_modules (npm ci --omit=dev)     4 /app/dist/src (bundled) + package.json + its code cache (code-cache.sh)
#
# Environment (the Makefile sets them): VERSION, NODE_VERSION, GIT_REVISION, IMAGE_SOURCE, SOURCE_DATE_EPOCH, IMAGE_OUT,
# CRANE_VERSION, SYFT_VERSION, IMAGE_PUSH (optional: a repository reference to push the index to, e.g. ghcr.io/org/cni-repair:1.2.3).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=image/crane-registry.sh
source "$(dirname "${BASH_SOURCE[0]}")/crane-registry.sh"

: "${VERSION:?}" "${GIT_REVISION:?}" "${IMAGE_SOURCE:?}" "${SOURCE_DATE_EPOCH:?}" "${IMAGE_OUT:?}" "${CRANE_VERSION:?}" "${SYFT_VERSION:?}" "${NODE_VERSION:?}"
export SOURCE_DATE_EPOCH
repo_root=$(cd "$image_dir/.." && pwd)
started=$SECONDS

package_version=$(node -p 'require(process.argv[1]).version' "$repo_root/package.json")
if [[ $VERSION != "$package_version" ]]; then
  echo "build.sh: VERSION=$VERSION but package.json says $package_version (the controller reports package.json's" \
    "version): set the version in package.json first" >&2
  exit 2
fi
if lock_lines node | awk -v v="$NODE_VERSION" '$3 != v { found = 1 } END { exit !found }'; then
  echo "build.sh: image/inputs.lock pins another Node than NODE_VERSION=$NODE_VERSION: run make image-pins" >&2
  exit 2
fi
[[ -f "$repo_root/dist/src/cli/main.js" ]] || { echo "build.sh: dist/src is missing: run make build first" >&2; exit 1; }

crane=$("$image_dir/go-tool.sh" github.com/google/go-containerregistry/cmd/crane "$CRANE_VERSION")
syft=$("$image_dir/go-tool.sh" github.com/anchore/syft/cmd/syft "$SYFT_VERSION")
"$image_dir/fetch-inputs.sh" >/dev/null

crane_work_dir "${TMPDIR:-/tmp}/cni-repair-image.XXXXXX"

# Runs a step with its chatter in a log that is shown only when the step fails.
quietly() {
  "$@" >"$work/step.log" 2>&1 || { cat "$work/step.log" >&2; echo "build.sh: failed: $*" >&2; exit 1; }
}

# The app: compiled JavaScript bundled into a few modules (bundle.sh: a faster start), package.json (the controller
# reads its version there) and production dependencies (client-node and undici are loaded from them, see bundle.sh).
mkdir -p "$work/modules/app" "$work/app/app/dist"
cp "$repo_root/package.json" "$repo_root/package-lock.json" "$work/modules/app/"
quietly npm ci --prefix "$work/modules/app" --omit=dev --ignore-scripts --no-audit --no-fund
rm "$work/modules/app/package.json" "$work/modules/app/package-lock.json"
"$image_dir/bundle.sh" "$work/app/app"
cp "$repo_root/package.json" "$work/app/app/"
echo "$GIT_REVISION" >"$work/app/app/dist/revision"
# V8's code cache of the app (code-cache.sh), which V8 takes only from the Node that made it: this Node must be the
# image's. The cache serves the architecture this build runs on (the other one's start finds none and compiles).
if [[ $(node --version) != "v$NODE_VERSION" ]]; then
  echo "build.sh: node is $(node --version), the image's is v$NODE_VERSION: the code cache would not match" >&2
  exit 2
fi
"$image_dir/code-cache.sh" "$work/app/app"
"$image_dir/layer-tar.sh" "$work/modules" "$work/modules.tar"
"$image_dir/layer-tar.sh" "$work/app" "$work/app.tar"

# A registry on loopback for crane's mutate and index steps; it holds nothing after the build.
start_crane_registry "$crane" "$work/registry.log"
registry="127.0.0.1:$crane_registry_port/cni-repair"

created=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
labels=(
  --label "org.opencontainers.image.title=cni-repair"
  --label "org.opencontainers.image.description=Repairs pods whose service-mesh CNI validation failed"
  --label "org.opencontainers.image.source=$IMAGE_SOURCE"
  --label "org.opencontainers.image.revision=$GIT_REVISION"
  --label "org.opencontainers.image.version=$VERSION"
  --label "org.opencontainers.image.licenses=$(node -p 'require(process.argv[1]).license' "$repo_root/package.json")"
  --label "org.opencontainers.image.created=$created"
)
manifests=()
for arch in "${image_arches[@]}"; do
  "$image_dir/base-layers.sh" "$arch" "$work/$arch"
  "$image_dir/layer-tar.sh" "$work/$arch/base" "$work/$arch-base.tar" home/nonroot:65532:0700 tmp:0:1777
  "$image_dir/layer-tar.sh" "$work/$arch/node" "$work/$arch-node.tar"
  quietly "$crane" append --oci-empty-base -t "$registry:layers-$arch" \
    -f "$work/$arch-base.tar" -f "$work/$arch-node.tar" -f "$work/modules.tar" -f "$work/app.tar"
  quietly "$crane" mutate "$registry:layers-$arch" -t "$registry:$arch" --set-platform "linux/$arch" \
    --user 65532:65532 --workdir /app --entrypoint /usr/local/bin/node,/app/dist/src/cli/main.js \
    --env NODE_ENV=production --env PATH=/usr/local/bin --exposed-ports 8080/tcp "${labels[@]}"
  manifests+=(-m "$registry:$arch")
done
quietly "$crane" index append "${manifests[@]}" -t "$registry:$VERSION"

rm -rf "$IMAGE_OUT"
mkdir -p "$IMAGE_OUT"
quietly "$crane" pull --format=oci "$registry:$VERSION" "$IMAGE_OUT/oci"
digest=$("$crane" digest "$registry:$VERSION")
echo "$digest" >"$IMAGE_OUT/digest"

# An SPDX SBOM per architecture, read by syft from the image itself: Node, the Debian packages (from
# /var/lib/dpkg/status.d) and every npm package under /app.
for arch in "${image_arches[@]}"; do
  quietly env SYFT_CHECK_FOR_APP_UPDATE=false "$syft" scan "oci-dir:$IMAGE_OUT/oci" --platform "linux/$arch" \
    --source-name cni-repair --source-version "$VERSION" -o "spdx-json=$IMAGE_OUT/sbom-linux-$arch.spdx.json"
done

echo "image index $digest (linux/amd64, linux/arm64) in $IMAGE_OUT/oci, built in $((SECONDS - started)) s" >&2
"$image_dir/sizes.sh" "$IMAGE_OUT/oci" >&2
if [[ -n ${IMAGE_PUSH:-} ]]; then
  "$crane" push "$IMAGE_OUT/oci" "$IMAGE_PUSH" --image-refs "$IMAGE_OUT/pushed"
  echo "pushed to $(cat "$IMAGE_OUT/pushed")" >&2
fi
