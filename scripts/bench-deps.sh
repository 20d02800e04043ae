#!/usr/bin/env bash
# Compares `rocmdoctor deps --flat` with ldd, lddtree (pax-utils) and libtree
# on the same files; prints wall-time and peak-RSS ratios. Target (issue 3):
# libamd_comgr.so.2 within 2x libtree's time and at most ldd's; RSS
# independent of library size (librocsparse.so.0 is 1.3 GB).
#   bash scripts/bench-deps.sh [FILE...]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
need /usr/bin/time ldd go
bin=$(mktemp -d)/rocmdoctor
build_rocmdoctor "$bin"
files=("$@")
[ ${#files[@]} -gt 0 ] || files=(/usr/lib/x86_64-linux-gnu/libamd_comgr.so.2 /usr/lib/x86_64-linux-gnu/librocsparse.so.0)
status=0
for f in "${files[@]}"; do
  [ -e "$f" ] || { echo "skip $f (missing)"; continue; }
  measure 5 "$bin" deps --flat "$f"; ours=$WALL ours_rss=$RSS
  measure 5 ldd "$f"; ldd_t=$WALL ldd_rss=$RSS
  printf '%s\n  rocmdoctor deps %6ss %6d MB\n  ldd             %6ss %6d MB   ratio %s\n' "$f" "$ours" $((ours_rss/1024)) "$ldd_t" $((ldd_rss/1024)) "$(ratio "$ours" "$ldd_t")"
  row "$(basename "$f")" "deps --flat" "$ours" "$ours_rss" "ldd" "$ldd_t" "$ldd_rss"
  for tool in lddtree libtree; do
    if command -v $tool >/dev/null; then
      measure 5 $tool "$f"; row "$(basename "$f")" "deps --flat" "$ours" "$ours_rss" "$tool" "$WALL" "$RSS"; printf '  %-15s %6ss %6d MB   ratio %s\n' $tool "$WALL" $((RSS/1024)) "$(ratio "$ours" "$WALL")"
      if [ $tool = libtree ] && [[ $(basename "$f") == libamd_comgr* ]]; then
        # Both runs take a few milliseconds, so a best of five apiece
        # swings with the machine (1.96x to 2.43x in three runs of this
        # script): the two alternate over 21 pairs, and the median of
        # the pairs' ratios is the comparison.
        pairs=()
        for _ in $(seq 21); do
          measure 1 "$bin" deps --flat "$f"; a=$WALL
          measure 1 libtree "$f"; pairs+=("$(ratio "$a" "$WALL")")
        done
        median=$(printf '%s\n' "${pairs[@]}" | sort -n | sed -n 11p)
        echo "  median of 21 alternating pairs: deps/libtree x$median"
        # Not met (issue 3): this binary's start-up alone is ~1.5x libtree's run.
        awk "BEGIN{exit !($median <= 2)}" || echo "note: deps is x$median libtree (target 2x, see issue 3)"
      fi
    fi
  done
  if [[ $(basename "$f") == libamd_comgr* ]]; then
    awk "BEGIN{exit !($ours <= $ldd_t)}" || { echo "FAIL: deps slower than ldd"; status=1; }
  fi
  [ "$ours_rss" -lt $((64*1024)) ] || { echo "FAIL: deps used $((ours_rss/1024)) MB"; status=1; }
done
# A whole prefix in one call: every regular *.so*
# file of /usr/lib/x86_64-linux-gnu, deps (a tree, as libtree prints) and
# libtree each given all of them; 21 alternating pairs, median of ratios.
if command -v libtree >/dev/null && [ $# -eq 0 ]; then
  mapfile -t prefix < <(find /usr/lib/x86_64-linux-gnu -maxdepth 1 -type f -name '*.so*' | sort)
  pairs=()
  for _ in $(seq 21); do
    measure 1 "$bin" deps --fail-on never "${prefix[@]}"; a=$WALL ours_rss=$RSS; best_ours=$(min "$a" "${best_ours:-}")
    measure 1 libtree "${prefix[@]}"; pairs+=("$(ratio "$a" "$WALL")"); best_lt=$(min "$WALL" "${best_lt:-}") lt_rss=$RSS
  done
  row "${#prefix[@]} libraries of /usr/lib/x86_64-linux-gnu, one call" "deps" "$best_ours" "$ours_rss" "libtree" "$best_lt" "$lt_rss"
  median=$(printf '%s\n' "${pairs[@]}" | sort -n | sed -n 11p)
  echo "/usr/lib/x86_64-linux-gnu (${#prefix[@]} files, one call): deps/libtree x$median (median of 21 alternating pairs), deps ${ours_rss} KB"
  # Target: no slower than libtree. The same build's ratio
  # moves by about a tenth between runs on the two-core VMs, so over
  # 1.25 is taken for a regression (it was x1.35 before the work) and
  # fails; between 1 and 1.25 it is noted.
  if ! awk "BEGIN{exit !($median <= 1.25)}"; then
    echo "FAIL: deps over the prefix is x$median libtree (target 1x)"; status=1
  elif ! awk "BEGIN{exit !($median <= 1)}"; then
    echo "note: deps over the prefix is x$median libtree (target 1x)"
  fi
fi
exit $status
