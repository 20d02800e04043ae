#!/usr/bin/env bash
# Compares `rocmdoctor gpus` on librocsparse.so.0 (1.3 GB, 111 bundles)
# with the roc-obj-ls-style way: extract .hip_fatbin with objcopy and run
# clang-offload-bundler --list on it. Target (issue 10): under a second with
# RSS independent of the library's size.
#   bash scripts/bench-gpus.sh [FILE]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
need /usr/bin/time objcopy clang-offload-bundler-15 go
f=${1:-/usr/lib/x86_64-linux-gnu/librocsparse.so.0}
[ -e "$f" ] || { echo "skip: $f missing"; exit 0; }
bin=$(mktemp -d)/rocmdoctor
build_rocmdoctor "$bin"
measure 3 "$bin" gpus --fail-on never "$f"; ours=$WALL ours_rss=$RSS
tmp=$(mktemp -d)
extract() { objcopy -O binary --only-section=.hip_fatbin "$1" "$2/fatbin" && clang-offload-bundler-15 --list --type=o --input="$2/fatbin"; }
export -f extract
measure 1 bash -c 'extract "$0" "$1"' "$f" "$tmp"; theirs=$WALL theirs_rss=$RSS
rm -rf "$tmp"
row "$(basename "$f")" "gpus" "$ours" "$ours_rss" "objcopy + clang-offload-bundler --list (first bundle)" "$theirs" "$theirs_rss"
echo "rocmdoctor gpus: ${ours}s, $((ours_rss/1024)) MB; objcopy + clang-offload-bundler --list (first bundle only): ${theirs}s, $((theirs_rss/1024)) MB; time ratio $(ratio "$ours" "$theirs")"
awk "BEGIN{exit !($ours < 1.0)}" || { echo "FAIL: gpus took ${ours}s"; exit 1; }
[ "$ours_rss" -lt $((64*1024)) ] || { echo "FAIL: gpus used $((ours_rss/1024)) MB"; exit 1; }
