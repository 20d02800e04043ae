#!/usr/bin/env bash
# Regenerates the checked-in fixtures from testdata/src. Needs gcc (with
# -m32 multilib), binutils, clang-15, ld.lld-15, llvm-ar-15 and
# clang-offload-bundler-15 (Debian: gcc gcc-multilib binutils clang-15 lld-15
# llvm-15 clang-tools-15). Run from anywhere: bash testdata/gen.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$here/src
out=$here
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
export SOURCE_DATE_EPOCH=0 ZERO_AR_DATE=1
CFLAGS="-O1 -g0 -fno-asynchronous-unwind-tables -ffile-prefix-map=$src=."

# Shared library with SONAME, RUNPATH, version definitions (default and
# hidden), a weak undefined symbol and a NEEDED on libm.
gcc $CFLAGS -fPIC -shared -o "$out/libfoo.so.1" "$src/foo.c" -Wl,-soname,libfoo.so.1 \
  -Wl,--version-script="$src/foo.map" -Wl,--enable-new-dtags,-rpath,'$ORIGIN/../lib' -lm
# PIE executable with DT_RPATH (old tags) pointing next to itself.
gcc $CFLAGS -o "$out/hello" "$src/hello.c" -L"$out" -l:libfoo.so.1 -Wl,--disable-new-dtags,-rpath,'$ORIGIN'
# Relocatable objects and archives: GNU (with long names), thin, BSD.
gcc $CFLAGS -c -o archive_a.o "$src/archive_a.c"
gcc $CFLAGS -c -o archive_member_with_a_long_name.o "$src/archive_member_with_a_long_name.c"
cp archive_a.o "$out/archive_a.o"
rm -f "$out/libgnu.a" "$out/libthin.a" "$out/libbsd.a"
ar rcsD "$out/libgnu.a" archive_a.o archive_member_with_a_long_name.o
mkdir -p "$out/thin"
cp archive_a.o archive_member_with_a_long_name.o "$out/thin/"
(cd "$out" && ar rcsDT libthin.a thin/archive_a.o thin/archive_member_with_a_long_name.o)
llvm-ar-15 --format=bsd rcsD "$out/libbsd.a" archive_a.o archive_member_with_a_long_name.o
# 32-bit x86 object and shared library.
gcc -m32 $CFLAGS -c -o "$out/i386.o" "$src/archive_a.c"
gcc -m32 $CFLAGS -fPIC -shared -o "$out/libi386.so" "$src/foo.c" -Wl,-soname,libi386.so \
  -Wl,--version-script="$src/foo.map" -lm
# Only a SysV .hash table (no .gnu.hash), for the hashed-lookup fallback.
gcc $CFLAGS -fPIC -shared -o "$out/libsysv.so" "$src/foo.c" -Wl,-soname,libsysv.so \
  -Wl,--version-script="$src/foo.map" -Wl,--hash-style=sysv -lm
# Big-endian powerpc64 object and shared library.
clang-15 --target=powerpc64-linux-gnu -O1 -fPIC -c -o "$out/be.o" "$src/be.c"
ld.lld-15 -shared -soname libbe.so -o "$out/libbe.so" "$out/be.o"
# Executable stack + TEXTREL.
gcc -c -o execstack.o "$src/execstack.s"
ld -shared -z execstack -z notext -soname libexecstack.so -o "$out/libexecstack.so" execstack.o
# AMDGPU: a relocatable object for gfx803 (code object v4) and code objects
# for several targets and feature settings.
clang-15 -x assembler -target amdgcn-amdhsa -mcpu=gfx803 -c -o "$out/k-gfx803.o" "$src/k.s"
for t in gfx90a:xnack- gfx1030 gfx906:sramecc+:xnack-; do
  name=${t//:/_}; name=${name//+/on}; name=${name//-/off}
  ks=$src/k.s
  if [[ $t == gfx90a* ]]; then # gfx90a requires .amdhsa_accum_offset
    sed 's/\.amdhsa_next_free_sgpr 1/&\n\t\t.amdhsa_accum_offset 4/' "$src/k.s" > k90a.s; ks=k90a.s
  fi
  clang-15 -x assembler -target amdgcn-amdhsa -mcpu="$t" -c -o "k-$name.o" "$ks"
  ld.lld-15 -shared -o "k-$name.co" "k-$name.o"
done
cp k-gfx90a_xnackoff.co "$out/k-gfx90a_xnackoff.co"
# An offload bundle of three code objects embedded in a host library.
clang-offload-bundler-15 -type=o \
  -targets=host-x86_64-unknown-linux,hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-,hipv4-amdgcn-amd-amdhsa--gfx1030,hipv4-amdgcn-amd-amdhsa--gfx906:sramecc+:xnack- \
  -input=/dev/null -input=k-gfx90a_xnackoff.co -input=k-gfx1030.co -input=k-gfx906_srameccon_xnackoff.co \
  -output=bundle.hipfb
cp bundle.hipfb "$out/bundle.hipfb"
gcc -c -o gpu_host.o "$src/gpu_host.s"
gcc -shared -o "$out/libgpu.so" gpu_host.o -Wl,-soname,libgpu.so
# A host library with a raw embedded code object (like libhsa-runtime64).
{
  echo '.section .rodata'; echo '.p2align 8'; echo '.globl blob'; echo 'blob:'
  echo ".incbin \"$tmp/k-gfx1030.co\""; echo '.section .note.GNU-stack,"",@progbits'
} > raw.s
gcc -c -o raw.o raw.s
gcc -shared -o "$out/libraw.so" raw.o -Wl,-soname,libraw.so
# Code object v2 as LLVM before 7 and the HSA runtime's finalizer wrote it:
# e_flags cleared (EF_AMDGPU_MACH_NONE), the ISA only in an AMD note; on its
# own and embedded in a host library as libhsa-runtime64 embeds its v1 blit
# kernels.
clang-15 -x assembler -target amdgcn-amdhsa -mcpu=gfx803 -mcode-object-version=2 -c -o k-v2.o "$src/k-v2.s"
ld.lld-15 -shared -o "$out/k-gfx803-v2.co" k-v2.o
printf '\0\0\0\0' | dd of="$out/k-gfx803-v2.co" bs=1 seek=48 conv=notrunc status=none
sed "s|$tmp/k-gfx1030.co|$out/k-gfx803-v2.co|" raw.s > raw-v2.s
gcc -c -o raw-v2.o raw-v2.s
gcc -shared -o "$out/libraw-v2.so" raw-v2.o -Wl,-soname,libraw-v2.so
# The LLVMInitialize* seed case: librockCompiler.a (a member calling the
# AMDGPU and X86 initialisers plus members defining only the AMDGPU ones),
# libMIOpen.so linked from it with --whole-archive, and a fake LLVM tree
# whose archives define the initialisers the way llvm-15-dev's do.
init() { gcc $CFLAGS -fPIC -c -DNAME="LLVMInitialize$1" -o "$2" "$src/llvm_init.c"; }
gcc $CFLAGS -fPIC -c -o rock.o "$src/rock.c"
for c in TargetInfo Target TargetMC; do init AMDGPU$c amdgpu_$c.o; done
rm -f "$out/librockCompiler.a"
ar rcsD "$out/librockCompiler.a" rock.o amdgpu_TargetInfo.o amdgpu_Target.o amdgpu_TargetMC.o
gcc -shared -o "$out/libMIOpen.so" -Wl,-soname,libMIOpen.so.1 -Wl,--whole-archive "$out/librockCompiler.a" -Wl,--no-whole-archive
rm -rf "$out/llvm"; mkdir -p "$out/llvm/lib"
mkllvm() { # archive, then Target:Component pairs
  local a=$1; shift; local objs=()
  for tc in "$@"; do init "${tc/:/}" "${tc/:/_}.o"; objs+=("${tc/:/_}.o"); done
  ar rcsD "$out/llvm/lib/$a" "${objs[@]}"
}
mkllvm libLLVMX86Info.a X86:TargetInfo
mkllvm libLLVMX86CodeGen.a X86:Target X86:AsmPrinter
mkllvm libLLVMX86Desc.a X86:TargetMC
mkllvm libLLVMX86AsmParser.a X86:AsmParser
mkllvm libLLVMX86Disassembler.a X86:Disassembler
mkllvm libLLVMAMDGPUInfo.a AMDGPU:TargetInfo
mkllvm libLLVMAMDGPUCodeGen.a AMDGPU:Target AMDGPU:AsmPrinter
mkllvm libLLVMAMDGPUDesc.a AMDGPU:TargetMC
# A miniature composable_kernel install, generated by cmake's install(EXPORT)
# the way CK installs itself, and a consumer object.
rm -rf "$out/ck" ckbuild
cmake -S "$src/ck" -B ckbuild -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$out/ck" -DCK_BUNDLE_DIR="$out" \
  -DCMAKE_CXX_FLAGS="-g0 -ffile-prefix-map=$src=." >/dev/null
cmake --build ckbuild >/dev/null
cmake --install ckbuild >/dev/null
g++ -O1 -g0 -c -o "$out/ck/consumer.o" "$src/ck/consumer.cpp"
. "$src/checktree.sh"
strip --strip-unneeded "$out"/lib*.so* "$out/hello" 2>/dev/null || true
ls -l "$out" | grep -v '^d'
