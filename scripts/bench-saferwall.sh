#!/usr/bin/env bash
# Why github.com/saferwall/elf is not in the product (it is the second,
# independent parser of the elfx corpus tests, TestCorpusSaferwallAgrees):
# reading the headers and dynamic symbols of Debian's libLLVM-15 and
# 1.3 GB librocsparse with it and with elfx, as Go benchmarks, and the
# ratios of time and bytes allocated (saferwall reads the whole file into
# memory).
#   bash scripts/bench-saferwall.sh
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(go test -run '^$' -bench 'Parse(Elfx|Saferwall)' -benchtime=3x ./elfx)
echo "$out" | grep '^Benchmark'
printf '%-10s %12s %12s %10s %10s\n' library elfx_ms saferwall_ms time_x alloc_x
for lib in LLVM Rocsparse; do
  e=$(echo "$out" | awk -v n="BenchmarkParseElfx$lib" '$1 ~ "^"n"(-[0-9]+)?$" {print $3, $5}')
  s=$(echo "$out" | awk -v n="BenchmarkParseSaferwall$lib" '$1 ~ "^"n"(-[0-9]+)?$" {print $3, $5}')
  [ -n "$e" ] && [ -n "$s" ] || { echo "skip $lib (library missing)"; continue; }
  read -r et eb <<<"$e"; read -r st sb <<<"$s"
  if [ -n "${BENCH_ROWS:-}" ]; then
    awk -v l="$lib" -v et="$et" -v st="$st" 'BEGIN{printf "bench-saferwall\tparse %s (headers, dynamic symbols)\telfx\t%.4f\t\tsaferwall/elf\t%.4f\t\t%.2f\n", l, et/1e9, st/1e9, et/st}' >>"$BENCH_ROWS"
  fi
  awk -v l="$lib" -v et="$et" -v eb="$eb" -v st="$st" -v sb="$sb" \
    'BEGIN{printf "%-10s %12.2f %12.2f %10.1f %10.1f\n", l, et/1e6, st/1e6, st/et, sb/eb}'
done
