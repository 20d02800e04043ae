# Shared helpers for the comparison scripts: measure wall time and peak RSS
# of a command (best of N runs) with GNU time, and print ratios.
# shellcheck shell=bash

# measure N CMD... → sets WALL (seconds, best of N, microsecond resolution
# from bash's EPOCHREALTIME around the run) and RSS (KB, max, from GNU time).
# GNU time's own %e has 10 ms resolution, which rounds most of these
# commands to 0.00 and makes any ratio look met.
measure() {
  local n=$1; shift
  local best="" rss=0 m tf t0 t1 w
  tf=$(mktemp)
  for _ in $(seq "$n"); do
    t0=$EPOCHREALTIME
    /usr/bin/time -o "$tf" -f '%M' "$@" >/dev/null 2>&1 || true
    t1=$EPOCHREALTIME
    w=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.4f", b - a}')
    m=$(tail -1 "$tf")
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

# build_rocmdoctor OUT → builds the command as it is released: static
# (CGO_ENABLED=0; rocmdoctor uses no cgo, and a static binary has no
# libraries for ld.so to load at start-up, ~0.5 ms of every run).
build_rocmdoctor() {
  CGO_ENABLED=0 go build -trimpath -o "$1" ./cmd/rocmdoctor
}

# measure_fresh SRC DST SETTLE CMD... → measures one run of CMD (WALL, RSS as
# measure) on a fresh copy DST of SRC that has been written back (sync) and
# left alone for SETTLE seconds. Commands that rewrite large files are timed
# this way, each under the same conditions: on this kind of VM the first
# command after a large copy pays for the storage still settling (write-back,
# discards of freed blocks), and whichever ran first used to look ~1.5x slower.
measure_fresh() {
  local src=$1 dst=$2 settle=$3; shift 3
  rm -f "$dst"
  cp "$src" "$dst"
  sync
  sleep "$settle"
  measure 1 "$@"
}

# min A B → the smaller number (A when B is empty).
min() { if [ -z "$2" ] || awk "BEGIN{exit !($1 < $2)}"; then echo "$1"; else echo "$2"; fi; }

# row COMPARISON OURS_CMD OURS_S OURS_KB OTHER_CMD OTHER_S OTHER_KB → with
# BENCH_ROWS set (scripts/bench-tables.sh), appends one tab-separated row
# of the table it writes to docs/benchmarks.md: what was compared, each
# side's command, best wall time and peak RSS ("" when not measured), and
# the time ratio.
row() {
  [ -n "${BENCH_ROWS:-}" ] || return 0
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(basename "$0" .sh)" "$1" "$2" "$3" "$4" "$5" "$6" "$7" "$(ratio "$3" "$6")" >>"$BENCH_ROWS"
}
