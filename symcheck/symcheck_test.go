package symcheck_test

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/check"
	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/finding"
	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
	"github.com/rocmdoctor/rocmdoctor/rpath"
	"github.com/rocmdoctor/rocmdoctor/symcheck"
)

var x86Five = []string{
	"LLVMInitializeX86AsmParser", "LLVMInitializeX86AsmPrinter", "LLVMInitializeX86Target",
	"LLVMInitializeX86TargetInfo", "LLVMInitializeX86TargetMC",
}

func symbolsOf(fs []finding.Finding, rule string) []string {
	var out []string
	for _, f := range fs {
		if f.Rule == rule {
			out = append(out, f.Symbol)
		}
	}
	sort.Strings(out)
	return out
}

func symbols(t *testing.T, paths []string, opts symcheck.SymbolsOptions) *symcheck.Report {
	t.Helper()
	rep, err := symcheck.Symbols(context.Background(), paths, opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// wantSeedDiagnosis checks the LLVM explanation of the seed case.
func wantSeedDiagnosis(t *testing.T, rep *symcheck.Report, indexed bool) {
	t.Helper()
	l := rep.LLVM
	if l == nil || len(l.Missing) != 1 {
		t.Fatalf("LLVM diagnosis = %+v", l)
	}
	x := l.Missing[0]
	if x.Target != "X86" || strings.Join(x.Missing, ",") != "TargetInfo,Target,TargetMC,AsmPrinter,AsmParser" ||
		strings.Join(x.Libraries, ",") != "LLVMX86Info,LLVMX86CodeGen,LLVMX86Desc,LLVMX86AsmParser" {
		t.Errorf("X86 diagnosis = %+v", x)
	}
	if !reflect.DeepEqual(l.Linked, []string{"AMDGPU"}) {
		t.Errorf("linked targets = %v, want [AMDGPU]", l.Linked)
	}
	if !strings.Contains(l.Message, "LLVM target X86 is referenced but not linked: missing TargetInfo, Target, TargetMC, AsmPrinter, AsmParser — link LLVMX86Info, LLVMX86CodeGen, LLVMX86Desc, LLVMX86AsmParser") ||
		!strings.Contains(l.Message, "different LLVM configuration") {
		t.Errorf("message = %q", l.Message)
	}
	if indexed && len(x.FoundIn) != 4 {
		t.Errorf("found in = %v, want the four X86 archives", x.FoundIn)
	}
}

func TestSeedCaseFixtures(t *testing.T) {
	t.Run("shared library with --index", func(t *testing.T) {
		rep := symbols(t, []string{testenv.Testdata("libMIOpen.so")}, symcheck.SymbolsOptions{IndexDirs: []string{testenv.Testdata("llvm")}})
		if rep.Mode != "dynamic" {
			t.Errorf("mode = %s", rep.Mode)
		}
		if got := symbolsOf(rep.Findings, finding.RuleUndefinedSymbol); !reflect.DeepEqual(got, x86Five) {
			t.Fatalf("undefined = %v, want %v", got, x86Five)
		}
		wantArchive := map[string]string{
			"LLVMInitializeX86TargetInfo": "libLLVMX86Info.a", "LLVMInitializeX86Target": "libLLVMX86CodeGen.a",
			"LLVMInitializeX86AsmPrinter": "libLLVMX86CodeGen.a", "LLVMInitializeX86TargetMC": "libLLVMX86Desc.a",
			"LLVMInitializeX86AsmParser": "libLLVMX86AsmParser.a",
		}
		for _, f := range rep.Findings {
			if len(f.Providers) != 1 || filepath.Base(f.Providers[0].File) != wantArchive[f.Symbol] || f.Providers[0].InClosure {
				t.Errorf("%s providers = %+v, want %s (not in closure)", f.Symbol, f.Providers, wantArchive[f.Symbol])
			}
		}
		wantSeedDiagnosis(t, rep, true)
	})
	t.Run("archive alone", func(t *testing.T) {
		rep := symbols(t, []string{testenv.Testdata("librockCompiler.a")}, symcheck.SymbolsOptions{})
		if rep.Mode != "link-inputs" || rep.Objects != 4 || rep.Satisfied != 3 {
			t.Errorf("mode %s, %d objects, %d satisfied; want link-inputs, 4, 3 (the AMDGPU initialisers)", rep.Mode, rep.Objects, rep.Satisfied)
		}
		if got := symbolsOf(rep.Findings, finding.RuleUnresolvedStatic); !reflect.DeepEqual(got, x86Five) {
			t.Fatalf("unresolved = %v", got)
		}
		for _, f := range rep.Findings {
			if len(f.ReferencedBy) != 1 || !strings.HasSuffix(f.ReferencedBy[0], "librockCompiler.a(rock.o)") {
				t.Errorf("%s referenced by %v", f.Symbol, f.ReferencedBy)
			}
		}
		wantSeedDiagnosis(t, rep, false)
	})
	t.Run("archive with the LLVM archives on the link line", func(t *testing.T) {
		paths := []string{testenv.Testdata("librockCompiler.a")}
		libs, _ := filepath.Glob(testenv.Testdata("llvm", "lib", "libLLVMX86*.a"))
		rep := symbols(t, append(paths, libs...), symcheck.SymbolsOptions{})
		if len(rep.Findings) != 0 || rep.LLVM != nil {
			t.Errorf("with the X86 archives linked nothing should remain: %+v", rep.Findings)
		}
	})
	t.Run("filter", func(t *testing.T) {
		rep := symbols(t, []string{testenv.Testdata("librockCompiler.a")}, symcheck.SymbolsOptions{Filter: "*TargetMC"})
		if got := symbolsOf(rep.Findings, finding.RuleUnresolvedStatic); !reflect.DeepEqual(got, []string{"LLVMInitializeX86TargetMC"}) {
			t.Errorf("filtered = %v", got)
		}
	})
}

// TestSeedCaseFromScratch rebuilds the seed case with gcc and ar: an
// object calling the AMDGPU and X86 initialisers, an archive of it plus an
// archive defining only the AMDGPU ones, and a shared library linked from
// both with --whole-archive.
func TestSeedCaseFromScratch(t *testing.T) {
	gcc := testenv.Tool(t, "gcc", "gcc")
	ar := testenv.Tool(t, "ar", "binutils")
	dir := t.TempDir()
	run := func(name string, args ...string) {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
	}
	src, _ := os.ReadFile(testenv.Testdata("src", "rock.c"))
	os.WriteFile(filepath.Join(dir, "rock.c"), src, 0o644)
	var defs strings.Builder
	for _, c := range []string{"TargetInfo", "Target", "TargetMC", "AsmPrinter", "AsmParser"} {
		defs.WriteString("void LLVMInitializeAMDGPU" + c + "(void) {}\n")
	}
	os.WriteFile(filepath.Join(dir, "amdgpu.c"), []byte(defs.String()), 0o644)
	run(gcc, "-fPIC", "-c", "rock.c", "amdgpu.c")
	run(ar, "rcs", "librock.a", "rock.o")
	run(ar, "rcs", "libamdgpu.a", "amdgpu.o")
	run(gcc, "-shared", "-o", "libMIOpen.so", "-Wl,--whole-archive", "librock.a", "libamdgpu.a", "-Wl,--no-whole-archive")
	opts := symcheck.SymbolsOptions{}
	if llvm := "/usr/lib/llvm-15/lib"; testenv.RequireAll() || dirExists(llvm) {
		opts.IndexDirs = []string{testenv.File(t, llvm+"/libLLVMX86CodeGen.a", "llvm-15-dev")[:len(llvm)]}
	}
	rep := symbols(t, []string{filepath.Join(dir, "libMIOpen.so")}, opts)
	if got := symbolsOf(rep.Findings, finding.RuleUndefinedSymbol); !reflect.DeepEqual(got, x86Five) {
		t.Fatalf("undefined = %v, want %v", got, x86Five)
	}
	wantSeedDiagnosis(t, rep, len(opts.IndexDirs) > 0)
	if len(opts.IndexDirs) > 0 {
		// The real llvm-15-dev archives.
		want := map[string]string{
			"LLVMInitializeX86TargetInfo": "libLLVMX86Info.a", "LLVMInitializeX86Target": "libLLVMX86CodeGen.a",
			"LLVMInitializeX86AsmPrinter": "libLLVMX86CodeGen.a", "LLVMInitializeX86TargetMC": "libLLVMX86Desc.a",
			"LLVMInitializeX86AsmParser": "libLLVMX86AsmParser.a",
		}
		for _, f := range rep.Findings {
			found := false
			for _, p := range f.Providers {
				found = found || filepath.Base(p.File) == want[f.Symbol]
			}
			if !found {
				t.Errorf("%s: providers %v lack %s", f.Symbol, f.Providers, want[f.Symbol])
			}
		}
	}
	// The archives given together: the same five, referenced by rock.o.
	rep = symbols(t, []string{filepath.Join(dir, "librock.a"), filepath.Join(dir, "libamdgpu.a")}, symcheck.SymbolsOptions{})
	if got := symbolsOf(rep.Findings, finding.RuleUnresolvedStatic); !reflect.DeepEqual(got, x86Five) {
		t.Errorf("link inputs: unresolved = %v", got)
	}
}

func dirExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// TestVersions builds a library with version nodes V1 and V2, links an
// executable against it, then swaps in a build that lacks V2, and checks
// the findings against the real loader's error.
func TestVersions(t *testing.T) {
	dir, write, run := testenv.GCCDir(t)
	write("v.c", "int foo(void){return 1;} int bar(void){return 2;}\n")
	write("v2.map", "V1 { global: foo; local: *; };\nV2 { global: bar; } V1;\n")
	write("v1.map", "V1 { global: foo; bar; local: *; };\n")
	write("main.c", "extern int foo(void); extern int bar(void); int main(void){return foo()+bar()-3;}\n")
	os.MkdirAll(filepath.Join(dir, "new"), 0o755)
	os.MkdirAll(filepath.Join(dir, "old"), 0o755)
	run("-shared", "-fPIC", "-o", "new/libv.so.1", "v.c", "-Wl,-soname,libv.so.1", "-Wl,--version-script=v2.map")
	run("-shared", "-fPIC", "-o", "old/libv.so.1", "v.c", "-Wl,-soname,libv.so.1", "-Wl,--version-script=v1.map")
	// libw also defines bar at V1, so the mismatch names two definitions.
	write("w.c", "int bar(void){return 2;} int baz(void){return 0;}\n")
	write("w.map", "V1 { global: bar; baz; local: *; };\n")
	run("-shared", "-fPIC", "-o", "new/libw.so.1", "w.c", "-Wl,-soname,libw.so.1", "-Wl,--version-script=w.map")
	run("-o", "app", "main.c", "-Wl,--no-as-needed", "new/libv.so.1", "new/libw.so.1", "-Wl,--enable-new-dtags,-rpath,$ORIGIN/lib")
	if err := os.Link(filepath.Join(dir, "new", "libw.so.1"), filepath.Join(dir, "old", "libw.so.1")); err != nil {
		t.Fatal(err)
	}
	app := filepath.Join(dir, "app")
	link := func(which string) {
		os.Remove(filepath.Join(dir, "lib"))
		if err := os.Symlink(which, filepath.Join(dir, "lib")); err != nil {
			t.Fatal(err)
		}
	}
	link("new")
	rep := symbols(t, []string{app}, symcheck.SymbolsOptions{})
	if len(rep.Findings) != 0 {
		t.Fatalf("against the library it was linked with: %+v", rep.Findings)
	}
	if out, err := exec.Command(app).CombinedOutput(); err != nil {
		t.Fatalf("oracle: app fails with the new library: %v %s", err, out)
	}
	link("old")
	rep = symbols(t, []string{app}, symcheck.SymbolsOptions{})
	var rules []string
	for _, f := range rep.Findings {
		rules = append(rules, f.Rule+":"+f.Symbol+"@"+f.Version)
	}
	sort.Strings(rules)
	want := []string{"missing-version-node:@V2", "symbol-version-mismatch:bar@V2"}
	if !reflect.DeepEqual(rules, want) {
		t.Errorf("findings = %v, want %v", rules, want)
	}
	out, err := exec.Command(app).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "version `V2' not found (required by "+app+")") {
		t.Errorf("oracle: the loader should refuse with version `V2' not found, got %v %s", err, out)
	}
	for _, f := range rep.Findings {
		if f.Rule == finding.RuleMissingVersion && !strings.Contains(f.Message, "version `V2' not found (required by "+app+")") {
			t.Errorf("message %q does not say what the loader says", f.Message)
		}
		// The definitions the reference did not accept, in scope order.
		lib := filepath.Join(dir, "lib")
		if want := []string{"V1 in " + filepath.Join(lib, "libv.so.1"), "V1 in " + filepath.Join(lib, "libw.so.1")}; f.Rule == finding.RuleVersionMismatch && !reflect.DeepEqual(f.DefinedWith, want) {
			t.Errorf("bar@V2 defined with %q, want %q", f.DefinedWith, want)
		}
	}
}

// TestVersionedReferenceBoundElsewhere: a reference is looked up first in
// the library its version requirement names, but ld.so binds it to any
// object of the scope that defines it with that version. Here the app was
// linked with foo@V1 from liba; at run time liba defines V1 without foo and
// libb, later in the scope, defines foo@V1: the app runs, and check must
// find nothing. Without libb's definition both must fail.
func TestVersionedReferenceBoundElsewhere(t *testing.T) {
	dir, write, run := testenv.GCCDir(t)
	for _, d := range []string{"link", "lib"} {
		os.MkdirAll(filepath.Join(dir, d), 0o755)
	}
	write("a.c", "int foo(void){return 1;} int a_only(void){return 0;}\n")
	write("a.map", "V1 { global: foo; a_only; local: *; };\n")
	write("a2.c", "int a_only(void){return 0;}\n")
	write("a2.map", "V1 { global: a_only; local: *; };\n")
	write("b.c", "int foo(void){return 1;} int b_only(void){return 0;}\n")
	write("b.map", "V1 { global: foo; b_only; local: *; };\n")
	write("b2.c", "int b_only(void){return 0;}\n")
	write("main.c", "extern int foo(void); extern int a_only(void); extern int b_only(void);\n"+
		"int main(void){return foo()-1+a_only()+b_only();}\n")
	run("-shared", "-fPIC", "-o", "link/liba.so.1", "a.c", "-Wl,-soname,liba.so.1", "-Wl,--version-script=a.map")
	run("-shared", "-fPIC", "-o", "link/libb.so.1", "b.c", "-Wl,-soname,libb.so.1", "-Wl,--version-script=b.map")
	run("-o", "app", "main.c", "link/liba.so.1", "link/libb.so.1", "-Wl,--no-as-needed,--enable-new-dtags,-rpath,$ORIGIN/lib")
	run("-shared", "-fPIC", "-o", "lib/liba.so.1", "a2.c", "-Wl,-soname,liba.so.1", "-Wl,--version-script=a2.map")
	app := filepath.Join(dir, "app")
	rules := func() []string {
		var out []string
		for _, f := range symbols(t, []string{app}, symcheck.SymbolsOptions{}).Findings {
			out = append(out, f.Rule+":"+f.Symbol+"@"+f.Version+":"+f.Library)
		}
		sort.Strings(out)
		return out
	}
	// foo's requirement names liba.so.1 (it came from there at link time).
	readelf := testenv.Tool(t, "readelf", "binutils")
	if out, err := exec.Command(readelf, "-V", app).Output(); err != nil || !strings.Contains(string(out), "File: liba.so.1") {
		t.Fatalf("the app's version requirements do not name liba.so.1 (%v):\n%s", err, out)
	}
	cp := func(from, to string) {
		b, err := os.ReadFile(filepath.Join(dir, from))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, to), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cp("link/libb.so.1", "lib/libb.so.1")
	if out, err := exec.Command(app).CombinedOutput(); err != nil {
		t.Fatalf("oracle: the app should run with foo@V1 from libb: %v %s", err, out)
	}
	if got := rules(); len(got) != 0 {
		t.Errorf("foo@V1 is defined by libb, later in the scope; findings = %v", got)
	}
	// libb without foo: nothing defines it.
	run("-shared", "-fPIC", "-o", "lib/libb.so.1", "b2.c", "-Wl,-soname,libb.so.1", "-Wl,--version-script=b.map")
	out, err := exec.Command(app).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "undefined symbol: foo, version V1") {
		t.Fatalf("oracle: the loader should refuse with foo, version V1 undefined, got %v %s", err, out)
	}
	if got, want := rules(), []string{"undefined-symbol:foo@V1:liba.so.1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("findings = %v, want %v", got, want)
	}
}

// TestFindingsOutliveMappedTables: a library whose symbol tables are
// large enough to be viewed through a mapping rather than copied (over
// 256 KiB), with thousands of unresolved references. Names are read from
// the table without copies while binding; the findings must hold copies,
// since the mapping is unmapped once the tables are unreachable (reading a
// name that viewed it would then fault).
func TestFindingsOutliveMappedTables(t *testing.T) {
	dir, write, run := testenv.GCCDir(t)
	const n = 12000
	var src strings.Builder
	for i := range n {
		fmt.Fprintf(&src, "extern void missing_function_%05d(void);\n", i)
	}
	src.WriteString("void call_all(void) {\n")
	for i := range n {
		fmt.Fprintf(&src, "\tmissing_function_%05d();\n", i)
	}
	src.WriteString("}\n")
	write("big.c", src.String())
	run("-shared", "-fPIC", "-O0", "-o", "libbig.so.1", "big.c", "-Wl,-soname,libbig.so.1")
	lib := filepath.Join(dir, "libbig.so.1")
	// The premise: check's tables for this library view a mapping.
	ef, err := elfx.Open(lib)
	if err != nil {
		t.Fatal(err)
	}
	tab, err := ef.DynamicSymbolTable()
	ef.Close()
	if err != nil {
		t.Fatal(err)
	}
	if n := tab.HeapBytes(); n != 0 && !testenv.MapsFiles(t) {
		t.Skip("this host does not map files (32-bit): no mapped table for findings to outlive")
	} else if n != 0 {
		t.Fatalf("the library's table is copied (%d bytes), not mapped: the test would not see a name that views it", n)
	}
	rep := symbols(t, []string{lib}, symcheck.SymbolsOptions{})
	for range 3 {
		runtime.GC() // the tables' mappings go once unreachable
	}
	got := symbolsOf(rep.Findings, finding.RuleUndefinedSymbol)
	if len(got) != n {
		t.Fatalf("%d undefined-symbol findings, want %d", len(got), n)
	}
	for i, s := range got {
		if want := fmt.Sprintf("missing_function_%05d", i); s != want {
			t.Fatalf("finding %d names %q, want %q", i, s, want)
		}
	}
}

func TestWeakAndVersionedFixture(t *testing.T) {
	// libfoo.so.1 has a weak undefined optional_hook and versioned references
	// to libm: nothing is unresolved on a normal system.
	rep := symbols(t, []string{testenv.Testdata("libfoo.so.1")}, symcheck.SymbolsOptions{})
	for _, f := range rep.Findings {
		if f.Symbol == "optional_hook" {
			t.Errorf("weak undefined reported: %+v", f)
		}
	}
	// Without libm the library is missing, and the symbol it expects from
	// libm by version is listed in that finding, not reported on its own.
	rep = symbols(t, []string{testenv.Testdata("libfoo.so.1")}, symcheck.SymbolsOptions{
		Resolver: rpath.Options{NoCache: true, DefaultDirs: []string{}}})
	var rules []string
	for _, f := range rep.Findings {
		rules = append(rules, f.Rule+":"+f.Symbol+f.Library+fmt.Sprint(f.Unresolved))
	}
	sort.Strings(rules)
	if want := []string{"missing-library:libm.so.6[sqrt@GLIBC_2.2.5]"}; !reflect.DeepEqual(rules, want) {
		t.Errorf("findings = %v, want %v", rules, want)
	}
	if len(rep.Findings) == 1 && !strings.HasSuffix(rep.Findings[0].Message, "; 1 undefined symbol expected from it: sqrt@GLIBC_2.2.5") {
		t.Errorf("message %q does not name the symbol", rep.Findings[0].Message)
	}
}

// TestMissingLibraryListsItsSymbols: a library whose own library is not
// found gets one finding, the missing library, with the unversioned names
// nothing else defines listed under it (the loader stops at the library
// and never looks them up); an LLVM initialiser and a Python C API name
// keep their own findings, which have causes of their own. Installing the
// library (--lib-dir, the fix) leaves only those two, as the loader says.
func TestMissingLibraryListsItsSymbols(t *testing.T) {
	dir, write, run := testenv.GCCDir(t)
	write("gone.c", "int foo(void){return 1;} int bar(void){return 2;}\n")
	write("ext.c", "extern int foo(void), bar(void); extern void LLVMInitializeX86Target(void), PyGone(void);\n"+
		"int ext(void){ LLVMInitializeX86Target(); PyGone(); return foo()+bar(); }\n")
	write("main.c", "extern int ext(void);\nint main(int argc, char **argv){ return argc > 5 ? ext() : 0; }\n")
	os.MkdirAll(filepath.Join(dir, "lib"), 0o755)
	run("-shared", "-fPIC", "-o", "lib/libgone.so", "gone.c", "-Wl,-soname,libgone.so")
	run("-shared", "-fPIC", "-o", "libext.so", "ext.c", "-Wl,-soname,libext.so", "-Llib", "-lgone")
	run("-o", "app", "main.c", "-L.", "-lext", "-Wl,-rpath,$ORIGIN", "-Wl,--allow-shlib-undefined", "-Wl,-rpath-link,lib")
	ext := filepath.Join(dir, "libext.so")
	rep := symbols(t, []string{ext}, symcheck.SymbolsOptions{})
	var got []string
	for _, f := range rep.Findings {
		got = append(got, f.Rule+":"+f.Symbol+f.Library+fmt.Sprint(f.Unresolved))
	}
	sort.Strings(got)
	want := []string{"missing-library:libgone.so[bar foo]", "undefined-symbol:LLVMInitializeX86Target[]", "undefined-symbol:PyGone[]"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("findings = %q, want %q", got, want)
	}
	for _, f := range rep.Findings {
		if f.Rule == finding.RuleMissingLibrary && !strings.Contains(f.Message, "2 undefined symbols expected from it: bar, foo") {
			t.Errorf("message %q does not list the symbols", f.Message)
		}
	}
	// The real loader: the library, not the symbols.
	app := filepath.Join(dir, "app")
	out, err := exec.Command(app).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "libgone.so: cannot open shared object file") {
		t.Errorf("the loader: %v %s", err, out)
	}
	// The fix: the library's directory.
	rep = symbols(t, []string{ext}, symcheck.SymbolsOptions{Resolver: rpath.Options{LibDirs: []string{filepath.Join(dir, "lib")}}})
	got = got[:0]
	for _, f := range rep.Findings {
		got = append(got, f.Rule+":"+f.Symbol)
	}
	sort.Strings(got)
	if want := []string{"undefined-symbol:LLVMInitializeX86Target", "undefined-symbol:PyGone"}; !reflect.DeepEqual(got, want) {
		t.Errorf("with the library: %q, want %q", got, want)
	}
	cmd := exec.Command(app)
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+filepath.Join(dir, "lib"), "LD_BIND_NOW=1")
	if out, err := cmd.CombinedOutput(); err == nil || !regexp.MustCompile(`libext\.so: undefined symbol: (PyGone|LLVMInitializeX86Target)`).Match(out) {
		t.Errorf("loader with the library: %v %s (want libext's own undefined symbol)", err, out)
	}
}

func TestParseLLVMInitializer(t *testing.T) {
	for _, tt := range []struct{ name, target, comp, lib string }{
		{"LLVMInitializeX86TargetInfo", "X86", "TargetInfo", "LLVMX86Info"},
		{"LLVMInitializeX86Target", "X86", "Target", "LLVMX86CodeGen"},
		{"LLVMInitializeX86TargetMC", "X86", "TargetMC", "LLVMX86Desc"},
		{"LLVMInitializeAMDGPUAsmPrinter", "AMDGPU", "AsmPrinter", "LLVMAMDGPUCodeGen"},
		{"LLVMInitializeAMDGPUTargetMCA", "AMDGPU", "TargetMCA", "LLVMAMDGPUTargetMCA"},
		{"LLVMInitializeAArch64Disassembler", "AArch64", "Disassembler", "LLVMAArch64Disassembler"},
	} {
		target, comp, ok := symcheck.ParseLLVMInitializer(tt.name)
		if !ok || target != tt.target || comp != tt.comp || symcheck.LLVMLibrary(target, comp) != tt.lib {
			t.Errorf("%s → %s %s %v (%s)", tt.name, target, comp, ok, symcheck.LLVMLibrary(target, comp))
		}
	}
	for _, n := range []string{"LLVMInitializeCore", "foo", "LLVMInitializeTarget", "LLVMInitializex86Target"} {
		if tg, c, ok := symcheck.ParseLLVMInitializer(n); ok {
			t.Errorf("%s parsed as %s %s", n, tg, c)
		}
	}
}

func TestDemangle(t *testing.T) {
	if got := finding.Demangle("_ZN4llvm3sys2fs16createUniqueFileERKNS_5TwineERiRNS_15SmallVectorImplIcEENS1_9OpenFlagsEj"); !strings.HasPrefix(got, "llvm::sys::fs::createUniqueFile(") {
		t.Errorf("C++: %q", got)
	}
	if got := finding.Demangle("LLVMInitializeX86Target"); got != "" {
		t.Errorf("C name demangled to %q", got)
	}
}

// TestTableErrorNamesTheFileOnce: a library whose symbol tables cannot be
// read is reported with its path once (the reader's error names it; it
// was prefixed again: "P: P: malformed file …").
func TestTableErrorNamesTheFileOnce(t *testing.T) {
	b, err := os.ReadFile(testenv.Testdata("libfoo.so.1"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	vd := f.SectionByType(elf.SHT_GNU_VERDEF)
	if vd == nil {
		t.Fatal("no .gnu.version_d")
	}
	binary.LittleEndian.PutUint32(b[vd.Offset+12:], 0x7000) // vd_aux: past the end
	p := filepath.Join(t.TempDir(), "libfoo.so.1")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = symcheck.Symbols(context.Background(), []string{p}, symcheck.SymbolsOptions{Resolver: rpath.Options{NoCache: true, HWCaps: []string{}}})
	if err == nil || !strings.Contains(err.Error(), "version definitions") {
		t.Fatalf("error = %v, want one about the version definitions", err)
	}
	if n := strings.Count(err.Error(), p); n != 1 {
		t.Errorf("the path is named %d times: %v", n, err)
	}
}

// TestBloomWordsNotPowerOfTwo: glibc's ld.so asserts that a .gnu.hash's
// bloom filter has a power-of-two number of words, and aborts a program
// that loads a library whose filter does not (the real loader is the
// oracle here). Looked up anyway, as before, the program's reference to
// what the library defines read as undefined: RD1001 pointed at the wrong
// cause. The library and the program are now reported as unreadable, with
// the reason and where it is.
func TestBloomWordsNotPowerOfTwo(t *testing.T) {
	dir, write, run := testenv.GCCDir(t)
	lib, err := os.ReadFile(testenv.Testdata("libfoo.so.1"))
	if err != nil {
		t.Fatal(err)
	}
	write("libfoo.so.1", string(lib))
	write("libfoo.so", string(lib))
	write("m.c", "int foo_api(void);\nint main(void) { return foo_api() == 2 ? 0 : 1; }\n")
	run("-o", "m", "m.c", "-L.", "-lfoo", "-Wl,-rpath,$ORIGIN")
	prog, libPath := filepath.Join(dir, "m"), filepath.Join(dir, "libfoo.so.1")
	if out, err := exec.Command(prog).CombinedOutput(); err != nil {
		t.Fatalf("m before the edit: %v\n%s", err, out)
	}
	// Three bloom words instead of one: the table still fits its section.
	ef, err := elf.Open(libPath)
	if err != nil {
		t.Fatal(err)
	}
	at := ef.Section(".gnu.hash").Offset + 8
	ef.Close()
	binary.LittleEndian.PutUint32(lib[at:], 3)
	write("libfoo.so.1", string(lib))
	out, err := exec.Command(prog).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "bitmask_nwords") {
		t.Fatalf("ld.so loaded a library with 3 bloom words: %v\n%s", err, out)
	}
	for _, p := range []string{prog, libPath} {
		_, err := symcheck.Symbols(context.Background(), []string{p}, symcheck.SymbolsOptions{})
		if err == nil || !strings.Contains(err.Error(), "3 bloom words, not a power of two") || !strings.Contains(err.Error(), libPath) ||
			!strings.Contains(err.Error(), fmt.Sprintf("offset %#x", at-8)) {
			t.Errorf("symbols %s: %v", filepath.Base(p), err)
		}
	}
	rep, err := check.Run(context.Background(), []string{dir}, check.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		t.Errorf("finding %s %s: %s", f.Rule, f.File, f.Message)
	}
	var bad []string
	for _, e := range rep.Errors {
		if strings.Contains(e.Error, "not a power of two") {
			bad = append(bad, filepath.Base(e.Path))
		}
	}
	if !reflect.DeepEqual(bad, []string{"libfoo.so.1", "m"}) {
		t.Errorf("check errors %+v, want libfoo.so.1 and m reported", rep.Errors)
	}
}

// fooApp builds libfoo.so.1 (int foo(void), linked with ldflags) and app,
// which calls foo through it (RUNPATH $ORIGIN), lets edit rewrite the
// library's bytes (parsed as f; nil leaves them), and returns app's path.
func fooApp(t *testing.T, edit func(t *testing.T, b []byte, f *elf.File), ldflags ...string) string {
	t.Helper()
	dir, write, run := testenv.GCCDir(t)
	write("foo.c", "int foo(void) { return 42; }\n")
	write("main.c", "int foo(void);\nint main(void) { return foo() == 42 ? 0 : 1; }\n")
	run(append([]string{"-shared", "-fPIC", "-o", "libfoo.so.1", "foo.c", "-Wl,-soname,libfoo.so.1"}, ldflags...)...)
	run("-o", "app", "main.c", "libfoo.so.1", "-Wl,-rpath,$ORIGIN")
	if edit != nil {
		lib := filepath.Join(dir, "libfoo.so.1")
		b, err := os.ReadFile(lib)
		if err != nil {
			t.Fatal(err)
		}
		f, err := elf.NewFile(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		edit(t, b, f)
		if err := os.WriteFile(lib, b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "app")
}

// fooBinds runs app (fooApp's) under the real loader, which must run it
// when binds is set and otherwise fail with "undefined symbol: foo", and
// checks that binding it finds the same: nothing, or foo undefined. It
// returns the findings.
func fooBinds(t *testing.T, app string, binds bool) []finding.Finding {
	t.Helper()
	out, err := exec.Command(app).CombinedOutput()
	if ran := err == nil; ran != binds || !ran && !strings.Contains(string(out), "undefined symbol: foo") {
		t.Fatalf("oracle: the program ran = %v (%v %s), want %v", ran, err, out, binds)
	}
	rep := symbols(t, []string{app}, symcheck.SymbolsOptions{})
	var got, want []string
	for _, f := range rep.Findings {
		got = append(got, f.Rule+":"+f.Symbol)
	}
	if !binds {
		want = []string{finding.RuleUndefinedSymbol + ":foo"}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("findings = %v, want %v", got, want)
	}
	return rep.Findings
}

// TestUnsearchedLibraryRealLoader: ld.so looks symbols up only through
// the hash table the dynamic section names (DT_GNU_HASH, else DT_HASH) and
// skips a library whose table has no buckets, or that has none. A program
// calling such a library's function fails with "undefined symbol"; the
// binding must say the same (and, where the library still lists the
// definition, why), and must still bind through DT_HASH when only
// DT_GNU_HASH is gone.
func TestUnsearchedLibraryRealLoader(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("runs x86-64 Linux programs")
	}
	type edit = func(t *testing.T, b []byte, f *elf.File)
	dynTag := func(tag elf.DynTag) edit { // the entry becomes DT_DEBUG
		return func(t *testing.T, b []byte, f *elf.File) {
			for _, p := range f.Progs {
				for off := p.Off; p.Type == elf.PT_DYNAMIC && off+16 <= p.Off+p.Filesz; off += 16 {
					if elf.DynTag(binary.LittleEndian.Uint64(b[off:])) == tag {
						binary.LittleEndian.PutUint64(b[off:], uint64(elf.DT_DEBUG))
						return
					}
				}
			}
			t.Fatalf("no %v", tag)
		}
	}
	noBuckets := func(typ elf.SectionType) edit {
		return func(t *testing.T, b []byte, f *elf.File) {
			s := f.SectionByType(typ)
			if s == nil {
				t.Fatalf("no %v", typ)
			}
			binary.LittleEndian.PutUint32(b[s.Offset:], 0)
		}
	}
	for _, c := range []struct {
		name, style string
		edit        edit
		binds       bool
	}{
		{"intact", "gnu", nil, true},
		{"no DT_GNU_HASH", "gnu", dynTag(elf.DT_GNU_HASH), false},
		{"GNU hash without buckets", "gnu", noBuckets(elf.SHT_GNU_HASH), false},
		{"SysV hash without buckets", "sysv", noBuckets(elf.SHT_HASH), false},
		{"both, no DT_GNU_HASH: DT_HASH is searched", "both", dynTag(elf.DT_GNU_HASH), true},
		{"both, no DT_HASH: DT_GNU_HASH is searched", "both", dynTag(elf.DT_HASH), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, f := range fooBinds(t, fooApp(t, c.edit, "-Wl,--hash-style="+c.style), c.binds) {
				// The library still lists foo: the message says why
				// nothing binds to it.
				if !strings.Contains(f.Message, "no hash table") {
					t.Errorf("message %q does not explain the hash table", f.Message)
				}
			}
		})
	}
}

// TestDefinitionsLoaderSkipsRealLoader: glibc's do_lookup_x and
// check_match pass over a definition whose st_value is 0 (not absolute,
// not TLS) and one whose binding is not global, weak or STB_GNU_UNIQUE; a
// program whose only definition of foo is such a symbol fails with
// "undefined symbol: foo", and so must the binding. A unique definition
// binds.
func TestDefinitionsLoaderSkipsRealLoader(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("runs x86-64 Linux programs")
	}
	for _, c := range []struct {
		name  string
		edit  func(sym []byte) // foo's ELF64 .dynsym entry
		binds bool
	}{
		{"intact", func([]byte) {}, true},
		{"st_value 0", func(sym []byte) { binary.LittleEndian.PutUint64(sym[8:], 0) }, false},
		{"reserved binding 3", func(sym []byte) { sym[4] = 3<<4 | byte(elf.STT_FUNC) }, false},
		{"STB_GNU_UNIQUE", func(sym []byte) { sym[4] = 10<<4 | byte(elf.STT_FUNC) }, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			app := fooApp(t, func(t *testing.T, b []byte, f *elf.File) {
				syms, err := f.DynamicSymbols()
				if err != nil {
					t.Fatal(err)
				}
				ds := f.SectionByType(elf.SHT_DYNSYM)
				for i, s := range syms { // syms[i] is entry i+1
					if s.Name == "foo" {
						c.edit(b[ds.Offset+uint64(i+1)*24:])
						return
					}
				}
				t.Fatal("no foo in .dynsym")
			})
			fooBinds(t, app, c.binds)
		})
	}
}

// TestUnversionedReferenceRealLoader: a program linked against an
// unversioned libv.so.1 runs with a versioned build whose only foo is a
// non-default (hidden) version of the first version node, index 2
// (glibc's check_match takes indexes below 3 for unversioned references,
// as an old program expects the oldest version), and fails with
// "undefined symbol: foo" when that version is a later node. The binding
// must agree, and say the second as an undefined symbol (RD1001) with the
// versions it found, not as a version mismatch of an empty version.
func TestUnversionedReferenceRealLoader(t *testing.T) {
	dir, write, run := testenv.GCCDir(t)
	write("plain.c", "int foo(void) { return 1; }\n")
	write("main.c", "int foo(void);\nint main(void) { return foo() - 1; }\n")
	run("-shared", "-fPIC", "-o", "libv.so.1", "plain.c", "-Wl,-soname,libv.so.1")
	run("-o", "app", "main.c", "libv.so.1", "-Wl,-rpath,$ORIGIN")
	app := filepath.Join(dir, "app")
	for _, c := range []struct {
		name, versions string // the version script; foo is foo_impl@V2 (hidden) or @V1
		node           string
		binds          bool
	}{
		{"first node (index 2)", "V1 { global: foo_impl; };", "V1", true},
		{"later node (index 3)", "V1 { global: x; };\nV2 { global: foo_impl; } V1;", "V2", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			write("v.c", "int x(void) { return 0; }\nint foo_impl(void) { return 1; }\n__asm__(\".symver foo_impl,foo@"+c.node+"\");\n")
			write("v.map", c.versions+"\n")
			run("-shared", "-fPIC", "-o", "libv.so.1", "v.c", "-Wl,-soname,libv.so.1", "-Wl,--version-script=v.map")
			out, err := exec.Command(app).CombinedOutput()
			if ran := err == nil; ran != c.binds || !ran && !strings.Contains(string(out), "undefined symbol: foo") {
				t.Fatalf("oracle: the program ran = %v (%v %s), want %v", ran, err, out, c.binds)
			}
			rep := symbols(t, []string{app}, symcheck.SymbolsOptions{})
			if c.binds {
				if len(rep.Findings) != 0 {
					t.Errorf("findings %+v, want none", rep.Findings)
				}
				return
			}
			if len(rep.Findings) != 1 {
				t.Fatalf("findings %+v, want one", rep.Findings)
			}
			f := rep.Findings[0]
			want := "V2 in " + filepath.Join(dir, "libv.so.1")
			if f.Rule != finding.RuleUndefinedSymbol || f.Symbol != "foo" || !slices.Equal(f.DefinedWith, []string{want}) ||
				!strings.HasPrefix(f.Message, "undefined symbol: foo ("+app+")") {
				t.Errorf("finding %s %s %q defined with %q", f.Rule, f.Symbol, f.Message, f.DefinedWith)
			}
		})
	}
}

// TestMissingLibraryAtLoaderStop: when the search reaches a copy the
// loader fails on (here an OS ABI it refuses, in LD_LIBRARY_PATH, which is
// searched before the RUNPATH that holds the good one), the library is
// missing, and the finding quotes the loader's error for that file and
// says to replace or remove it, as the real loader's failure does.
func TestMissingLibraryAtLoaderStop(t *testing.T) {
	var bad string
	app := fooApp(t, func(t *testing.T, b []byte, _ *elf.File) {
		b = bytes.Clone(b)
		b[elf.EI_OSABI] = byte(elf.ELFOSABI_FREEBSD)
		bad = filepath.Join(t.TempDir(), "libfoo.so.1")
		if err := os.WriteFile(bad, b, 0o755); err != nil {
			t.Fatal(err)
		}
	})
	cmd := exec.Command(app)
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+filepath.Dir(bad))
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), bad+": ELF file OS ABI invalid") {
		t.Fatalf("oracle: %v %s", err, out)
	}
	rep := symbols(t, []string{app}, symcheck.SymbolsOptions{Resolver: rpath.Options{LDLibraryPath: []string{filepath.Dir(bad)}}})
	var lib *finding.Finding
	for i, f := range rep.Findings {
		if f.Rule == finding.RuleMissingLibrary {
			lib = &rep.Findings[i]
		}
	}
	if lib == nil || !strings.Contains(lib.Message, bad+": ELF file OS ABI invalid") || !strings.Contains(lib.Message, "searches no further") ||
		!strings.HasPrefix(lib.Fix, "replace or remove "+bad) {
		t.Errorf("missing-library finding %+v", lib)
	}
}

// TestMissingInterpreter: a program whose PT_INTERP does not exist (the
// check fixture's, a glibc build tree's loader) has one missing-interpreter
// finding naming the loader, saying the shell's words are about the
// program, and giving the patchelf call with the system's loader (or, in
// a root without one, the C library's); the kernel, as the oracle,
// refuses to execute it.
func TestMissingInterpreter(t *testing.T) {
	prog := testenv.Testdata("checktree/bin/buildinterp")
	const interp = "/build/glibc-2.36/lib/ld-linux-x86-64.so.2"
	var pe *fs.PathError
	if err := exec.Command(prog).Run(); !errors.As(err, &pe) {
		t.Fatalf("oracle: execve of %s gave %v, want a path error", prog, err)
	}
	rep := symbols(t, []string{prog}, symcheck.SymbolsOptions{})
	if len(rep.Findings) != 1 {
		t.Fatalf("findings %+v, want one", rep.Findings)
	}
	f := rep.Findings[0]
	if f.Rule != finding.RuleMissingInterpreter || f.Library != interp || f.Severity != finding.SeverityError ||
		!strings.Contains(f.Message, interp+": not found") || !strings.Contains(f.Message, "required file not found") ||
		f.Fix != "point it at the system's loader: rocmdoctor patchelf --set-interpreter /lib64/ld-linux-x86-64.so.2 "+prog {
		t.Errorf("finding %+v", f)
	}
	// In a root without the usual loader (as NixOS is), the fix names no
	// path that is not there; a program asking for the usual path may
	// also have a loader installed there.
	empty := rpath.Options{Root: t.TempDir(), NoCache: true}
	for p, tail := range map[string]string{prog: "dynamic-linker names it)", testenv.Testdata("hello"): ", or install a loader at /lib64/ld-linux-x86-64.so.2"} {
		rep := symbols(t, []string{p}, symcheck.SymbolsOptions{Resolver: empty})
		var f *finding.Finding
		for i := range rep.Findings {
			if rep.Findings[i].Rule == finding.RuleMissingInterpreter {
				f = &rep.Findings[i]
			}
		}
		if f == nil || !strings.HasPrefix(f.Fix, "point it at the dynamic loader of the C library it is to run with: rocmdoctor patchelf --set-interpreter LOADER "+p) ||
			!strings.HasSuffix(f.Fix, tail) {
			t.Errorf("%s in an empty root: %+v", p, f)
		}
	}
}
