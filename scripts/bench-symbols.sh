#!/usr/bin/env bash
# Compares `rocmdoctor symbols --closure` with `ldd -r` (which runs the
# loader in trace mode) on the same files and prints wall-time and RSS
# ratios. Targets (issue 4): libamd_comgr.so.2 at ≤ 0.5× ldd -r; RSS on
# librocsparse.so.0 (1.3 GB) independent of its size; --index over
# /usr/lib/llvm-15/lib (189 archives, ~1 GB) in seconds.
#   bash scripts/bench-symbols.sh [FILE...]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
need /usr/bin/time ldd go
bin=$(mktemp -d)/rocmdoctor
build_rocmdoctor "$bin"
files=("$@")
[ ${#files[@]} -gt 0 ] || files=(/usr/lib/x86_64-linux-gnu/libamd_comgr.so.2 /usr/lib/x86_64-linux-gnu/librocsparse.so.0 /usr/lib/x86_64-linux-gnu/libLLVM-15.so.1)
printf '%-26s %10s %8s %12s %10s %8s %8s %9s\n' file symbols_s rss_MB closure_s ldd-r_s rss_MB time_x closure_x
for f in "${files[@]}"; do
  [ -e "$f" ] || { echo "skip $f (missing)"; continue; }
  measure 7 "$bin" symbols --fail-on never "$f"; ours=$WALL ours_rss=$RSS
  measure 7 "$bin" symbols --closure --fail-on never "$f"; closure=$WALL
  measure 7 ldd -r "$f"; theirs=$WALL theirs_rss=$RSS
  printf '%-26s %10s %8d %12s %10s %8d %8s %9s\n' "$(basename "$f")" "$ours" $((ours_rss/1024)) "$closure" "$theirs" $((theirs_rss/1024)) \
    "$(ratio "$ours" "$theirs")" "$(ratio "$closure" "$theirs")"
  row "$(basename "$f")" "symbols" "$ours" "$ours_rss" "ldd -r" "$theirs" "$theirs_rss"
  row "$(basename "$f")" "symbols --closure" "$closure" "" "ldd -r" "$theirs" "$theirs_rss"
  if [[ $(basename "$f") == libamd_comgr* ]]; then
    awk "BEGIN{exit !($ours <= 0.5*$theirs)}" || { echo "FAIL: symbols on $(basename "$f") is x$(ratio "$ours" "$theirs") ldd -r (target 0.5x, issue 4)"; exit 1; }
  fi
  [ "$ours_rss" -lt $((64*1024)) ] || { echo "FAIL: symbols used $((ours_rss/1024)) MB on $f"; exit 1; }
done
if [ -d /usr/lib/llvm-15/lib ]; then
  measure 3 "$bin" symbols --fail-on never --index /usr/lib/llvm-15/lib testdata/libMIOpen.so
  echo "symbols --index /usr/lib/llvm-15/lib: ${WALL}s, $((RSS/1024)) MB"
  awk "BEGIN{exit !($WALL < 5)}" || { echo "FAIL: indexing took ${WALL}s"; exit 1; }
fi
