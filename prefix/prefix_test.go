package prefix_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/finding"
	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
	"github.com/rocmdoctor/rocmdoctor/prefix"
	"github.com/rocmdoctor/rocmdoctor/rpath"
)

func prefixRules(rep *prefix.Report) string {
	var out []string
	for _, f := range rep.Findings {
		out = append(out, f.Rule+":"+f.Library)
	}
	return strings.Join(out, " ")
}

func runPrefix(t *testing.T, root string, o prefix.Options) *prefix.Report {
	t.Helper()
	o.Resolver = rpath.Options{NoCache: true, HWCaps: []string{}}
	rep, err := prefix.Check(context.Background(), root, o)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestPrefixVersionSkew(t *testing.T) {
	p := testenv.NewPrefix(t)
	p.File(".info/version", "6.2.2-116\n")
	p.File("hip5.map", "hip_4.2 { global: hipMalloc; local: *; };\nhip_5.2 { global: hipFree; } hip_4.2;\n")
	p.File("hip6.map", "hip_4.2 { global: hipMalloc; local: *; };\nhip_6.2 { global: hipFree; } hip_4.2;\n")
	p.Lib("lib/libamdhip64.so.5", "libamdhip64.so.5", "void hipMalloc(void){} void hipFree(void){}", "-Wl,--version-script="+filepath.Join(p.Root, "hip5.map"))
	p.Lib("lib/libamdhip64.so.6", "libamdhip64.so.6", "void hipMalloc(void){} void hipFree(void){}", "-Wl,--version-script="+filepath.Join(p.Root, "hip6.map"))
	rep := runPrefix(t, p.Root, prefix.Options{})
	if rep.Majority != "6.2" {
		t.Errorf("majority = %q, versions %+v", rep.Majority, rep.Versions)
	}
	got := prefixRules(rep)
	if !strings.Contains(got, "rocm-version-skew:libamdhip64") || !strings.Contains(got, "rocm-version-skew:hip runtime") {
		t.Errorf("findings = %s", got)
	}
}

// Two LLVMs in one closure: the finding says whether references cross,
// as LD_DEBUG=bindings shows them. Versioned apart (LLVM_15, LLVM_17),
// libcomgr's reference binds to the copy it was linked against: a note.
// Unversioned, the first copy in load order takes it: an error naming the
// reference.
func TestPrefixDuplicateLLVM(t *testing.T) {
	harness := testenv.DlopenHarness(t)
	for _, versioned := range []bool{true, false} {
		t.Run(fmt.Sprintf("versioned=%v", versioned), func(t *testing.T) {
			p := testenv.NewPrefix(t)
			p.File("l15.map", "LLVM_15 { global: *; };\n")
			p.File("l17.map", "LLVM_17 { global: *; };\n")
			v15, v17 := "-Wl,--version-script="+filepath.Join(p.Root, "l15.map"), "-Wl,--version-script="+filepath.Join(p.Root, "l17.map")
			if !versioned {
				v15, v17 = "-Wl,-O1", "-Wl,-O1"
			}
			src := "void LLVMInitializeX86Target(void){}\nvoid _ZN4llvm11LLVMContextC1Ev(void){}\n"
			l15 := p.Lib("lib/libLLVM-15.so.1", "libLLVM-15.so.1", src, v15)
			l17 := p.Lib("lib/rocm-llvm/libLLVM.so.17", "libLLVM.so.17", src, v17)
			comgr := p.Lib("lib/libcomgr.so", "libcomgr.so", "extern void LLVMInitializeX86Target(void); void c(void){LLVMInitializeX86Target();}",
				"-L"+filepath.Join(p.Root, "lib"), "-l:libLLVM-15.so.1", "-Wl,--enable-new-dtags,-rpath,$ORIGIN")
			app := p.Lib("bin/libblender.so", "libblender.so", "extern void c(void); extern void LLVMInitializeX86Target(void); void b(void){c();LLVMInitializeX86Target();}",
				"-Wl,--no-as-needed", "-L"+filepath.Join(p.Root, "lib", "rocm-llvm"), "-l:libLLVM.so.17", "-L"+filepath.Join(p.Root, "lib"), "-lcomgr",
				"-Wl,--enable-new-dtags,-rpath,"+filepath.Join(p.Root, "lib", "rocm-llvm")+":"+filepath.Join(p.Root, "lib"))
			// The oracle: where the loader binds libcomgr's reference.
			cmd := exec.Command(harness, app)
			cmd.Env = append(os.Environ(), "LD_DEBUG=bindings", "LD_BIND_NOW=1")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("loading: %v\n%s", err, out)
			}
			boundTo := ""
			for _, line := range strings.Split(string(out), "\n") {
				if strings.Contains(line, "binding file "+comgr) && strings.Contains(line, "`LLVMInitializeX86Target'") {
					_, rest, _ := strings.Cut(line, " to ")
					boundTo = strings.Fields(rest)[0]
				}
			}
			want := map[bool]string{true: l15, false: l17}[versioned]
			if boundTo != want {
				t.Fatalf("the loader bound libcomgr's LLVMInitializeX86Target to %q, want %s", boundTo, want)
			}
			rep := runPrefix(t, p.Root, prefix.Options{Programs: []string{app}})
			var dup *prefix.RuntimeCopies
			for i := range rep.Providers {
				if rep.Providers[i].Kind == "llvm" && rep.Providers[i].Closure == app {
					dup = &rep.Providers[i]
				}
			}
			if dup == nil {
				t.Fatalf("no duplicate LLVM found: %s", prefixRules(rep))
			}
			if dup.Winner != l17 || len(dup.Others) != 1 || dup.Others[0] != l15 {
				t.Errorf("winner %s, others %v", dup.Winner, dup.Others)
			}
			if by := dup.LinkedAgainst[l15]; len(by) != 1 || by[0] != comgr {
				t.Errorf("linked against the loser: %v", by)
			}
			var fd *finding.Finding
			for i, f := range rep.Findings {
				if f.Rule == finding.RuleDuplicateProvider && f.File == app {
					fd = &rep.Findings[i]
				}
			}
			switch {
			case fd == nil:
				t.Fatalf("no finding: %s", prefixRules(rep))
			case versioned && (fd.Severity != finding.SeverityNote || len(dup.Interposed) != 0):
				t.Errorf("versioned apart: %s %s, interposed %v; want a note", fd.Severity, fd.Message, dup.Interposed)
			case !versioned && (fd.Severity != finding.SeverityError || strings.Join(dup.Interposed[l15], ",") != "libcomgr.so: LLVMInitializeX86Target"):
				t.Errorf("unversioned: %s %s, interposed %v; want an error naming the reference", fd.Severity, fd.Message, dup.Interposed)
			}
		})
	}
}

func TestPrefixToolchainLayout(t *testing.T) {
	p := testenv.NewPrefix(t)
	c := filepath.Join(t.TempDir(), "clang.c")
	os.WriteFile(c, []byte(`#include <stdio.h>
const char *v = "AMD clang version 17.0.0 (https://github.com/RadeonOpenCompute/llvm-project roc-6.1.0 24103)";
int main(void){puts(v);return 0;}`), 0o644)
	os.MkdirAll(filepath.Join(p.Root, "llvm", "bin"), 0o755)
	if o, err := exec.Command(p.GCC, "-o", filepath.Join(p.Root, "llvm", "bin", "clang"), c).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v %s", err, o)
	}
	p.File("llvm/lib/clang/17.0.0/include/stddef.h", "/* */")
	rep := runPrefix(t, p.Root, prefix.Options{})
	if rep.Toolchain.Version != "17.0.0" {
		t.Fatalf("clang version = %q", rep.Toolchain.Version)
	}
	got := prefixRules(rep)
	if !strings.Contains(got, "clang-resource-dir") || !strings.Contains(got, "device-libs-missing") {
		t.Errorf("full-version resource dir for clang 17 and no device libs: %s", got)
	}
	// The ≥ 16 layout and device libs in the old ROCm layout.
	os.Rename(filepath.Join(p.Root, "llvm/lib/clang/17.0.0"), filepath.Join(p.Root, "llvm/lib/clang/17"))
	p.File("amdgcn/bitcode/ocml.bc", "BC\xc0\xde....")
	p.File("amdgcn/bitcode/ockl.bc", "BC\xc0\xde....")
	rep = runPrefix(t, p.Root, prefix.Options{})
	if got := prefixRules(rep); got != "" || rep.Toolchain.DeviceLibs != filepath.Join(p.Root, "amdgcn", "bitcode") || !rep.Toolchain.Headers {
		t.Errorf("old layout: %s %+v", got, rep.Toolchain)
	}
	// ROCm ≥ 6.2: under the resource directory; a non-bitcode file does not count.
	os.RemoveAll(filepath.Join(p.Root, "amdgcn"))
	p.File("llvm/lib/clang/17/lib/amdgcn/bitcode/ocml.bc", "BC\xc0\xde....")
	p.File("llvm/lib/clang/17/lib/amdgcn/bitcode/ockl.bc", "not bitcode")
	if got := prefixRules(runPrefix(t, p.Root, prefix.Options{})); !strings.Contains(got, "device-libs-missing") {
		t.Errorf("one bitcode file is not a device library set: %s", got)
	}
	p.File("llvm/lib/clang/17/lib/amdgcn/bitcode/ockl.bc", "BC\xc0\xde....")
	if got := prefixRules(runPrefix(t, p.Root, prefix.Options{})); got != "" {
		t.Errorf("new layout: %s", got)
	}
}

func TestPrefixHeaderSets(t *testing.T) {
	root := t.TempDir()
	rep := runPrefix(t, root, prefix.Options{Headers: []string{"migraphx"}})
	if got := prefixRules(rep); got != "headers-missing:migraphx" {
		t.Errorf("findings = %s", got)
	}
	// The remedy MIGraphX's requirements.txt gives: the pinned CK commit
	// with CK_BUILD_JIT_LIB (no CK option is named CK_BUILD_CODEGEN).
	if fix := rep.Findings[0].Fix; !strings.Contains(fix, "-DCK_BUILD_JIT_LIB=On") || !strings.Contains(fix, "requirements.txt") || strings.Contains(fix, "CODEGEN") {
		t.Errorf("fix %q", fix)
	}
	for _, h := range prefix.HeaderSets["migraphx"].Headers {
		os.MkdirAll(filepath.Dir(filepath.Join(root, "include", h)), 0o755)
		os.WriteFile(filepath.Join(root, "include", h), nil, 0o644)
	}
	if got := prefixRules(runPrefix(t, root, prefix.Options{Headers: []string{"migraphx"}})); got != "" {
		t.Errorf("with the headers: %s", got)
	}
}

// TestCorpusDebianPrefix uses Debian's ROCm packages as a real prefix.
func TestCorpusDebianPrefix(t *testing.T) {
	testenv.Corpus(t)
	testenv.File(t, "/usr/lib/x86_64-linux-gnu/libamd_comgr.so.2", "libamd-comgr2")
	testenv.File(t, "/usr/lib/x86_64-linux-gnu/amdgcn/bitcode/ocml.bc", "rocm-device-libs")
	testenv.File(t, "/usr/lib/llvm-15/bin/clang", "clang-15")
	rep, err := prefix.Check(context.Background(), "/usr", prefix.Options{Programs: []string{"/usr/lib/x86_64-linux-gnu/libamd_comgr.so.2"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, pv := range rep.Providers {
		if pv.Kind == "llvm" && strings.Contains(pv.Closure, "comgr") {
			t.Errorf("comgr's closure has two LLVMs: %+v", pv)
		}
	}
	tc := rep.Toolchain
	if tc.Version != "15.0.6" || tc.ResourceDir != "/usr/lib/llvm-15/lib/clang/15.0.6" || !tc.Headers ||
		tc.DeviceLibs != "/usr/lib/x86_64-linux-gnu/amdgcn/bitcode" {
		t.Errorf("toolchain = %+v", tc)
	}
	if rep.Majority != "5.2" {
		t.Errorf("Debian's HIP is 5.2, majority %q (%+v)", rep.Majority, rep.Versions)
	}
	t.Logf("Debian prefix: %d versions, %d duplicate-provider closures, toolchain %+v", len(rep.Versions), len(rep.Providers), tc)
}

// clang 15 looks in lib/clang/15.0.6; an empty directory there beside a
// full lib/clang/15 is an error naming both (it passed: the directory
// exists). Debian's clang-15 is the oracle, run in a private mount
// namespace that hides Debian's own fallback include directory (ROCm's
// clang has none): with the empty directory as its resource directory
// #include <stddef.h> fails; after the fix (a symbolic link to the full
// one) it compiles, and the finding is gone.
func TestPrefixEmptyResourceDir(t *testing.T) {
	clang := testenv.Tool(t, "clang-15", "clang-15")
	out, err := exec.Command(clang, "-print-resource-dir").Output()
	if err != nil {
		t.Fatal(err)
	}
	headers := filepath.Join(strings.TrimSpace(string(out)), "include")
	p := testenv.NewPrefix(t)
	c := filepath.Join(t.TempDir(), "clang.c")
	os.WriteFile(c, []byte(`#include <stdio.h>
const char *v = "clang version 15.0.6";
int main(void){puts(v);return 0;}`), 0o644)
	os.MkdirAll(filepath.Join(p.Root, "llvm", "bin"), 0o755)
	if o, err := exec.Command(p.GCC, "-o", filepath.Join(p.Root, "llvm", "bin", "clang"), c).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v %s", err, o)
	}
	empty := filepath.Join(p.Root, "llvm/lib/clang/15.0.6")
	full := filepath.Join(p.Root, "llvm/lib/clang/15")
	os.MkdirAll(empty, 0o755)
	os.MkdirAll(full, 0o755)
	if o, err := exec.Command("cp", "-rL", headers, full).CombinedOutput(); err != nil {
		t.Fatalf("copying clang's headers: %v %s", err, o)
	}
	rep := runPrefix(t, p.Root, prefix.Options{})
	var f *finding.Finding
	for i := range rep.Findings {
		if rep.Findings[i].Rule == finding.RuleResourceDir {
			f = &rep.Findings[i]
		}
	}
	if f == nil || f.Severity != finding.SeverityError || !strings.Contains(f.Message, empty) || !strings.Contains(f.Message, full) || !strings.Contains(f.Fix, "symlink") {
		t.Fatalf("finding %+v, want an error naming %s and %s", f, empty, full)
	}
	src := filepath.Join(t.TempDir(), "s.c")
	os.WriteFile(src, []byte("#include <stddef.h>\nsize_t n;\n"), 0o644)
	compile := func() ([]byte, error) {
		cmd := clang + " -resource-dir=" + empty + " -fsyntax-only " + src
		if fallback := "/usr/include/clang/15.0.6/include"; isDir(fallback) {
			if os.Getuid() != 0 {
				testenv.Missing(t, "root (a mount namespace hiding Debian's fallback headers)", "")
			}
			cmd = "mount --bind " + t.TempDir() + " " + fallback + " && " + cmd
			return exec.Command("unshare", "-m", "sh", "-c", cmd).CombinedOutput()
		}
		return exec.Command("sh", "-c", cmd).CombinedOutput()
	}
	if out, err := compile(); err == nil || !strings.Contains(string(out), "'stddef.h' file not found") {
		t.Errorf("clang-15 with the empty resource directory: %v %s", err, out)
	}
	os.Remove(empty)
	if err := os.Symlink("15", empty); err != nil {
		t.Fatal(err)
	}
	if out, err := compile(); err != nil {
		t.Errorf("clang-15 after the fix: %v %s", err, out)
	}
	if got := prefixRules(runPrefix(t, p.Root, prefix.Options{})); strings.Contains(got, "clang-resource-dir") {
		t.Errorf("after the fix: %s", got)
	}
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
