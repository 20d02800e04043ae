package check_test

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/check"
	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/finding"
	"github.com/rocmdoctor/rocmdoctor/gpu"
	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
	"github.com/rocmdoctor/rocmdoctor/patchelf"
	"github.com/rocmdoctor/rocmdoctor/rpath"
	"github.com/rocmdoctor/rocmdoctor/symcheck"
)

func TestGlobMatch(t *testing.T) {
	for _, tt := range []struct {
		pat, s string
		want   bool
	}{
		{"libcuda*.so*", "/opt/x/lib/libcuda.so.1", true},
		{"**/libcuda*.so*", "a/b/libcuda.so.1", true},
		{"lib/*.so", "lib/libx.so", true},
		{"lib/*.so", "lib/sub/libx.so", false},
		{"lib/**/*.so", "lib/sub/deep/libx.so", true},
		{"LLVMInitialize*", "LLVMInitializeX86Target", true},
		{"libamdhip64.so.?", "libamdhip64.so.6", true},
		{"", "x", false},
	} {
		if got := check.GlobMatch(tt.pat, tt.s); got != tt.want {
			t.Errorf("GlobMatch(%q, %q) = %v", tt.pat, tt.s, got)
		}
	}
}

func TestCheckInterruptedAndProgress(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rep, err := check.Run(ctx, []string{testenv.Testdata("checktree")}, check.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Interrupted {
		t.Errorf("a cancelled context must give a partial report marked interrupted")
	}
	var mu sync.Mutex
	calls, lastTotal := 0, 0
	rep, err = check.Run(context.Background(), []string{testenv.Testdata("checktree")}, check.Options{
		Progress: func(done, total int, p string) { mu.Lock(); calls++; lastTotal = total; mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	rootsChecked(t, rep, testenv.Testdata("checktree"))
	// Progress counts every regular file looked at; the report lists
	// those of a checked kind.
	regular := 0
	filepath.WalkDir(testenv.Testdata("checktree"), func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			regular++
		}
		return nil
	})
	if calls != regular || lastTotal != regular || rep.Interrupted || len(rep.Files) == 0 || len(rep.Files) > regular {
		t.Errorf("progress called %d times (total %d) for %d regular files, %d checked", calls, lastTotal, regular, len(rep.Files))
	}
}

var lddRUndef = regexp.MustCompile(`^undefined symbol: ([^,\t]+)(?:, version \S+)?\t\((.*)\)$`)

// TestCorpusCheckGPUTargetsAgreeWithGPUs: over Debian's ROCm libraries,
// check --gpu-targets flags exactly the files and targets gpus --require
// does (librocsparse.so.0 and libhsa-runtime64.so.1 have no gfx1100 code).
func TestCorpusCheckGPUTargetsAgreeWithGPUs(t *testing.T) {
	testenv.Corpus(t)
	root := "/usr/lib/x86_64-linux-gnu"
	testenv.File(t, root+"/librocsparse.so.0", "librocsparse0")
	testenv.File(t, root+"/libhsa-runtime64.so.1", "libhsa-runtime64-1")
	targets := []string{"gfx90a", "gfx1100"}
	rep, err := check.Run(context.Background(), []string{root}, check.Options{GPUTargets: targets})
	if err != nil {
		t.Fatal(err)
	}
	rootsChecked(t, rep, root)
	ours := gpuFindings(rep, func(f finding.Finding) string { return f.Rule + " " + f.Message })
	g, err := gpu.Check(context.Background(), []string{root}, gpu.Options{Require: targets})
	if err != nil {
		t.Fatal(err)
	}
	var theirs []string
	for _, f := range g.Findings {
		theirs = append(theirs, f.Rule+" "+f.Message)
	}
	slices.Sort(ours)
	slices.Sort(theirs)
	if !slices.Equal(ours, theirs) || len(ours) < 2 {
		t.Errorf("check:\n%s\ngpus:\n%s", strings.Join(ours, "\n"), strings.Join(theirs, "\n"))
	}
	for _, lib := range []string{"librocsparse.so.0", "libhsa-runtime64.so.1"} {
		real, _ := filepath.EvalSymlinks(filepath.Join(root, lib))
		if !slices.ContainsFunc(ours, func(s string) bool {
			return strings.Contains(s, real+" has device code") && strings.Contains(s, "none usable on gfx1100")
		}) {
			t.Errorf("no gfx1100 finding on %s", real)
		}
	}
}

// TestCorpusCheckSystemLibs: check over /usr/lib/x86_64-linux-gnu, and
// over the 32-bit libraries of /usr/lib32 (gcc-multilib's, which the
// 32-bit loader runs), completes, is deterministic across two runs, and
// its missing-library and undefined-symbol findings (RD1001, and RD1006
// for loadable modules) for each file are exactly ldd -r's for it.
func TestCorpusCheckSystemLibs(t *testing.T) {
	testenv.Corpus(t)
	testenv.Tool(t, "ldd", "libc-bin")
	for _, c := range []struct {
		root, lib, pkg string
		i386           bool
	}{
		{"/usr/lib/x86_64-linux-gnu", "libc.so.6", "libc6", false},
		{"/usr/lib32", "libstdc++.so.6", "gcc-multilib", true},
	} {
		t.Run(filepath.Base(c.root), func(t *testing.T) {
			testenv.File(t, filepath.Join(c.root, c.lib), c.pkg)
			if c.i386 && !testenv.Runs32() {
				// Nothing apt installs changes that: the oracle cannot run.
				t.Skip("this kernel does not execute 32-bit x86 programs (no IA32 emulation): ldd -r cannot load the 32-bit files")
			}
			checkAgreesWithLddR(t, c.root)
		})
	}
}

// checkAgreesWithLddR is TestCorpusCheckSystemLibs for one root.
func checkAgreesWithLddR(t *testing.T, root string) {
	run := func() (*check.Report, string) {
		rep, err := check.Run(context.Background(), []string{root}, check.Options{Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		rootsChecked(t, rep, root)
		b, _ := json.Marshal(rep)
		return rep, string(b)
	}
	rep, first := run()
	if _, second := run(); first != second {
		t.Fatalf("two runs over %s differ", root)
	}
	ours := map[string]map[string]bool{}
	folded := 0
	for _, f := range rep.Findings {
		// RD1006 is RD1001 in a loadable module (a note), RD1011 in an
		// underlinked library (a warning), RD1012 RD1004 where a program
		// of the scan supplies the library: ldd -r lists them all.
		if f.ID != "RD1001" && f.ID != "RD1006" && f.ID != "RD1011" && f.ID != "RD1004" && f.ID != "RD1012" {
			continue
		}
		if ours[f.File] == nil {
			ours[f.File] = map[string]bool{}
		}
		key := f.Symbol
		if f.ID == "RD1004" || f.ID == "RD1012" {
			key = "lib:" + f.Library
			// The symbols expected from the missing library are listed in
			// its finding; ldd -r lists each as undefined.
			for _, u := range f.Unresolved {
				name, _, _ := strings.Cut(u, "@")
				ours[f.File][name] = true
				folded++
			}
		}
		ours[f.File][key] = true
	}
	compared := 0
	for _, p := range rep.Files {
		out, _ := exec.Command("ldd", "-r", p).CombinedOutput()
		if strings.Contains(string(out), "not a dynamic executable") || strings.Contains(string(out), "statically linked") && !strings.Contains(string(out), "undefined symbol") {
			continue
		}
		theirs := map[string]bool{}
		for _, l := range strings.Split(string(out), "\n") {
			if m := lddRUndef.FindStringSubmatch(l); m != nil && sameFile(m[2], p) {
				theirs[m[1]] = true
			}
		}
		// Direct NEEDED entries that ldd cannot find.
		direct := map[string]bool{}
		if f, err := elfx.Open(p); err == nil {
			if d, err := f.Dynamic(); err == nil {
				for _, n := range d.Needed {
					direct[n] = true
				}
			}
			f.Close()
		}
		for _, l := range strings.Split(string(out), "\n") {
			if name, ok := strings.CutSuffix(strings.TrimSpace(l), " => not found"); ok && direct[name] {
				theirs["lib:"+name] = true
			}
		}
		compared++
		for k := range theirs {
			if !ours[p][k] {
				t.Errorf("%s: ldd -r reports %s, check does not", p, k)
			}
		}
		for k := range ours[p] {
			if !theirs[k] {
				t.Errorf("%s: check reports %s, ldd -r does not", p, k)
			}
		}
	}
	t.Logf("check over %s: %d files, %d findings, deterministic; RD1001/RD1006/RD1004 (with the %d symbols listed in RD1004s) agree with ldd -r on %d files", root, len(rep.Files), len(rep.Findings), folded, compared)
	if compared < 20 {
		t.Errorf("only %d files of %s compared with ldd -r", compared, root)
	}
}

// TestCheckHardLinksOnce: an inode reached by two paths is checked and
// reported once, under the path the walk meets first, whichever worker
// gets to it first.
func TestCheckHardLinksOnce(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile(testenv.Testdata("checktree/lib/libmissing.so"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"a", "b"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	first := filepath.Join(dir, "a", "libmissing.so")
	if err := os.WriteFile(first, src, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(first, filepath.Join(dir, "b", "libmissing.so")); err != nil {
		t.Fatalf("making a hard link: %v", err)
	}
	for range 5 {
		rep, err := check.Run(context.Background(), []string{dir}, check.Options{Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		rootsChecked(t, rep, dir)
		if len(rep.Files) != 1 || rep.Files[0] != first {
			t.Fatalf("files = %v, want only %s", rep.Files, first)
		}
		if len(rep.Findings) == 0 {
			t.Fatalf("no findings for %s", first)
		}
		for _, f := range rep.Findings {
			if f.File != first {
				t.Errorf("finding for %s: %+v", f.File, f)
			}
		}
	}
}

// TestCheckTableBudget: a scan whose symbol tables do not all fit in the
// cache's budget (here none does: every table evicts the others) reports
// exactly what an unbounded one does.
func TestCheckTableBudget(t *testing.T) {
	checkTableBudget(t, testenv.Testdata("."), 1)
}

// TestCorpusCheckTableBudget is the same over the system's libraries with
// a 4 MB budget.
func TestCorpusCheckTableBudget(t *testing.T) {
	testenv.Corpus(t)
	checkTableBudget(t, "/usr/lib/x86_64-linux-gnu", 4<<20)
}

func checkTableBudget(t *testing.T, root string, budget int) {
	// run returns the report and how many symbol tables were read: under
	// a small budget tables are dropped and read again.
	run := func(budget int) (string, int64) {
		var reads atomic.Int64
		opts := check.WithHooks(check.WithLimits(check.Options{Workers: 2}, budget, 0), func(*elfx.File) { reads.Add(1) }, nil)
		rep, err := check.Run(context.Background(), []string{root}, opts)
		if err != nil {
			t.Fatal(err)
		}
		rootsChecked(t, rep, root)
		if len(rep.Findings) == 0 {
			t.Fatalf("no findings over %s", root)
		}
		b, _ := json.Marshal(rep)
		return string(b), reads.Load()
	}
	want, wantReads := run(0)
	got, gotReads := run(budget)
	if got != want {
		t.Errorf("%s: with a %d-byte table budget the report differs from an unbounded scan", root, budget)
	}
	if gotReads <= wantReads {
		t.Errorf("%s: %d tables read with a %d-byte budget, %d with the default: the budget dropped none", root, gotReads, budget, wantReads)
	}
}

// FuzzCheckWheel: check over a wheel of any bytes reports findings or a
// clear error naming the wheel; it never panics.
func FuzzCheckWheel(f *testing.F) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range []string{"libexecstack.so", "libfoo.so.1", "libbe.so", "libgpu.so"} {
		b, err := os.ReadFile(testenv.Testdata(name))
		if err != nil {
			f.Fatal(err)
		}
		w, _ := zw.CreateHeader(&zip.FileHeader{Name: "pkg/" + name, Method: zip.Deflate})
		w.Write(b)
	}
	w, _ := zw.Create("pkg-1.0.dist-info/RECORD")
	w.Write([]byte("pkg/libfoo.so.1,,\n"))
	zw.Close()
	testenv.FuzzWheel(f, buf.Bytes(), func(p string) ([]string, error) {
		var errs []string
		for _, targets := range [][]string{nil, {"gfx90a", "gfx1100"}} {
			rep, err := check.Run(context.Background(), []string{p}, check.Options{Workers: 1, GPUTargets: targets})
			if err != nil {
				return nil, err
			}
			for _, e := range rep.Errors {
				errs = append(errs, e.Error)
			}
		}
		return errs, nil
	})
}

// FuzzCheckFiles runs check over a directory holding a program and the
// library it needs (libfoo.so.1, found through its $ORIGIN RPATH), both
// fuzzed: the library's tables are what the program's symbols are bound
// against, and either may become an archive or anything else. Check must
// not fail or panic, and what it reports must name the files.
func FuzzCheckFiles(f *testing.F) {
	read := func(name string) []byte {
		b, err := os.ReadFile(testenv.Testdata(name))
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	hello := read("hello")
	for _, lib := range []string{"libfoo.so.1", "libgpu.so", "libsysv.so", "librockCompiler.a", "libi386.so"} {
		f.Add(read(lib), hello)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, lib, prog []byte) {
		libPath, progPath := filepath.Join(dir, "libfoo.so.1"), filepath.Join(dir, "hello")
		for p, b := range map[string][]byte{libPath: lib, progPath: prog} {
			if err := os.WriteFile(p, b, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		for _, opts := range []check.Options{
			{Workers: 1, AllowEmpty: true},
			{Workers: 2, AllowEmpty: true, GPUTargets: []string{"gfx90a"}, Glibc: "2.17", Glibcxx: "3.4.19", ExpectRunpath: true},
		} {
			rep, err := check.Run(context.Background(), []string{dir}, opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range rep.Errors {
				if e.Path != libPath && e.Path != progPath || !strings.HasPrefix(e.Error, e.Path) {
					t.Errorf("error does not name the file: %+v", e)
				}
			}
			for _, fd := range rep.Findings {
				if fd.ID == "" || fd.Message == "" {
					t.Errorf("finding without an id or message: %+v", fd)
				}
			}
		}
	})
}

// TestCheckWheelMembers: the ELF members of a wheel get the file rules,
// whether read into memory or through a temporary file; a malformed member
// is an error naming it once; a member whose data does not match its CRC
// is an error.
func TestCheckWheelMembers(t *testing.T) {
	exec, err := os.ReadFile(testenv.Testdata("libexecstack.so"))
	if err != nil {
		t.Fatal(err)
	}
	bad := append([]byte("\x7fELF\x02\x01\x01"), bytes.Repeat([]byte{0xff}, 100)...)
	build := func(crcOff bool) string {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		w, _ := zw.CreateHeader(&zip.FileHeader{Name: "pkg/libexecstack.so", Method: zip.Deflate})
		w.Write(exec)
		if crcOff {
			h := &zip.FileHeader{Name: "pkg/libcrc.so", Method: zip.Store, CRC32: crc32.ChecksumIEEE(exec) + 1,
				CompressedSize64: uint64(len(exec)), UncompressedSize64: uint64(len(exec))}
			w, _ = zw.CreateRaw(h)
			w.Write(exec)
		} else {
			w, _ = zw.CreateHeader(&zip.FileHeader{Name: "pkg/libbad.so", Method: zip.Deflate})
			w.Write(bad)
		}
		zw.Close()
		p := filepath.Join(t.TempDir(), "pkg-1.0-py3-none-linux_x86_64.whl")
		os.WriteFile(p, buf.Bytes(), 0o644)
		return p
	}
	p := build(false)
	var reports []string
	for _, limit := range []uint64{32 << 20, 0} {
		rep := checkMembersIn(t, p, limit)
		found := false
		for _, f := range rep.Findings {
			found = found || f.File == p+"!/pkg/libexecstack.so" && f.Rule == finding.RuleExecStack
		}
		if !found {
			t.Errorf("in-memory limit %d: no executable-stack finding for the member: %+v", limit, rep.Findings)
		}
		if len(rep.Errors) != 1 || !strings.HasPrefix(rep.Errors[0].Error, p+"!/pkg/libbad.so: malformed") ||
			strings.Count(rep.Errors[0].Error, "libbad.so") != 1 {
			t.Errorf("in-memory limit %d: errors = %+v", limit, rep.Errors)
		}
		b, _ := json.Marshal(rep)
		reports = append(reports, string(b))
	}
	if reports[0] != reports[1] {
		t.Errorf("reports differ between memory and temporary file:\n%s\n%s", reports[0], reports[1])
	}
	p = build(true)
	rep, err := check.Run(context.Background(), []string{p}, check.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Errors) != 1 || !strings.Contains(rep.Errors[0].Error, p+"!/pkg/libcrc.so: ") || !strings.Contains(rep.Errors[0].Error, "checksum") {
		t.Errorf("CRC mismatch: errors = %+v", rep.Errors)
	}
	// A member compressed with bzip2 (method 12): named, with the method.
	p = filepath.Join(t.TempDir(), "pkg-1.0-py3-none-linux_x86_64.whl")
	os.WriteFile(p, testenv.WheelMember("pkg-1.0", "pkg/libbz.so", exec, 12), 0o644)
	if rep, err = check.Run(context.Background(), []string{p}, check.Options{}); err != nil {
		t.Fatal(err)
	}
	if len(rep.Errors) != 1 || !strings.Contains(rep.Errors[0].Error, p+"!/pkg/libbz.so: compressed with bzip2 (method 12)") {
		t.Errorf("bzip2 member: errors = %+v", rep.Errors)
	}
}

// Device code objects in a wheel (PyTorch's carry thousands of rocBLAS
// kernels) have no file-level rules: they are not extracted, so even a
// damaged one is no error, while a damaged host library is.
func TestCheckWheelSkipsDeviceCode(t *testing.T) {
	co, err := os.ReadFile(testenv.Testdata("k-gfx90a_xnackoff.co"))
	if err != nil {
		t.Fatal(err)
	}
	lib, err := os.ReadFile(testenv.Testdata("libfoo.so.1"))
	if err != nil {
		t.Fatal(err)
	}
	// check stops at a wheel's first error: the code objects come first.
	p := filepath.Join(t.TempDir(), "torch-2.5.1-cp311-cp311-linux_x86_64.whl")
	testenv.WriteWheel(t, p, [][2]string{
		{"torch/lib/rocblas/library/Kernels.so-000-gfx90a.hsaco", string(co)},
		{"torch/lib/rocblas/library/damaged-gfx90a.co", string(co[:64]) + strings.Repeat("\xff", 200)},
		{"torch/lib/libdamaged.so", string(lib[:64]) + strings.Repeat("\xff", 200)},
	}, nil)
	rep, err := check.Run(context.Background(), []string{p}, check.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Errors) != 1 || !strings.HasPrefix(rep.Errors[0].Error, p+"!/torch/lib/libdamaged.so: ") || len(rep.Findings) != 0 {
		t.Errorf("errors %+v, findings %+v: want one error, for the damaged host library", rep.Errors, rep.Findings)
	}
}

// A wheel whose ELF member declares more than rocmdoctor extracts is an
// error naming the member, in check and gpus, and nothing that size is
// written.
func TestCheckWheelHugeMember(t *testing.T) {
	elfBytes, err := os.ReadFile(testenv.Testdata("libfoo.so.1"))
	if err != nil {
		t.Fatal(err)
	}
	p := forgedWheel(t, "pkg/libbomb.so", elfBytes, crc32.ChecksumIEEE(elfBytes), 64<<30)
	rep, err := check.Run(context.Background(), []string{p}, check.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Errors) != 1 || !strings.Contains(rep.Errors[0].Error, p+"!/pkg/libbomb.so: declares 68719476736 bytes") {
		t.Errorf("errors = %+v", rep.Errors)
	}
	// gpus extracts members through the same bound.
	grep, err := gpu.Check(context.Background(), []string{p}, gpu.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(grep.Errors) != 1 || !strings.HasPrefix(grep.Errors[0].Error, p+"!/pkg/libbomb.so: declares 68719476736 bytes") {
		t.Errorf("gpus errors = %+v", grep.Errors)
	}
}

func TestPythonExtension(t *testing.T) {
	for _, tt := range []struct {
		path string
		want bool
	}{
		{"/usr/lib/python3/dist-packages/cryptography/hazmat/bindings/_rust.abi3.so", true},
		{"torch/_C.cpython-311-x86_64-linux-gnu.so", true},
		{"site-packages/numpy/core/_multiarray_umath.pypy310-pp73-x86_64-linux-gnu.so", true},
		{"onnxruntime/capi/onnxruntime_pybind11_state.so", false}, // no tag: the SONAME rule decides
		{"libabi3.so", false},
		{"lib/libamdhip64.so.6", false},
		{"x.abi3.so.1", false},
		{".abi3.so", false},
	} {
		if got := symcheck.PythonExtension(tt.path); got != tt.want {
			t.Errorf("PythonExtension(%q) = %v, want %v", tt.path, got, tt.want)
		}
	}
}

// TestCheckReadsEachTableOnce: a scan reads each library's symbol table
// once, whether it is reached as a scanned file, as a dependency, or as a
// dependency through another path to the same file (alias/ is a symbolic
// link to lib/, as /lib is to /usr/lib on a merged-/usr system), with
// workers racing for it.
func TestCheckReadsEachTableOnce(t *testing.T) {
	p := testenv.NewPrefix(t)
	lib := p.Lib("lib/libdep.so.1", "libdep.so.1", "int dep(void) { return 1; }")
	if err := os.Symlink("lib", filepath.Join(p.Root, "alias")); err != nil {
		t.Fatal(err)
	}
	for i := range 8 {
		dir := "$ORIGIN/../lib"
		if i%2 == 1 {
			dir = "$ORIGIN/../alias"
		}
		p.CC(fmt.Sprintf("bin/app%d", i), "int dep(void); int main(void) { return dep() - 1; }",
			"-L"+filepath.Dir(lib), "-l:libdep.so.1", "-Wl,--enable-new-dtags,-rpath,"+dir)
	}
	var mu sync.Mutex
	reads := map[elfx.FileID][]string{}
	opts := check.WithHooks(check.Options{Workers: 4}, func(f *elfx.File) {
		mu.Lock()
		defer mu.Unlock()
		id := elfx.IDOf(f.FileInfo())
		reads[id] = append(reads[id], f.Path)
	}, nil)
	for range 3 {
		clear(reads)
		rep, err := check.Run(context.Background(), []string{p.Root}, opts)
		if err != nil {
			t.Fatal(err)
		}
		rootsChecked(t, rep, p.Root)
		if len(rep.Files) != 9 {
			t.Fatalf("files = %v, want libdep and 8 programs", rep.Files)
		}
		for _, f := range rep.Findings {
			if f.Rule == finding.RuleUndefinedSymbol || f.Rule == finding.RuleMissingLibrary {
				t.Errorf("finding: %+v", f)
			}
		}
		st, err := os.Stat(lib)
		if err != nil {
			t.Fatal(err)
		}
		if len(reads[elfx.IDOf(st)]) == 0 {
			t.Fatalf("libdep's table was never read: %v", reads)
		}
		for _, paths := range reads {
			if len(paths) != 1 {
				t.Errorf("table read %d times: %v", len(paths), paths)
			}
		}
	}
}

// TestCheckSymlinkedRoot: a root that is a symbolic link to a directory
// (/opt/rocm -> /opt/rocm-6.2.0, as ROCm installs it) is scanned; links
// below the root are not followed. The scan of a real directory, walked on
// several cores, lists files in filepath.WalkDir's order.
func TestCheckSymlinkedRoot(t *testing.T) {
	tree := testenv.Testdata("checktree")
	dir := t.TempDir()
	link := filepath.Join(dir, "rocm")
	if err := os.Symlink(tree, link); err != nil {
		t.Fatal(err)
	}
	want, err := check.Run(context.Background(), []string{tree}, check.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	rootsChecked(t, want, tree)
	got, err := check.Run(context.Background(), []string{link}, check.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	rootsChecked(t, got, link)
	if len(want.Files) == 0 || len(got.Files) != len(want.Files) || len(got.Findings) != len(want.Findings) {
		t.Fatalf("through the link: %d files, %d findings; the directory itself: %d files, %d findings",
			len(got.Files), len(got.Findings), len(want.Files), len(want.Findings))
	}
	for i, f := range got.Files {
		if rel, _ := filepath.Rel(link, f); filepath.Join(tree, rel) != want.Files[i] {
			t.Errorf("file %d: %s through the link, %s in the directory", i, f, want.Files[i])
		}
	}
	// A link inside the tree is not followed.
	inner := t.TempDir()
	if err := os.Symlink(tree, filepath.Join(inner, "sub")); err != nil {
		t.Fatal(err)
	}
	rep, err := check.Run(context.Background(), []string{inner}, check.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Files) != 0 {
		t.Errorf("a link below the root was followed: %v", rep.Files)
	}
	// So the root has nothing to check, which is one of the errors.
	if len(rep.Errors) != 1 || rep.Errors[0].Path != inner || !strings.Contains(rep.Errors[0].Error, "nothing to check") {
		t.Errorf("errors %+v, want the root's nothing to check", rep.Errors)
	}
}

// TestCheckOriginOfLinkedFile: $ORIGIN is the directory a file really
// lives in. A file named on the command line may be a symbolic link (its
// $ORIGIN is then the target's directory); files found by walking a
// directory are regular files, which check tells the resolver so that it
// does not lstat each one. Both must resolve $ORIGIN/../lib.
func TestCheckOriginOfLinkedFile(t *testing.T) {
	gcc := testenv.Tool(t, "gcc", "gcc")
	dir := t.TempDir()
	for _, d := range []string{"prefix/lib", "prefix/bin", "links"} {
		os.MkdirAll(filepath.Join(dir, d), 0o755)
	}
	build := func(args ...string) {
		t.Helper()
		if out, err := exec.Command(gcc, args...).CombinedOutput(); err != nil {
			t.Fatalf("gcc %v: %v\n%s", args, err, out)
		}
	}
	os.WriteFile(filepath.Join(dir, "dep.c"), []byte("int dep_value(void){return 0;}\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "main.c"), []byte("extern int dep_value(void); int main(void){return dep_value();}\n"), 0o644)
	lib := filepath.Join(dir, "prefix/lib/libdep.so.1")
	build("-shared", "-fPIC", "-o", lib, filepath.Join(dir, "dep.c"), "-Wl,-soname,libdep.so.1")
	app := filepath.Join(dir, "prefix/bin/app")
	build("-o", app, filepath.Join(dir, "main.c"), lib, "-Wl,--enable-new-dtags,-rpath,$ORIGIN/../lib")
	link := filepath.Join(dir, "links/app")
	if err := os.Symlink(app, link); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(link).CombinedOutput(); err != nil {
		t.Fatalf("oracle: the loader runs the app through its link: %v %s", err, out)
	}
	for _, root := range []string{link, filepath.Join(dir, "prefix")} {
		rep, err := check.Run(context.Background(), []string{root}, check.Options{Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		rootsChecked(t, rep, root)
		if len(rep.Files) == 0 {
			t.Fatalf("check %s scanned nothing", root)
		}
		for _, f := range rep.Findings {
			if f.Rule == finding.RuleMissingLibrary || f.Rule == finding.RuleUndefinedSymbol {
				t.Errorf("check %s: %s: %s", root, f.Rule, f.Message)
			}
		}
	}
}

// TestCheckDependencyParsedOnce: a library the scan reached first as a
// program's dependency is not parsed again when the walk comes to it; what
// its file-level rules need is kept from the first parse. Its findings must
// be the ones a scan of it alone gives (one of each file-level rule it
// breaks, and its own unresolved reference).
func TestCheckDependencyParsedOnce(t *testing.T) {
	p := testenv.NewPrefix(t)
	lib := p.CC("lib/libwild.so", "#include <stdio.h>\nextern void not_defined_anywhere(void);\n"+
		"void wild(void) { puts(\"x\"); not_defined_anywhere(); }\n",
		"-shared", "-fPIC", "-Wl,-z,execstack", "-Wl,--enable-new-dtags,-rpath,/tmp/build/deps")
	// "a" comes before "lib" in the walk: with one worker the program is
	// checked, and its dependency parsed, first.
	app := p.CC("a/app", "void wild(void); int main(void) { wild(); return 0; }",
		"-L"+filepath.Dir(lib), "-l:libwild.so", "-Wl,--allow-shlib-undefined,--enable-new-dtags,-rpath,$ORIGIN/../lib")
	var mu sync.Mutex
	var parsed []string
	onParse := func(path string) {
		mu.Lock()
		parsed = append(parsed, path)
		mu.Unlock()
	}
	libFindings := func(roots ...string) []string {
		t.Helper()
		parsed = nil
		rep, err := check.Run(context.Background(), roots, check.WithHooks(check.Options{Workers: 1, Glibc: "2.0"}, nil, onParse))
		if err != nil {
			t.Fatal(err)
		}
		rootsChecked(t, rep, roots...)
		var out []string
		for _, f := range rep.Findings {
			if f.File == lib {
				out = append(out, f.Rule+": "+f.Message)
			}
		}
		return out
	}
	// (With the program that NEEDs it: the rest of the scan decides
	// whether the library is used as a library or a module.)
	alone := libFindings(lib, app)
	if !slices.Contains(parsed, lib) {
		t.Fatalf("checked first, the library was not parsed by the scan: %v", parsed)
	}
	rules := map[string]bool{}
	for _, f := range alone {
		rules[strings.SplitN(f, ":", 2)[0]] = true
	}
	for _, r := range []string{finding.RuleExecStack, finding.RuleMissingSoname, finding.RuleBuildDirRunpath, finding.RuleGlibcTooNew, finding.RuleUndefinedSymbol} {
		if !rules[r] {
			t.Errorf("checked alone, no %s finding: %v", r, alone)
		}
	}
	inTree := libFindings(p.Root)
	if slices.Contains(parsed, lib) {
		t.Errorf("the library was parsed again when the walk reached it: %v", parsed)
	}
	if !slices.Equal(inTree, alone) {
		t.Errorf("as a dependency first:\n%s\nalone:\n%s", strings.Join(inTree, "\n"), strings.Join(alone, "\n"))
	}
}

// rootsChecked fails t when a root given to Check was not checked at all
// (missing, not a file or directory, or a directory with nothing to
// check): Check reports those in the report rather than as its error, so
// a test's "no findings" would otherwise pass on them.
func rootsChecked(t *testing.T, rep *check.Report, roots ...string) {
	t.Helper()
	for _, e := range rep.Errors {
		if slices.Contains(roots, e.Path) {
			t.Fatalf("%s was not checked: %s", e.Path, e.Error)
		}
	}
}

// A deflated member whose data does not match its header (CRC-32, or more
// bytes than its declared size) is an error naming the member, whether it
// is read into memory or through a temporary file; the bytes past the
// declared size are never written.
func TestCheckWheelDeflatedMemberLies(t *testing.T) {
	lib, err := os.ReadFile(testenv.Testdata("libexecstack.so"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name      string
		crc       uint32
		size      uint64
		wantError string
	}{
		{"crc", crc32.ChecksumIEEE(lib) ^ 1, uint64(len(lib)), "checksum"},
		{"short", crc32.ChecksumIEEE(lib), uint64(len(lib)) - 100, "inflates to more than the size its header declares"},
		{"long", crc32.ChecksumIEEE(lib), uint64(len(lib)) + 100, "does not match the size and CRC-32"},
	} {
		p := forgedWheel(t, "pkg/libx.so", lib, tt.crc, tt.size)
		for _, limit := range []uint64{32 << 20, 0} {
			rep := checkMembersIn(t, p, limit)
			if len(rep.Errors) != 1 || !strings.HasPrefix(rep.Errors[0].Error, p+"!/pkg/libx.so: ") || !strings.Contains(rep.Errors[0].Error, tt.wantError) {
				t.Errorf("%s, in-memory limit %d: errors %+v, want one naming the member with %q", tt.name, limit, rep.Errors, tt.wantError)
			}
		}
	}
}

// forgedWheel writes a wheel holding data deflated as member name under a
// header that declares crc and size, whatever the data is.
func forgedWheel(t *testing.T, name string, data []byte, crc uint32, size uint64) string {
	t.Helper()
	var comp bytes.Buffer
	fw, _ := flate.NewWriter(&comp, flate.BestSpeed)
	fw.Write(data)
	fw.Close()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateRaw(&zip.FileHeader{Name: name, Method: zip.Deflate,
		CRC32: crc, CompressedSize64: uint64(comp.Len()), UncompressedSize64: size})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(comp.Bytes())
	zw.Close()
	p := filepath.Join(t.TempDir(), "pkg-1.0-py3-none-linux_x86_64.whl")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// checkMembersIn checks the wheel at p reading its ELF members into memory
// up to limit bytes (through a temporary file above).
func checkMembersIn(t *testing.T, p string, limit uint64) *check.Report {
	t.Helper()
	rep, err := check.Run(context.Background(), []string{p}, check.WithLimits(check.Options{}, 0, limit))
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// With GPU targets, check reads the device code of ELF files and archive
// members (RD1401 per target none of it runs on), judges a rocBLAS Tensile
// directory per target (RD1402, and a warning for a kernel file that is
// not code for the architecture in its name) without holding its
// one-architecture kernel files to every target, and says when the whole
// scan has no device code. Without targets, none of it runs.
func TestCheckGPUTargets(t *testing.T) {
	root := t.TempDir()
	lib := filepath.Join(root, "lib")
	testenv.CopyFile(t, testenv.Testdata("libgpu.so"), filepath.Join(lib, "libgpu.so")) // gfx90a:xnack-, gfx1030, gfx906:sramecc+:xnack-
	testenv.CopyFile(t, testenv.Testdata("ck/lib/libdevice_gemm_operations.a"), filepath.Join(lib, "libdevice_gemm_operations.a"))
	testenv.CopyFile(t, testenv.Testdata("libfoo.so.1"), filepath.Join(lib, "librocblas.so.4"))
	// A consumer the walk reaches first: libgpu.so is parsed as its
	// dependency before the walk gets to it, and must still have its device
	// code read.
	gcc := testenv.Tool(t, "gcc", "gcc")
	src := filepath.Join(t.TempDir(), "user.c")
	os.WriteFile(src, []byte("void user(void){}\n"), 0o644)
	if out, err := exec.Command(gcc, "-shared", "-nostdlib", "-o", filepath.Join(lib, "aa_user.so"), src,
		"-L"+lib, "-Wl,--no-as-needed", "-l:libgpu.so", "-Wl,-soname,libaa_user.so,--enable-new-dtags,-rpath,$ORIGIN").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	tensile := filepath.Join(lib, "rocblas", "library")
	testenv.CopyFile(t, testenv.Testdata("k-gfx90a_xnackoff.co"), filepath.Join(tensile, "Kernels.so-000-gfx90a.hsaco"))
	testenv.CopyFile(t, testenv.Testdata("k-gfx90a_xnackoff.co"), filepath.Join(tensile, "TensileLibrary_Type_HH_gfx1030.co")) // not gfx1030 code
	var onParse func(path string)
	gpuFindings := func(targets ...string) []string {
		t.Helper()
		// One worker: the walk reaches aa_user.so, and parses libgpu.so as
		// its dependency, before it reaches libgpu.so.
		rep, err := check.Run(context.Background(), []string{root}, check.WithHooks(check.Options{GPUTargets: targets, Workers: 1}, nil, onParse))
		if err != nil {
			t.Fatal(err)
		}
		rootsChecked(t, rep, root)
		var out []string
		for _, f := range rep.Findings {
			if f.Rule == finding.RuleGPUTargetMissing || f.Rule == finding.RuleTensileMissing {
				rel, _ := filepath.Rel(root, f.File)
				if f.RelPath != rel {
					t.Errorf("%s: relative path %q, want %q", f.File, f.RelPath, rel)
				}
				out = append(out, fmt.Sprintf("%s %s %s", f.ID, f.Severity, rel))
			}
		}
		return out
	}
	want := []string{
		"RD1401 error lib/libdevice_gemm_operations.a",
		"RD1401 error lib/libgpu.so",
		"RD1402 error lib/rocblas/library",
		"RD1402 warning lib/rocblas/library/TensileLibrary_Type_HH_gfx1030.co",
	}
	// Each file is parsed once: libgpu.so, read as aa_user.so's
	// dependency, is not parsed again when the walk reaches it (its device
	// code was read then).
	var mu sync.Mutex
	var parsed []string
	onParse = func(path string) {
		mu.Lock()
		parsed = append(parsed, path)
		mu.Unlock()
	}
	if got := gpuFindings("gfx90a", "gfx1100"); !slices.Equal(got, want) {
		t.Errorf("gfx90a,gfx1100:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	onParse = nil
	if slices.Contains(parsed, filepath.Join(lib, "libgpu.so")) || !slices.Contains(parsed, filepath.Join(lib, "aa_user.so")) {
		t.Errorf("parsed by the scan: %q; libgpu.so must have been read once, as aa_user.so's dependency", parsed)
	}
	if got := gpuFindings("gfx90a"); !slices.Equal(got, want[3:]) {
		t.Errorf("gfx90a (covered everywhere): %q, want only %q", got, want[3:])
	}
	if got := gpuFindings(); len(got) != 0 {
		t.Errorf("without targets: %q", got)
	}
	// A tree without device code at all.
	rep, err := check.Run(context.Background(), []string{testenv.Testdata("libfoo.so.1")}, check.Options{GPUTargets: []string{"gfx90a"}})
	if err != nil {
		t.Fatal(err)
	}
	var none []string
	for _, f := range rep.Findings {
		if f.Rule == finding.RuleGPUTargetMissing {
			none = append(none, f.Message)
			if f.File != testenv.Testdata("libfoo.so.1") {
				t.Errorf("no device code: filed under %q, want the root", f.File)
			}
		}
	}
	if len(none) != 1 || !strings.Contains(none[0], "no device code in "+testenv.Testdata("libfoo.so.1")+": nothing there runs on gfx90a") {
		t.Errorf("host-only file: %q", none)
	}
	if _, err := check.Run(context.Background(), []string{root}, check.Options{GPUTargets: []string{"gfx90a:foo"}}); !errors.Is(err, elfx.ErrBadTargetID) {
		t.Errorf("a bad target: %v", err)
	}
}

// check --gpu-targets reads a wheel's members as gpus does: device code
// of host libraries (read once with the file rules), archives and code
// objects, and its Tensile directory from the member names and contents.
func TestCheckGPUTargetsWheel(t *testing.T) {
	dir := t.TempDir()
	whl := testenv.TorchWheel(t, dir)
	findings := func(targets ...string) []string {
		t.Helper()
		rep, err := check.Run(context.Background(), []string{whl}, check.Options{GPUTargets: targets})
		if err != nil {
			t.Fatal(err)
		}
		rootsChecked(t, rep, whl)
		return gpuFindings(rep, func(f finding.Finding) string {
			return string(f.Severity) + " " + f.ID + " " + strings.TrimPrefix(f.File, whl)
		})
	}
	want := []string{
		"error RD1401 !/torch/lib/libdevice.a",
		"error RD1401 !/torch/lib/libgpu.so",
		"error RD1402 !/torch/lib/rocblas/library",
		"warning RD1402 !/torch/lib/rocblas/library/TensileLibrary_Type_HH_gfx1030.co",
	}
	if got := findings("gfx90a", "gfx1100"); !slices.Equal(got, want) {
		t.Errorf("gfx90a,gfx1100:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := findings(); len(got) != 0 {
		t.Errorf("without targets: %q", got)
	}
	// A wheel without device code is the whole scan's RD1401.
	host := filepath.Join(dir, "host-1.0-py3-none-linux_x86_64.whl")
	testenv.WriteWheel(t, host, [][2]string{{"host/libfoo.so", "@libfoo.so.1"}}, nil)
	rep, err := check.Run(context.Background(), []string{host}, check.Options{GPUTargets: []string{"gfx90a"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) != 1 || rep.Findings[0].ID != "RD1401" || !strings.Contains(rep.Findings[0].Message, "no device code in "+host) {
		t.Errorf("host-only wheel: %+v", rep.Findings)
	}
}

// undecodableWheel writes a wheel whose one member, name, does not decode
// from its first bits (deflate block type 3 is reserved).
func undecodableWheel(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(testenv.Testdata("libexecstack.so"))
	if err != nil {
		t.Fatal(err)
	}
	b, zf := testenv.OneMember(t, name, data, zip.Deflate)
	off, err := zf.DataOffset()
	if err != nil {
		t.Fatal(err)
	}
	b[off] = 0xff
	p := filepath.Join(t.TempDir(), "pkg-1.0-py3-none-linux_x86_64.whl")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A member whose first bytes do not decode is an error naming it, in
// check (with and without GPU targets) and in gpus: it was passed over as
// neither ELF nor archive, and a damaged wheel went through the gate. A
// Tensile kernel file, judged with its directory when there are GPU
// targets, is reported there as not parsing.
func TestWheelMemberThatDoesNotDecode(t *testing.T) {
	lib := "pkg/lib/libhip.so"
	kernel := "pkg/lib/rocblas/library/Kernels.so-000-gfx90a.hsaco"
	for _, name := range []string{lib, kernel} {
		p := undecodableWheel(t, name)
		want := p + "!/" + name + ": "
		for _, targets := range [][]string{nil, {"gfx90a"}} {
			rep, err := check.Run(context.Background(), []string{p}, check.Options{GPUTargets: targets})
			if err != nil {
				t.Fatal(err)
			}
			if name == kernel && targets != nil {
				if len(rep.Errors) != 0 || !slices.ContainsFunc(rep.Findings, func(f finding.Finding) bool {
					return f.Rule == finding.RuleTensileMissing && f.File == p+"!/"+name
				}) {
					t.Errorf("check %s (GPU targets %v): errors %+v, findings %+v; want the kernel file reported", name, targets, rep.Errors, rep.Findings)
				}
				continue
			}
			if len(rep.Errors) != 1 || !strings.HasPrefix(rep.Errors[0].Error, want) {
				t.Errorf("check %s (GPU targets %v): errors = %+v, want one naming the member", name, targets, rep.Errors)
			}
		}
		rep, err := gpu.Check(context.Background(), []string{p}, gpu.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if name == kernel {
			if len(rep.Tensile) != 1 || !slices.Equal(rep.Tensile[0].Bad, []string{"Kernels.so-000-gfx90a.hsaco"}) {
				t.Errorf("gpus %s: tensile = %+v, want the kernel file bad", name, rep.Tensile)
			}
			continue
		}
		if len(rep.Errors) != 1 || !strings.HasPrefix(rep.Errors[0].Error, want) {
			t.Errorf("gpus %s: errors = %+v, want one naming the member", name, rep.Errors)
		}
	}
}

// gpuFindings renders rep's GPU-rule findings (RD1401, RD1402) with line.
func gpuFindings(rep *check.Report, line func(finding.Finding) string) []string {
	var out []string
	for _, f := range rep.Findings {
		if f.ID == "RD1401" || f.ID == "RD1402" {
			out = append(out, line(f))
		}
	}
	return out
}

// TestCheckDamagedSectionTable: check reads files as the loader does (no
// section headers), and still reports a library whose section header
// table runs past the end of the file, as Open would: whether the scan
// reaches it first or parses it first as a program's dependency. The
// program itself loads it (ld.so never reads section headers): no
// missing library or unresolved symbol for it.
func TestCheckDamagedSectionTable(t *testing.T) {
	p := testenv.NewPrefix(t)
	lib := p.Lib("lib/libdep.so.1", "libdep.so.1", "int dep(void) { return 1; }")
	// "a" comes before "lib" in the walk: with one worker the program is
	// checked, and its dependency parsed, first.
	app := p.CC("a/app", "int dep(void); int main(void) { return dep() - 1; }",
		"-L"+filepath.Dir(lib), "-l:libdep.so.1", "-Wl,--enable-new-dtags,-rpath,$ORIGIN/../lib")
	b, err := os.ReadFile(lib)
	if err != nil {
		t.Fatal(err)
	}
	binary.LittleEndian.PutUint64(b[40:], uint64(len(b))+4096) // e_shoff
	if err := os.WriteFile(lib, b, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, roots := range [][]string{{p.Root}, {lib}} {
		rep, err := check.Run(context.Background(), roots, check.Options{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		var errs []string
		for _, e := range rep.Errors {
			errs = append(errs, e.Error)
		}
		if len(errs) != 1 || !strings.Contains(errs[0], lib+": malformed file at offset") || !strings.Contains(errs[0], "section header table") {
			t.Errorf("%v: errors %q, want one for %s's section header table", roots, errs, lib)
		}
		for _, f := range rep.Findings {
			if f.File == app && (f.Rule == finding.RuleMissingLibrary || f.Rule == finding.RuleUndefinedSymbol) {
				t.Errorf("%v: %s: %s", roots, f.Rule, f.Message)
			}
		}
	}
}

// TestCheckReadsWhatTheLoaderReads: without GPU targets or a CK install
// in the scan, no file's section headers are read (the symbol tables are
// found through the dynamic segment); with GPU targets they are, for the
// device code.
func TestCheckReadsWhatTheLoaderReads(t *testing.T) {
	p := testenv.NewPrefix(t)
	lib := p.Lib("lib/libdep.so.1", "libdep.so.1", "int dep(void) { return 1; }")
	p.CC("bin/app", "int dep(void); int main(void) { return dep() - 1; }",
		"-L"+filepath.Dir(lib), "-l:libdep.so.1", "-Wl,--enable-new-dtags,-rpath,$ORIGIN/../lib")
	for _, gpu := range []bool{false, true} {
		var mu sync.Mutex
		sections := map[string]int{}
		opts := check.WithHooks(check.Options{}, func(f *elfx.File) {
			mu.Lock()
			defer mu.Unlock()
			sections[f.Path] = len(f.ELF().Sections)
		}, nil)
		if gpu {
			opts.GPUTargets = []string{"gfx90a"}
		}
		rep, err := check.Run(context.Background(), []string{p.Root}, opts)
		if err != nil {
			t.Fatal(err)
		}
		rootsChecked(t, rep, p.Root)
		if len(sections) < 3 { // the program, libdep, libc
			t.Fatalf("GPU targets %v: tables read: %v", gpu, sections)
		}
		for path, n := range sections {
			if (n > 0) != gpu {
				t.Errorf("GPU targets %v: %s read with %d sections", gpu, path, n)
			}
		}
	}
}

// TestCheckUnreadableDeviceCode: with GPU targets, device code that cannot
// be read is RD1403 (a warning naming the file as the scan reached it, even
// when it was first parsed as another file's dependency through another
// path), and no RD1401 is raised for a target it might hold: a library
// whose first bundle reads but whose second is damaged, and one whose only
// bundle is. Before, both passed the gate without a word, or the first
// failed it for a target the damaged part could hold.
func TestCheckUnreadableDeviceCode(t *testing.T) {
	gcc := testenv.Tool(t, "gcc", "gcc")
	root := t.TempDir()
	lib := filepath.Join(root, "lib")
	os.MkdirAll(lib, 0o755)
	// lib64 -> lib: the walk does not follow it, aa_user.so's RUNPATH does.
	if err := os.Symlink("lib", filepath.Join(root, "lib64")); err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	build := func(out string, args ...string) {
		t.Helper()
		if b, err := exec.Command(gcc, append([]string{"-shared", "-nostdlib", "-o", out}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("gcc: %v\n%s", err, b)
		}
	}
	asm := func(name, text string) string {
		t.Helper()
		p := filepath.Join(src, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	garbage := "\t.p2align 12\n\t.fill 256,1,0xee\n"
	end := "\t.text\n\t.globl entry\nentry:\n\tret\n\t.section .note.GNU-stack,\"\",@progbits\n"
	build(filepath.Join(lib, "libbroken.so"), asm("broken.s", "\t.section .hip_fatbin,\"a\",@progbits\n"+garbage+end), "-Wl,-soname,libbroken.so")
	build(filepath.Join(lib, "libpartial.so"), asm("partial.s",
		"\t.section .hip_fatbin,\"a\",@progbits\n\t.p2align 12\n\t.incbin \""+testenv.Testdata("bundle.hipfb")+"\"\n"+
			"\t.section __CLANG_OFFLOAD_BUNDLE__extra,\"a\",@progbits\n"+garbage+end), "-Wl,-soname,libpartial.so")
	build(filepath.Join(lib, "aa_user.so"), asm("user.s", end), "-L"+lib, "-Wl,--no-as-needed", "-l:libbroken.so",
		"-Wl,-soname,libaa_user.so,--enable-new-dtags,-rpath,$ORIGIN/../lib64")
	check := func(paths []string, targets ...string) []finding.Finding {
		t.Helper()
		// One worker: aa_user.so, and libbroken.so as its dependency, are
		// parsed before the walk reaches libbroken.so.
		rep, err := check.Run(context.Background(), paths, check.Options{GPUTargets: targets, Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		rootsChecked(t, rep, paths...)
		var out []finding.Finding
		for _, f := range rep.Findings {
			if strings.HasPrefix(f.ID, "RD14") {
				out = append(out, f)
			}
		}
		return out
	}
	got := check([]string{root}, "gfx90a", "gfx1100")
	var ids []string
	for _, f := range got {
		rel, _ := filepath.Rel(root, f.File)
		ids = append(ids, fmt.Sprintf("%s %s %s", f.ID, f.Severity, rel))
		if !strings.HasPrefix(f.Message, f.File+" has device code that cannot be read (malformed file at offset 0x") ||
			!strings.HasSuffix(f.Message, "): whether it runs on gfx90a, gfx1100 cannot be told") || strings.Contains(f.Message, "lib64") {
			t.Errorf("message %q", f.Message)
		}
	}
	want := []string{"RD1403 warning lib/libbroken.so", "RD1403 warning lib/libpartial.so"}
	if !slices.Equal(ids, want) {
		t.Errorf("findings %q, want %q", ids, want)
	}
	if len(got) == 2 && (!strings.Contains(got[0].Message, ".hip_fatbin: 256 bytes without an offload bundle") ||
		!strings.Contains(got[1].Message, "__CLANG_OFFLOAD_BUNDLE__extra: 256 bytes without an offload bundle")) {
		t.Errorf("reasons: %q, %q", got[0].Message, got[1].Message)
	}
	// Without GPU targets device code is not read.
	if got := check([]string{root}); len(got) != 0 {
		t.Errorf("without targets: %+v", got)
	}
	// A tree whose only device code is unreadable holds device code: no
	// "no device code at all".
	only := filepath.Join(lib, "libbroken.so")
	if got := check([]string{only}, "gfx90a"); len(got) != 1 || got[0].ID != "RD1403" {
		t.Errorf("unreadable only: %+v", got)
	}
	// A compressed bundle: read when zlib or zstd, RD1403 (and no RD1401)
	// when compressed with a method rocmdoctor does not know.
	gpuLib, err := os.ReadFile(testenv.Testdata("libgpu.so"))
	if err != nil {
		t.Fatal(err)
	}
	comp := t.TempDir()
	for name, method := range map[string]uint16{"libzstd.so": 1, "libother.so": 9} {
		b, _, err := testenv.CompressFatbin(gpuLib, 3, method)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(comp, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ids = nil
	for _, f := range check([]string{comp}, "gfx90a", "gfx1100") {
		ids = append(ids, f.ID+" "+filepath.Base(f.File))
		if f.ID == "RD1403" && !strings.Contains(f.Message, "compressed with method 9") {
			t.Errorf("unknown method: %q", f.Message)
		}
	}
	if want := []string{"RD1403 libother.so", "RD1401 libzstd.so"}; !slices.Equal(ids, want) {
		t.Errorf("compressed bundles: %q, want %q", ids, want)
	}
	// gpus agrees: what was read of libpartial.so is not all there is, so
	// gfx1100 is unknown there, not missing.
	rep, err := gpu.Check(context.Background(), []string{filepath.Join(lib, "libpartial.so")}, gpu.Options{Require: []string{"gfx1100"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Libraries) != 1 || rep.Libraries[0].Coverage["gfx1100"] != gpu.CoverageUnknown || len(rep.Findings) != 0 ||
		!slices.Contains(rep.Libraries[0].Targets, "gfx90a:xnack-") {
		t.Errorf("gpus --require gfx1100 on libpartial.so: %+v", rep)
	}
}

// TestRunpathTokens: an entry is $ORIGIN-relative only where ld.so reads
// the token ($ORIGIN or ${ORIGIN}, not run on into a name): $ORIGINAL/lib
// and $LIB/x name directories relative to the working directory (RD1203).
func TestRunpathTokens(t *testing.T) {
	dir := t.TempDir()
	lib := filepath.Join(dir, "librelative.so")
	b, err := os.ReadFile(testenv.Testdata("checktree", "lib", "librelative.so"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lib, b, 0o755); err != nil {
		t.Fatal(err)
	}
	runpath := "$ORIGINAL/lib:$LIB/x:${ORIGIN}/../lib:$ORIGIN:/usr/lib:${ORIGIN}x"
	if _, err := patchelf.EditFile(lib, []patchelf.Edit{{Kind: patchelf.KindSetRPath, Arg: runpath}}, patchelf.Options{}, patchelf.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	rep, err := check.Run(context.Background(), []string{dir}, check.Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	rootsChecked(t, rep, dir)
	var relative []string
	for _, f := range rep.Findings {
		if f.Rule == finding.RuleRelativeRunpath {
			relative = append(relative, f.Library)
		}
	}
	if want := []string{"$LIB/x", "$ORIGINAL/lib"}; !slices.Equal(relative, want) {
		t.Errorf("relative entries %q, want %q", relative, want)
	}
}

// TestLLVMName: an archive holds LLVM code when one of its index's names
// starts with what LLVM's and MLIR's names start with; the same letters
// inside a name, or a name that stops short of a prefix, do not count.
func TestLLVMName(t *testing.T) {
	for _, tc := range []struct {
		names string
		want  bool
	}{
		{"", false},
		{"LLVMInitializeX86Target\x00", true},
		{"foo\x00bar\x00LLVMGetVersion\x00", true},
		{"foo\x00bar\x00_ZN4llvm5Value4dumpEv\x00", true},
		{"_ZN4mlir7Context\x00", true},
		{"mlirContextCreate", true}, // the last name, unterminated
		{"foo\x00_ZN3fooLLVM\x00x_ZN4llvm\x00amlir\x00", false},
		{"LLV\x00M\x00_ZN4llv\x00mli\x00", false},
		{"_ZN4rocm\x00llvm\x00Mlir\x00", false},
		{"\x00\x00\x00", false},
	} {
		if got := symcheck.HoldsLLVMName([]byte(tc.names)); got != tc.want {
			t.Errorf("LLVMName(%q) = %v, want %v", tc.names, got, tc.want)
		}
	}
}

// TestNeededPath: a NEEDED entry with a slash (a library linked by path
// that had no SONAME) is RD1211, relative or absolute; one starting with
// $ORIGIN is relocatable (ld.so expands it, as python-build-standalone's
// binaries rely on) and is not, and the real loader runs a program through
// it from another working directory.
func TestNeededPath(t *testing.T) {
	dir, write, run := testenv.GCCDir(t)
	write("dep.c", "int dep(void) { return 3; }\n")
	write("use.c", "int dep(void);\nint use(void) { return dep(); }\n")
	write("main.c", "int use(void);\nint main(void) { return use() == 3 ? 0 : 1; }\n")
	run("-shared", "-fPIC", "-o", "libdep.so", "dep.c") // no SONAME
	run("-shared", "-fPIC", "-o", "libabs.so", "use.c", filepath.Join(dir, "libdep.so"), "-Wl,-soname,libabs.so")
	run("-shared", "-fPIC", "-o", "libdep2.so", "dep.c", "-Wl,-soname,$ORIGIN/libdep2.so")
	run("-shared", "-fPIC", "-o", "libdst.so", "use.c", "libdep2.so", "-Wl,-soname,libdst.so")
	// (GNU ld does not expand $ORIGIN in the NEEDED entries of what it
	// links against: the program's link leaves them unchecked.)
	run("-o", "app", "main.c", "libdst.so", "-Wl,-rpath,$ORIGIN", "-Wl,--allow-shlib-undefined")
	for lib, want := range map[string]string{"libdst.so": "$ORIGIN/libdep2.so", "libabs.so": filepath.Join(dir, "libdep.so")} {
		f, err := elfx.Open(filepath.Join(dir, lib))
		if err != nil {
			t.Fatal(err)
		}
		d, err := f.Dynamic()
		f.Close()
		if err != nil || !slices.Contains(d.Needed, want) {
			t.Fatalf("%s does not need %s: %v", lib, want, err)
		}
	}
	cmd := exec.Command(filepath.Join(dir, "app"))
	cmd.Dir = "/"
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("oracle: the loader does not run the program through $ORIGIN/libdep2.so: %v %s", err, out)
	}
	rep, err := check.Run(context.Background(), []string{dir}, check.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range rep.Findings {
		if f.Rule == finding.RuleNeededPath || f.Rule == finding.RuleMissingLibrary || f.Rule == finding.RuleUndefinedSymbol {
			got = append(got, filepath.Base(f.File)+" "+f.Rule+" "+f.Library)
			if f.Rule == finding.RuleNeededPath && !strings.Contains(f.Message, "opens that file and no other") {
				t.Errorf("absolute entry: %s", f.Message)
			}
		}
	}
	want := []string{"libabs.so needed-path " + filepath.Join(dir, "libdep.so")}
	if !slices.Equal(got, want) {
		t.Errorf("findings %q, want %q", got, want)
	}
}

// TestCheckSysrootLinks: under a sysroot, a root named through an absolute
// symbolic link (/opt/rocm -> /opt/rocm-6.2.0, as a ROCm image has it) is
// walked inside the sysroot, and a file named through one is resolved
// there too; this machine has no /opt/rocm-6.2.0 to be read instead.
func TestCheckSysrootLinks(t *testing.T) {
	if _, err := os.Stat("/opt/rocm-6.2.0"); err == nil {
		t.Skip("this machine has /opt/rocm-6.2.0: the test needs a path only the sysroot has")
	}
	sys := t.TempDir()
	lib := filepath.Join(sys, "opt/rocm-6.2.0/lib")
	os.MkdirAll(lib, 0o755)
	src, err := os.ReadFile(testenv.Testdata("checktree/lib/libundef.so"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(lib, "libundef.so"), src, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/opt/rocm-6.2.0", filepath.Join(sys, "opt/rocm")); err != nil {
		t.Fatal(err)
	}
	opts := check.Options{Resolver: rpath.Options{Root: sys, NoCache: true}}
	for _, root := range []string{filepath.Join(sys, "opt/rocm"), filepath.Join(sys, "opt/rocm/lib/libundef.so")} {
		rep, err := check.Run(context.Background(), []string{root}, opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Errors) > 0 || len(rep.Files) != 1 || rep.Files[0] != filepath.Join(lib, "libundef.so") {
			t.Errorf("%s: files %v, errors %v", root, rep.Files, rep.Errors)
		}
		found := false
		for _, f := range rep.Findings {
			found = found || f.ID == "RD1001" && f.Symbol == "nothere"
		}
		if !found {
			t.Errorf("%s: no RD1001 for nothere in %+v", root, rep.Findings)
		}
	}
}

// ROCm 7 keeps each architecture's Tensile kernels in a subdirectory of
// library/ named for it (lib/rocblas/library/gfx942/…), and hipSPARSELt
// has a library/ directory of its own: both are Tensile directories, their
// kernel files no matrix rows, and their libraries not "built without
// Tensile".
func TestTensileArchSubdirectories(t *testing.T) {
	prefix := t.TempDir()
	testenv.CopyFile(t, testenv.Testdata("libfoo.so.1"), filepath.Join(prefix, "lib", "librocblas.so.5"))
	testenv.CopyFile(t, testenv.Testdata("libfoo.so.1"), filepath.Join(prefix, "lib", "libhipsparselt.so.0"))
	rb := filepath.Join(prefix, "lib", "rocblas", "library")
	testenv.CopyFile(t, testenv.Testdata("k-gfx90a_xnackoff.co"), filepath.Join(rb, "gfx90a", "TensileLibrary_Type_SS_Contraction.co"))
	testenv.CopyFile(t, testenv.Testdata("k-gfx90a_xnackoff.co"), filepath.Join(rb, "gfx942", "Kernels.so-000.hsaco")) // gfx90a code: bad
	os.WriteFile(filepath.Join(rb, "gfx90a", "TensileLibrary_lazy.dat"), []byte("x"), 0o644)
	sp := filepath.Join(prefix, "lib", "hipsparselt", "library")
	testenv.CopyFile(t, testenv.Testdata("k-gfx90a_xnackoff.co"), filepath.Join(sp, "Kernels.so-000-gfx90a.hsaco"))
	rep := gpuReport(t, []string{prefix}, gpu.Options{Require: []string{"gfx90a", "gfx942"}})
	if len(rep.Libraries) != 0 {
		t.Errorf("kernel files as matrix rows: %+v", rep.Libraries)
	}
	var got []string
	for _, tr := range rep.Tensile {
		got = append(got, fmt.Sprintf("%s %s %v bad=%v", tr.Library, strings.TrimPrefix(tr.Dir, prefix), tr.Archs, tr.Bad))
	}
	want := []string{
		"rocblas /lib/rocblas/library map[gfx90a:[gfx90a/TensileLibrary_Type_SS_Contraction.co gfx90a/TensileLibrary_lazy.dat] gfx942:[gfx942/Kernels.so-000.hsaco]] bad=[gfx942/Kernels.so-000.hsaco]",
		"hipsparselt /lib/hipsparselt/library map[gfx90a:[Kernels.so-000-gfx90a.hsaco]] bad=[]",
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("tensile:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var findings []string
	for _, f := range rep.Findings {
		findings = append(findings, string(f.Severity)+" "+f.Rule+" "+strings.TrimPrefix(f.File, prefix))
	}
	wantF := []string{
		"error tensile-kernels-missing /lib/hipsparselt/library",
		"warning tensile-kernels-missing /lib/rocblas/library/gfx942/Kernels.so-000.hsaco",
	}
	slices.Sort(findings)
	if !slices.Equal(findings, wantF) {
		t.Errorf("findings:\n%s\nwant\n%s", strings.Join(findings, "\n"), strings.Join(wantF, "\n"))
	}
	// The same layout inside a wheel.
	whl := filepath.Join(t.TempDir(), "pkg-1.0-py3-none-linux_x86_64.whl")
	testenv.WriteWheel(t, whl, [][2]string{
		{"pkg/lib/rocblas/library/gfx90a/Kernels.so-000.hsaco", "@k-gfx90a_xnackoff.co"},
		{"pkg/lib/rocblas/library/gfx942/Kernels.so-000.hsaco", "@k-gfx90a_xnackoff.co"},
	}, nil)
	wrep := gpuReport(t, []string{whl}, gpu.Options{Require: []string{"gfx90a"}})
	if len(wrep.Libraries) != 0 || len(wrep.Tensile) != 1 || len(wrep.Tensile[0].Archs) != 2 ||
		!slices.Equal(wrep.Tensile[0].Bad, []string{"gfx942/Kernels.so-000.hsaco"}) {
		t.Errorf("in a wheel: libraries %+v, tensile %+v", wrep.Libraries, wrep.Tensile)
	}
	// check --gpu-targets judges the same tree the same way.
	crep, err := check.Run(context.Background(), []string{prefix}, check.Options{GPUTargets: []string{"gfx90a", "gfx942"}})
	if err != nil {
		t.Fatal(err)
	}
	cf := gpuFindings(crep, func(f finding.Finding) string {
		return string(f.Severity) + " " + f.Rule + " " + strings.TrimPrefix(f.File, prefix)
	})
	slices.Sort(cf)
	if !slices.Equal(cf, wantF) {
		t.Errorf("check:\n%s\nwant\n%s", strings.Join(cf, "\n"), strings.Join(wantF, "\n"))
	}
}

func gpuReport(t *testing.T, paths []string, opts gpu.Options) *gpu.Report {
	t.Helper()
	rep, err := gpu.Check(context.Background(), paths, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Errors) != 0 {
		t.Fatalf("paths not read: %+v", rep.Errors)
	}
	return rep
}

// sameFile reports whether a and b are one file by their real paths.
func sameFile(a, b string) bool {
	ra, errA := filepath.EvalSymlinks(a)
	rb, errB := filepath.EvalSymlinks(b)
	return errA == nil && errB == nil && ra == rb || a == b
}
