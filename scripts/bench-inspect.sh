#!/usr/bin/env bash
# Compares `rocmdoctor inspect` with `readelf -d` + `nm -D` on the same
# files and prints wall-time and peak-RSS ratios. Target (issue 2):
# librocsparse.so.0 (1.3 GB) in well under a second with < 32 MB RSS.
#   bash scripts/bench-inspect.sh [FILE...]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
need /usr/bin/time readelf nm go
bin=$(mktemp -d)/rocmdoctor
build_rocmdoctor "$bin"
files=("$@")
[ ${#files[@]} -gt 0 ] || files=(/usr/lib/x86_64-linux-gnu/librocsparse.so.0 /usr/lib/x86_64-linux-gnu/libLLVM-15.so.1 /usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1)
status=0
printf '%-28s %10s %8s %12s %8s %8s %8s\n' file inspect_s rss_MB readelf+nm_s rss_MB time_x rss_x
for f in "${files[@]}"; do
  [ -e "$f" ] || { echo "skip $f (missing)"; continue; }
  measure 3 "$bin" inspect "$f"; ours=$WALL ours_rss=$RSS
  measure 3 sh -c 'readelf -d "$1" && nm -D "$1"' sh "$f"; theirs=$WALL theirs_rss=$RSS
  printf '%-28s %10s %8d %12s %8d %8s %8s\n' "$(basename "$f")" "$ours" $((ours_rss/1024)) "$theirs" $((theirs_rss/1024)) \
    "$(ratio "$ours" "$theirs")" "$(ratio "$ours_rss" "$theirs_rss")"
  row "$(basename "$f")" "inspect" "$ours" "$ours_rss" "readelf -d + nm -D" "$theirs" "$theirs_rss"
  if [[ $(basename "$f") == librocsparse* ]]; then
    awk "BEGIN{exit !($ours < 1.0)}" || { echo "FAIL: inspect took ${ours}s on $f (target < 1 s)"; status=1; }
    [ "$ours_rss" -lt $((32*1024)) ] || { echo "FAIL: inspect used $((ours_rss/1024)) MB on $f (target < 32 MB)"; status=1; }
  fi
done
exit $status
