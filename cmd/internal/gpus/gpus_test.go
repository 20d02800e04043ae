package gpus_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/cmd/internal/cli"
	"github.com/rocmdoctor/rocmdoctor/cmd/internal/root"
	"github.com/rocmdoctor/rocmdoctor/internal/golden"
)

const td = "../../../testdata/"

func run(t *testing.T, args ...string) (int, string) {
	t.Helper()
	io, _, out, _ := cli.Test()
	code := root.Run(io, args)
	return code, out.String()
}

func TestGPUsGolden(t *testing.T) {
	code, out := run(t, "gpus", "--format", "markdown", td+"libgpu.so", td+"libraw.so", td+"k-gfx803.o", td+"libfoo.so.1")
	if code != 0 {
		t.Errorf("exit %d", code)
	}
	golden.Assert(t, "gpus-markdown.txt", []byte(out))
	code, out = run(t, "gpus", "--json", "--require", "gfx1030,gfx90a:xnack+", td+"libgpu.so", td+"libraw.so")
	if code != cli.ExitFindings {
		t.Errorf("--require: exit %d, want 3", code)
	}
	golden.Assert(t, "gpus-require.json", []byte(out))
}

func TestGPUsEnvAndUsage(t *testing.T) {
	t.Setenv("ROCMDOCTOR_GPU_TARGETS", "gfx1100")
	code, out := run(t, "gpus", td+"libgpu.so")
	if code != cli.ExitFindings || !strings.Contains(out, "none usable on gfx1100") {
		t.Errorf("ROCMDOCTOR_GPU_TARGETS ignored: exit %d\n%s", code, out)
	}
	if code, _ := run(t, "gpus", "--require", "gfx90a:foo+", td+"libgpu.so"); code != cli.ExitUsage {
		t.Errorf("bad target ID: exit %d", code)
	}
	if code, _ := run(t, "gpus", "--format", "yaml", td+"libgpu.so"); code != cli.ExitUsage {
		t.Errorf("bad format: exit %d", code)
	}
}

// TestGPUsBadPathAmongGood: a path that cannot be read gets one line on
// stderr and exit status 1, and the other paths are still reported
// (gpus printed nothing but the error).
func TestGPUsBadPathAmongGood(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nowhere.so")
	io, _, out, errOut := cli.Test()
	code := root.Run(io, []string{"gpus", "--format", "markdown", td + "libraw.so", missing})
	if code != cli.ExitError || !strings.Contains(out.String(), "| "+td+"libraw.so | ✓ |") {
		t.Errorf("exit %d, stdout %q", code, out.String())
	}
	if errOut.String() != "rocmdoctor: "+missing+": no such file or directory\n" {
		t.Errorf("stderr %q", errOut.String())
	}
	// Findings still decide the status when there are any.
	io, _, _, _ = cli.Test()
	if code := root.Run(io, []string{"gpus", "--require", "gfx90a", td + "libraw.so", missing}); code != cli.ExitFindings {
		t.Errorf("with a finding: exit %d, want %d", code, cli.ExitFindings)
	}
}

// TestGPUsManyHostFiles: a walked directory's host-only files are counted
// and a few named in the text output, not listed by the hundred on one
// line; JSON lists them all.
func TestGPUsManyHostFiles(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile(td + "libfoo.so.1")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 25 {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("lib%02d.so", i)), b, 0o644)
	}
	code, out := run(t, "gpus", dir)
	if code != 0 || !strings.Contains(out, "no device code (25): "+filepath.Join(dir, "lib00.so")+" ") ||
		!strings.HasSuffix(out, filepath.Join(dir, "lib09.so")+" … and 15 more (--json lists them)\n") || strings.Contains(out, "lib10.so") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	_, out = run(t, "gpus", "--json", dir)
	if !strings.Contains(out, "lib24.so") {
		t.Errorf("json lacks the last file:\n%s", out)
	}
}

// A prefix whose device code is all in rocBLAS's Tensile kernel files:
// the Tensile line says what is there, not "no device code found", and a
// target the kernels cover passes.
func TestGPUsTensileOnlyPrefix(t *testing.T) {
	prefix := t.TempDir()
	lib := filepath.Join(prefix, "lib", "rocblas", "library")
	if err := os.MkdirAll(lib, 0o755); err != nil {
		t.Fatal(err)
	}
	co, err := os.ReadFile(td + "k-gfx90a_xnackoff.co")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(lib, "Kernels.so-000-gfx90a.hsaco"), co, 0o644)
	os.WriteFile(filepath.Join(lib, "TensileLibrary_lazy_gfx90a.dat"), []byte("x"), 0o644)
	code, out := run(t, "gpus", "--require", "gfx90a", prefix)
	if code != 0 || strings.Contains(out, "no device code found") || !strings.Contains(out, "rocblas Tensile kernels in "+lib+": gfx90a (2 files)") {
		t.Errorf("exit %d\n%s", code, out)
	}
	code, out = run(t, "gpus", "--require", "gfx1100", prefix)
	if code != cli.ExitFindings || !strings.Contains(out, "has Tensile kernels for gfx90a but none for gfx1100") || strings.Contains(out, "gpu-target-missing") {
		t.Errorf("gfx1100: exit %d\n%s", code, out)
	}
}

// A library whose device code cannot be read says so, with why, instead
// of an empty list of targets.
func TestGPUsUnreadableCodeShown(t *testing.T) {
	b, err := os.ReadFile(td + "libgpu.so")
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(b), "__CLANG_OFFLOAD_BUNDLE__")
	if i < 0 {
		t.Fatal("no bundle in libgpu.so")
	}
	copy(b[i:], "__NOT_AN_OFFLOAD_BUNDLE_")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "libbroken.so"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out := run(t, "gpus", dir)
	want := filepath.Join(dir, "libbroken.so") + ": device code that could not be read\n  note: "
	if code != 0 || !strings.Contains(out, want) || !strings.Contains(out, ".hip_fatbin") {
		t.Errorf("exit %d, output:\n%s\nwant %q and the reason", code, out, want)
	}
}
