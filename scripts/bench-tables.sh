#!/usr/bin/env bash
# Runs every scripts/bench-*.sh and writes the comparison table they
# produce (one row per comparison: best wall time, peak RSS, time ratio)
# to FILE, by default docs/benchmarks.md, with the machine it ran on.
# The scripts' own output, with their targets, goes to the terminal.
#   bash scripts/bench-tables.sh [FILE]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/benchmarks.md}
BENCH_ROWS=$(mktemp)
export BENCH_ROWS
trap 'rm -f "$BENCH_ROWS"' EXIT
status=0
for s in inspect deps symbols gpus check patchelf wheel saferwall; do
  echo "== scripts/bench-$s.sh"
  bash "scripts/bench-$s.sh" || status=1
done
{
  echo "# Benchmarks"
  echo
  echo "Written by \`bash scripts/bench-tables.sh\` (do not edit): best wall time and peak RSS of each"
  echo "side, and rocmdoctor's time as a multiple of the other's (below 1: faster). See"
  echo "[performance.md](performance.md) for what the numbers mean and the targets."
  echo
  cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//; s/  */ /g')
  mem=$(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo)
  echo "Machine: $(nproc) CPUs ($cpu), $mem, Linux $(uname -r), $(go version | cut -d' ' -f3), $(date -u +%Y-%m-%d)."
  echo
  echo "| script | input | rocmdoctor | time | RSS | other | time | RSS | ratio |"
  echo "|---|---|---|---|---|---|---|---|---|"
  awk -F'\t' '
    function mb(kb) { return kb == "" ? "" : sprintf("%d MB", kb / 1024) }
    function sec(s) { return s == "" ? "" : (s < 1 ? sprintf("%.1f ms", s * 1000) : sprintf("%.2f s", s)) }
    { printf "| %s | %s | `%s` | %s | %s | %s | %s | %s | ×%s |\n", $1, $2, $3, sec($4), mb($5), $6, sec($7), mb($8), $9 }' "$BENCH_ROWS"
} >"$out"
echo "wrote $out ($(($(wc -l <"$BENCH_ROWS"))) rows)"
exit $status
