package wheel

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
)

// The default interpreter: python3 on PATH when it is a program; the
// wheel's own CPython version when its tag names one (never another
// version in its place); past a version manager's shim, the system's.
func TestDefaultPython(t *testing.T) {
	py311 := testenv.File(t, "/usr/bin/python3.11", "python3.11")
	dir := t.TempDir()
	bin, shims, sys := filepath.Join(dir, "bin"), filepath.Join(dir, "shims"), filepath.Join(dir, "sys")
	for _, d := range []string{bin, shims, sys} {
		os.MkdirAll(d, 0o755)
	}
	os.Symlink(py311, filepath.Join(bin, "python3"))
	os.WriteFile(filepath.Join(shims, "python3"), []byte("#!/bin/sh\nexec pyenv-python \"$@\"\n"), 0o755)
	os.Symlink(py311, filepath.Join(sys, "python3.11"))
	os.Symlink(py311, filepath.Join(sys, "python3"))
	const cp311, cp312, abi3 = "x-1.0-cp311-cp311-linux_x86_64.whl", "x-1.0-cp312-cp312-linux_x86_64.whl", "x-1.0-cp38-abi3-linux_x86_64.whl"
	for _, c := range []struct {
		name, wheel, path string
		sys               []string
		want, note        string
	}{
		{"python3 on PATH", "", bin, nil, py311, ""},
		{"its version", cp311, bin, nil, py311, ""},
		{"abi3", abi3, bin, nil, py311, ""},
		{"another version", cp312, bin, nil, py311, "tagged for python3.12, which was not found"},
		{"shim, system python3", "", shims, []string{sys}, py311, "is not an ELF program"},
		{"shim, the wheel's version", cp311, shims, []string{sys}, py311, ""},
		{"shim, not the wheel's version", cp312, shims, []string{sys}, "", "no python3.12 was found"},
		{"shim, nothing else", "", shims, nil, "", "not bound against an interpreter"},
		{"no python3 on PATH", "", t.TempDir(), []string{sys}, py311, "no python3 on PATH"},
	} {
		got, note := defaultPython(c.wheel, c.path, c.sys)
		if got != c.want || c.note == "" && note != "" || c.note != "" && !strings.Contains(note, c.note) {
			t.Errorf("%s: %q (%q), want %q (%q)", c.name, got, note, c.want, c.note)
		}
	}
}
