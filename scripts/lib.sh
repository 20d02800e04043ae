# Shared helpers for the comparison scripts: measure wall time and peak RSS
# of a command (best of N runs) with GNU time, and print ratios.
# shellcheck shell=bash

# measure N CMD... → sets WALL (seconds, best of N) and RSS (KB, max).
measure() {
  local n=$1; shift
  local best="" rss=0 out w m tf
  tf=$(mktemp)
  for _ in $(seq "$n"); do
    /usr/bin/time -o "$tf" -f '%e %M' "$@" >/dev/null 2>&1 || true
    out=$(tail -1 "$tf")
    w=${out% *}; m=${out#* }
    if [ -z "$best" ] || awk "BEGIN{exit !($w < $best)}"; then best=$w; fi
    [ "$m" -gt "$rss" ] && rss=$m
  done
  rm -f "$tf"
  WALL=$best RSS=$rss
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (b == 0) b = 0.005; printf "%.2f", a / b }'; }

need() {
  for t in "$@"; do
    command -v "$t" >/dev/null || { echo "missing tool: $t" >&2; exit 1; }
  done
}
