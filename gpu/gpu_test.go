package gpu_test

import (
	"archive/zip"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/finding"
	"github.com/rocmdoctor/rocmdoctor/gpu"
	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
)

func TestTargetCoverage(t *testing.T) {
	for _, tt := range []struct {
		code, want string
		cov        gpu.Coverage
	}{
		{"gfx90a:xnack-", "gfx90a:xnack-", gpu.CoverageExact},
		{"gfx90a", "gfx90a:xnack+", gpu.CoverageCompatible},  // no setting: runs in both modes
		{"gfx90a", "gfx90a:xnack-", gpu.CoverageCompatible},  //
		{"gfx90a:xnack-", "gfx90a:xnack+", gpu.CoverageNone}, // xnack- only with XNACK off
		{"gfx90a:xnack+", "gfx90a", gpu.CoverageCompatible},  // requirement without a setting
		{"gfx906:sramecc+:xnack-", "gfx906:sramecc-", gpu.CoverageNone},
		{"gfx906:sramecc+:xnack-", "gfx906:sramecc+", gpu.CoverageCompatible},
		{"gfx10-3-generic", "gfx1030", gpu.CoverageCompatible}, // generic covers its family
		{"gfx10-3-generic", "gfx1036", gpu.CoverageCompatible},
		{"gfx11-generic", "gfx1030", gpu.CoverageNone}, // no cross-family compatibility
		{"gfx1030", "gfx1031", gpu.CoverageNone},       // nor between processors
		{"gfx9-generic", "gfx90a", gpu.CoverageNone},   // gfx90a is not in gfx9-generic
		{"gfx9-4-generic", "gfx942:xnack+", gpu.CoverageCompatible},
	} {
		t.Run(tt.code+"→"+tt.want, func(t *testing.T) {
			c, _ := elfx.ParseTargetID(tt.code)
			w, _ := elfx.ParseTargetID(tt.want)
			if got := gpu.TargetCoverage(c, w); got != tt.cov {
				t.Errorf("got %s, want %s", got, tt.cov)
			}
		})
	}
}

func gpus(t *testing.T, paths []string, opts gpu.Options) *gpu.Report {
	t.Helper()
	rep, err := gpu.Check(context.Background(), paths, opts)
	if err != nil {
		t.Fatal(err)
	}
	// A path that could not be read is in the report now, not an error
	// returned: the tests' paths must all be read.
	if len(rep.Errors) != 0 {
		t.Fatalf("paths not read: %+v", rep.Errors)
	}
	return rep
}

func TestGPUMatrixFixture(t *testing.T) {
	rep := gpus(t, []string{testenv.Testdata("libgpu.so")}, gpu.Options{Require: []string{"gfx1030", "gfx90a", "gfx90a:xnack+", "gfx1031"}})
	if len(rep.Libraries) != 1 {
		t.Fatalf("libraries = %+v", rep.Libraries)
	}
	got := rep.Libraries[0].Coverage
	want := map[string]gpu.Coverage{"gfx1030": "exact", "gfx90a": "compatible", "gfx90a:xnack+": "none", "gfx1031": "none"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %s, want %s", k, got[k], v)
		}
	}
	var missing []string
	for _, f := range rep.Findings {
		if f.Rule == finding.RuleGPUTargetMissing {
			missing = append(missing, f.Message[strings.LastIndex(f.Message, " on ")+4:])
		}
	}
	sort.Strings(missing)
	if strings.Join(missing, "|") != "gfx1031 (hipErrorNoBinaryForGpu at run time)|gfx90a:xnack+ (hipErrorNoBinaryForGpu at run time)" {
		t.Errorf("missing = %q", missing)
	}
	// Without --require the columns are the targets found.
	rep = gpus(t, []string{testenv.Testdata()}, gpu.Options{})
	if strings.Join(rep.Columns, " ") != "gfx1030 gfx803 gfx906:sramecc+:xnack- gfx90a:xnack-" || len(rep.Findings) != 0 {
		t.Errorf("columns %v, findings %v", rep.Columns, rep.Findings)
	}
	if len(rep.Libraries) < 4 || len(rep.NoDeviceCode) < 10 {
		t.Errorf("%d libraries with device code, %d without", len(rep.Libraries), len(rep.NoDeviceCode))
	}
	// The same through a symbolic link to the directory (/opt/rocm ->
	// /opt/rocm-6.x): the link is followed.
	link := filepath.Join(t.TempDir(), "rocm")
	if err := os.Symlink(testenv.Testdata(), link); err != nil {
		t.Fatal(err)
	}
	viaLink := gpus(t, []string{link}, gpu.Options{})
	if strings.Join(viaLink.Columns, " ") != strings.Join(rep.Columns, " ") || len(viaLink.Libraries) != len(rep.Libraries) {
		t.Errorf("through %s: columns %v and %d libraries, want %v and %d", link, viaLink.Columns, len(viaLink.Libraries), rep.Columns, len(rep.Libraries))
	}
}

func TestTensileAndMIOpen(t *testing.T) {
	prefix := t.TempDir()
	testenv.CopyFile(t, testenv.Testdata("libfoo.so.1"), filepath.Join(prefix, "lib", "librocblas.so.4"))
	lib := filepath.Join(prefix, "lib", "rocblas", "library")
	testenv.CopyFile(t, testenv.Testdata("k-gfx90a_xnackoff.co"), filepath.Join(lib, "Kernels.so-000-gfx90a.hsaco"))
	os.WriteFile(filepath.Join(lib, "TensileLibrary_lazy_gfx90a.dat"), []byte("x"), 0o644)
	testenv.CopyFile(t, testenv.Testdata("k-gfx90a_xnackoff.co"), filepath.Join(lib, "TensileLibrary_Type_HH_gfx1030.co")) // wrong arch inside
	os.MkdirAll(filepath.Join(prefix, "share", "miopen", "db"), 0o755)
	os.WriteFile(filepath.Join(prefix, "share", "miopen", "db", "gfx90a6e.kdb"), []byte("SQLite format 3\x00"), 0o644)
	os.WriteFile(filepath.Join(prefix, "share", "miopen", "db", "gfx1030_36.kdb"), []byte("SQLite format 3\x00"), 0o644)

	rep := gpus(t, []string{prefix}, gpu.Options{Require: []string{"gfx90a", "gfx1100"}})
	if len(rep.Tensile) != 1 || len(rep.Tensile[0].Archs["gfx90a"]) != 2 {
		t.Fatalf("tensile = %+v", rep.Tensile)
	}
	var msgs []string
	for _, f := range rep.Findings {
		msgs = append(msgs, f.Rule+": "+f.Message)
	}
	all := strings.Join(msgs, "\n")
	if !strings.Contains(all, "but none for gfx1100") || strings.Contains(all, "none for gfx90a") ||
		!strings.Contains(all, "TensileLibrary_Type_HH_gfx1030.co does not parse as a code object for the architecture") {
		t.Errorf("findings:\n%s", all)
	}
	if rep.MIOpenKDB["gfx90a"] != 1 || rep.MIOpenKDB["gfx1030"] != 1 {
		t.Errorf("kdb = %v", rep.MIOpenKDB)
	}
	// The per-architecture kernel files are the Tensile report's: no
	// matrix rows, and no gpu-target-missing for the targets they are
	// not for (a real rocBLAS has hundreds of them).
	for _, l := range rep.Libraries {
		if strings.Contains(l.Path, string(filepath.Separator)+"library"+string(filepath.Separator)) {
			t.Errorf("a Tensile kernel file is a matrix row: %s", l.Path)
		}
	}
	for _, f := range rep.Findings {
		if f.Rule == finding.RuleGPUTargetMissing {
			t.Errorf("finding on a Tensile kernel file: %s", f.Message)
		}
	}
	// Named on the command line, a kernel file is examined like any code
	// object.
	kernels := filepath.Join(lib, "Kernels.so-000-gfx90a.hsaco")
	named := gpus(t, []string{kernels}, gpu.Options{Require: []string{"gfx1100"}})
	var onFile []finding.Finding
	for _, f := range named.Findings {
		if f.Rule == finding.RuleGPUTargetMissing {
			onFile = append(onFile, f)
		}
	}
	if len(named.Libraries) != 1 || len(onFile) != 1 || onFile[0].File != kernels {
		t.Errorf("a kernel file named: libraries %+v, gpu-target-missing %+v", named.Libraries, onFile)
	}
	// rocBLAS built without Tensile: no library directory at all.
	os.RemoveAll(filepath.Join(prefix, "lib", "rocblas"))
	rep = gpus(t, []string{prefix}, gpu.Options{})
	if len(rep.Findings) != 1 || !strings.Contains(rep.Findings[0].Message, "built without Tensile") {
		t.Errorf("without Tensile: %+v", rep.Findings)
	}
}

func TestExpectFromCMakeCache(t *testing.T) {
	dir := t.TempDir()
	cache := filepath.Join(dir, "CMakeCache.txt")
	os.WriteFile(cache, []byte("# cache\nGPU_TARGETS:STRING=gfx90a;gfx1100\nINSTANCES_ONLY:BOOL=ON\nDL_KERNELS:BOOL=OFF\n"), 0o644)
	rep := gpus(t, []string{testenv.Testdata("libgpu.so")}, gpu.Options{ExpectFrom: cache})
	if len(rep.Findings) != 1 {
		t.Fatalf("findings = %+v", rep.Findings)
	}
	m := rep.Findings[0].Message
	for _, want := range []string{"no device code was built for gfx1100", "code was built for gfx1030, gfx906 that was not asked for", "INSTANCES_ONLY=ON"} {
		if !strings.Contains(m, want) {
			t.Errorf("message lacks %q: %s", want, m)
		}
	}
	os.WriteFile(cache, []byte("AMDGPU_TARGETS:STRING=gfx90a:xnack-;gfx1030;gfx906:sramecc+:xnack-\n"), 0o644)
	if rep = gpus(t, []string{testenv.Testdata("libgpu.so")}, gpu.Options{ExpectFrom: cache}); len(rep.Findings) != 0 {
		t.Errorf("matching build: %+v", rep.Findings)
	}
	// A rocBLAS install: the Tensile kernels are what its GPU_TARGETS built.
	prefix := t.TempDir()
	lib := filepath.Join(prefix, "lib", "rocblas", "library")
	testenv.CopyFile(t, testenv.Testdata("k-gfx90a_xnackoff.co"), filepath.Join(lib, "Kernels.so-000-gfx90a.hsaco"))
	os.WriteFile(cache, []byte("GPU_TARGETS:STRING=gfx90a\n"), 0o644)
	if rep = gpus(t, []string{prefix}, gpu.Options{ExpectFrom: cache}); len(rep.Findings) != 0 {
		t.Errorf("rocBLAS built for what it asked: %+v", rep.Findings)
	}
	os.WriteFile(cache, []byte("GPU_TARGETS:STRING=gfx90a;gfx1100\n"), 0o644)
	if rep = gpus(t, []string{prefix}, gpu.Options{ExpectFrom: cache}); len(rep.Findings) != 1 || !strings.Contains(rep.Findings[0].Message, "no device code was built for gfx1100") {
		t.Errorf("rocBLAS built without gfx1100: %+v", rep.Findings)
	}
}

// TestCorpusGPUsAgreeWithBundler checks every offload bundle of Debian's
// librocsparse.so.0 against clang-offload-bundler --list: each bundle's
// header is written into a sparse file of the bundle's size.
func TestCorpusGPUsAgreeWithBundler(t *testing.T) {
	testenv.Corpus(t)
	bundler := testenv.Tool(t, "clang-offload-bundler-15", "clang-tools-15")
	path := testenv.File(t, "/usr/lib/x86_64-linux-gnu/librocsparse.so.0", "librocsparse0")
	f, err := elfx.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cos, err := f.GPUCodeObjects()
	if err != nil {
		t.Fatal(err)
	}
	type bundle struct {
		start, end int64
		ids        []string
	}
	bundles := map[int]*bundle{}
	for _, c := range cos {
		b := bundles[c.Bundle]
		if b == nil {
			b = &bundle{start: -1}
			bundles[c.Bundle] = b
		}
		b.ids = append(b.ids, c.BundleID)
		if b.end < c.Offset+c.Size {
			b.end = c.Offset + c.Size
		}
	}
	sec := f.ELF().Section(".hip_fatbin")
	dir := t.TempDir()
	checked := 0
	for i := 0; i < len(bundles); i++ {
		b := bundles[i]
		// Find the bundle start: the header precedes its first entry.
		start := int64(sec.Offset)
		if i > 0 {
			start = bundles[i-1].end
		}
		bs, err := findBundle(f, start, int64(sec.Offset+sec.Size))
		if err != nil {
			t.Fatal(err)
		}
		parsed, err := elfx.ParseOffloadBundle(f.ReaderAt(), bs, int64(sec.Offset+sec.Size))
		if err != nil {
			t.Fatal(err)
		}
		hdr := make([]byte, parsed.Entries[0].Offset-bs)
		for _, e := range parsed.Entries {
			if e.Offset-bs < int64(len(hdr)) {
				hdr = hdr[:e.Offset-bs]
			}
		}
		f.ReaderAt().ReadAt(hdr, bs)
		p := filepath.Join(dir, "b.hipfb")
		fh, _ := os.Create(p)
		fh.Write(hdr)
		fh.Truncate(parsed.Size)
		fh.Close()
		out, err := exec.Command(bundler, "--list", "--type=o", "--input="+p).Output()
		if err != nil {
			t.Fatalf("bundle %d: clang-offload-bundler: %v", i, err)
		}
		var want []string
		for _, l := range strings.Fields(string(out)) {
			if !strings.HasPrefix(l, "host-") {
				want = append(want, l)
			}
		}
		sort.Strings(want)
		got := append([]string(nil), b.ids...)
		sort.Strings(got)
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("bundle %d: rocmdoctor %v, clang-offload-bundler %v", i, got, want)
		}
		checked++
	}
	if checked != 111 {
		t.Errorf("checked %d bundles, want 111", checked)
	}
	t.Logf("%d bundles of %s agree with clang-offload-bundler --list", checked, path)
}

func findBundle(f *elfx.File, from, end int64) (int64, error) {
	buf := make([]byte, 24)
	for pos := from; pos < end; pos++ {
		if _, err := f.ReaderAt().ReadAt(buf, pos); err != nil {
			return 0, err
		}
		if string(buf) == "__CLANG_OFFLOAD_BUNDLE__" {
			return pos, nil
		}
		if pos%4096 != 0 { // bundles are page-aligned: jump to the next page
			pos = (pos/4096+1)*4096 - 1
		}
	}
	return 0, os.ErrNotExist
}

// Device code in zlib- and zstd-compressed offload bundles is read like any
// other; with an unknown method it is unknown: "?" in the matrix, a note,
// and no --require failure (rocmdoctor cannot tell).
func TestGPUCompressedBundles(t *testing.T) {
	lib, err := os.ReadFile(testenv.Testdata("libgpu.so"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, method := range map[string]uint16{"libz.so": 0, "libzstd.so": 1, "libother.so": 9} {
		b, _, err := testenv.CompressFatbin(lib, 3, method)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rep := gpus(t, []string{dir}, gpu.Options{Require: []string{"gfx1030", "gfx1100"}})
	byName := map[string]gpu.Library{}
	for _, l := range rep.Libraries {
		byName[filepath.Base(l.Path)] = l
	}
	for _, n := range []string{"libz.so", "libzstd.so"} {
		l := byName[n]
		if l.Coverage["gfx1030"] != gpu.CoverageExact || l.Coverage["gfx1100"] != gpu.CoverageNone || len(l.Targets) != 3 {
			t.Errorf("%s: coverage %v, targets %v", n, l.Coverage, l.Targets)
		}
	}
	o := byName["libother.so"]
	if o.Coverage["gfx1030"] != gpu.CoverageUnknown || o.Coverage["gfx1100"] != gpu.CoverageUnknown || len(o.Targets) != 0 {
		t.Errorf("unknown method: coverage %v, targets %v", o.Coverage, o.Targets)
	}
	if len(o.Notes) != 1 || !strings.Contains(o.Notes[0], "method 9") {
		t.Errorf("unknown method notes = %q", o.Notes)
	}
	var failed []string
	for _, f := range rep.Findings {
		if f.Rule == finding.RuleGPUTargetMissing {
			failed = append(failed, filepath.Base(f.File)+" "+f.Message[strings.LastIndex(f.Message, " on ")+4:])
		}
	}
	sort.Strings(failed)
	if len(failed) != 2 || !strings.HasPrefix(failed[0], "libz.so gfx1100") || !strings.HasPrefix(failed[1], "libzstd.so gfx1100") {
		t.Errorf("--require findings = %q, want libz.so and libzstd.so missing gfx1100", failed)
	}
}

// TestGPUsRequireWithoutDeviceCode: required targets over paths with no
// device code at all are a finding (the requirement passed vacuously, so a
// build whose GPU_TARGETS came out empty went through); without
// --require, or with device code somewhere, there is none of it.
func TestGPUsRequireWithoutDeviceCode(t *testing.T) {
	host := testenv.Testdata("libfoo.so.1")
	empty := t.TempDir()
	rep := gpus(t, []string{empty, host}, gpu.Options{Require: []string{"gfx90a", "gfx1030"}})
	if len(rep.Findings) != 1 || rep.Findings[0].Rule != finding.RuleGPUTargetMissing || rep.Findings[0].Severity != finding.SeverityError ||
		rep.Findings[0].Message != "no device code in "+empty+", "+host+": nothing there runs on gfx90a, gfx1030" || rep.Findings[0].Fix == "" {
		t.Errorf("findings %+v", rep.Findings)
	}
	if rep := gpus(t, []string{empty, host}, gpu.Options{}); len(rep.Findings) != 0 {
		t.Errorf("without --require: %+v", rep.Findings)
	}
	rep = gpus(t, []string{host, testenv.Testdata("libraw.so")}, gpu.Options{Require: []string{"gfx1030"}})
	if len(rep.Findings) != 0 {
		t.Errorf("with device code for the target: %+v", rep.Findings)
	}
	// Only unreadable paths: their errors say it all.
	rep, _ = gpu.Check(context.Background(), []string{filepath.Join(empty, "nowhere.so")}, gpu.Options{Require: []string{"gfx1030"}})
	if len(rep.Findings) != 0 || len(rep.Errors) != 1 {
		t.Errorf("unreadable only: findings %+v, errors %+v", rep.Findings, rep.Errors)
	}
}

// GPUs reads files on every core; the report keeps the order of the
// walk and of the paths given, whichever file is read first: libraries
// and files without device code in walk order, errors in argument order.
func TestGPUsReportOrder(t *testing.T) {
	dir := t.TempDir()
	var want []string
	for i, name := range []string{"libgpu.so", "libraw.so", "k-gfx90a_xnackoff.co", "libgpu.so", "libraw.so", "k-gfx803.o"} {
		b, err := os.ReadFile(testenv.Testdata(name))
		if err != nil {
			t.Fatal(err)
		}
		// Lexical order differs from the fixtures' order and sizes.
		p := filepath.Join(dir, string(rune('f'-i))+"-"+name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		want = append(want, p)
	}
	sort.Strings(want)
	plain := filepath.Join(dir, "z-libfoo.so.1")
	b, _ := os.ReadFile(testenv.Testdata("libfoo.so.1"))
	os.WriteFile(plain, b, 0o644)
	bad := filepath.Join(t.TempDir(), "notelf.so")
	os.WriteFile(bad, []byte("not an ELF file\n"), 0o644)
	missing := filepath.Join(t.TempDir(), "missing.so")
	for round := 0; round < 5; round++ {
		rep, err := gpu.Check(context.Background(), []string{bad, dir, missing}, gpu.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, l := range rep.Libraries {
			got = append(got, l.Path)
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("libraries in order\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if len(rep.NoDeviceCode) != 1 || rep.NoDeviceCode[0] != plain {
			t.Errorf("no device code: %v", rep.NoDeviceCode)
		}
		if len(rep.Errors) != 2 || rep.Errors[0].Path != bad || rep.Errors[1].Path != missing {
			t.Errorf("errors: %+v, want %s then %s", rep.Errors, bad, missing)
		}
	}
}

// A wheel is read as the prefix it installs: its members' device code is
// reported under WHEEL!/MEMBER, its rocBLAS Tensile directory is judged
// per target from the member names and contents, and a member that does
// not extract is an error naming it.
func TestGPUsWheel(t *testing.T) {
	dir := t.TempDir()
	whl := testenv.TorchWheel(t, dir)
	check := func(t *testing.T, path string) {
		rep := gpus(t, []string{path}, gpu.Options{Require: []string{"gfx90a", "gfx1100"}})
		var libs []string
		for _, l := range rep.Libraries {
			libs = append(libs, l.Path)
		}
		if want := []string{path + "!/torch/lib/libdevice.a", path + "!/torch/lib/libgpu.so"}; !slices.Equal(libs, want) {
			t.Errorf("libraries %q, want %q", libs, want)
		}
		if want := []string{path + "!/torch/lib/libfoo.so", path + "!/torch/lib/librocblas.so.4"}; !slices.Equal(rep.NoDeviceCode, want) {
			t.Errorf("no device code %q, want %q", rep.NoDeviceCode, want)
		}
		if len(rep.Tensile) != 1 || len(rep.Tensile[0].Archs["gfx90a"]) != 2 || len(rep.Tensile[0].Archs["gfx1030"]) != 1 ||
			!slices.Equal(rep.Tensile[0].Bad, []string{"TensileLibrary_Type_HH_gfx1030.co"}) {
			t.Errorf("tensile %+v", rep.Tensile)
		}
		var got []string
		for _, f := range rep.Findings {
			// (Tensile directories are named by their cleaned path.)
			rel := strings.TrimPrefix(strings.TrimPrefix(f.File, path), filepath.Clean(path))
			got = append(got, string(f.Severity)+" "+f.Rule+" "+rel)
		}
		want := []string{
			"error gpu-target-missing !/torch/lib/libdevice.a",
			"error gpu-target-missing !/torch/lib/libgpu.so",
			"error tensile-kernels-missing !/torch/lib/rocblas/library",
			"warning tensile-kernels-missing !/torch/lib/rocblas/library/TensileLibrary_Type_HH_gfx1030.co",
		}
		if !slices.Equal(got, want) {
			t.Errorf("findings:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	check(t, whl)
	t.Run("relative", func(t *testing.T) {
		t.Chdir(dir)
		check(t, "./"+filepath.Base(whl))
	})
	t.Run("in a directory", func(t *testing.T) {
		rep := gpus(t, []string{dir}, gpu.Options{})
		if len(rep.Libraries) != 2 || !strings.HasPrefix(rep.Libraries[0].Path, whl+"!/") {
			t.Errorf("walked: %+v", rep.Libraries)
		}
	})
	// A damaged member (its CRC-32 does not match) is an error naming it;
	// the other members are still reported.
	bad := filepath.Join(dir, "bad.whl")
	b, _ := os.ReadFile(whl)
	zr, _ := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	for _, zf := range zr.File {
		if zf.Name == "torch/lib/libfoo.so" { // stored: flip a byte of its data
			off, _ := zf.DataOffset()
			b[off+100] ^= 0xff
		}
	}
	os.WriteFile(bad, b, 0o644)
	rep, err := gpu.Check(context.Background(), []string{bad}, gpu.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Errors) != 1 || rep.Errors[0].Path != bad+"!/torch/lib/libfoo.so" || !strings.Contains(rep.Errors[0].Error, "checksum") || len(rep.Libraries) != 2 {
		t.Errorf("damaged member: errors %+v, %d libraries", rep.Errors, len(rep.Libraries))
	}
	// Named, a .whl that is not a zip is an error.
	notZip := filepath.Join(dir, "not.whl")
	os.WriteFile(notZip, []byte("not a zip"), 0o644)
	if rep, err := gpu.Check(context.Background(), []string{notZip}, gpu.Options{}); err != nil || len(rep.Errors) != 1 || rep.Errors[0].Path != notZip {
		t.Errorf("not a zip: %+v, %v", rep, err)
	}
}

// FuzzGPUsWheel: whatever the bytes of a wheel, gpus reports without
// panicking, and every error names the wheel.
func FuzzGPUsWheel(f *testing.F) {
	b, err := os.ReadFile(testenv.TorchWheel(f, f.TempDir()))
	if err != nil {
		f.Fatal(err)
	}
	testenv.FuzzWheel(f, b, func(p string) ([]string, error) {
		rep, err := gpu.Check(context.Background(), []string{p}, gpu.Options{Require: []string{"gfx90a", "gfx1100"}})
		if err != nil {
			return nil, err
		}
		var errs []string
		for _, e := range rep.Errors {
			errs = append(errs, e.Error)
		}
		return errs, nil
	})
}

// A wheel member that is ELF (or an archive) but does not parse is one of
// the report's errors, named WHEEL!/MEMBER, as check reports it; it was
// listed as having no device code and its parse error was dropped.
func TestGPUsWheelMalformedMember(t *testing.T) {
	whl := filepath.Join(t.TempDir(), "pkg-1.0-py3-none-linux_x86_64.whl")
	bad := "\x7fELF\x02\x01\x01" + strings.Repeat("\xff", 100)
	testenv.WriteWheel(t, whl, [][2]string{
		{"pkg/libgpu.so", "@libgpu.so"},
		{"pkg/libbad.so", bad},
		{"pkg/libbad.a", "!<arch>\nnot a member header at all\n"},
	}, nil)
	rep, err := gpu.Check(context.Background(), []string{whl}, gpu.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var errs []string
	for _, e := range rep.Errors {
		errs = append(errs, e.Error)
	}
	for _, m := range []string{"pkg/libbad.so", "pkg/libbad.a"} {
		if !slices.ContainsFunc(errs, func(e string) bool { return strings.HasPrefix(e, whl+"!/"+m+": ") }) {
			t.Errorf("no error for %s: %q", m, errs)
		}
	}
	if len(errs) != 2 || len(rep.NoDeviceCode) != 0 || len(rep.Libraries) != 1 || rep.Libraries[0].Path != whl+"!/pkg/libgpu.so" {
		t.Errorf("errors %q, no device code %v, libraries %+v", errs, rep.NoDeviceCode, rep.Libraries)
	}
}

// A library whose .hip_fatbin holds no offload bundle has device code that
// cannot be read: it is listed with the reason (it was among the files
// without device code, the reason dropped), "?" for a required target, and
// no --require failure, as for a bundle compressed with an unknown method.
func TestGPUsUnreadableFatbin(t *testing.T) {
	b, _ := testenv.DamagedFatbin(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "libbroken.so"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	rep := gpus(t, []string{dir}, gpu.Options{Require: []string{"gfx90a"}})
	if len(rep.Libraries) != 1 || len(rep.NoDeviceCode) != 0 {
		t.Fatalf("libraries %+v, no device code %v", rep.Libraries, rep.NoDeviceCode)
	}
	l := rep.Libraries[0]
	if len(l.Notes) != 1 || !strings.Contains(l.Notes[0], ".hip_fatbin") || l.Coverage["gfx90a"] != gpu.CoverageUnknown {
		t.Errorf("notes %q, coverage %v", l.Notes, l.Coverage)
	}
	if len(rep.Findings) != 0 {
		t.Errorf("findings %+v, want none (rocmdoctor cannot tell)", rep.Findings)
	}
}

// A rocBLAS without lib/rocblas/library: built without Tensile when its
// code holds none, and built with Tensile but not installed when it loads
// TensileLibrary files (the fix for each differs: rebuild, or install).
func TestTensileNotInstalled(t *testing.T) {
	p := testenv.NewPrefix(t)
	for _, withTensile := range []bool{false, true} {
		src := "int rocblas_create_handle(void) { return 0; }\n"
		if withTensile {
			src += "const char *tensile_path(void) { return \"%s/library/TensileLibrary_lazy_%s.dat\"; }\n"
		}
		os.RemoveAll(filepath.Join(p.Root, "lib"))
		p.Lib("lib/librocblas.so.4", "librocblas.so.4", src)
		rep := gpus(t, []string{p.Root}, gpu.Options{})
		if len(rep.Findings) != 1 {
			t.Fatalf("withTensile=%v: %+v", withTensile, rep.Findings)
		}
		f := rep.Findings[0]
		switch {
		case withTensile && (!strings.Contains(f.Message, "was not installed") || !strings.Contains(f.Fix, "install")):
			t.Errorf("with Tensile code: %s / %s", f.Message, f.Fix)
		case !withTensile && (!strings.Contains(f.Message, "built without Tensile") || !strings.Contains(f.Fix, "BUILD_WITH_TENSILE=ON")):
			t.Errorf("without Tensile code: %s / %s", f.Message, f.Fix)
		}
	}
	// The fix: the build's library/ directory installed beside it.
	lib := filepath.Join(p.Root, "lib", "rocblas", "library")
	testenv.CopyFile(t, testenv.Testdata("k-gfx90a_xnackoff.co"), filepath.Join(lib, "Kernels.so-000-gfx90a.hsaco"))
	os.WriteFile(filepath.Join(lib, "TensileLibrary_lazy_gfx90a.dat"), []byte("x"), 0o644)
	if rep := gpus(t, []string{p.Root}, gpu.Options{}); len(rep.Findings) != 0 {
		t.Errorf("with the directory installed: %+v", rep.Findings)
	}
}
