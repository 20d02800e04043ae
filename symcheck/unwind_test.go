package symcheck_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/finding"
	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
	"github.com/rocmdoctor/rocmdoctor/prefix"
	"github.com/rocmdoctor/rocmdoctor/rpath"
	"github.com/rocmdoctor/rocmdoctor/symcheck"
)

func findingRules(fs []finding.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Rule)
	}
	return out
}

func TestLinkLineAMDGPUWithHostLibunwind(t *testing.T) {
	dir := t.TempDir()
	testenv.CopyFile(t, testenv.Testdata("libfoo.so.1"), filepath.Join(dir, "host", "libunwind.so"))
	ll, err := symcheck.ParseLinkLine([]string{"ld.lld", testenv.Testdata("k-gfx803.o"), "-L" + filepath.Join(dir, "host"), "-lunwind", "-o", "out"})
	if err != nil {
		t.Fatal(err)
	}
	if ll.TargetText != "EM_AMDGPU gfx803" || ll.Target.CodeObject != 4 {
		t.Errorf("target = %q (v%d)", ll.TargetText, ll.Target.CodeObject)
	}
	fs := symcheck.LinkFindings(ll)
	if len(fs) != 1 {
		t.Fatalf("findings = %+v", fs)
	}
	f := fs[0]
	want := "`-lunwind` resolves to " + filepath.Join(dir, "host", "libunwind.so") + " (ELF64 EM_X86_64), but the link is for EM_AMDGPU gfx803 (" + testenv.Testdata("k-gfx803.o") + ", code object v4)"
	if f.Rule != finding.RuleIncompatibleInput || !strings.HasPrefix(f.Message, want) {
		t.Errorf("message = %q\nwant prefix %q", f.Message, want)
	}
	if !strings.Contains(f.Fix, "the device link must not get host -l flags; remove -lunwind or the -L"+filepath.Join(dir, "host")) {
		t.Errorf("fix = %q", f.Fix)
	}
}

func TestLinkLine32On64WithGNUPick(t *testing.T) {
	dir := t.TempDir()
	d64, d32 := filepath.Join(dir, "lib64"), filepath.Join(dir, "lib32")
	testenv.CopyFile(t, testenv.Testdata("libfoo.so.1"), filepath.Join(d64, "libunwind.so"))
	testenv.CopyFile(t, testenv.Testdata("libi386.so"), filepath.Join(d32, "libunwind.so"))
	ll, err := symcheck.ParseLinkLine([]string{"gcc", "-m32", testenv.Testdata("i386.o"), "-Wl,-L," + d64, "-Xlinker", "-L" + d32, "-lunwind"})
	if err != nil {
		t.Fatal(err)
	}
	fs := symcheck.LinkFindings(ll)
	if len(fs) != 1 || !strings.Contains(fs[0].Message, "(ELF64 EM_X86_64), but the link is for ELF32 EM_386") ||
		!strings.Contains(fs[0].Message, "GNU ld would skip it and use "+filepath.Join(d32, "libunwind.so")) {
		t.Errorf("findings = %+v", fs)
	}
	// With the right directory first nothing is wrong.
	ll, _ = symcheck.ParseLinkLine([]string{testenv.Testdata("i386.o"), "-L" + d32, "-L" + d64, "-lunwind"})
	if fs := symcheck.LinkFindings(ll); len(fs) != 0 {
		t.Errorf("compatible link: %+v", fs)
	}
}

func TestLinkLineParsing(t *testing.T) {
	dir := t.TempDir()
	testenv.CopyFile(t, testenv.Testdata("libgnu.a"), filepath.Join(dir, "a", "libx.a"))
	testenv.CopyFile(t, testenv.Testdata("libfoo.so.1"), filepath.Join(dir, "a", "libx.so"))
	testenv.CopyFile(t, testenv.Testdata("libfoo.so.1"), filepath.Join(dir, "sys", "usr", "lib", "libfoo.so.1"))
	os.MkdirAll(filepath.Join(dir, "script"), 0o755)
	os.WriteFile(filepath.Join(dir, "script", "libc.so"), []byte("/* GNU ld script */\nGROUP ( /lib/x86_64-linux-gnu/libc.so.6 )\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "script", "big.txt"), []byte("GROUP"+strings.Repeat(" ", 5000)), 0o644)
	for _, tt := range []struct {
		name string
		args []string
		want []string // kind:path-suffix per input
	}{
		{"dynamic prefers .so", []string{"-L" + dir + "/a", "-lx"}, []string{"shared:a/libx.so"}},
		{"Bstatic takes .a", []string{"-L" + dir + "/a", "-Wl,-Bstatic", "-lx", "-Wl,-Bdynamic", "-lx"}, []string{"archive:a/libx.a", "shared:a/libx.so"}},
		{"-l:exact", []string{"-L", dir + "/sys/usr/lib", "-l:libfoo.so.1"}, []string{"shared:usr/lib/libfoo.so.1"}},
		{"sysroot =", []string{"--sysroot=" + dir + "/sys", "-L=/usr/lib", "-l:libfoo.so.1"}, []string{"shared:usr/lib/libfoo.so.1"}},
		{"missing", []string{"-L" + dir + "/a", "-lnothere", "-o", "out.o"}, []string{"missing:"}},
		{"linker script", []string{dir + "/script/libc.so"}, []string{"linker-script:script/libc.so"}},
		{"large text is not a script", []string{dir + "/script/big.txt"}, []string{"other:script/big.txt"}},
		{"directory input", []string{dir + "/a"}, []string{"other:" + dir + "/a"}},
		{"missing input", []string{dir + "/none.o"}, []string{"missing:none.o"}},
		{"values are not inputs", []string{"-o", "libx.a", "-x", "c", "-T", "script.ld", "-L" + dir + "/a", "-lx"}, []string{"shared:a/libx.so"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ll, err := symcheck.ParseLinkLine(tt.args)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, in := range ll.Inputs {
				got = append(got, in.Kind+":"+in.Path)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("inputs = %v, want %v", got, tt.want)
			}
			for i := range got {
				k, suffix, _ := strings.Cut(tt.want[i], ":")
				if !strings.HasPrefix(got[i], k+":") || !strings.HasSuffix(got[i], suffix) {
					t.Errorf("input %d = %s, want %s", i, got[i], tt.want[i])
				}
			}
		})
	}
	// What a missing input's finding says (FuzzParseLinkLine found the
	// missing file without a fix, and -l:NAME was looked for as
	// "lib:NAME.so").
	ll, err := symcheck.ParseLinkLine([]string{"-L" + dir + "/a", "-l:libnone.so.3", "-lnone", dir + "/none.o"})
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, f := range symcheck.LinkFindings(ll) {
		if f.Fix == "" {
			t.Errorf("no fix: %+v", f)
		}
		msgs = append(msgs, f.Message)
	}
	want := []string{
		"-l:libnone.so.3: no libnone.so.3 in " + dir + `/a (ld.lld: "unable to find library -l:libnone.so.3", GNU ld: "cannot find -l:libnone.so.3")`,
		"-lnone: no libnone.so or libnone.a in " + dir + `/a (ld.lld: "unable to find library -lnone", GNU ld: "cannot find -lnone")`,
		"input " + dir + "/none.o does not exist",
	}
	if !reflect.DeepEqual(msgs, want) {
		t.Errorf("messages:\n%q\nwant\n%q", msgs, want)
	}
	ll, _ = symcheck.ParseLinkLine([]string{"-lnone"})
	if fs := symcheck.LinkFindings(ll); len(fs) != 1 || fs[0].Message != `-lnone: no libnone.so or libnone.a in the search path, which is empty (ld.lld: "unable to find library -lnone", GNU ld: "cannot find -lnone")` {
		t.Errorf("no -L: %+v", fs)
	}
	if _, err := symcheck.ParseLinkLine([]string{"-L"}); err == nil {
		t.Errorf("-L without a value accepted")
	}
	ll, _ = symcheck.ParseLinkLine([]string{"-target", "amdgcn-amd-amdhsa", "-mcpu=gfx90a:xnack-", "k.s"})
	if ll.TargetText != "EM_AMDGPU gfx90a:xnack-" {
		t.Errorf("target from flags = %q", ll.TargetText)
	}
}

// TestLinkLineRealLLD reproduces the amdgcn libunwind link line with clang-15 and ld.lld-15:
// lld fails with "incompatible", and rocmdoctor names the same input.
func TestLinkLineRealLLD(t *testing.T) {
	clang := testenv.Tool(t, "clang-15", "clang-15")
	lld := testenv.Tool(t, "ld.lld-15", "lld-15")
	unwind := testenv.File(t, "/usr/lib/llvm-15/lib/libunwind.so.1", "libunwind-15")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "test.s"), []byte("\t.text\n\ts_endpgm\n"), 0o644)
	if out, err := exec.Command(clang, "-x", "assembler", "-target", "amdgcn-amdhsa", "-mcpu=gfx803", "-c", filepath.Join(dir, "test.s"), "-o", filepath.Join(dir, "test.o")).CombinedOutput(); err != nil {
		t.Fatalf("clang: %v %s", err, out)
	}
	lib := filepath.Join(dir, "llvm-runtimes", "lib")
	os.MkdirAll(lib, 0o755)
	os.Symlink(unwind, filepath.Join(lib, "libunwind.so"))
	args := []string{filepath.Join(dir, "test.o"), "-L" + lib, "-lunwind", "-o", filepath.Join(dir, "test")}
	out, err := exec.Command(lld, args...).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "incompatible") || !strings.Contains(string(out), "libunwind.so") {
		t.Fatalf("oracle: ld.lld should fail with incompatible, got %v %s", err, out)
	}
	ll, err := symcheck.ParseLinkLine(append([]string{lld}, args...))
	if err != nil {
		t.Fatal(err)
	}
	fs := symcheck.LinkFindings(ll)
	if len(fs) != 1 || fs[0].File != filepath.Join(lib, "libunwind.so") || !strings.Contains(fs[0].Message, "EM_AMDGPU gfx803") {
		t.Errorf("rocmdoctor: %+v (lld said %s)", fs, out)
	}
	// The 32/64-bit case with gcc and GNU ld: ld skips the 64-bit library
	// ("skipping incompatible") and rocmdoctor says which one it skipped to.
	gcc := testenv.GCC32(t)
	os.WriteFile(filepath.Join(dir, "m.c"), []byte("int main(void){return 0;}\n"), 0o644)
	if out, err := exec.Command(gcc, "-m32", "-c", filepath.Join(dir, "m.c"), "-o", filepath.Join(dir, "m.o")).CombinedOutput(); err != nil {
		t.Fatalf("gcc -m32: %v %s", err, out)
	}
	args = []string{"-m32", filepath.Join(dir, "m.o"), "-L" + lib, "-lunwind", "-o", filepath.Join(dir, "m")}
	out, _ = exec.Command(gcc, args...).CombinedOutput()
	if !strings.Contains(string(out), "skipping incompatible") {
		t.Fatalf("oracle: GNU ld should skip the incompatible library, said %s", out)
	}
	ll, _ = symcheck.ParseLinkLine(append([]string{gcc}, args...))
	if fs := symcheck.LinkFindings(ll); len(fs) != 1 || !strings.Contains(fs[0].Message, "but the link is for ELF32 EM_386") {
		t.Errorf("rocmdoctor on the -m32 link: %+v", fs)
	}
}

// TestLinkLineClangDriverAMDGPU models clang 15's AMDGPU toolchain, which
// passes inputs, -l and -Wl, options to ld.lld but not -L, against the real
// clang-15 and ld.lld-15: Tensile's probe with the wrapper's -L/-lunwind
// fails with "unable to find library" (not "incompatible"), and the fix
// (drop the host flags) makes the link succeed; a device archive given
// with -L is not found until it is passed as -Wl,-L (the fix for a
// compatible library); a `clang -###` transcript gives what ld.lld gets,
// and a clang whose version the name does not tell is read as written,
// said so.
func TestLinkLineClangDriverAMDGPU(t *testing.T) {
	clang := testenv.Tool(t, "clang-15", "clang-15")
	testenv.Tool(t, "ld.lld-15", "lld-15")
	ar := testenv.Tool(t, "llvm-ar-15", "llvm-15")
	dir := t.TempDir()
	run := func(name string, args ...string) (string, error) {
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	must := func(name string, args ...string) {
		t.Helper()
		if out, err := run(name, args...); err != nil {
			t.Fatalf("%s %v: %v %s", name, args, err, out)
		}
	}
	os.WriteFile(filepath.Join(dir, "test.s"), []byte("\t.text\n\ts_endpgm\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "dev.c"), []byte("int devf(void){return 3;}\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "k.c"), []byte("extern int devf(void); int g(void){return devf();}\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "host.c"), []byte("int _Unwind_Backtrace(void){return 0;}\n"), 0o644)
	host := filepath.Join(dir, "llvm-runtimes", "lib")
	devlib := filepath.Join(dir, "devlib")
	os.MkdirAll(host, 0o755)
	os.MkdirAll(devlib, 0o755)
	must(testenv.Tool(t, "gcc", "gcc"), "-shared", "-fPIC", "-o", filepath.Join(host, "libunwind.so"), "host.c")
	must(clang, "-target", "amdgcn-amd-amdhsa", "-mcpu=gfx906", "-nogpulib", "-c", "dev.c", "k.c")
	must(ar, "rc", filepath.Join(devlib, "libdev.a"), "dev.o")

	check := func(args []string) (*symcheck.LinkLine, []finding.Finding, string, error) {
		t.Helper()
		ll, err := symcheck.ParseLinkLine(append([]string{clang}, args...))
		if err != nil {
			t.Fatal(err)
		}
		out, lerr := run(clang, args...)
		return ll, symcheck.LinkFindings(ll), out, lerr
	}
	// Tensile's probe with the wrapper's flags.
	at := func(name string) string { return filepath.Join(dir, name) }
	probe := []string{"-x", "assembler", "-target", "amdgcn-amdhsa", "-mcpu=gfx803", at("test.s"), "-o", at("test")}
	ll, fs, out, err := check(append(probe, "-L"+host, "-lunwind"))
	if err == nil || !strings.Contains(out, "unable to find library -lunwind") {
		t.Fatalf("oracle: clang-15 should fail with unable to find library, got %v %s", err, out)
	}
	if len(ll.SearchDirs) != 0 || !reflect.DeepEqual(ll.Unpassed, []string{host}) || !strings.Contains(ll.Driver, "clang 15") {
		t.Errorf("model: search %q, unpassed %q, driver %q", ll.SearchDirs, ll.Unpassed, ll.Driver)
	}
	if len(fs) != 1 || fs[0].Rule != finding.RuleMissingLibrary || !strings.Contains(fs[0].Message, `"unable to find library -lunwind"`) ||
		!strings.Contains(fs[0].Message, filepath.Join(host, "libunwind.so")+" (ELF64 EM_X86_64), incompatible") || !strings.Contains(fs[0].Fix, "remove -lunwind") {
		t.Fatalf("findings: %+v", fs)
	}
	// The fix: without the host flags the probe links.
	if _, fs, out, err := check(probe); err != nil || len(fs) != 0 {
		t.Errorf("fixed probe: %v %s, findings %+v", err, out, fs)
	}
	// Through -Wl, the directory reaches ld.lld: "incompatible".
	if _, fs, out, err := check(append(probe, "-Wl,-L"+host, "-lunwind")); err == nil || !strings.Contains(out, "is incompatible with") ||
		len(fs) != 1 || fs[0].Rule != finding.RuleIncompatibleInput {
		t.Errorf("-Wl,-L: clang %v %s; findings %+v", err, out, fs)
	}
	// A device archive: found by nobody with -L; the fix is -Wl,-L.
	link := []string{"-target", "amdgcn-amd-amdhsa", "-mcpu=gfx906", at("k.o"), "-o", at("k.out")}
	_, fs, out, err = check(append(link, "-L"+devlib, "-ldev"))
	if err == nil || !strings.Contains(out, "unable to find library -ldev") {
		t.Fatalf("oracle: %v %s", err, out)
	}
	if len(fs) != 1 || fs[0].Fix != "pass the directory to ld.lld itself: -Wl,-L"+devlib {
		t.Fatalf("device archive: %+v", fs)
	}
	if _, fs, out, err := check(append(link, "-Wl,-L"+devlib, "-ldev")); err != nil || len(fs) != 0 {
		t.Errorf("with the fix: %v %s, findings %+v", err, out, fs)
	}
	// The transcript: what ld.lld gets, as ld.lld reads it.
	tr, _ := run(clang, append([]string{"-###"}, append(link, "-L"+devlib, "-ldev")...)...)
	ll, err = symcheck.ParseLinkTranscript(strings.NewReader(tr), "t.txt")
	if err != nil {
		t.Fatal(err)
	}
	if fs := symcheck.LinkFindings(ll); len(ll.SearchDirs) != 0 || ll.TargetText != "EM_AMDGPU gfx906" || len(fs) != 1 || !strings.Contains(fs[0].Message, `ld.lld: "unable to find library -ldev"`) {
		t.Errorf("transcript: %+v %+v\n%s", ll, fs, tr)
	}
	if _, err := symcheck.ParseLinkTranscript(strings.NewReader("clang version 15\n \"/usr/bin/clang\" \"-cc1\"\n"), "c.txt"); err == nil || !strings.Contains(err.Error(), "c.txt: no linker job") {
		t.Errorf("a transcript without a link: %v", err)
	}
	// A clang whose name does not say its version: read as written, said so.
	plain := filepath.Join(dir, "bin", "clang")
	os.MkdirAll(filepath.Dir(plain), 0o755)
	os.Symlink(clang, plain)
	ll, _ = symcheck.ParseLinkLine(append([]string{plain}, append(link, "-L"+devlib, "-ldev")...))
	if !reflect.DeepEqual(ll.SearchDirs, []string{devlib}) || !strings.Contains(ll.Driver, "--link-transcript") {
		t.Errorf("unknown version: search %q, driver %q", ll.SearchDirs, ll.Driver)
	}
}

// TestUnwindClosure builds a library that needs both LLVM's libunwind.so.1
// and libgcc_s.so.1, one whose NEEDED libunwind.so.1 resolves to the nongnu
// libunwind, and one exporting a static copy of _Unwind_*.
func TestUnwindClosure(t *testing.T) {
	gcc := testenv.Tool(t, "gcc", "gcc")
	llvmUnwind := testenv.File(t, "/usr/lib/llvm-15/lib/libunwind.so.1", "libunwind-15")
	nongnu := testenv.File(t, "/usr/lib/x86_64-linux-gnu/libunwind.so.8", "libunwind8")
	dir := t.TempDir()
	build := func(out, src string, args ...string) string {
		t.Helper()
		c := filepath.Join(dir, filepath.Base(out)+".c")
		os.WriteFile(c, []byte(src), 0o644)
		p := filepath.Join(dir, out)
		os.MkdirAll(filepath.Dir(p), 0o755)
		cmd := exec.Command(gcc, append([]string{"-shared", "-fPIC", "-o", p, c}, args...)...)
		if o, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("gcc: %v %s", err, o)
		}
		return p
	}
	uses := "extern void _Unwind_Resume(void*); void *keep = (void*)_Unwind_Resume;\n"
	// 1. Both unwinders: LLVM libunwind first, libgcc_s second.
	os.MkdirAll(filepath.Join(dir, "llvm"), 0o755)
	os.Symlink(llvmUnwind, filepath.Join(dir, "llvm", "libunwind.so.1"))
	both := build("both/libboth.so", uses, "-L"+filepath.Join(dir, "llvm"), "-Wl,--no-as-needed", "-l:libunwind.so.1", "-lgcc_s",
		"-Wl,--enable-new-dtags,-rpath,"+filepath.Join(dir, "llvm"))
	rs, err := symcheck.CheckUnwindFiles(context.Background(), []string{both}, rpath.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := rs[0]
	flavours := map[string]bool{}
	for _, u := range r.Unwinders {
		flavours[u.Flavour] = true
	}
	if !flavours[symcheck.FlavourLLVM] || !flavours[symcheck.FlavourLibgcc] {
		t.Errorf("unwinders = %+v", r.Unwinders)
	}
	if rules := findingRules(r.Findings); len(rules) == 0 || rules[0] != finding.RuleMultipleUnwinders {
		t.Errorf("findings = %v", rules)
	} else if !strings.Contains(r.Findings[0].Message, "used by "+both) {
		t.Errorf("the message should say which object binds to which: %s", r.Findings[0].Message)
	}
	// 2. NEEDED libunwind.so.1 that is really the nongnu flavour.
	os.MkdirAll(filepath.Join(dir, "wrong"), 0o755)
	os.Symlink(nongnu, filepath.Join(dir, "wrong", "libunwind.so.1"))
	wrong := build("w/libwrong.so", uses, "-L"+filepath.Join(dir, "llvm"), "-l:libunwind.so.1",
		"-Wl,--enable-new-dtags,-rpath,"+filepath.Join(dir, "wrong"))
	rs, err = symcheck.CheckUnwindFiles(context.Background(), []string{wrong}, rpath.Options{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range rs[0].Findings {
		found = found || (f.Rule == finding.RuleUnwinderFlavour && strings.Contains(f.Message, "which is nongnu-libunwind"))
	}
	if !found {
		t.Errorf("flavour mismatch not found: %+v", rs[0].Findings)
	}
	// 3. A library that exports its own copy of the unwinding ABI.
	static := build("s/libstatic.so", "void _Unwind_RaiseException(void){} void _Unwind_Resume(void){}\n")
	rs, err = symcheck.CheckUnwindFiles(context.Background(), []string{static}, rpath.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rules := strings.Join(findingRules(rs[0].Findings), ","); !strings.Contains(rules, finding.RuleExportsUnwinder) {
		t.Errorf("static copy: %v", rules)
	}
	// 4. A sanitizer-style interceptor (compiler-rt defines
	// _Unwind_RaiseException as a weak alias of
	// __interceptor__Unwind_RaiseException and forwards to the next
	// provider): not an unwinder, and a reference that binds to it is
	// served by libgcc_s behind it.
	icept := build("i/libicept.so", "void __interceptor__Unwind_RaiseException(void){}\n"+
		"void _Unwind_RaiseException(void) __attribute__((weak, alias(\"__interceptor__Unwind_RaiseException\")));\n",
		"-Wl,--no-as-needed", "-lgcc_s")
	user := build("i/libiuser.so", "extern void _Unwind_RaiseException(void*); void *keep = (void*)_Unwind_RaiseException;\n",
		"-L"+filepath.Join(dir, "i"), "-Wl,--no-as-needed", "-l:libicept.so", "-lgcc_s", "-Wl,--enable-new-dtags,-rpath,"+filepath.Join(dir, "i"))
	rs, err = symcheck.CheckUnwindFiles(context.Background(), []string{icept, user}, rpath.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if len(r.Findings) != 0 {
			t.Errorf("%s: an interceptor taken for an unwinder: %+v", r.File, r.Findings)
		}
		if len(r.Unwinders) != 1 || r.Unwinders[0].Flavour != symcheck.FlavourLibgcc {
			t.Errorf("%s: unwinders = %+v, want libgcc_s alone", r.File, r.Unwinders)
		}
	}
	if len(rs) != 2 {
		t.Fatalf("%d results for 2 files", len(rs))
	}
	if len(rs[1].Unwinders) == 1 && strings.Join(rs[1].Unwinders[0].BoundBy, ",") != user {
		t.Errorf("libgcc_s bound by %v, want %s (through the interceptor)", rs[1].Unwinders[0].BoundBy, user)
	}
	// The same with LLVM 17's naming: the public name aliases a trampoline
	// that jumps to ___interceptor_<name>.
	tramp := build("t/libtramp.so", "void ___interceptor__Unwind_RaiseException(void){}\n"+
		"void __interceptor_trampoline__Unwind_RaiseException(void){ ___interceptor__Unwind_RaiseException(); }\n"+
		"void _Unwind_RaiseException(void) __attribute__((weak, alias(\"__interceptor_trampoline__Unwind_RaiseException\")));\n",
		"-Wl,--no-as-needed", "-lgcc_s")
	rs, err = symcheck.CheckUnwindFiles(context.Background(), []string{tramp}, rpath.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || len(rs[0].Findings) != 0 || len(rs[0].Unwinders) != 1 {
		t.Errorf("LLVM 17 interceptor: %+v", rs)
	}
	// The real ones: GCC's libasan and LLVM's ASan runtime.
	for _, p := range []string{testenv.File(t, "/usr/lib/x86_64-linux-gnu/libasan.so.8", "libasan8"),
		testenv.File(t, "/usr/lib/llvm-15/lib/clang/15.0.6/lib/linux/libclang_rt.asan-x86_64.so", "libclang-common-15-dev")} {
		rs, err = symcheck.CheckUnwindFiles(context.Background(), []string{p}, rpath.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) != 1 || rs[0].Error != "" || len(rs[0].Findings) != 0 {
			t.Errorf("%s: %+v", p, rs)
		}
	}
	// A plain C++ library with only libgcc_s is fine.
	p := testenv.File(t, "/usr/lib/x86_64-linux-gnu/libstdc++.so.6", "libstdc++6")
	rs, err = symcheck.CheckUnwindFiles(context.Background(), []string{p}, rpath.Options{})
	if err != nil || len(rs) != 1 || rs[0].Error != "" || len(rs[0].Findings) != 0 {
		t.Errorf("libstdc++: %v %+v", err, rs)
	}
}

// FuzzParseLinkLine: any command line is parsed, resolved against real
// files and judged without panicking, and every finding says what and why.
func FuzzParseLinkLine(f *testing.F) {
	dir := f.TempDir()
	d64, d32 := filepath.Join(dir, "lib64"), filepath.Join(dir, "lib32")
	for src, dst := range map[string]string{
		"libfoo.so.1": filepath.Join(d64, "libunwind.so"),
		"libi386.so":  filepath.Join(d32, "libunwind.so"),
		"libgnu.a":    filepath.Join(d64, "libx.a"),
	} {
		b, err := os.ReadFile(testenv.Testdata(src))
		if err != nil {
			f.Fatal(err)
		}
		os.MkdirAll(filepath.Dir(dst), 0o755)
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			f.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(d64, "libc.so"), []byte("GROUP ( "+filepath.Join(d64, "libx.a")+" AS_NEEDED ( -lunwind ) )\n"), 0o644)
	for _, args := range [][]string{
		{"ld.lld", testenv.Testdata("k-gfx803.o"), "-L" + d64, "-lunwind", "-o", "out"},
		{"gcc", "-m32", testenv.Testdata("i386.o"), "-Wl,-L," + d64, "-Xlinker", "-L" + d32, "-lunwind"},
		{"clang++", "-target", "amdgcn-amdhsa", "-mcpu=gfx803", "-L", d64, "-Wl,-Bstatic", "-lx", "-Wl,-Bdynamic", "-l:libunwind.so", "-lc"},
		{"--sysroot=" + dir, "-L=/lib64", "-lunwind", "-Xlinker"},
		{filepath.Join(d64, "libc.so"), "-o"},
	} {
		f.Add(strings.Join(args, "\n"))
	}
	f.Fuzz(func(t *testing.T, s string) {
		ll, err := symcheck.ParseLinkLine(strings.Split(s, "\n"))
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		for _, in := range ll.Inputs {
			if in.Kind == "" {
				t.Fatalf("input %q without a kind", in.Arg)
			}
		}
		for _, fd := range symcheck.LinkFindings(ll) {
			if fd.Rule == "" || fd.Message == "" || fd.Fix == "" {
				t.Fatalf("incomplete finding %+v", fd)
			}
		}
	})
}

// GNU ld and lld try dir + "/" + name for a -L directory, uncleaned, so a
// ".." after a symbolic link leads where the link leads: with link ->
// real/bin, -L<dir>/link/../lib finds real/lib/libunwind.so, while
// <dir>/lib (what filepath.Join made of it, where -lunwind was "missing")
// holds an i386 decoy. ld.lld is the oracle: it names the same file as
// incompatible.
func TestLinkLineDotDotAfterSymlink(t *testing.T) {
	dir := t.TempDir()
	testenv.CopyFile(t, testenv.Testdata("libfoo.so.1"), filepath.Join(dir, "real", "lib", "libunwind.so"))
	testenv.CopyFile(t, testenv.Testdata("libi386.so"), filepath.Join(dir, "lib", "libunwind.so"))
	os.MkdirAll(filepath.Join(dir, "real", "bin"), 0o755)
	if err := os.Symlink("real/bin", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	ldir := filepath.Join(dir, "link") + "/../lib"
	args := []string{testenv.Testdata("k-gfx803.o"), "-L" + ldir, "-lunwind", "-o", filepath.Join(dir, "out")}
	ll, err := symcheck.ParseLinkLine(append([]string{"ld.lld"}, args...))
	if err != nil {
		t.Fatal(err)
	}
	fs := symcheck.LinkFindings(ll)
	want := ldir + "/libunwind.so"
	if len(fs) != 1 || fs[0].File != want || !strings.Contains(fs[0].Message, "(ELF64 EM_X86_64), but the link is for EM_AMDGPU gfx803") {
		t.Errorf("findings %+v, want one naming %s as ELF64 EM_X86_64", fs, want)
	}
	lld := testenv.Tool(t, "ld.lld-15", "lld-15")
	out, _ := exec.Command(lld, args...).CombinedOutput()
	if !strings.Contains(string(out), want+" is incompatible") {
		t.Errorf("ld.lld says %s; want %s incompatible", out, want)
	}
}

// Two unwinder libraries in one closure, every reference bound to the
// first (nongnu libunwind.so.8 before libgcc_s): LD_DEBUG=bindings shows
// each reference to _Unwind_RaiseException and _Unwind_Resume, libgcc_s's
// own included, going to that one, and RD1101 is a note naming
// it; a static copy beside a library keeps the error.
func TestUnwindersSeverityFromBindings(t *testing.T) {
	gcc := testenv.Tool(t, "gcc", "gcc")
	nongnu := testenv.File(t, "/usr/lib/x86_64-linux-gnu/libunwind.so.8", "libunwind8")
	harness := testenv.DlopenHarness(t)
	dir := t.TempDir()
	c := filepath.Join(dir, "u.c")
	os.WriteFile(c, []byte("extern void _Unwind_Resume(void*); extern int _Unwind_RaiseException(void*);\n"+
		"void *keep[] = {(void*)_Unwind_Resume, (void*)_Unwind_RaiseException};\n"), 0o644)
	os.Mkdir(filepath.Join(dir, "lib"), 0o755)
	lib := filepath.Join(dir, "lib", "libtwo.so")
	if o, err := exec.Command(gcc, "-shared", "-fPIC", "-o", lib, c, "-Wl,--no-as-needed", nongnu, "-lgcc_s").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v %s", err, o)
	}
	providers, out, err := testenv.UnwindBindings(harness, lib)
	if err != nil {
		t.Fatalf("loading: %v\n%s", err, out)
	}
	if len(providers) != 1 {
		t.Fatalf("the loader bound _Unwind_* to %v, want one provider", providers)
	}
	rs, err := symcheck.CheckUnwindFiles(context.Background(), []string{lib}, rpath.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got *finding.Finding
	for i, f := range rs[0].Findings {
		if f.Rule == finding.RuleMultipleUnwinders {
			got = &rs[0].Findings[i]
		}
	}
	if got == nil || len(rs[0].Unwinders) != 2 {
		t.Fatalf("unwinders %+v, findings %+v: want two and RD1101", rs[0].Unwinders, rs[0].Findings)
	}
	// Each names what loaded it: the library, through its NEEDED entries
	// (libgcc_s through libunwind.so.8's own, or the library's).
	for _, u := range rs[0].Unwinders {
		if len(u.PulledInBy) != 1 || !strings.Contains(got.Message, "loaded for "+u.PulledInBy[0]) {
			t.Errorf("%s: pulled in by %v; message %s", u.Path, u.PulledInBy, got.Message)
		}
	}
	for p := range providers {
		if got.Severity != finding.SeverityNote || !strings.Contains(got.Message, filepath.Base(p)+" (") {
			t.Errorf("RD1101 %s: %s; the loader bound everything to %s", got.Severity, got.Message, p)
		}
	}
	// prefix says the same of the two copies.
	rep, err := prefix.Check(context.Background(), dir, prefix.Options{Programs: []string{lib}, Resolver: rpath.Options{NoCache: true, HWCaps: []string{}}})
	if err != nil {
		t.Fatal(err)
	}
	dups := 0
	for _, f := range rep.Findings {
		if f.Rule == finding.RuleDuplicateProvider && f.File == lib && f.Library == "unwinder" {
			dups++
			if f.Severity != finding.SeverityNote {
				t.Errorf("prefix: %s %s; the loader bound everything to one copy", f.Severity, f.Message)
			}
		}
	}
	if dups != 1 {
		t.Errorf("prefix: %d unwinder duplicate findings, want 1: %+v", dups, rep.Findings)
	}
	// A static copy exported beside libgcc_s: an error.
	static := filepath.Join(dir, "libstatic.so")
	sc := filepath.Join(dir, "s.c")
	os.WriteFile(sc, []byte("void _Unwind_RaiseException(void){} void _Unwind_Resume(void){}\n"), 0o644)
	if o, err := exec.Command(gcc, "-shared", "-fPIC", "-o", static, sc).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v %s", err, o)
	}
	mix := filepath.Join(dir, "libmix.so")
	if o, err := exec.Command(gcc, "-shared", "-fPIC", "-o", mix, c, "-Wl,--no-as-needed", static, "-lgcc_s", "-Wl,-rpath,"+dir).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v %s", err, o)
	}
	rs, err = symcheck.CheckUnwindFiles(context.Background(), []string{mix}, rpath.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rs[0].Findings {
		if f.Rule == finding.RuleMultipleUnwinders && f.Severity != finding.SeverityError {
			t.Errorf("with a static copy: %s %s", f.Severity, f.Message)
		}
	}
}
