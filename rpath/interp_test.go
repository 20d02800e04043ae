package rpath_test

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
	"github.com/rocmdoctor/rocmdoctor/patchelf"
	"github.com/rocmdoctor/rocmdoctor/rpath"
)

// TestInterpreterProblems: a program whose PT_INTERP the kernel will not
// run it with (missing, a directory, not executable, not ELF, another
// machine, not a program or shared object, a relative path) has the
// reason in InterpProblem, and one with a usable interpreter none. The
// kernel is the oracle: each copy of the hello fixture, its interpreter
// set with patchelf, is executed, and execve must fail exactly where a
// problem is reported.
func TestInterpreterProblems(t *testing.T) {
	loader := testenv.File(t, "/lib64/ld-linux-x86-64.so.2", "libc6")
	dir := t.TempDir()
	put := func(name, src string, data []byte, mode os.FileMode) string {
		t.Helper()
		if src != "" {
			b, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			data = b
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	put("libfoo.so.1", testenv.Testdata("libfoo.so.1"), nil, 0o755) // hello's RPATH is $ORIGIN
	for _, tt := range []struct {
		name, interp, want string
	}{
		{"the system loader", loader, ""},
		{"missing", filepath.Join(dir, "no/such/ld-linux-x86-64.so.2"), "not found"},
		{"a directory", dir, "a directory"},
		{"not executable", put("ld-noexec.so", loader, nil, 0o644), "not executable"},
		{"not ELF", put("ld-text.so", "", []byte("#!/bin/sh\nexit 0\n"), 0o755), "not an ELF file"},
		{"another machine", put("ld-i386.so", testenv.Testdata("libi386.so"), nil, 0o755), "EM_386"},
		{"a relocatable object", put("ld-object.o", testenv.Testdata("archive_a.o"), nil, 0o755), "ET_REL"},
		{"a relative path", "ld-linux-x86-64.so.2", "a relative path"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			prog := put("hello-"+strings.ReplaceAll(tt.name, " ", "-"), testenv.Testdata("hello"), nil, 0o755)
			if _, err := patchelf.EditFile(prog, []patchelf.Edit{{Kind: patchelf.SetInterpreter, Arg: tt.interp}}, patchelf.Options{}, patchelf.WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			res := resolve(t, rpath.Options{}, prog)
			switch {
			case tt.want == "" && res.InterpProblem != "":
				t.Errorf("interpreter %s: problem %q, want none", tt.interp, res.InterpProblem)
			case !strings.Contains(res.InterpProblem, tt.want):
				t.Errorf("interpreter %s: problem %q, want one saying %q", tt.interp, res.InterpProblem, tt.want)
			}
			if tt.want == "" && (res.Interp == nil || res.Interp.Path != loader) {
				t.Errorf("interpreter object %+v, want %s", res.Interp, loader)
			}
			if got := res.Root.Interpreter(); got != tt.interp {
				t.Errorf("Interpreter() = %q, want %q", got, tt.interp)
			}
			// The kernel: execve from a directory without the relative
			// interpreter in it.
			cmd := exec.Command(prog)
			cmd.Dir = t.TempDir()
			out, err := cmd.CombinedOutput()
			var pe *fs.PathError
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("the kernel did not run the program with %s: %v %s", tt.interp, err, out)
			case tt.want != "" && err == nil:
				t.Errorf("the kernel ran the program with %s, which was reported as %q", tt.interp, res.InterpProblem)
			case tt.want != "" && !errors.As(err, &pe):
				t.Errorf("the program with %s started and failed (%v %s); execve itself should fail", tt.interp, err, out)
			}
		})
	}
}

// TestNoInterpreterNoProblem: a library (no PT_INTERP) and a program
// whose interpreter is fine have no InterpProblem, even when the
// default loader of a library is looked for in a root without it.
func TestNoInterpreterNoProblem(t *testing.T) {
	res := resolve(t, rpath.Options{Root: t.TempDir(), NoCache: true}, testenv.Testdata("libfoo.so.1"))
	if res.InterpProblem != "" || res.Root.Interpreter() != "" {
		t.Errorf("library: interpreter %q, problem %q", res.Root.Interpreter(), res.InterpProblem)
	}
}
