# Sourced by gen.sh: builds testdata/checktree, a prefix with one instance of
# every `rocmdoctor check` rule. Everything is linked with -nostdlib against
# in-tree stubs so that checking it needs nothing from the host.
ct=$out/checktree
rm -rf "$ct"; mkdir -p "$ct/lib" "$ct/lib32" "$ct/share"
so() { # out soname src [ld args...]
  local o=$1 s=$2 c=$3; shift 3
  printf '%s\n' "$c" > so.c
  gcc -O1 -fPIC -shared -nostdlib -o "$o" so.c ${s:+-Wl,-soname,$s} "$@"
}
L="-L$ct/lib"
# Stubs: a fake libc with GLIBC_2.34/GLIBCXX_3.4.30 nodes, two fake unwinders.
printf 'GLIBC_2.2.5 { global: old_fn; };\nGLIBC_2.34 { global: new_fn; } GLIBC_2.2.5;\nGLIBCXX_3.4.30 { global: cxx_fn; };\n' > fakec.map
so "$ct/lib/libfakec.so.1" libfakec.so.1 'void old_fn(void){} void new_fn(void){} void cxx_fn(void){}' -Wl,--version-script=fakec.map
so "$ct/lib/libunwind.so.1" libunwind.so.1 'void __unw_getcontext(void){} void unw_step(void){} void _Unwind_RaiseException(void){} void _Unwind_Resume(void){}'
printf 'GCC_3.0 { global: _Unwind_RaiseException; _Unwind_Resume; local: *; };\n' > gcc.map
so "$ct/lib/libgcc_s.so.1" libgcc_s.so.1 'void _Unwind_RaiseException(void){} void _Unwind_Resume(void){}' -Wl,--version-script=gcc.map
so "$ct/lib32/libunwind.so.1" libunwind.so.1 'void __unw_getcontext(void){} void _Unwind_Resume(void){}' -m32
# An LLVM-flavour file under the nongnu name.
so "$ct/lib/libunwind.so.8" libunwind.so.8 'void __unw_getcontext(void){} void unw_step(void){} void _Unwind_RaiseException(void){} void _Unwind_Resume(void){}'
uses='extern void _Unwind_Resume(void); void use(void){ _Unwind_Resume(); }'
# RD1001 undefined symbol; RD1004 missing library (stub removed after linking):
# gone@GONE_1 is expected from it by version and is listed in the RD1004,
# gone_plain is unversioned and stays an RD1001.
so "$ct/lib/libundef.so" libundef.so 'extern int nothere(void); int f(void){ return nothere(); }'
printf 'GONE_1 { global: gone; };\n' > gone.map
so gone.so libgone.so.1 'int gone(void){return 0;} int gone_plain(void){return 0;}' -Wl,--version-script=gone.map
so "$ct/lib/libmissing.so" libmissing.so 'extern int gone(void); extern int gone_plain(void); int f(void){ return gone() + gone_plain(); }' ./gone.so -Wl,--enable-new-dtags,-rpath,'$ORIGIN'
# RD1006: a loadable module (no SONAME, not lib*) calling into its host.
so "$ct/lib/HostPlugin.so" "" 'extern int host_fn(void); int f(void){ return host_fn(); }'
# RD1006 too: a Python extension module with a SONAME (as Rust-built ones have),
# told by its EXT_SUFFIX; the interpreter provides the Py* API.
so "$ct/lib/_native.abi3.so" libnative_rust.so 'extern void *PyLong_FromLong(long); void *f(void){ return PyLong_FromLong(1); }'
# RD1002/RD1003: linked against a libv with V1 and V2; the tree ships one with V1 only.
printf 'V1 { global: foo; local: *; };\nV2 { global: bar; } V1;\n' > v2.map
printf 'V1 { global: foo; bar; local: *; };\n' > v1.map
so v2.so libv.so.1 'int foo(void){return 1;} int bar(void){return 2;}' -Wl,--version-script=v2.map
so "$ct/lib/libv.so.1" libv.so.1 'int foo(void){return 1;} int bar(void){return 2;}' -Wl,--version-script=v1.map
so "$ct/lib/libvuser.so" libvuser.so 'extern int bar(void); int f(void){ return bar(); }' ./v2.so -Wl,--enable-new-dtags,-rpath,'$ORIGIN'
# RD1005: the seed-case archive.
cp "$out/librockCompiler.a" "$ct/lib/"
# RD1101 two unwinders (and RD1103: a 32-bit libunwind.so.1 is skipped first).
so "$ct/lib/libtwounwinders.so" libtwounwinders.so "$uses" -Wl,--no-as-needed $L -l:libunwind.so.1 -l:libgcc_s.so.1 \
  -Wl,--enable-new-dtags,-rpath,'$ORIGIN/../lib32:$ORIGIN'
# RD1102: NEEDED libunwind.so.8 that is the LLVM flavour.
so "$ct/lib/libflavour.so" libflavour.so "$uses" $L -l:libunwind.so.8 -Wl,--enable-new-dtags,-rpath,'$ORIGIN'
# RD1104: a library exporting its own copy of the unwinding ABI.
so "$ct/lib/libstaticunwind.so" libstaticunwind.so 'void _Unwind_RaiseException(void){} void _Unwind_Resume(void){}'
# No finding: a sanitizer-style interceptor (weak _Unwind_RaiseException aliasing
# __interceptor__Unwind_RaiseException, as libasan has) is not an unwinder.
so "$ct/lib/libinterceptor.so" libinterceptor.so 'void __interceptor__Unwind_RaiseException(void){}
void _Unwind_RaiseException(void) __attribute__((weak, alias("__interceptor__Unwind_RaiseException")));'
# RD1201–RD1205 run paths and SONAME.
so "$ct/lib/libbuilddir.so" libbuilddir.so 'int f(void){return 0;}' -Wl,--enable-new-dtags,-rpath,/build/rocm/lib
so "$ct/lib/libfilename.so" libfilename.so 'int f(void){return 0;}' -Wl,--enable-new-dtags,-rpath,libamdhip64.so.6
so "$ct/lib/librelative.so" librelative.so 'int f(void){return 0;}' -Wl,--enable-new-dtags,-rpath,../lib
so "$ct/lib/librpath.so" librpath.so 'int f(void){return 0;}' -Wl,--disable-new-dtags,-rpath,'$ORIGIN'
so "$ct/lib/libnosoname.so" "" 'int f(void){return 0;}'
# RD1210: a library whose DT_GNU_HASH entry became DT_DEBUG (its section
# header still lists .gnu.hash): ld.so searches none of its symbols.
so "$ct/lib/libnohash.so" libnohash.so 'int f(void){return 0;}' -Wl,--hash-style=gnu
dyn=$(readelf -lW "$ct/lib/libnohash.so" | awk '$1 == "DYNAMIC" { print $2 }')
idx=$(readelf -dW "$ct/lib/libnohash.so" | awk '/^ *0x/ { if ($2 == "(GNU_HASH)") { print n; exit } n++ }')
printf '\025\0\0\0\0\0\0\0' | dd of="$ct/lib/libnohash.so" bs=1 seek=$((dyn + 16 * idx)) conv=notrunc status=none
# RD1211 (and RD1004): linked by path against a library without a SONAME,
# so its NEEDED entry is the relative path sub/libnosoname.so.
mkdir -p sub && cp "$ct/lib/libnosoname.so" sub/
so "$ct/lib/libneedpath.so" libneedpath.so 'int f(void){return 0;}' -Wl,--no-as-needed sub/libnosoname.so
# RD1007 and RD1212: a program whose interpreter is the loader of a glibc
# in its build tree, which does not exist here (nor on a user's machine).
mkdir -p "$ct/bin"
printf 'void _start(void){ for (;;); }\n' > start.c
gcc -O1 -nostdlib -o "$ct/bin/buildinterp" start.c -Wl,--dynamic-linker=/build/glibc-2.36/lib/ld-linux-x86-64.so.2
# RD1213: a program installed without execute permission (CMake's
# install(FILES) where install(PROGRAMS) was meant).
gcc -O1 -nostdlib -o "$ct/bin/noexec" start.c
chmod 644 "$ct/bin/noexec"
# RD1011: a library that uses a name of another library of the tree without
# NEEDing it (underlinking, as libunwind-ptrace with libunwind-x86_64).
so "$ct/lib/libunderdef.so.1" libunderdef.so.1 'int under_helper(void){return 1;}'
so "$ct/lib/libunderuse.so.1" libunderuse.so.1 'extern int under_helper(void); int f(void){ return under_helper(); }'
# RD1012: libpccore NEEDs libpcshared, which only its program finds (through
# the program's RUNPATH), as systemd's libsystemd-core and libsystemd-shared.
mkdir -p "$ct/lib/pc"
so "$ct/lib/pc/libpcshared.so" libpcshared.so 'int pc_shared(void){return 3;}'
so "$ct/lib/pc/libpccore.so" libpccore.so 'extern int pc_shared(void); int pc_core(void){ return pc_shared(); }' -L"$ct/lib/pc" -l:libpcshared.so
printf 'extern int pc_core(void); void _start(void){ pc_core(); for (;;); }\n' > pcstart.c
gcc -O1 -nostdlib -o "$ct/bin/pcapp" pcstart.c -L"$ct/lib/pc" -Wl,--no-as-needed -l:libpccore.so -l:libpcshared.so -Wl,--enable-new-dtags,-rpath,'$ORIGIN/../lib/pc'
# RD1206/RD1207 executable stack and TEXTREL.
cp "$out/libexecstack.so" "$ct/lib/"
# RD1208/RD1209 newer GLIBC/GLIBCXX than the tree's baseline.
so "$ct/lib/libnewglibc.so" libnewglibc.so 'extern void new_fn(void); extern void cxx_fn(void); void f(void){ new_fn(); cxx_fn(); }' \
  $L -l:libfakec.so.1 -Wl,--enable-new-dtags,-rpath,'$ORIGIN'
# RD1401: device code for gfx90a:xnack-, gfx1030 and gfx906:sramecc+:xnack-
# (libgpu.so's offload bundle), where the tree's gpu_targets ask for gfx1100 too.
gcc -shared -nostdlib -o "$ct/lib/libgpukernels.so" gpu_host.o -Wl,-soname,libgpukernels.so
# RD1403: a .hip_fatbin with no offload bundle in it (device code that cannot
# be read; HIP cannot register it either).
printf '\t.section .hip_fatbin,"a",@progbits\n\t.p2align 12\n\t.fill 256,1,0xee\n\t.text\n\t.globl damaged_entry\ndamaged_entry:\n\tret\n\t.section .note.GNU-stack,"",@progbits\n' > damaged.s
gcc -c -o damaged.o damaged.s
gcc -shared -nostdlib -o "$ct/lib/libgpudamaged.so" damaged.o -Wl,-soname,libgpudamaged.so
# RD1402: a rocBLAS whose Tensile kernels are for gfx90a only.
so "$ct/lib/librocblas.so.4" librocblas.so.4 'int rocblas_create_handle(void){return 0;}'
mkdir -p "$ct/lib/rocblas/library"
cp k-gfx90a_xnackoff.co "$ct/lib/rocblas/library/Kernels.so-000-gfx90a.hsaco"
printf 'x' > "$ct/lib/rocblas/library/TensileLibrary_lazy_gfx90a.dat"
# RD1008/RD1010: a library that dlopen()s what the tree lacks: libdlwanted.so.1,
# declared required in its .note.dlopen, and libdlname.so.3, only a string in
# its .rodata; libv.so.1 (declared and named) is found through $ORIGIN; its own
# name is passed over. dlopen comes from a stub libfakedl.
so "$ct/lib/libfakedl.so.1" libfakedl.so.1 'void *dlopen(const char *f, int m){ (void)f; (void)m; return 0; }'
so "$ct/lib/libdlopener.so" libdlopener.so '#include "dlopen_note.h"
extern void *dlopen(const char *, int);
DLOPEN_NOTE(want, "[{\"feature\":\"wanted\",\"description\":\"the wanted backend\",\"priority\":\"required\",\"soname\":[\"libdlwanted.so.1\"]}]");
DLOPEN_NOTE(have, "[{\"feature\":\"v\",\"soname\":[\"libv.so.2\",\"libv.so.1\"]}]");
static const char *const names[] = { "libdlname.so.3", "libv.so.1", "libdlopener.so" };
void *f(int i){ return dlopen(names[i], 2); }' \
  -I"$src" $L -l:libfakedl.so.1 -Wl,--enable-new-dtags,-rpath,'$ORIGIN'
# RD1009: a .note.dlopen whose priority is none of the specification's.
so "$ct/lib/libdlbadnote.so" libdlbadnote.so '#include "dlopen_note.h"
DLOPEN_NOTE(bad, "[{\"feature\":\"x\",\"priority\":\"mandatory\",\"soname\":[\"libx.so.1\"]}]");
int f(void){ return 0; }' -I"$src"
cat > "$ct/.rocmdoctor.toml" <<'TOML'
# Settings for the check fixture tree (see rocmdoctor check --help).
glibc = "2.28"
glibcxx = "3.4.25"
expect_runpath = true
dlopen_strings = true
gpu_targets = ["gfx90a", "gfx1100"]
TOML
# composable_kernel: the miniature CK install (testdata/ck) with one instance
# of every CK rule, and a consumer calling an instance function nobody has.
ck=$ct/ck
cp -r "$out/ck" "$ck"
cmdir=$ck/lib/cmake/composable_kernel
rm "$cmdir"/composable_kerneldevice_contraction_operationsTargets*.cmake                      # RD1301
sed -i 's#libdevice_gemm_operations.a#libdevice_gemm_operations_gone.a#' "$cmdir"/composable_kerneldevice_gemm_operationsTargets-release.cmake  # RD1302
printf '!<arch>\n' > "$ck/lib/libdevice_reduction_operations.a"                              # RD1303
sed -i 's#^add_library(composable_kernel::device_other_operations STATIC IMPORTED)#&\nset_target_properties(composable_kernel::device_other_operations PROPERTIES INTERFACE_LINK_LIBRARIES "composable_kernel::device_jit_library")#' \
  "$cmdir"/composable_kerneldevice_other_operationsTargets.cmake  # RD1304
g++ -O1 -fPIC -shared -nostdlib -o "$ck/lib/libconsumer.so" "$src/ck/consumer.cpp" -Wl,-soname,libconsumer.so  # RD1305
rm -f "$ck/consumer.o"
# RD1501: a vendor wheel, its provider pointed at another ROCm with
# patchelf after unpacking and the tree zipped again, RECORD left as it was.
so provider-built.so libonnxruntime_providers_shared.so 'int provider_init(void){return 0;}' -Wl,--enable-new-dtags,-rpath,/opt/rocm/lib
so provider-patched.so libonnxruntime_providers_shared.so 'int provider_init(void){return 0;}' -Wl,--enable-new-dtags,-rpath,'$ORIGIN/../../rocm/lib'
mkdir -p "$ct/share/wheels"
python3 - "$ct/share/wheels/onnxruntime_rocm-1.18.0-cp311-cp311-linux_x86_64.whl" <<'PY'
import base64, hashlib, sys, zipfile
def line(name, data):
    h = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()
    return f'{name},sha256={h},{len(data)}\n'
lib = 'onnxruntime/capi/libonnxruntime_providers_shared.so'
built, patched = open('provider-built.so', 'rb').read(), open('provider-patched.so', 'rb').read()
files = [('onnxruntime/__init__.py', b'from onnxruntime.capi import *\n'), (lib, built),
         ('onnxruntime_rocm-1.18.0.dist-info/METADATA', b'Metadata-Version: 2.1\nName: onnxruntime-rocm\nVersion: 1.18.0\n')]
record = ''.join(line(n, d) for n, d in files) + 'onnxruntime_rocm-1.18.0.dist-info/RECORD,,\n'
with zipfile.ZipFile(sys.argv[1], 'w') as z:
    for n, d in files + [('onnxruntime_rocm-1.18.0.dist-info/RECORD', record.encode())]:
        zi = zipfile.ZipInfo(n, date_time=(2024, 5, 20, 0, 0, 0))
        zi.compress_type = zipfile.ZIP_DEFLATED
        z.writestr(zi, patched if n == lib else d)
PY
# RD1306: a composable_kernel config that recurses past cmake's limit.
mkdir -p "$ct/share/hostile/lib/cmake/composable_kernel"
printf '# A config that recurses forever: cmake stops at its recursion limit\n# ("Maximum recursion depth of 1000 exceeded"), and so does rocmdoctor (RD1306).\nfunction(ck_check_component c)\n  ck_check_component(${c})\nendfunction()\nck_check_component(utility)\n' \
  > "$ct/share/hostile/lib/cmake/composable_kernel/composable_kernelConfig.cmake"
# RD1502: a member whose '..' climbs out of site-packages (pip refuses the
# wheel: "trying to install outside the target directory").
python3 - "$ct/share/wheels/escape-1.0-py3-none-any.whl" <<'PY'
import base64, hashlib, sys, zipfile
def line(name, data):
    h = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()
    return f'{name},sha256={h},{len(data)}\n'
files = [('escape/__init__.py', b''), ('escape/../../sitecustomize.py', b'print("hi")\n'),
         ('escape-1.0.dist-info/METADATA', b'Metadata-Version: 2.1\nName: escape\nVersion: 1.0\n'),
         ('escape-1.0.dist-info/WHEEL', b'Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n')]
record = ''.join(line(n, d) for n, d in files) + 'escape-1.0.dist-info/RECORD,,\n'
with zipfile.ZipFile(sys.argv[1], 'w') as z:
    for n, d in files + [('escape-1.0.dist-info/RECORD', record.encode())]:
        zi = zipfile.ZipInfo(n, date_time=(2024, 5, 20, 0, 0, 0))
        zi.compress_type = zipfile.ZIP_DEFLATED
        z.writestr(zi, d)
PY
