package rpath_test

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
	"github.com/rocmdoctor/rocmdoctor/rpath"
)

// tree builds small libraries and executables with gcc in a temp dir.
type tree struct {
	t   *testing.T
	dir string
	gcc string
}

func newTree(t *testing.T) *tree {
	gcc := testenv.Tool(t, "gcc", "gcc")
	return &tree{t: t, dir: t.TempDir(), gcc: gcc}
}

func (tr *tree) path(p string) string { return filepath.Join(tr.dir, p) }

// lib builds dir/name with the given SONAME, needing the -l libraries.
func (tr *tree) lib(out, soname, body string, args ...string) string {
	tr.t.Helper()
	src := tr.path(strings.ReplaceAll(out, "/", "_") + ".c")
	if err := os.WriteFile(src, []byte(body+"\n"), 0o644); err != nil {
		tr.t.Fatal(err)
	}
	dst := tr.path(out)
	os.MkdirAll(filepath.Dir(dst), 0o755)
	cmdArgs := []string{"-shared", "-fPIC", "-o", dst, src, "-Wl,-soname," + soname}
	tr.run(append(cmdArgs, args...)...)
	return dst
}

func (tr *tree) exe(out, body string, args ...string) string {
	tr.t.Helper()
	src := tr.path(strings.ReplaceAll(out, "/", "_") + ".c")
	if err := os.WriteFile(src, []byte(body+"\n"), 0o644); err != nil {
		tr.t.Fatal(err)
	}
	dst := tr.path(out)
	os.MkdirAll(filepath.Dir(dst), 0o755)
	tr.run(append([]string{"-o", dst, src}, args...)...)
	return dst
}

func (tr *tree) run(args ...string) {
	tr.t.Helper()
	cmd := exec.Command(tr.gcc, args...)
	cmd.Dir = tr.dir
	if out, err := cmd.CombinedOutput(); err != nil {
		tr.t.Fatalf("gcc %v: %v\n%s", args, err, out)
	}
}

// hermetic options: only the tree, no cache, no system directories except
// libc's (so executables still resolve libc like the real loader does).
func hermetic() rpath.Options {
	return rpath.Options{NoCache: true, HWCaps: []string{}, LegacyHWCaps: []string{}}
}

func resolve(t *testing.T, opts rpath.Options, path string) *rpath.Result {
	t.Helper()
	res, err := rpath.New(opts).Resolve(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func depOf(t *testing.T, res *rpath.Result, name string) *rpath.Dep {
	t.Helper()
	d := findDep(res, name)
	if d == nil {
		t.Fatalf("no dependency %s in the closure", name)
	}
	return d
}

const libdep = `int dep_value(void) { return 1; }`
const usesDep = `extern int dep_value(void); int main(void) { return dep_value() - 1; }`

func TestSearchRules(t *testing.T) {
	tr := newTree(t)
	tr.lib("a/libdep.so.1", "libdep.so.1", libdep)
	tr.lib("b/libdep.so.1", "libdep.so.1", libdep)
	a, b, c := tr.path("a"), tr.path("b"), tr.path("c")
	link := []string{"-L" + a, "-l:libdep.so.1"}

	t.Run("rpath beats LD_LIBRARY_PATH", func(t *testing.T) {
		exe := tr.exe("rpath_exe", usesDep, append(link, "-Wl,--disable-new-dtags,-rpath,"+a)...)
		opts := hermetic()
		opts.LDLibraryPath = []string{b}
		d := depOf(t, resolve(t, opts, exe), "libdep.so.1")
		if d.Path != filepath.Join(a, "libdep.so.1") || d.Rule != rpath.RuleRPath || d.Via != exe {
			t.Errorf("got %s by %s via %s; want a/ by rpath of the executable", d.Path, d.Rule, d.Via)
		}
		lddAgrees(t, exe, rpath.Options{LDLibraryPath: []string{b}}, "LD_LIBRARY_PATH="+b)
	})
	t.Run("LD_LIBRARY_PATH beats runpath", func(t *testing.T) {
		exe := tr.exe("runpath_exe", usesDep, append(link, "-Wl,--enable-new-dtags,-rpath,"+a)...)
		opts := hermetic()
		opts.LDLibraryPath = []string{b}
		d := depOf(t, resolve(t, opts, exe), "libdep.so.1")
		if d.Path != filepath.Join(b, "libdep.so.1") || d.Rule != rpath.RuleLDLibraryPath {
			t.Errorf("got %s by %s; want b/ by LD_LIBRARY_PATH", d.Path, d.Rule)
		}
		// Without LD_LIBRARY_PATH the runpath finds it.
		d = depOf(t, resolve(t, hermetic(), exe), "libdep.so.1")
		if d.Path != filepath.Join(a, "libdep.so.1") || d.Rule != rpath.RuleRunPath {
			t.Errorf("got %s by %s; want a/ by runpath", d.Path, d.Rule)
		}
		lddAgrees(t, exe, rpath.Options{LDLibraryPath: []string{b}}, "LD_LIBRARY_PATH="+b)
	})

	// libmid (in c/) needs libdep but has no search paths of its own.
	tr.lib("c/libmid.so", "libmid.so", `extern int dep_value(void); int mid(void) { return dep_value(); }`, link...)
	usesMid := `extern int mid(void); int main(void) { return mid() - 1; }`
	t.Run("rpath inherited through the chain", func(t *testing.T) {
		exe := tr.exe("chain_rpath", usesMid, "-L"+c, "-lmid", "-Wl,--disable-new-dtags,-rpath,"+c+":"+a)
		d := depOf(t, resolve(t, hermetic(), exe), "libdep.so.1")
		if d.Path != filepath.Join(a, "libdep.so.1") || d.Rule != rpath.RuleRPath || d.Via != exe {
			t.Errorf("got %q by %s via %s; want a/ by rpath of the executable", d.Path, d.Rule, d.Via)
		}
		lddAgrees(t, exe, rpath.Options{})
		if out, err := exec.Command(exe).CombinedOutput(); err != nil {
			t.Errorf("the real loader fails: %v %s", err, out)
		}
	})
	t.Run("runpath not inherited", func(t *testing.T) {
		exe := tr.exe("chain_runpath", usesMid, "-L"+c, "-lmid", "-Wl,--enable-new-dtags,-rpath,"+c+":"+a)
		d := depOf(t, resolve(t, hermetic(), exe), "libdep.so.1")
		if !d.Missing() {
			t.Fatalf("libdep resolved to %s by %s; DT_RUNPATH must not apply to libmid's NEEDED", d.Path, d.Rule)
		}
		lddAgrees(t, exe, rpath.Options{})
		if err := exec.Command(exe).Run(); err == nil {
			t.Errorf("the real loader ran the executable; the oracle disagrees with the test's premise")
		}
	})
	t.Run("missing library lists what was tried", func(t *testing.T) {
		tr.lib("gone/libgone.so", "libgone.so", `int gone(void) { return 0; }`)
		exe := tr.exe("missing_exe", `extern int gone(void); int main(void) { return gone(); }`,
			"-L"+tr.path("gone"), "-lgone", "-Wl,--enable-new-dtags,-rpath,"+a+":"+b)
		os.Remove(tr.path("gone/libgone.so"))
		res := resolve(t, hermetic(), exe)
		d := depOf(t, res, "libgone.so")
		if !d.Missing() || len(res.Missing()) != 1 {
			t.Fatalf("libgone.so: %+v", d)
		}
		var tried []string
		for _, at := range d.Tried {
			tried = append(tried, at.Path)
		}
		want := []string{filepath.Join(a, "libgone.so"), filepath.Join(b, "libgone.so")}
		if len(tried) < 2 || tried[0] != want[0] || tried[1] != want[1] {
			t.Errorf("tried %v, want to start with %v", tried, want)
		}
		lddAgrees(t, exe, rpath.Options{})
	})
}

// lddAgrees compares the resolver (on the real system) with ldd.
func lddAgrees(t *testing.T, path string, opts rpath.Options, env ...string) {
	t.Helper()
	testenv.Tool(t, "ldd", "libc-bin")
	if err := compareWithLdd(path, opts, env); err != nil {
		t.Errorf("disagrees with ldd: %v", err)
	}
}

func TestWrongMachineCandidateSkipped(t *testing.T) {
	tr := newTree(t)
	testenv.GCC32(t)
	tr.lib("w/libdep.so.1", "libdep.so.1", libdep, "-m32")
	tr.lib("a/libdep.so.1", "libdep.so.1", libdep)
	exe := tr.exe("exe", usesDep, "-L"+tr.path("a"), "-l:libdep.so.1",
		"-Wl,--enable-new-dtags,-rpath,"+tr.path("w")+":"+tr.path("a"))
	d := depOf(t, resolve(t, hermetic(), exe), "libdep.so.1")
	if d.Path != tr.path("a/libdep.so.1") {
		t.Fatalf("resolved to %q", d.Path)
	}
	if len(d.Rejected) != 1 || d.Rejected[0].Path != tr.path("w/libdep.so.1") ||
		d.Rejected[0].Result != "skipped: ELF32 EM_386, need ELF64 EM_X86_64" {
		t.Errorf("rejected = %+v", d.Rejected)
	}
	lddAgrees(t, exe, rpath.Options{})
	if out, err := exec.Command(exe).CombinedOutput(); err != nil {
		t.Errorf("the real loader fails: %v %s", err, out)
	}
}

func TestOriginThroughSymlink(t *testing.T) {
	tr := newTree(t)
	tr.lib("lib/libdep.so.1", "libdep.so.1", libdep)
	real := tr.exe("real/bin/app", usesDep, "-L"+tr.path("lib"), "-l:libdep.so.1",
		"-Wl,--enable-new-dtags,-rpath,$ORIGIN/../../lib")
	os.MkdirAll(tr.path("elsewhere/deeper"), 0o755)
	link := tr.path("elsewhere/deeper/app")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	d := depOf(t, resolve(t, hermetic(), link), "libdep.so.1")
	if d.Path != tr.path("real/bin/../../lib/libdep.so.1") && d.Path != tr.path("lib/libdep.so.1") {
		t.Errorf("$ORIGIN of a symlinked executable: resolved to %q", d.Path)
	}
	if out, err := exec.Command(link).CombinedOutput(); err != nil {
		t.Errorf("the real loader fails: %v %s", err, out)
	}
}

func TestNoDefaultLib(t *testing.T) {
	tr := newTree(t)
	tr.lib("sys/libdep.so.1", "libdep.so.1", libdep)
	opts := hermetic()
	opts.DefaultDirs = []string{tr.path("sys")}
	plain := tr.lib("plain/libuser.so", "libuser.so", `extern int dep_value(void); int u(void){return dep_value();}`,
		"-L"+tr.path("sys"), "-l:libdep.so.1")
	nodef := tr.lib("nodef/libuser.so", "libuser.so", `extern int dep_value(void); int u(void){return dep_value();}`,
		"-L"+tr.path("sys"), "-l:libdep.so.1", "-Wl,-z,nodefaultlib")
	if d := depOf(t, resolve(t, opts, plain), "libdep.so.1"); d.Rule != rpath.RuleDefault {
		t.Errorf("without NODEFLIB: %s by %s, want default", d.Path, d.Rule)
	}
	if d := depOf(t, resolve(t, opts, nodef), "libdep.so.1"); !d.Missing() {
		t.Errorf("with DF_1_NODEFLIB: resolved to %s by %s, want missing", d.Path, d.Rule)
	}
}

func TestCycle(t *testing.T) {
	tr := newTree(t)
	dir := tr.path("cyc")
	// Build libcyc2 first without its NEEDED, then libcyc1 needing it,
	// then rebuild libcyc2 needing libcyc1.
	tr.lib("cyc/libcyc2.so", "libcyc2.so", `int c2(void){return 2;}`)
	tr.lib("cyc/libcyc1.so", "libcyc1.so", `extern int c2(void); int c1(void){return c2();}`,
		"-L"+dir, "-lcyc2", "-Wl,--enable-new-dtags,-rpath,$ORIGIN")
	tr.lib("cyc/libcyc2.so", "libcyc2.so", `extern int c1(void); int c2(void){return 2;} int c3(void){return c1();}`,
		"-L"+dir, "-lcyc1", "-Wl,--enable-new-dtags,-rpath,$ORIGIN")
	res := resolve(t, hermetic(), filepath.Join(dir, "libcyc1.so"))
	d := depOf(t, res, "libcyc1.so")
	if d.Rule != rpath.RuleLoaded || d.Object != res.Root {
		t.Errorf("libcyc2's NEEDED libcyc1.so: %s by %s, want the root, already loaded", d.Path, d.Rule)
	}
	if len(res.Missing()) != 0 {
		t.Errorf("missing: %v", res.Missing())
	}
}

func TestCheckedInFixtures(t *testing.T) {
	// hello has DT_RPATH $ORIGIN and needs libfoo.so.1 next to it.
	opts := hermetic()
	opts.DefaultDirs = []string{}
	res := resolve(t, opts, testenv.Testdata("hello"))
	d := depOf(t, res, "libfoo.so.1")
	if d.Rule != rpath.RuleRPath || filepath.Base(d.Path) != "libfoo.so.1" {
		t.Errorf("libfoo.so.1: %s by %s", d.Path, d.Rule)
	}
	// libc and libm are missing without cache and default dirs.
	var missing []string
	for _, m := range res.Missing() {
		missing = append(missing, m.Name)
	}
	if strings.Join(missing, " ") != "libc.so.6 libm.so.6" {
		t.Errorf("missing = %v", missing)
	}
	// A --lib-dir after the object's own paths.
	opts.LibDirs = []string{testenv.Testdata()}
	res = resolve(t, opts, testenv.Testdata("libgpu.so"))
	if len(res.Objects) != 1 {
		t.Errorf("libgpu.so has no NEEDED, got %d objects", len(res.Objects))
	}
}

func TestWhy(t *testing.T) {
	opts := hermetic()
	res := resolve(t, opts, testenv.Testdata("hello"))
	chains := rpath.Why(res, "libm.so.6")
	if len(chains) != 1 || len(chains[0]) != 3 || filepath.Base(chains[0][1]) != "libfoo.so.1" {
		t.Errorf("Why(libm.so.6) = %v", chains)
	}
}

func TestDynamicStringTokens(t *testing.T) {
	tr := newTree(t)
	tr.lib("plat/haswell/libdep.so.1", "libdep.so.1", libdep)
	tr.lib("l/lib/x86_64-linux-gnu/libdep.so.1", "libdep.so.1", libdep)
	exe := tr.exe("bin/app", usesDep, "-L"+tr.path("plat/haswell"), "-l:libdep.so.1",
		"-Wl,--enable-new-dtags,-rpath,${ORIGIN}/../plat/$PLATFORM:$ORIGIN/../l/$LIB")
	opts := hermetic()
	opts.Platform = "haswell"
	if d := depOf(t, resolve(t, opts, exe), "libdep.so.1"); d.Path != tr.path("bin/../plat/haswell/libdep.so.1") && d.Path != tr.path("plat/haswell/libdep.so.1") {
		t.Errorf("$PLATFORM: %s", d.Path)
	}
	opts.Platform = "zen4"
	opts.Lib = "lib/x86_64-linux-gnu"
	if d := depOf(t, resolve(t, opts, exe), "libdep.so.1"); !strings.HasSuffix(d.Path, "l/lib/x86_64-linux-gnu/libdep.so.1") {
		t.Errorf("$LIB: %s by %s", d.Path, d.Rule)
	}
}

func TestFirstLoadedSonameWins(t *testing.T) {
	tr := newTree(t)
	tr.lib("a/libdep.so.1", "libdep.so.1", libdep)
	tr.lib("b/libdep.so.1", "libdep.so.1", libdep)
	// libmid looks in b/, but the executable already loaded libdep.so.1 from a/.
	tr.lib("m/libmid.so", "libmid.so", `extern int dep_value(void); int mid(void){return dep_value();}`,
		"-L"+tr.path("b"), "-l:libdep.so.1", "-Wl,--enable-new-dtags,-rpath,"+tr.path("b"))
	exe := tr.exe("app", `extern int dep_value(void); extern int mid(void); int main(void){return dep_value()+mid()-2;}`,
		"-L"+tr.path("a"), "-l:libdep.so.1", "-L"+tr.path("m"), "-lmid",
		"-Wl,--enable-new-dtags,-rpath,"+tr.path("a")+":"+tr.path("m"))
	res := resolve(t, hermetic(), exe)
	var fromMid *rpath.Dep
	for _, o := range res.Objects {
		if filepath.Base(o.Path) == "libmid.so" {
			fromMid = o.Deps[0]
		}
	}
	if fromMid == nil || fromMid.Rule != rpath.RuleLoaded || fromMid.Path != tr.path("a/libdep.so.1") {
		t.Fatalf("libmid's libdep.so.1: %+v", fromMid)
	}
	lddAgrees(t, exe, rpath.Options{})
}

func TestFileInRoot(t *testing.T) {
	for _, tc := range []struct{ root, p, want string }{
		{"", "/usr/bin/app", "/usr/bin/app"},
		{"/x/sys", "usr/bin/app", "usr/bin/app"},
		{"/x/sys", "/usr/bin/app", "/x/sys/usr/bin/app"},
		{"/x/sys", "/x/sys/usr/bin/app", "/x/sys/usr/bin/app"},
		{"/x/sys", "/x/sys", "/x/sys"},
		{"/x/sys", "/x/sysroot/app", "/x/sys/x/sysroot/app"},
		{"/x/sys/", "/x/sys/lib/a.so", "/x/sys/lib/a.so"},
	} {
		if got := rpath.FileInRoot(tc.root, tc.p); got != tc.want {
			t.Errorf("FileInRoot(%q, %q) = %q, want %q", tc.root, tc.p, got, tc.want)
		}
	}
}

// TestDamagedSectionHeadersStillLoad: ld.so reads segments, never section
// headers, so a library whose section header table points past the end of
// the file still loads (the program runs) and still resolves here; the
// candidate was rejected as malformed while the resolver parsed sections.
func TestDamagedSectionHeadersStillLoad(t *testing.T) {
	tr := newTree(t)
	lib := tr.lib("lib/libdep.so", "libdep.so", libdep)
	exe := tr.exe("bin/app", usesDep, "-L"+tr.path("lib"), "-ldep", "-Wl,-rpath,"+tr.path("lib"))
	b, err := os.ReadFile(lib)
	if err != nil {
		t.Fatal(err)
	}
	binary.LittleEndian.PutUint64(b[40:], uint64(len(b))+1<<20) // e_shoff
	if err := os.WriteFile(lib, b, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(exe).CombinedOutput(); err != nil {
		t.Fatalf("the real loader refused it too: %v\n%s", err, out)
	}
	d := depOf(t, resolve(t, hermetic(), exe), "libdep.so")
	if d.Path != lib {
		t.Errorf("libdep.so resolved to %q, want %s; tried %+v", d.Path, lib, d.Tried)
	}
}

// TestLoaderStopsAtBadCandidate: glibc's open_verify passes over a
// candidate of another class or machine, but fails on one whose header is
// otherwise wrong (OS ABI, ABI version, e_ident padding or version,
// e_version, type, e_phentsize, byte order, a file too short, a linker
// script) and searches no further, even when a good copy comes later.
// The resolver must stop there too, naming the loader's message; the real
// loader is the oracle for each edit of the first copy.
func TestLoaderStopsAtBadCandidate(t *testing.T) {
	tr := newTree(t)
	good := tr.lib("b/libdep.so.1", "libdep.so.1", libdep)
	exe := tr.exe("exe", usesDep, "-L"+tr.path("b"), "-l:libdep.so.1",
		"-Wl,--enable-new-dtags,-rpath,"+tr.path("a")+":"+tr.path("b"))
	src, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	// The library built as a program: PIE (DF_1_PIE) and fixed-address.
	program := map[string][]byte{}
	for _, kind := range []string{"-pie", "-no-pie"} {
		p := tr.exe("prog"+kind, libdep+"\nint main(void) { return 0; }", kind, "-Wl,-E", "-Wl,-soname,libdep.so.1")
		if program[kind], err = os.ReadFile(p); err != nil {
			t.Fatal(err)
		}
	}
	// As /usr/lib/x86_64-linux-gnu/libc.so is: a GNU ld script.
	script := []byte("/* GNU ld script\n   Use the shared library, but some functions are only in\n   the static library, so try that secondarily.  */\nOUTPUT_FORMAT(elf64-x86-64)\nGROUP ( /lib/x86_64-linux-gnu/libc.so.6 /usr/lib/x86_64-linux-gnu/libc_nonshared.a )\n")
	for _, c := range []struct {
		name  string
		edit  func(b []byte) []byte
		stops string // the loader's message; "" when it loads the first copy or passes over it
		loads bool   // the first copy is loaded
	}{
		{"intact", func(b []byte) []byte { return b }, "", true},
		{"GNU OS ABI, ABI version 3", func(b []byte) []byte { b[7], b[8] = 3, 3; return b }, "", true},
		{"FreeBSD OS ABI", func(b []byte) []byte { b[7] = 9; return b }, "ELF file OS ABI invalid", false},
		{"SYSV OS ABI, ABI version 1", func(b []byte) []byte { b[8] = 1; return b }, "ELF file ABI version invalid", false},
		{"GNU OS ABI, ABI version 4", func(b []byte) []byte { b[7], b[8] = 3, 4; return b }, "ELF file ABI version invalid", false},
		{"padding", func(b []byte) []byte { b[9] = 1; return b }, "nonzero padding in e_ident", false},
		{"EI_VERSION", func(b []byte) []byte { b[6] = 2; return b }, "ELF file version ident does not match current one", false},
		{"e_version", func(b []byte) []byte { binary.LittleEndian.PutUint32(b[20:], 2); return b }, "ELF file version does not match current one", false},
		{"ET_REL", func(b []byte) []byte { b[16] = 1; return b }, "only ET_DYN and ET_EXEC can be loaded", false},
		{"e_phentsize 64", func(b []byte) []byte { binary.LittleEndian.PutUint16(b[54:], 64); return b }, "ELF file's phentsize not the expected size", false},
		{"big-endian", func(b []byte) []byte { b[5] = 2; return b }, "ELF file data encoding not little-endian", false},
		{"too short", func(b []byte) []byte { return b[:10] }, "file too short", false},
		{"linker script", func([]byte) []byte { return script }, "invalid ELF header", false},
		{"no PT_LOAD", func(b []byte) []byte { return retype(b, elf.PT_LOAD, elf.PT_NULL) }, "object file has no loadable segments", false},
		{"no PT_DYNAMIC", func(b []byte) []byte { return retype(b, elf.PT_DYNAMIC, elf.PT_NULL) }, "object file has no dynamic section", false},
		{"PIE program", func([]byte) []byte { return program["-pie"] }, "cannot dynamically load position-independent executable", false},
		{"ET_EXEC program", func([]byte) []byte { return program["-no-pie"] }, "cannot dynamically load executable", false},
		{"ELF32 (passed over)", func(b []byte) []byte { b[4] = 1; return b }, "", false},
		{"EM_386 (passed over)", func(b []byte) []byte { b[18] = 3; return b }, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			bad := tr.path("a/libdep.so.1")
			os.MkdirAll(filepath.Dir(bad), 0o755)
			if err := os.WriteFile(bad, c.edit(bytes.Clone(src)), 0o755); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(exe).CombinedOutput()
			switch {
			// (open_verify's messages name the file, the mapping's the NEEDED entry.)
			case c.stops != "" && (err == nil || !strings.Contains(string(out), bad+": "+c.stops) && !strings.Contains(string(out), "libdep.so.1: "+c.stops)):
				t.Fatalf("oracle: want the loader to stop with %q, got %v %s", c.stops, err, out)
			case c.stops == "" && err != nil:
				t.Fatalf("oracle: the loader fails: %v %s", err, out)
			}
			// Twice through one resolver: the second replays the search
			// it remembers.
			r := rpath.New(hermetic())
			for range 2 {
				res, err := r.Resolve(context.Background(), exe)
				if err != nil {
					t.Fatal(err)
				}
				if d := depOf(t, res, "libdep.so.1"); d.Missing() != (c.stops != "") {
					t.Fatalf("resolved to %q (%s), rejected %+v", d.Path, d.Rule, d.Rejected)
				}
			}
			d := depOf(t, resolve(t, hermetic(), exe), "libdep.so.1")
			switch {
			case c.stops != "":
				if !d.Missing() || len(d.Rejected) != 1 || !d.Rejected[0].Stops || d.Rejected[0].Result != c.stops || d.Rejected[0].Path != bad {
					t.Errorf("dep = %q (%s), rejected %+v; want a stop at %s: %s", d.Path, d.Rule, d.Rejected, bad, c.stops)
				}
				if len(d.Tried) != 1 {
					t.Errorf("searched on after the stop: %+v", d.Tried)
				}
			case c.loads:
				if d.Path != bad || len(d.Rejected) != 0 {
					t.Errorf("dep = %q, rejected %+v; want %s", d.Path, d.Rejected, bad)
				}
			default:
				if d.Path != good || len(d.Rejected) != 1 || d.Rejected[0].Stops {
					t.Errorf("dep = %q, rejected %+v; want %s past the passed-over copy", d.Path, d.Rejected, good)
				}
			}
		})
	}
}

// retype changes the type of every program header of type from in the
// ELF64 little-endian file b to to.
func retype(b []byte, from, to elf.ProgType) []byte {
	phoff, phnum := binary.LittleEndian.Uint64(b[32:]), binary.LittleEndian.Uint16(b[56:])
	for i := range uint64(phnum) {
		if h := b[phoff+i*56:]; elf.ProgType(binary.LittleEndian.Uint32(h)) == from {
			binary.LittleEndian.PutUint32(h, uint32(to))
		}
	}
	return b
}

// TestLoaderStopsAtDirectory: a directory where the search looks for the
// library is opened by ld.so like a file; reading it fails (EISDIR) and the
// load with it, though a good copy comes later in the search.
func TestLoaderStopsAtDirectory(t *testing.T) {
	tr := newTree(t)
	tr.lib("b/libdep.so.1", "libdep.so.1", libdep)
	exe := tr.exe("exe", usesDep, "-L"+tr.path("b"), "-l:libdep.so.1",
		"-Wl,--enable-new-dtags,-rpath,"+tr.path("a")+":"+tr.path("b"))
	bad := tr.path("a/libdep.so.1")
	if err := os.MkdirAll(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(exe).CombinedOutput(); err == nil || !strings.Contains(string(out), bad+": cannot read file data") {
		t.Fatalf("oracle: want the loader to fail on the directory, got %v %s", err, out)
	}
	d := depOf(t, resolve(t, hermetic(), exe), "libdep.so.1")
	if !d.Missing() || len(d.Rejected) != 1 || !d.Rejected[0].Stops || d.Rejected[0].Path != bad {
		t.Errorf("dep = %q (%s), rejected %+v; want a stop at %s", d.Path, d.Rule, d.Rejected, bad)
	}
}
