#!/usr/bin/env bash
# Runs upstream patchelf 0.18.0's own test suite with rocmdoctor in place of
# the patchelf it builds: the suite comes from Debian's source package for
# trixie (only the upstream .orig.tar.gz is used), fetched at run time and
# never committed. First upstream's own build runs it, to learn which tests
# pass on this machine; then rocmdoctor, copied over src/patchelf as an ELF
# file named patchelf (several tests run --print-interpreter on it, and the
# name makes it patchelf). Every test upstream passes must pass; KNOWN
# lists any that may not yet (none now: a failure is a regression).
#
# Usage: scripts/patchelf-suite.sh ROCMDOCTOR_BINARY [WORKDIR]
set -euo pipefail
bin=$(readlink -f "$1")
work=${2:-$(mktemp -d)}
mkdir -p "$work"
KNOWN=""

# A deb-src entry for trixie from the machine's own Debian mirror.
uri=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
[ -n "$uri" ] || uri=$(awk '$1 == "deb" {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
[ -n "$uri" ] || { echo "patchelf-suite: no Debian mirror in the apt sources"; exit 1; }
printf 'Types: deb-src\nURIs: %s\nSuites: trixie\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' "$uri" \
  > /etc/apt/sources.list.d/rocmdoctor-trixie-src.sources
apt-get update -qq
cd "$work"
# The Debian part of the source package may be gone from the mirror: only
# the upstream tarball is needed.
apt-get source --download-only patchelf=0.18.0-1.4 >/dev/null 2>&1 || true
[ -f patchelf_0.18.0.orig.tar.gz ] || { echo "patchelf-suite: patchelf_0.18.0.orig.tar.gz was not downloaded"; exit 1; }
rm -rf patchelf-0.18.0
tar xzf patchelf_0.18.0.orig.tar.gz
cd patchelf-0.18.0
{ ./bootstrap.sh && ./configure && make -j"$(nproc)"; } > build.log 2>&1 || { tail -40 build.log; exit 1; }

results() { # each test's result, from automake's .trs files: NAME STATUS
  for trs in tests/*.trs; do
    printf '%s %s\n' "$(basename "$trs" .trs)" "$(awk '$1 == ":test-result:" {print $2; exit}' "$trs")"
  done | sort -u
}
make -j"$(nproc)" check > upstream.log 2>&1 || true
results > upstream.results
cp "$bin" src/patchelf
touch src/patchelf # (newer than its sources: make does not rebuild it)
rm -f tests/test-suite.log tests/*.sh.log tests/*.sh.trs
make -j"$(nproc)" -C tests check > rocmdoctor.log 2>&1 || true
results > rocmdoctor.results

passed=0 failed=0 known=0 unexpected=""
while read -r name status; do
  [ "$status" = PASS ] || continue
  ours=$(awk -v n="$name" '$1 == n {print $2}' rocmdoctor.results)
  if [ "$ours" = PASS ]; then
    passed=$((passed + 1))
  elif [[ " $KNOWN " == *" $name "* ]]; then
    known=$((known + 1))
  else
    failed=$((failed + 1))
    unexpected="$unexpected $name"
  fi
done < upstream.results
for name in $KNOWN; do
  if [ "$(awk -v n="$name" '$1 == n {print $2}' rocmdoctor.results)" = PASS ]; then
    echo "patchelf-suite: $name passes now: remove it from KNOWN in $0"
  fi
done
echo "patchelf-suite: of the $(grep -c ' PASS$' upstream.results) tests upstream passes here, rocmdoctor passes $passed; known gaps: $known ($KNOWN)"
echo "patchelf-suite: $passed passed, $failed failed"
if [ "$failed" -gt 0 ]; then
  for name in $unexpected; do echo "== $name"; tail -20 "tests/$name.log"; done
  exit 1
fi
