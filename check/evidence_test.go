package check_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/check"
	"github.com/rocmdoctor/rocmdoctor/finding"
	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
	"github.com/rocmdoctor/rocmdoctor/patchelf"
	"github.com/rocmdoctor/rocmdoctor/symcheck"
)

// checkTree runs Check over root and returns the findings about file.
func checkTree(t *testing.T, root, file string) []finding.Finding {
	t.Helper()
	rep, err := check.Run(context.Background(), []string{root}, check.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out []finding.Finding
	for _, f := range rep.Findings {
		if f.File == file && f.Symbol != "" {
			out = append(out, f)
		}
	}
	return out
}

// loads runs the dlopen harness on file: "" when the real loader loads it,
// else its error.
func loads(t *testing.T, harness, file string, env ...string) string {
	t.Helper()
	cmd := exec.Command(harness, file)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return strings.TrimSpace(string(out)) + " (" + err.Error() + ")"
	}
	return ""
}

// A plugin whose one undefined name a program of the scan exports (and
// which that program dlopen()s): a note naming the program, not an error.
// The real loader fails the plugin alone and loads it in the program.
func TestEvidenceHostProgram(t *testing.T) {
	p := testenv.NewPrefix(t)
	harness := testenv.DlopenHarness(t)
	plug := p.Lib("lib/plugins/libplug.so", "libplug.so", "extern int host_hook(void); int plug(void) { return host_hook(); }\n")
	app := p.CC("bin/app", "#include <dlfcn.h>\n#include <stdio.h>\nint host_hook(void) { return 7; }\n"+
		"int main(int c, char **v) { if (!dlopen(v[1], RTLD_NOW)) { puts(dlerror()); return 1; } return 0; }\n", "-rdynamic")
	if msg := loads(t, harness, plug); !strings.Contains(msg, "host_hook") {
		t.Fatalf("the plugin alone: %q, want an undefined host_hook", msg)
	}
	if out, err := exec.Command(app, plug).CombinedOutput(); err != nil {
		t.Fatalf("the program does not load its plugin: %v\n%s", err, out)
	}
	fs := checkTree(t, p.Root, plug)
	if len(fs) != 1 || fs[0].Rule != finding.RuleModuleUndefined || fs[0].Severity != finding.SeverityNote ||
		fs[0].Evidence == nil || fs[0].Evidence.Kind != "host-program" || fs[0].Evidence.Program != app {
		t.Fatalf("findings %+v, want one RD1006 note naming %s", fs, app)
	}
	// A plugin that also needs a name the program lacks: the program
	// does not load it, and every gap stays an error.
	bad := p.Lib("lib/plugins/libbad.so", "libbad.so", "extern int host_hook(void), not_in_host(void); int bad(void) { return host_hook() + not_in_host(); }\n")
	if out, err := exec.Command(app, bad).CombinedOutput(); err == nil || !strings.Contains(string(out), "not_in_host") {
		t.Fatalf("the program loads a plugin it lacks a name for: %v %s", err, out)
	}
	for _, f := range checkTree(t, p.Root, bad) {
		if f.Severity != finding.SeverityError {
			t.Errorf("a plugin whose host lacks a name: %+v", f)
		}
	}
	// Without the program in the scan the plugin's gap is an error.
	fs = checkTree(t, filepath.Dir(plug), plug)
	if len(fs) != 1 || fs[0].Rule != finding.RuleUndefinedSymbol || fs[0].Severity != finding.SeverityError {
		t.Fatalf("the plugin without its program: %+v, want RD1001", fs)
	}
}

// A lib*.so without SONAME that nothing in the scan NEEDs is a module (a
// note); NEEDED by a program of the scan, it is a library, and its gap an
// error that the program, run with LD_BIND_NOW, fails on.
func TestEvidenceModuleOrLibrary(t *testing.T) {
	p := testenv.NewPrefix(t)
	mod := p.CC("lib/libmod.so", "extern int mystery(void); int mod(void) { return mystery(); }\n", "-shared", "-fPIC")
	fs := checkTree(t, p.Root, mod)
	if len(fs) != 1 || fs[0].Rule != finding.RuleModuleUndefined || fs[0].Evidence == nil || fs[0].Evidence.Kind != "module" {
		t.Fatalf("findings %+v, want an RD1006 note (module)", fs)
	}
	rep, err := check.Run(context.Background(), []string{mod}, check.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		if f.Rule == finding.RuleMissingSoname && f.Severity != finding.SeverityNote {
			t.Errorf("a module without SONAME: %s %s", f.Severity, f.Message)
		}
	}
	app := p.CC("bin/app", "int mod(void); int main(void) { return mod() == 0; }\n",
		"-L"+filepath.Dir(mod), "-l:libmod.so", "-Wl,--allow-shlib-undefined,--enable-new-dtags,-rpath,$ORIGIN/../lib")
	cmd := exec.Command(app)
	cmd.Env = append(os.Environ(), "LD_BIND_NOW=1")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "mystery") {
		t.Fatalf("the program that NEEDs it: %v %s, want undefined symbol mystery", err, out)
	}
	fs = checkTree(t, p.Root, mod)
	if len(fs) != 1 || fs[0].Rule != finding.RuleUndefinedSymbol || fs[0].Severity != finding.SeverityError {
		t.Fatalf("NEEDED by a program: %+v, want RD1001", fs)
	}
}

// A library that uses names of another library of the scan without
// NEEDing it (as libunwind-ptrace uses libunwind-x86_64): a warning whose
// fix, applied, makes the real loader load it.
func TestEvidenceUnderlinked(t *testing.T) {
	p := testenv.NewPrefix(t)
	harness := testenv.DlopenHarness(t)
	p.Lib("lib/def/libdef.so.1", "libdef.so.1", "int helper(void) { return 1; } int helper2(void) { return 2; }\n")
	use := p.Lib("lib/libuse.so.1", "libuse.so.1", "extern int helper(void), helper2(void); int use(void) { return helper() + helper2(); }\n")
	if msg := loads(t, harness, use); !strings.Contains(msg, "helper") {
		t.Fatalf("the library alone: %q, want an undefined helper", msg)
	}
	fs := checkTree(t, p.Root, use)
	if len(fs) != 2 {
		t.Fatalf("findings %+v, want two", fs)
	}
	for _, f := range fs {
		if f.Rule != finding.RuleUnderlinked || f.Severity != finding.SeverityWarning || f.Evidence == nil ||
			len(f.Evidence.Libraries) != 1 || !strings.HasSuffix(f.Evidence.Libraries[0], "libdef.so.1") {
			t.Fatalf("finding %+v, want RD1011 naming libdef.so.1", f)
		}
	}
	// The fix: "… rocmdoctor patchelf --add-needed libdef.so.1 --add-rpath DIR FILE".
	fix := fs[0].Fix
	i := strings.Index(fix, "rocmdoctor patchelf ")
	if i < 0 {
		t.Fatalf("fix %q has no patchelf command", fix)
	}
	args := strings.Fields(fix[i+len("rocmdoctor patchelf "):])
	if args[len(args)-1] != use {
		t.Fatalf("fix %q does not end with the file", fix)
	}
	var edits []patchelf.Edit
	for j := 0; j+1 < len(args)-1; j += 2 {
		switch args[j] {
		case "--add-needed":
			edits = append(edits, patchelf.Edit{Kind: patchelf.KindAddNeeded, Arg: args[j+1]})
		case "--add-rpath":
			edits = append(edits, patchelf.Edit{Kind: patchelf.KindAddRPath, Arg: args[j+1]})
		default:
			t.Fatalf("fix %q: unexpected %s", fix, args[j])
		}
	}
	if _, err := patchelf.EditFile(use, edits, patchelf.Options{}, patchelf.WriteOptions{JournalDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	if msg := loads(t, harness, use); msg != "" {
		t.Fatalf("after the fix %q the library still does not load: %s", fix, msg)
	}
	if fs := checkTree(t, p.Root, use); len(fs) != 0 {
		t.Errorf("after the fix: %+v", fs)
	}
	// LLVM's names stay errors although another LLVM of the scan defines
	// them: linking that one is the mix, not the fix.
	p.Lib("lib/sys/libLLVM-15.so.1", "libLLVM-15.so.1", "void LLVMInitializeX86Target(void) {}\n")
	// (and a program exporting them, as ROCm's opt does for its plugins)
	p.CC("bin/opt", "void LLVMInitializeX86Target(void) {}\nint main(void) { return 0; }\n", "-rdynamic")
	miopen := p.Lib("lib/libMIOpen.so.1", "libMIOpen.so.1", "extern void LLVMInitializeX86Target(void); void m(void) { LLVMInitializeX86Target(); }\n")
	for _, f := range checkTree(t, p.Root, miopen) {
		if f.Severity != finding.SeverityError || f.Rule != finding.RuleUndefinedSymbol && f.Rule != finding.RuleLLVMTargets {
			t.Errorf("LLVMInitializeX86Target with another LLVM in the scan: %+v", f)
		}
	}
	// A name nobody in the scan defines keeps every error.
	other := p.Lib("lib/libother.so.1", "libother.so.1", "extern int helper(void), nowhere(void); int o(void) { return helper() + nowhere(); }\n")
	for _, f := range checkTree(t, p.Root, other) {
		if f.Severity != finding.SeverityError {
			t.Errorf("with an unaccounted name: %+v", f)
		}
	}
}

// glibc's libthread_db leaves the proc_service callbacks to the debugger:
// notes citing the interface.
func TestEvidenceByDesign(t *testing.T) {
	lib := testenv.File(t, "/usr/lib/x86_64-linux-gnu/libthread_db.so.1", "libc6")
	fs := checkTree(t, lib, lib)
	if len(fs) == 0 {
		t.Fatal("no findings: libthread_db's ps_* callbacks are undefined")
	}
	for _, f := range fs {
		if f.Severity != finding.SeverityNote || f.Evidence == nil || f.Evidence.Kind != "by-design" || !strings.HasPrefix(f.Symbol, "ps_") {
			t.Errorf("%+v, want a by-design note", f)
		}
	}
}

// A library NEEDs one the loader finds only through the program's own
// RUNPATH (systemd's libsystemd-core and libsystemd-shared): a note
// naming the program, which the real loader starts with both.
func TestEvidenceProgramContext(t *testing.T) {
	p := testenv.NewPrefix(t)
	harness := testenv.DlopenHarness(t)
	shared := p.Lib("lib/priv/libshared.so", "libshared.so", "int shared(void) { return 3; }\n")
	core := p.Lib("lib/priv/libcore.so", "libcore.so", "int shared(void); int core(void) { return shared(); }\n",
		"-L"+filepath.Dir(shared), "-l:libshared.so")
	app := p.CC("bin/app", "int core(void); int main(void) { return core() != 3; }\n",
		"-L"+filepath.Dir(core), "-Wl,--no-as-needed", "-l:libcore.so", "-l:libshared.so", "-Wl,--enable-new-dtags,-rpath,$ORIGIN/../lib/priv")
	if msg := loads(t, harness, core); !strings.Contains(msg, "libshared.so") {
		t.Fatalf("libcore alone: %q, want libshared.so not found", msg)
	}
	if out, err := exec.Command(app).CombinedOutput(); err != nil {
		t.Fatalf("the program: %v %s", err, out)
	}
	rep, err := check.Run(context.Background(), []string{p.Root}, check.Options{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range rep.Findings {
		if f.File == core && f.Library == "libshared.so" {
			found = true
			if f.Rule != finding.RuleProgramContext || f.Severity != finding.SeverityNote || f.Evidence == nil || f.Evidence.Program != app {
				t.Errorf("%+v, want an RD1012 note naming %s", f, app)
			}
		}
	}
	if !found {
		t.Fatalf("no finding for libcore's libshared.so: %+v", rep.Findings)
	}
	// Checked without the program in the scan, but named with --for.
	rep, err = check.Run(context.Background(), []string{filepath.Dir(core)}, check.Options{Programs: []string{app}})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		if f.File == core && f.Library == "libshared.so" {
			if f.Rule != finding.RuleProgramContext || f.Evidence == nil || f.Evidence.Program != app || !strings.Contains(f.Fix, "--add-rpath "+filepath.Dir(shared)+" ") {
				t.Errorf("with --for %s: %+v", app, f)
			}
		}
		if f.File == app {
			t.Errorf("the --for program is reported: %+v", f)
		}
	}
	// The fix for loading it alone, applied, makes it load.
	if _, err := patchelf.EditFile(core, []patchelf.Edit{{Kind: patchelf.KindAddRPath, Arg: filepath.Dir(shared)}}, patchelf.Options{}, patchelf.WriteOptions{JournalDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	if msg := loads(t, harness, core); msg != "" {
		t.Errorf("after --add-rpath: %s", msg)
	}
	// Without the program the library is missing: an error.
	if _, err := patchelf.EditFile(core, []patchelf.Edit{{Kind: patchelf.KindRemoveRPath}}, patchelf.Options{}, patchelf.WriteOptions{JournalDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	rep, err = check.Run(context.Background(), []string{filepath.Dir(core)}, check.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		if f.File == core && f.Library == "libshared.so" && (f.Rule != finding.RuleMissingLibrary || f.Severity != finding.SeverityError) {
			t.Errorf("without the program: %+v, want RD1004", f)
		}
	}
}

// A library NEEDs one that lives elsewhere in its package and that a
// launcher loads by path with dlopen() first (the JDK: libjli loads
// "%s/lib/%s/libjvm.so", then libjava.so, which NEEDs libjvm.so): a note
// naming the launcher. The real loader fails the library alone and loads
// it through the launcher. A launcher that names the library for dlopen()
// to search is no such evidence: the error stays.
func TestEvidenceLoadedByPath(t *testing.T) {
	for _, byPath := range []bool{true, false} {
		p := testenv.NewPrefix(t)
		harness := testenv.DlopenHarness(t)
		vm := p.Lib("pkg/lib/server/libvm.so", "libvm.so", "int vm_fn(void) { return 5; }\n")
		user := p.Lib("pkg/lib/libuser.so", "libuser.so", "extern int vm_fn(void); int user_fn(void) { return vm_fn(); }\n",
			"-L"+filepath.Dir(vm), "-l:libvm.so", "-Wl,--enable-new-dtags,-rpath,$ORIGIN")
		open := `snprintf(b, sizeof b, "%s/lib/server/libvm.so", home)`
		if !byPath {
			open = `snprintf(b, sizeof b, "libvm.so")`
		}
		p.Lib("pkg/lib/liblaunch.so", "liblaunch.so", "#include <dlfcn.h>\n#include <stdio.h>\n"+
			"int launch(const char *home) { char b[4096]; "+open+"; if (!dlopen(b, RTLD_NOW | RTLD_GLOBAL)) { puts(dlerror()); return 1; }\n"+
			"snprintf(b, sizeof b, \"%s/lib/libuser.so\", home); void *h = dlopen(b, RTLD_NOW); if (!h) { puts(dlerror()); return 1; }\n"+
			"int (*f)(void) = (int (*)(void))dlsym(h, \"user_fn\"); return f() != 5; }\n", "-ldl")
		app := p.CC("pkg/bin/launcher", "int launch(const char *); int main(int c, char **v) { return launch(v[1]); }\n",
			"-L"+filepath.Join(p.Root, "pkg/lib"), "-l:liblaunch.so", "-Wl,--enable-new-dtags,-rpath,$ORIGIN/../lib")
		if msg := loads(t, harness, user); !strings.Contains(msg, "libvm.so") {
			t.Fatalf("libuser alone: %q, want libvm.so not found", msg)
		}
		out, err := exec.Command(app, filepath.Join(p.Root, "pkg")).CombinedOutput()
		if byPath && err != nil {
			t.Fatalf("the launcher: %v %s", err, out)
		}
		if !byPath && err == nil {
			t.Fatalf("the launcher found libvm.so by name: the negative case does not test anything")
		}
		rep, err := check.Run(context.Background(), []string{p.Root}, check.Options{})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, f := range rep.Findings {
			if f.File != user || f.Library != "libvm.so" {
				continue
			}
			n++
			switch {
			case byPath && (f.Rule != finding.RuleProgramContext || f.Evidence == nil || !strings.HasSuffix(f.Evidence.Program, "liblaunch.so")):
				t.Errorf("loaded by path: %+v, want an RD1012 note naming liblaunch.so", f)
			case !byPath && (f.Rule != finding.RuleMissingLibrary || f.Severity != finding.SeverityError):
				t.Errorf("dlopen by name: %+v, want RD1004", f)
			}
		}
		if n != 1 {
			t.Errorf("byPath=%v: %d findings for libuser's libvm.so", byPath, n)
		}
	}
}

// --index offers no candidate of another class or machine than the input
// (the resource directory's i386 sanitizer runtimes define strlen too),
// and lists sanitizer runtimes after the C library, marked; the fix names
// the C library.
func TestIndexMachineAndRuntimes(t *testing.T) {
	p := testenv.NewPrefix(t)
	i386 := testenv.File(t, "/usr/lib/llvm-15/lib/clang/15.0.6/lib/linux/libclang_rt.asan-i386.a", "libclang-common-15-dev")
	obj := p.CC("u.o", "extern unsigned long strlen(const char *); unsigned long f(const char *s) { return strlen(s); }\n", "-c")
	rep, err := symcheck.Symbols(context.Background(), []string{obj}, symcheck.SymbolsOptions{IndexDirs: []string{filepath.Dir(i386), "/usr/lib/x86_64-linux-gnu"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		if f.Symbol != "strlen" {
			continue
		}
		runtimes, seenRuntime := 0, false
		for _, pv := range f.Providers {
			if strings.Contains(pv.File, "i386") || strings.Contains(pv.File, "i686") {
				t.Errorf("a 32-bit candidate for a 64-bit object: %s", pv)
			}
			if pv.Note == "sanitizer or profiling runtime" {
				seenRuntime = true
				runtimes++
			} else if seenRuntime {
				t.Errorf("%s listed after a runtime", pv)
			}
		}
		if runtimes == 0 || len(f.Providers) == runtimes {
			t.Errorf("providers %v: want the C library first, then the marked runtimes", f.Providers)
		}
		if strings.Contains(f.Fix, "clang_rt") || !strings.Contains(f.Fix, "libc.") || f.Severity != finding.SeverityNote {
			t.Errorf("fix %q", f.Fix)
		}
		return
	}
	t.Fatalf("no strlen finding: %+v", rep.Findings)
}

// In archive mode the names the toolchain supplies (libc, libstdc++) are
// notes, those another system library defines are warnings whose fix
// names it (-lz), and only the rest are errors. The oracle: g++ linking
// the archive into a library with --no-undefined fails on inflate and
// nowhere_fn only; with the fix's -lz, on nowhere_fn only.
func TestArchiveSystemNames(t *testing.T) {
	gxx := testenv.Tool(t, "g++", "g++")
	testenv.File(t, "/usr/lib/x86_64-linux-gnu/libz.so", "zlib1g-dev")
	p := testenv.NewPrefix(t)
	obj := p.CC("v.o", "#include <stddef.h>\nextern size_t strlen(const char *); extern void _ZdlPv(void *); extern int inflate(void *, int); extern int nowhere_fn(void);\n"+
		"size_t f(const char *s) { _ZdlPv(0); return strlen(s) + inflate(0, 0) + nowhere_fn(); }\n", "-c", "-fPIC")
	arch := filepath.Join(p.Root, "libv.a")
	if out, err := exec.Command("ar", "rcs", arch, obj).CombinedOutput(); err != nil {
		t.Fatalf("ar: %v %s", err, out)
	}
	rep, err := symcheck.Symbols(context.Background(), []string{arch}, symcheck.SymbolsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	fix := map[string]string{}
	for _, f := range rep.Findings {
		got[f.Symbol], fix[f.Symbol] = string(f.Severity), f.Fix
	}
	want := map[string]string{"strlen": "note", "_ZdlPv": "note", "inflate": "warning", "nowhere_fn": "error"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
	link := func(extra ...string) string {
		args := append([]string{"-shared", "-o", filepath.Join(p.Root, "libout.so"), "-Wl,--whole-archive", arch, "-Wl,--no-whole-archive", "-Wl,--no-undefined"}, extra...)
		out, _ := exec.Command(gxx, args...).CombinedOutput()
		return string(out)
	}
	out := link()
	if !strings.Contains(out, "inflate") || !strings.Contains(out, "nowhere_fn") || strings.Contains(out, "strlen") || strings.Contains(out, "operator delete") {
		t.Fatalf("g++ without the fix: %s", out)
	}
	if !strings.Contains(fix["inflate"], "-lz") {
		t.Fatalf("inflate's fix %q names no -lz", fix["inflate"])
	}
	out = link("-lz")
	if strings.Contains(out, "inflate") || !strings.Contains(out, "nowhere_fn") {
		t.Fatalf("g++ with -lz: %s", out)
	}
}

// The LLVM libraries to link are found to a fixed point in the index:
// linking a library whose object calls the X86 initialisers with the
// suggested set, in its order (and the system's zlib and terminfo, which
// LLVMSupport uses), leaves nothing undefined for ldd -r, and the real
// loader loads it; the four libraries that define the initialisers alone
// leave LLVM's own names undefined (llvm::createCFGuardCheckPass and more).
func TestLLVMLinkSetFixedPoint(t *testing.T) {
	gxx := testenv.Tool(t, "g++", "g++")
	testenv.File(t, "/usr/lib/llvm-15/lib/libLLVMX86CodeGen.a", "llvm-15-dev")
	harness := testenv.DlopenHarness(t)
	p := testenv.NewPrefix(t)
	obj := p.CC("li.o", "void LLVMInitializeX86TargetInfo(void); void LLVMInitializeX86Target(void); void LLVMInitializeX86TargetMC(void);\n"+
		"void LLVMInitializeX86AsmPrinter(void); void LLVMInitializeX86AsmParser(void);\n"+
		"void init(void) { LLVMInitializeX86TargetInfo(); LLVMInitializeX86Target(); LLVMInitializeX86TargetMC(); LLVMInitializeX86AsmPrinter(); LLVMInitializeX86AsmParser(); }\n", "-c", "-fPIC")
	rep, err := symcheck.Symbols(context.Background(), []string{obj}, symcheck.SymbolsOptions{IndexDirs: []string{"/usr/lib/llvm-15/lib"}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.LLVM == nil || len(rep.LLVM.LinkSet) == 0 {
		t.Fatalf("no link set: %+v", rep.LLVM)
	}
	if !slices.Contains(rep.LLVM.LinkSet, "LLVMCFGuard") || !strings.Contains(rep.LLVM.Fix, "LLVMCFGuard") {
		t.Errorf("the set misses LLVMCFGuard, which LLVMX86CodeGen needs: %v", rep.LLVM.LinkSet)
	}
	link := func(libs []string) (string, string) {
		out := filepath.Join(t.TempDir(), "libli.so")
		args := []string{"-shared", "-o", out, obj, "-L/usr/lib/llvm-15/lib"}
		if rep.LLVM.LinkGroup {
			args = append(args, "-Wl,--start-group")
		}
		for _, l := range libs {
			args = append(args, "-l"+l)
		}
		if rep.LLVM.LinkGroup {
			args = append(args, "-Wl,--end-group")
		}
		args = append(args, "-lz", "-ltinfo")
		if o, err := exec.Command(gxx, args...).CombinedOutput(); err != nil {
			t.Fatalf("g++: %v\n%s", err, o)
		}
		lddOut, _ := exec.Command("ldd", "-r", out).CombinedOutput()
		return out, string(lddOut)
	}
	lib, ldd := link(rep.LLVM.LinkSet)
	if strings.Contains(ldd, "undefined symbol") {
		t.Errorf("linked with the suggested set, ldd -r still reports:\n%s", ldd)
	}
	if msg := loads(t, harness, lib); msg != "" {
		t.Errorf("the real loader: %s", msg)
	}
	_, ldd = link([]string{"LLVMX86Info", "LLVMX86CodeGen", "LLVMX86Desc", "LLVMX86AsmParser"})
	if !strings.Contains(ldd, "undefined symbol: _ZN4llvm") {
		t.Errorf("the four initialiser libraries alone left no LLVM name undefined: the test shows nothing\n%s", ldd)
	}
}
