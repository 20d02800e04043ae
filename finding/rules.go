package finding

import "strings"

// RuleInfo documents one finding rule of `rocmdoctor check`.
type RuleInfo struct {
	ID          string   `json:"id"`   // "RD1001"
	Name        string   `json:"name"` // "undefined-symbol"
	Severity    Severity `json:"default_severity"`
	Description string   `json:"description"`
	Fix         string   `json:"fix"`
}

// Rules is every rule, in ID order. docs/rules.md is generated from it.
var Rules = []RuleInfo{
	{"RD1001", RuleUndefinedSymbol, SeverityError, "An undefined dynamic symbol that no object of the dependency closure defines (what `ldd -r` calls \"undefined symbol\"); the library fails to load or the call fails at run time.", "Link the library that defines it (`rocmdoctor symbols --index DIR` finds it) or add it to NEEDED."},
	{"RD1002", RuleVersionMismatch, SeverityError, "A versioned reference (`foo@V`) to a symbol that the closure defines only with other versions.", "Run against the library version the file was linked with, or rebuild the file."},
	{"RD1003", RuleMissingVersion, SeverityError, "A library lacks a version node the file requires (``version `GLIBCXX_3.4.32' not found``).", "Provide a newer build of the library, or rebuild the file against the older one."},
	{"RD1004", RuleMissingLibrary, SeverityError, "A NEEDED library cannot be found by the loader's rules (the rejected candidates and every path tried are listed), or the search reached a file ld.so fails on instead of passing it over (a header of the right class and machine but otherwise wrong, a linker script: \"ELF file OS ABI invalid\", \"invalid ELF header\"), where ld.so stops. The undefined symbols the file expects from it by their versions (`name@VERSION` with that library as `vn_file`), and its unversioned names that nothing loaded defines (except LLVM initialisers and Python C API names, which have causes of their own), are listed in this finding (`unresolved_symbols` in JSON) instead of one RD1001 each: ld.so stops at the missing library before it looks any of them up.", "Install it, or add its directory to the RUNPATH or with --lib-dir."},
	{"RD1005", RuleLLVMTargets, SeverityError, "LLVMInitialize<Target>* functions are referenced but not linked: a fat library's dependency list was generated for a different LLVM_TARGETS_TO_BUILD.", "Add the named LLVM<Target>* libraries to the link, or build LLVM for the targets actually used."},
	{"RD1006", RuleModuleUndefined, SeverityNote, "An undefined dynamic symbol of a loadable module — a shared object without DT_SONAME whose name does not start with `lib` (a plugin such as LLVMPolly.so, a Python or Perl extension), or a Python extension module named by its EXT_SUFFIX (`*.abi3.so`, `*.cpython-*.so`, `*.pypy*.so`) whatever its SONAME (Rust-built ones have one) — that its own dependency closure does not define. In a scan (check) also: a shared object without SONAME that nothing in the scan NEEDs (only dlopen() loads it: packagekit's backends, postgresql's libpqwalreceiver), one whose every missing name a program of the scan exports (gcc's libcc1plugin and cc1), and the interfaces a program supplies by design (glibc's libthread_db and the debugger's proc_service); the finding's `evidence` says which. Such modules take these symbols from the program that dlopens them (opt and clang for LLVMPolly.so, the interpreter for an extension), so `ldd -r` lists them but loading works; it is a problem only if that program does not define them.", "Check the module in the program that loads it (`rocmdoctor symbols --host PROGRAM MODULE`); what stays undefined there needs the library that defines it linked, as for RD1001. To gate on these, raise the rule's severity in the config (`[severity] RD1006 = \"error\"`)."},
	{"RD1007", RuleMissingInterpreter, SeverityError, "A program's interpreter (PT_INTERP, the dynamic loader the kernel starts it with) is missing, or is not one the kernel runs it with: a directory, not executable, not ELF, another machine, not a program or shared object, or a relative path (opened against the working directory of whoever runs it). The program does not start at all, and the shell's \"cannot execute: required file not found\" names the program, not the loader.", "Point PT_INTERP at the system's loader (`rocmdoctor patchelf --set-interpreter /lib64/ld-linux-x86-64.so.2 FILE` on x86-64; on NixOS, which has none there, the loader `$NIX_CC/nix-support/dynamic-linker` names), or install the loader it names."},
	{"RD1008", RuleDlopenMissing, SeverityWarning, "A library the file declares in its ELF dlopen metadata (a `.note.dlopen` note, owner FDO, type 0x407c0c0a: systemd's specification, emitted with `SD_ELF_NOTE_DLOPEN` by systemd 256+, kmod 34+ and others, read by rpm's and debhelper's dependency generators) that dlopen() called from the file would not find: none of the note's alternative sonames resolves along the file's search path (DT_RUNPATH, or DT_RPATH; the cache; the trusted directories). ldd and every NEEDED-based check pass the file; the feature fails when it is first used. The finding's severity is the note's priority: `required` an error, `recommended` (the default) a warning, `suggested` a note.", "Install the library, or add its directory to the file's RUNPATH (`rocmdoctor patchelf --add-rpath DIR FILE`); for an optional feature the package leaves out, ignore the rule for that soname in the config."},
	{"RD1009", RuleDlopenNoteInvalid, SeverityError, "A `.note.dlopen` note (owner FDO, type 0x407c0c0a) that does not follow the ELF dlopen metadata specification: its text is not NUL-terminated UTF-8 JSON, not an array of objects, an object has no `soname` array of names, or a `priority` other than required, recommended, suggested. package-notes' dlopen-notes.py, which rpm and debhelper run to turn the notes into package dependencies, fails on the file (or drops the note), so the dependency it declares is lost.", "Fix the note where the source declares it (`SD_ELF_NOTE_DLOPEN(feature, description, priority, soname...)`), and rebuild."},
	{"RD1010", RuleDlopenNameMissing, SeverityWarning, "Only with `--dlopen-strings` (or `dlopen_strings = true` in the config): a file that calls dlopen() and names a library in its read-only data (`libamd_comgr.so.2` in libamdhip64.so.5, which loads the code-object manager that way and has no NEEDED entry for it) that dlopen() called from the file would not find. Names that share a stem (`libcrypto.so.3`, `libcrypto.so.1.1`, `libcrypto.so`) count as alternatives: one found is enough; names of the file's own stem, and names its `.note.dlopen` declares (RD1008), are passed over; an absolute path to a library (a Nix build patches `dlopen(\"libamd_comgr.so.2\")` into the store path) is looked for as it is, as dlopen() opens it. A string is evidence, not proof: the library may be optional or the string a message.", "If the file does load it (its source calls dlopen(\"NAME\")), install the library or add its directory to the RUNPATH (`rocmdoctor patchelf --add-rpath DIR FILE`, or `--add-needed NAME` to make it a load-time dependency); if not, ignore the rule for that soname in the config."},
	{"RD1011", RuleUnderlinked, SeverityWarning, "Undefined dynamic symbols that libraries of the scan define, although the file does not NEED them (underlinking: `libunwind-ptrace.so.0` uses `_Ux86_64_*` from `libunwind-x86_64.so.8`). Loaded on its own the file fails as for RD1001; in the programs it is made for, which link those libraries too, it loads. Reported instead of RD1001 only when every name the file misses is accounted for; the finding's `evidence` names the libraries.", "Link the file with the named libraries, or add them: `rocmdoctor patchelf --add-needed SONAME FILE`."},
	{"RD1012", RuleProgramContext, SeverityNote, "A NEEDED library the loader would not find for the file on its own, but which a program of the scan loads it with: the program finds the library through its own search path, and the loader reuses it for the file (systemd's `libsystemd-core` and `libsystemd-shared`, found through `/usr/lib/systemd/systemd`'s RUNPATH). The finding's `evidence` names the program.", "None where the file is used by that program; to load it on its own, add the library's directory to its RUNPATH."},
	{"RD1101", RuleMultipleUnwinders, SeverityError, "Two providers of `_Unwind_RaiseException`/`_Unwind_Resume` (LLVM libunwind, nongnu libunwind, libgcc_s, static copies) in one process.", "Link every component against one unwinder."},
	{"RD1102", RuleUnwinderFlavour, SeverityError, "NEEDED libunwind.so.1 resolves to the nongnu libunwind, or libunwind.so.8 to LLVM's.", "Fix the search path so the right flavour comes first."},
	{"RD1103", RuleUnwinderMachine, SeverityWarning, "An unwinder candidate of another machine was skipped while resolving libunwind/libgcc_s.", "Remove the foreign-architecture directory from the search path."},
	{"RD1104", RuleExportsUnwinder, SeverityWarning, "A library exports `_Unwind_*` from a statically linked copy of an unwinder.", "Link the unwinder dynamically or hide it (-Wl,--exclude-libs,ALL)."},
	{"RD1301", RuleCKComponentMissing, SeverityError, "A composable_kernel component's Targets file is missing (or the component is not advertised): find_package(composable_kernel COMPONENTS …) fails with \"include could not find requested file\". CK skips components without kernel instances for its GPU targets. In a prefix scan (check) this is a warning, since only the advertised list is known; `rocmdoctor ck --for miopen-6.2` makes it an error.", "Rebuild composable_kernel with GPU targets that have instances for the component (a gfx9 XDL target for conv/contraction, DL_KERNELS=ON, INSTANCES_ONLY=OFF)."},
	{"RD1302", RuleCKBadLocation, SeverityError, "An IMPORTED_LOCATION of a composable_kernel target does not exist, is not an archive or library, or holds non-host objects.", "Reinstall composable_kernel so the Targets files and libraries match."},
	{"RD1303", RuleCKNoInstances, SeverityError, "A composable_kernel device library defines no `add_device_…_instances` functions: it was built without kernel instances.", "Rebuild with GPU targets that have instances for it."},
	{"RD1304", RuleCKMissingTarget, SeverityError, "A composable_kernel target links a `composable_kernel::` target that no installed Targets file defines; cmake reports it as referenced but missing.", "Install (and request) the component that exports it."},
	{"RD1305", RuleCKMissingInstance, SeverityError, "A consumer (libMIOpen.so, an object) calls an `add_device_…_instances` function that no installed composable_kernel archive defines.", "Rebuild composable_kernel with instances for the consumer's data types and GPU targets."},
	{"RD1306", RuleCKConfigError, SeverityError, "A composable_kernel CMake config that cannot be evaluated, reported at its FILE:LINE: a function or macro that recurses past cmake's limit (\"Maximum recursion depth of 1000 exceeded\": find_package fails the same way) is an error; past one of rocmdoctor's own bounds for untrusted input (a value over 16 MiB, more than a million commands) or a construct it does not parse, a warning. The rest of the scan goes on; the config's components are not checked.", "Reinstall composable_kernel: its generated config and Targets files are a few KB of straight-line CMake."},
	{"RD1201", RuleBuildDirRunpath, SeverityError, "An RPATH/RUNPATH entry points into a build or temporary directory (`/build/`, `/tmp/`, `/var/tmp/`, `/nix/var/`, the scan's working directory).", "Set the install RPATH (CMAKE_INSTALL_RPATH, `$ORIGIN`-relative) or strip the build one (`rocmdoctor patchelf --shrink-rpath`)."},
	{"RD1202", RuleFileNameRunpath, SeverityError, "An RPATH/RUNPATH entry is a library file name rather than a directory (what patchelf 0.14.3's combined `--set-rpath X --replace-needed A B` wrote).", "Set the RUNPATH again with the intended directories."},
	{"RD1203", RuleRelativeRunpath, SeverityWarning, "A relative RPATH/RUNPATH entry that does not start with `$ORIGIN` resolves against the working directory of whoever runs the program.", "Use `$ORIGIN/...` or an absolute directory."},
	{"RD1204", RuleRPathNotRunpath, SeverityNote, "DT_RPATH where DT_RUNPATH is expected (enabled with expect_runpath): DT_RPATH overrides LD_LIBRARY_PATH and is inherited by dependencies.", "Link with --enable-new-dtags, or `rocmdoctor patchelf --set-rpath`."},
	{"RD1205", RuleMissingSoname, SeverityWarning, "A shared library (lib*.so*) without DT_SONAME: consumers record its path instead of a name.", "Link with -Wl,-soname,libfoo.so.N (`rocmdoctor patchelf --set-soname`)."},
	{"RD1206", RuleExecStack, SeverityError, "PT_GNU_STACK is executable (or missing): every process that loads the file gets an executable stack; glibc 2.41 refuses to dlopen such libraries.", "Build with -Wl,-z,noexecstack and mark assembly with .note.GNU-stack."},
	{"RD1207", RuleTextRel, SeverityWarning, "The file has text relocations (DT_TEXTREL): code pages are written at load time; hardened systems refuse them.", "Compile with -fPIC."},
	{"RD1208", RuleGlibcTooNew, SeverityError, "The file requires a GLIBC_ version newer than the configured baseline (--glibc).", "Build against the baseline's glibc (an older sysroot or container)."},
	{"RD1209", RuleGlibcxxTooNew, SeverityError, "The file requires a GLIBCXX_ version newer than the configured baseline (--glibcxx).", "Build with the baseline's libstdc++ or link libstdc++ statically."},
	{"RD1210", RuleUnsearched, SeverityError, "A shared library defines symbols, but its dynamic section names no symbol hash table (DT_GNU_HASH or DT_HASH), or one without buckets: ld.so looks up none of its symbols (glibc's do_lookup_x skips it), so every reference to what it defines fails at load time with \"symbol lookup error: undefined symbol\".", "Relink the library: linkers always write a hash table, so a tool removed or emptied it."},
	{"RD1211", RuleNeededPath, SeverityWarning, "A NEEDED entry is a path (it has a slash): the library was linked by path and had no SONAME. ld.so opens such an entry as it is, a relative one against the working directory of the process, without searching RUNPATH, LD_LIBRARY_PATH or the cache, so it loads only where that path happens to exist (the build tree). Entries starting with `$ORIGIN` are relocatable and not reported.", "Give the library a SONAME and relink (-Wl,-soname,libfoo.so.N), or `rocmdoctor patchelf --replace-needed PATH libfoo.so.N` and install it on the search path."},
	{"RD1212", RuleBuildDirInterp, SeverityError, "A program's interpreter (PT_INTERP) lies in a build or temporary directory (`/build/`, `/tmp/`, `/var/tmp/`, `/nix/var/`, the scan's working directory): it starts where it was built, and nowhere else (RD1007 there).", "Point it at the system's loader (`rocmdoctor patchelf --set-interpreter /lib64/ld-linux-x86-64.so.2 FILE` on x86-64), or at the loader of the installed C library."},
	{"RD1213", RuleProgramNotExec, SeverityError, "An ELF program (an ET_EXEC file with a program interpreter, or a static one for this machine — not firmware for a device's processor —, or a position-independent executable: ET_DYN marked DF_1_PIE, without a SONAME; not a library with a program interpreter, such as libc.so.6 or pam_cap.so, nor a separate debug file) that cannot be run: no execute permission for anyone, or, in a wheel, a zip entry whose Unix mode does not make it an executable regular file, which pip reads to set the execute bits when it installs it (Python's zipfile.writestr leaves that mode out). Running it fails with \"Permission denied\"; a library that starts it (PyTorch's torch_shm_manager) fails at run time. CMake's install(FILES) instead of install(PROGRAMS), a copy without modes, or a wheel zipped again by hand leave programs so.", "Install programs with mode 0755 (install(PROGRAMS …) in CMake, install -m 755, chmod +x); in a wheel, zip them with their mode (Python's zipfile.write from the file, `python -m wheel pack`), so that the entry carries it."},
	{"RD1401", RuleGPUTargetMissing, SeverityError, "Enabled with GPU targets (--gpu-targets, gpu_targets): an ELF file or archive carries AMDGPU device code, but none that runs on a required target by the target-ID rules (a code object without an xnack/sramecc setting runs in both modes, generic targets cover their family); HIP fails with hipErrorNoBinaryForGpu. Also raised once when the scan holds no device code at all (a build whose GPU_TARGETS came out empty). `rocmdoctor gpus` shows the whole matrix.", "Rebuild with the target in GPU_TARGETS/AMDGPU_TARGETS; for composable_kernel, INSTANCES_ONLY=ON ignores GPU_TARGETS."},
	{"RD1402", RuleTensileMissing, SeverityError, "Enabled with GPU targets: a rocBLAS/hipBLASLt/hipSPARSELt install has no Tensile kernel directory (lib/rocblas/library, since ROCm 7 with a subdirectory per architecture: built without Tensile) or none of its kernel files for a required target, so GEMM calls find no kernels (rocBLAS returns rocblas_status_excluded_from_build, 14); a kernel file that does not parse as a code object for the architecture in its name is a warning.", "Rebuild with BUILD_WITH_TENSILE=ON and the target in its GPU targets (Tensile_ARCHITECTURE), or reinstall the library/ directory."},
	{"RD1403", RuleDeviceCodeUnread, SeverityWarning, "Enabled with GPU targets: an ELF file or archive carries device code that cannot be read (a damaged offload bundle, a .hip_fatbin without one, a compressed bundle rocmdoctor cannot decode), so which GPUs it runs on cannot be told; a bundle HIP cannot parse fails at run time. RD1401 is not raised for a required target such a file might hold. `rocmdoctor gpus` shows it as `?` with the reason.", "If the file is damaged (a truncated copy, a section rewritten by a tool that does not know offload bundles), rebuild or reinstall it; `rocmdoctor gpus FILE` lists what could be read, `clang-offload-bundler --list` a bundle rocmdoctor cannot decode."},
	{"RD1501", RuleWheelRecord, SeverityError, "A wheel's RECORD does not describe its files: a member whose size or hash differs from its RECORD line (a library edited with patchelf after unpacking, and the tree zipped again), a member RECORD does not list or lists without a hash (or with md5/sha1, which wheels may not use), no RECORD or no .dist-info directory at all, or several. The binary distribution format (PEP 427) has installers verify every hash on extraction: `python -m installer` (Arch's and Gentoo's Python packaging) and `wheel unpack` refuse such a wheel, pip does not check. A file RECORD lists that the wheel does not have, and a hash rocmdoctor cannot compute, are warnings.", WheelRecordFix},
	{"RD1502", RuleWheelMemberName, SeverityError, "A wheel member's name or kind will not install as it says: an absolute name, or one whose '..' leads out of the install directory (pip refuses the whole wheel: \"trying to install outside the target directory\"); as warnings, a backslash in a name (on Linux part of the file name: pip installs a file named `pkg\\mod.py` beside the package, not in it) and a symbolic-link entry (pip installs a regular file holding the link's text, so a library symlink such as libfoo.so -> libfoo.so.1 becomes a few bytes that do not load). `wheel relink` refuses such a wheel.", "Rebuild the wheel from a tree whose member names are relative paths with forward slashes inside the package, and with the library the link names copied under the link's name (auditwheel and `wheel pack` do this)."},
}

// Rule identifiers of the findings this package produces.
const (
	RuleMissingLibrary     = "missing-library"
	RuleMissingInterpreter = "missing-interpreter"
	RuleUndefinedSymbol    = "undefined-symbol"
	RuleModuleUndefined    = "module-undefined-symbol"
	RuleUnderlinked        = "underlinked-symbol"
	RuleProgramContext     = "program-context-library"
	RuleVersionMismatch    = "symbol-version-mismatch"
	RuleMissingVersion     = "missing-version-node"
	RuleUnresolvedStatic   = "unresolved-in-inputs"
	RuleIncompatibleInput  = "incompatible-link-input"
	RuleMultipleUnwinders  = "multiple-unwinders"
	RuleUnwinderFlavour    = "unwinder-flavour-mismatch"
	RuleUnwinderMachine    = "unwinder-wrong-machine"
	RuleExportsUnwinder    = "exports-unwinder"
	RuleGPUTargetMissing   = "gpu-target-missing"
	RuleTensileMissing     = "tensile-kernels-missing"
	RuleDeviceCodeUnread   = "device-code-unreadable"
	RuleGPUTargetsDiffer   = "gpu-targets-differ"
)

// More rule names used by check.
const (
	// RuleWheelRecord: a wheel's RECORD does not describe its files.
	RuleWheelRecord     = "wheel-record"
	RuleWheelMemberName = "wheel-member-name"
	RuleLLVMTargets     = "llvm-target-not-linked"
	RuleBuildDirRunpath = "runpath-build-dir"
	RuleFileNameRunpath = "runpath-file-name"
	RuleRelativeRunpath = "runpath-relative"
	RuleRPathNotRunpath = "rpath-not-runpath"
	RuleMissingSoname   = "missing-soname"
	RuleExecStack       = "executable-stack"
	RuleTextRel         = "textrel"
	RuleGlibcTooNew     = "glibc-too-new"
	RuleGlibcxxTooNew   = "glibcxx-too-new"
	RuleUnsearched      = "no-symbol-hash-table"
	RuleNeededPath      = "needed-path"
	RuleBuildDirInterp  = "interpreter-build-dir"
	RuleProgramNotExec  = "program-not-executable"
	// The dlopen() rules (dlopen.go).
	RuleDlopenMissing     = "dlopen-library-missing"
	RuleDlopenNoteInvalid = "dlopen-note-invalid"
	RuleDlopenNameMissing = "dlopen-name-missing"
)

// CK rule names.
const (
	RuleCKComponentMissing = "ck-component-missing"
	RuleCKBadLocation      = "ck-bad-imported-location"
	RuleCKNoInstances      = "ck-no-instances"
	RuleCKMissingTarget    = "ck-missing-link-target"
	RuleCKMissingInstance  = "ck-missing-instance"
	RuleCKConfigError      = "ck-config-error"
)

// Rule names of the prefix checks.
const (
	RuleVersionSkew       = "rocm-version-skew"
	RuleDuplicateProvider = "duplicate-provider"
	RuleResourceDir       = "clang-resource-dir"
	RuleDeviceLibs        = "device-libs-missing"
	RuleHeadersMissing    = "headers-missing"
)

// LookupRule finds a rule by ID ("RD1001") or name ("undefined-symbol").
func LookupRule(s string) (RuleInfo, bool) {
	for _, r := range Rules {
		if strings.EqualFold(r.ID, s) || r.Name == s {
			return r, true
		}
	}
	return RuleInfo{}, false
}

// RulesDoc is where docs/rules.md is published; RuleURL links a rule's
// row in it.
const RulesDoc = "https://github.com/rocmdoctor/rocmdoctor/blob/main/docs/rules.md"

// RuleURL is the address of rule id's row in docs/rules.md.
func RuleURL(id string) string { return RulesDoc + "#" + strings.ToLower(id) }

// RulesMarkdown renders the rule table for docs/rules.md.
func RulesMarkdown() string {
	var b strings.Builder
	b.WriteString("# rocmdoctor check rules\n\n")
	b.WriteString("Generated from `finding.Rules` (`go run ./cmd/gendocs docs`). Severities can be changed\n")
	b.WriteString("and findings ignored in `.rocmdoctor.toml` or `.rocmdoctor.yaml`; see `rocmdoctor check --help`.\n\n")
	b.WriteString("| ID | name | default severity | what it means | fix |\n|---|---|---|---|---|\n")
	for _, r := range Rules {
		b.WriteString("| <a id=\"" + strings.ToLower(r.ID) + "\"></a>" + r.ID + " | `" + r.Name + "` | " + string(r.Severity) + " | " + strings.ReplaceAll(r.Description, "|", "\\|") +
			" | " + strings.ReplaceAll(r.Fix, "|", "\\|") + " |\n")
	}
	return b.String()
}

// WheelRecordFix is the fix of every RD1501 finding.
const WheelRecordFix = "Regenerate RECORD from the files: unzip the wheel and run `python -m wheel pack` on the tree, which writes it anew " +
	"(`wheel unpack` refuses such a wheel). Edit libraries in wheels with `rocmdoctor wheel relink`, which updates RECORD, not patchelf on an unpacked copy."
