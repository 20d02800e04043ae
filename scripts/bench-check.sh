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
measure 3 "$bin" check --fail-on never "$dir"; ours=$WALL ours_rss=$RSS
measure 1 sh -c 'find "$1" -type f -name "*.so*" -exec ldd -r {} + >/dev/null 2>&1; true' sh "$dir"; ldd_t=$WALL
measure 3 scanelf -R -n -r "$dir"; scan_t=$WALL scan_rss=$RSS
printf 'rocmdoctor check %ss (%d MB) | find -exec ldd -r %ss (ratio %s) | scanelf -R -n -r %ss, %d MB (ratio %s)\n' \
  "$ours" $((ours_rss/1024)) "$ldd_t" "$(ratio "$ours" "$ldd_t")" "$scan_t" $((scan_rss/1024)) "$(ratio "$ours" "$scan_t")"
awk "BEGIN{exit !($ours * 10 <= $ldd_t)}" || { echo "FAIL: not 10x faster than the ldd loop"; exit 1; }
