#!/bin/sh
# Builds the gateway's container image (docs/examples/Containerfile) with podman or docker, whichever answers here,
# and checks it: it runs as a non-root user and its modelpub starts. Where no container tool works, it says it
# skipped and exits 0. Usage: scripts/container-image.sh [TAG] (default modelpub:local).
set -eu
cd "$(dirname "$0")/.."
tag=${1:-modelpub:local}
for tool in podman docker; do
  command -v "$tool" >/dev/null 2>&1 || continue
  if ! "$tool" info >/dev/null 2>&1; then
    echo "container-image: $tool is installed but does not answer (no daemon or no permission)"
    continue
  fi
  "$tool" build -f docs/examples/Containerfile -t "$tag" .
  uid=$("$tool" run --rm --entrypoint id "$tag" -u)
  if [ "$uid" = 0 ]; then
    echo "container-image: $tag runs as root" >&2
    exit 1
  fi
  "$tool" run --rm "$tag" serve --help >/dev/null
  echo "container-image: built $tag with $tool (runs as uid $uid)"
  exit 0
done
echo "container-image: skipped, no working podman or docker here"
