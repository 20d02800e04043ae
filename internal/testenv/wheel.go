package testenv

import (
	"archive/zip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/internal/record"
)

// WriteWheel writes a zip of the given members, in order: content from a
// testdata file ("@name") or literal, deflated unless stored is set, and
// the RECORD that lists them all (RecordOf).
func WriteWheel(t testing.TB, path string, members [][2]string, stored map[string]bool) {
	t.Helper()
	fh, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(fh)
	// RECORD, as the wheel's file name names its .dist-info directory.
	parts := strings.SplitN(filepath.Base(path), "-", 3)
	rec := parts[0] + "-" + parts[1] + ".dist-info/RECORD"
	var written [][2]string // as written, for RECORD
	for _, m := range members {
		data := []byte(m[1])
		if name, ok := strings.CutPrefix(m[1], "@"); ok {
			if data, err = os.ReadFile(Testdata(name)); err != nil {
				t.Fatal(err)
			}
		}
		method := zip.Deflate
		if stored[m[0]] {
			method = zip.Store
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: m[0], Method: method})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
		written = append(written, [2]string{m[0], string(data)})
	}
	w, err := zw.Create(rec)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte(RecordOf(written, rec)))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	fh.Close()
}

// RecordOf is the RECORD a correct build writes for members (directories
// left out), RECORD's own line last.
func RecordOf(members [][2]string, recName string) string {
	var b strings.Builder
	for _, m := range members {
		if !strings.HasSuffix(m[0], "/") {
			b.WriteString(record.Line(m[0], record.Hash([]byte(m[1])), int64(len(m[1]))) + "\n")
		}
	}
	return b.String() + record.Line(recName, "", 0) + "\n"
}

// TorchWheel writes, in dir, a PyTorch-shaped wheel: a host library with
// device code for gfx90a:xnack-, gfx1030 and gfx906:sramecc+:xnack-, a CK
// device archive with the same, a host-only library (stored), a rocBLAS
// whose Tensile directory has gfx90a kernels and a "gfx1030" file holding
// gfx90a code.
func TorchWheel(t testing.TB, dir string) string {
	whl := filepath.Join(dir, "torch-2.5.1+rocm6.2-cp311-cp311-linux_x86_64.whl")
	lib := "torch/lib/rocblas/library/"
	WriteWheel(t, whl, [][2]string{
		{"torch/__init__.py", "# torch\n"},
		{"torch/lib/libdevice.a", "@ck/lib/libdevice_gemm_operations.a"},
		{"torch/lib/libfoo.so", "@libfoo.so.1"},
		{"torch/lib/libgpu.so", "@libgpu.so"},
		{"torch/lib/librocblas.so.4", "@libfoo.so.1"},
		{lib + "Kernels.so-000-gfx90a.hsaco", "@k-gfx90a_xnackoff.co"},
		{lib + "TensileLibrary_Type_HH_gfx1030.co", "@k-gfx90a_xnackoff.co"},
		{lib + "TensileLibrary_lazy_gfx90a.dat", "x"},
	}, map[string]bool{"torch/lib/libfoo.so": true})
	return whl
}

// CopyFile copies src to dst (mode 0644), making dst's directory.
func CopyFile(t testing.TB, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Dir(dst), 0o755)
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// FuzzWheel fuzzes a command over one wheel: each input is written as a
// .whl and run is called on it; run must not fail, and every error it
// reports (a FileError's text) must begin with the wheel's path.
func FuzzWheel(f *testing.F, seed []byte, run func(path string) (errs []string, err error)) {
	f.Add(seed)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(dir, "pkg-1.0-py3-none-linux_x86_64.whl")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		errs, err := run(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range errs {
			if !strings.HasPrefix(e, p) {
				t.Errorf("error does not name the wheel: %s", e)
			}
		}
	})
}
