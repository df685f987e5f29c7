#!/usr/bin/env bash
# release.sh builds the release archives: static binaries (CGO_ENABLED=0)
# for linux/amd64 and linux/arm64, each with the README, the docs, the changelog and the systemd
# unit, and SHA256SUMS over them.
#
#   scripts/release.sh                    # HEAD must carry a tag vX.Y.Z; writes dist/
#   scripts/release.sh --snapshot         # any commit, a pseudo-version; for CI and trials
#   scripts/release.sh --snapshot --out /tmp/rel
#
# It builds from a fresh clone of the commit, never from the working tree,
# so the Go toolchain stamps the tag (or a pseudo-version), the commit and
# its time into the build info, which `cleanads version` prints. The
# archives are reproducible: the same commit gives the same bytes.
set -euo pipefail

snapshot=false
out=dist
while [ $# -gt 0 ]; do
  case "$1" in
    --snapshot) snapshot=true ;;
    --out) out="$2"; shift ;;
    *) echo "usage: scripts/release.sh [--snapshot] [--out DIR]" >&2; exit 2 ;;
  esac
  shift
done

repo=$(git rev-parse --show-toplevel)
commit=$(git -C "$repo" rev-parse HEAD)
if ! $snapshot; then
  tag=$(git -C "$repo" describe --exact-match --tags --match 'v[0-9]*' HEAD 2>/dev/null) || {
    echo "release: HEAD ($commit) has no vX.Y.Z tag: tag it (git tag v1.2.3), or run with --snapshot" >&2; exit 1; }
  if [ -n "$(git -C "$repo" status --porcelain)" ]; then
    echo "release: the working tree has uncommitted changes; a release is built from $tag alone: commit or stash them first" >&2
    exit 1
  fi
elif [ -n "$(git -C "$repo" status --porcelain)" ]; then
  echo "release: note: uncommitted changes are not in the snapshot; it is built from $commit"
fi

mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git clone -q --no-hardlinks "$repo" "$work/src"
git -C "$work/src" checkout -q "$commit"
epoch=$(git -C "$work/src" log -1 --format=%ct)

version=""
archives=()
for arch in amd64 arm64; do
  bin="$work/bin-$arch/cleanads"
  (cd "$work/src" && GOFLAGS=-buildvcs=true CGO_ENABLED=0 GOOS=linux GOARCH=$arch \
    go build -trimpath -buildvcs=true -ldflags "-s -w" -o "$bin" ./cmd/cleanads)
  v=$(go version -m "$bin" | awk '$1 == "mod" { print $3 }')
  if [ -z "$v" ] || [ "$v" = "(devel)" ]; then
    echo "release: the toolchain stamped no version into $bin" >&2; exit 1
  fi
  version=$v
  name="cleanads-$v-linux-$arch"
  mkdir -p "$work/$name"
  cp "$bin" "$work/$name/cleanads"
  cp "$work/src/README.md" "$work/src/CHANGELOG.md" "$work/src/packaging/systemd/cleanads.service" "$work/$name/"
  cp -R "$work/src/docs" "$work/$name/docs"
  tar --sort=name --mtime="@$epoch" --owner=0 --group=0 --numeric-owner -C "$work" -cf - "$name" | gzip -n -9 > "$out/$name.tar.gz"
  archives+=("$name.tar.gz")
done

if ! $snapshot && [ "$version" != "$tag" ]; then
  echo "release: the binaries say $version, the tag is $tag" >&2; exit 1
fi
if [ "$(uname -m)" = x86_64 ]; then
  # The binary for this machine runs and reports what was stamped.
  "$work/bin-amd64/cleanads" version | grep -qF "cleanads $version (commit ${commit:0:12}" || {
    echo "release: cleanads version does not report $version at ${commit:0:12}:" >&2
    "$work/bin-amd64/cleanads" version >&2; exit 1; }
fi
(cd "$out" && sha256sum "${archives[@]}" > SHA256SUMS && sha256sum -c --quiet SHA256SUMS)
echo "release: cleanads $version ($commit) in $out:"
(cd "$out" && ls -l "${archives[@]}" SHA256SUMS && cat SHA256SUMS)
