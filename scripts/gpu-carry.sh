#!/usr/bin/env bash
# Packs what a GPU session runs into one compressed archive, for machines
# that take a limited carry (the H200 machine: 64 MiB in all):
#
#   scripts/gpu-carry.sh pack [ARCHIVE]    here, after
#                                          scripts/cuda-golden.sh build and
#                                          python3 bench/suite.py build
#                                          build/bench; default
#                                          build/gpu-carry.tar.xz
#   scripts/gpu-carry.sh unpack [ARCHIVE]  there, in the checkout: restores
#                                          build/cuda-golden, build/bench
#                                          and build/gpu-session
#
# The programs embed their cubins and are highly compressible (xz -9).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
mode="${1:-}"
archive="${2:-$root/build/gpu-carry.tar.xz}"
limit=$((64 * 1024 * 1024))

case "$mode" in
pack)
  dirs=()
  for d in build/cuda-golden build/bench build/gpu-session; do
    [ -d "$root/$d" ] && dirs+=("$d")
  done
  if [ ${#dirs[@]} -eq 0 ]; then
    echo "gpu-carry: nothing to pack (build build/cuda-golden or build/bench first)" >&2
    exit 1
  fi
  tar -C "$root" -cf - "${dirs[@]}" | xz -9 -T2 > "$archive.tmp"
  mv "$archive.tmp" "$archive"
  size=$(stat -c %s "$archive")
  echo "gpu-carry: ${dirs[*]} -> $archive ($((size / 1024 / 1024)) MiB)"
  if [ "$size" -gt "$limit" ]; then
    echo "gpu-carry: over the 64 MiB carry limit: build fewer variants" \
      "(suite.py --precision/--gemm/--only)" >&2
    exit 1
  fi
  ;;
unpack)
  # Python's tarfile reads xz itself: no xz binary needed there.
  python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' \
    "$archive" "$root"
  echo "gpu-carry: unpacked $archive"
  ;;
*)
  echo "usage: $0 pack|unpack [ARCHIVE]" >&2
  exit 2
  ;;
esac
