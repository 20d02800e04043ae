package root

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/cmd/internal/cli"
	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
)

// TestManInstallsThePages: `rocmdoctor man DIR` writes exactly the pages
// of docs/man (which gendocs' test keeps current), replaces what is there,
// and fails on a DIR it cannot create, naming it; groff renders each
// page without a warning.
func TestManInstallsThePages(t *testing.T) {
	want, err := filepath.Glob("../../../docs/man/*.1")
	if err != nil || len(want) < 10 {
		t.Fatalf("docs/man: %v %d pages", err, len(want))
	}
	dir := filepath.Join(t.TempDir(), "share", "man", "man1")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "rocmdoctor-check.1"), []byte("old"), 0o644)
	io, _, out, errOut := cli.Test()
	if code := Run(io, []string{"man", dir}); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if w := fmt.Sprintf("wrote %d man pages to %s\n", len(want), dir); out.String() != w {
		t.Errorf("output %q, want %q", out, w)
	}
	got, _ := filepath.Glob(filepath.Join(dir, "*.1"))
	if len(got) != len(want) {
		t.Errorf("%d pages written, docs/man has %d", len(got), len(want))
	}
	for _, w := range want {
		a, _ := os.ReadFile(w)
		b, err := os.ReadFile(filepath.Join(dir, filepath.Base(w)))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("%s: %v, differs from docs/man", filepath.Base(w), err)
		}
	}
	groff := testenv.Tool(t, "groff", "groff-base")
	for _, p := range got {
		out, err := exec.Command(groff, "-k", "-man", "-Tutf8", "-ww", "-z", p).CombinedOutput() // -k: preconv, as man-db runs it
		if err != nil || len(out) > 0 {
			t.Errorf("groff %s: %v %s", filepath.Base(p), err, out)
		}
	}
	io, _, _, errOut = cli.Test()
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	if code := Run(io, []string{"man", file}); code != cli.ExitError || !strings.Contains(errOut.String(), file) {
		t.Errorf("man into a file: exit %d %q", code, errOut)
	}
}
