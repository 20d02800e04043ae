package patchelfcmd_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/cmd/internal/clitest"
)

const td = clitest.Testdata

// The --print-* options answer as NixOS patchelf does, and say what an
// object file is rather than calling it statically linked.
func TestPrint(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nowhere.so")
	for _, c := range []struct {
		args          []string
		code          int
		stdout, error string
	}{
		{[]string{"--print-soname", td + "libfoo.so.1"}, 0, "libfoo.so.1\n", ""},
		{[]string{"--print-needed", td + "hello"}, 0, "libfoo.so.1\nlibc.so.6\n", ""},
		{[]string{"--print-rpath", td + "hello"}, 0, "$ORIGIN\n", ""},
		{[]string{"--print-interpreter", td + "hello"}, 0, "/lib64/ld-linux-x86-64.so.2\n", ""},
		{[]string{"--print-interpreter", td + "libfoo.so.1"}, 1, "", "patchelf: " + td + "libfoo.so.1: cannot find section '.interp'. The input file is most likely statically linked\n"},
		{[]string{"--print-rpath", td + "be.o"}, 1, "", "patchelf: " + td + "be.o: not a linked file (relocatable object): it has no interpreter or dynamic section\n"},
		{[]string{"--print-soname", missing}, 1, "", "patchelf: getting info about '" + missing + "': No such file or directory\n"},
	} {
		code, out, errOut := clitest.Run(append([]string{"patchelf"}, c.args...)...)
		if code != c.code || out != c.stdout || errOut != c.error {
			t.Errorf("patchelf %q: exit %d, stdout %q, stderr %q; want %d, %q, %q", c.args, code, out, errOut, c.code, c.stdout, c.error)
		}
	}
}

// TestPatchSpeaksAsRocmdoctor: `rocmdoctor patch` reports errors as the
// other commands do (rocmdoctor:, elfx's messages, what the file is), while
// the patchelf drop-in keeps NixOS patchelf's words for the same files.
func TestPatchSpeaksAsRocmdoctor(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.so")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "nowhere.so")
	// An edit is refused on a copy (the fixture must not change if it
	// were not).
	lib := filepath.Join(dir, "libfoo.so.1")
	b, err := os.ReadFile(td + "libfoo.so.1")
	if err != nil || os.WriteFile(lib, b, 0o644) != nil {
		t.Fatal("copying the fixture failed")
	}
	for _, c := range []struct {
		args           []string
		patch, patchel string
	}{
		{[]string{"--print-interpreter", td + "libfoo.so.1"},
			"rocmdoctor: " + td + "libfoo.so.1: no program interpreter (no PT_INTERP): a shared library or a statically linked program names none\n",
			"patchelf: " + td + "libfoo.so.1: cannot find section '.interp'. The input file is most likely statically linked\n"},
		{[]string{"--set-interpreter", "/lib/ld.so", lib},
			"rocmdoctor: " + lib + ": no program interpreter (no PT_INTERP) to replace: a shared library or a statically linked program has none, and --set-interpreter does not add one\n",
			"patchelf: " + lib + ": cannot find section '.interp'. The input file is most likely statically linked\n"},
		{[]string{"--set-soname", "x", empty},
			"rocmdoctor: " + empty + ": not an ELF file\n",
			"patchelf: " + empty + ": not an ELF executable\n"},
		{[]string{"--print-soname", missing},
			"rocmdoctor: open " + missing + ": no such file or directory\n",
			"patchelf: getting info about '" + missing + "': No such file or directory\n"},
	} {
		for cmd, want := range map[string]string{"patch": c.patch, "patchelf": c.patchel} {
			code, out, errOut := clitest.Run(append([]string{cmd}, c.args...)...)
			if code != 1 || out != "" || errOut != want {
				t.Errorf("%s %q: exit %d, stdout %q, stderr %q; want 1, %q", cmd, c.args, code, out, errOut, want)
			}
		}
	}
}
