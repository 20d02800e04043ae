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
	put := func(name, src string, mode os.FileMode) string {
		return copyFile(t, src, filepath.Join(dir, name), mode)
	}
	put("libfoo.so.1", testenv.Testdata("libfoo.so.1"), 0o755) // hello's RPATH is $ORIGIN
	text := filepath.Join(dir, "ld-text.so")
	if err := os.WriteFile(text, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, interp, want string
	}{
		{"the system loader", loader, ""},
		{"missing", filepath.Join(dir, "no/such/ld-linux-x86-64.so.2"), "not found"},
		{"a directory", dir, "a directory"},
		{"not executable", put("ld-noexec.so", loader, 0o644), "not executable"},
		{"not ELF", text, "not an ELF file"},
		{"another machine", put("ld-i386.so", testenv.Testdata("libi386.so"), 0o755), "EM_386"},
		{"a relocatable object", put("ld-object.o", testenv.Testdata("archive_a.o"), 0o755), "ET_REL"},
		{"a relative path", "ld-linux-x86-64.so.2", "a relative path"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			prog := put("hello-"+strings.ReplaceAll(tt.name, " ", "-"), testenv.Testdata("hello"), 0o755)
			setInterpreter(t, prog, tt.interp)
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

// TestSysrootSymlinks: under a sysroot, symbolic links are followed inside
// it, as for a process chrooted there: an absolute target starts again at
// the root. The program's interpreter (/lib64/ld-test.so.2, an absolute
// link as Debian's /lib64/ld-linux-x86-64.so.2 is) and a library reached
// through an absolute link are found inside the root; a link to a path
// that exists only on this machine (/usr/lib/x86_64-linux-gnu/libm.so.6)
// finds nothing, where os.Stat would have taken the machine's file.
func TestSysrootSymlinks(t *testing.T) {
	loader := testenv.File(t, "/lib64/ld-linux-x86-64.so.2", "libc6")
	hostLibm := testenv.File(t, "/usr/lib/x86_64-linux-gnu/libm.so.6", "libc6")
	root := t.TempDir()
	put := func(p, src string) { copyFile(t, src, filepath.Join(root, p), 0o755) }
	link := func(p, target string) {
		t.Helper()
		os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755)
		if err := os.Symlink(target, filepath.Join(root, p)); err != nil {
			t.Fatal(err)
		}
	}
	put("usr/bin/hello", testenv.Testdata("hello"))
	setInterpreter(t, filepath.Join(root, "usr/bin/hello"), "/lib64/ld-test.so.2")
	put("opt/glibc/ld-linux-x86-64.so.2", loader)
	link("lib64/ld-test.so.2", "/opt/glibc/../glibc/ld-linux-x86-64.so.2")
	put("opt/foo/libfoo.so.1", testenv.Testdata("libfoo.so.1"))
	link("usr/bin/libfoo.so.1", "/opt/foo/libfoo.so.1") // hello's RPATH is $ORIGIN
	put("opt/glibc/libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6")
	link("opt/glibc/libm.so.6", hostLibm) // exists on this machine, not in the root
	link("opt/glibc/libloop.so", "/opt/glibc/libloop.so")

	opts := rpath.Options{Root: root, NoCache: true, DefaultDirs: []string{"/opt/glibc"}, HWCaps: []string{}, LegacyHWCaps: []string{}}
	res := resolve(t, opts, filepath.Join(root, "usr/bin/hello"))
	if res.InterpProblem != "" || res.Interp == nil || res.Interp.FilePath() != filepath.Join(root, "opt/glibc/ld-linux-x86-64.so.2") {
		t.Errorf("interpreter %+v (problem %q), want the root's loader through the absolute link", res.Interp, res.InterpProblem)
	}
	foo := depOf(t, res, "libfoo.so.1")
	if foo.Object == nil || foo.Path != filepath.Join(root, "usr/bin/libfoo.so.1") || foo.Object.FilePath() != filepath.Join(root, "opt/foo/libfoo.so.1") {
		t.Errorf("libfoo.so.1: %+v, want found at usr/bin/libfoo.so.1, read from opt/foo", foo)
	}
	if m := depOf(t, res, "libm.so.6"); !m.Missing() {
		t.Errorf("libm.so.6 resolved to %s through a link to this machine's file, want missing", m.Path)
	}
	// The program itself named through an absolute link inside the root.
	link("usr/local/bin/hello", "/usr/bin/hello")
	res = resolve(t, opts, filepath.Join(root, "usr/local/bin/hello"))
	if res.Root.FilePath() != filepath.Join(root, "usr/bin/hello") || res.InterpProblem != "" || findDep(res, "libfoo.so.1").Missing() {
		t.Errorf("program through a link: file %s, interpreter problem %q, deps %v", res.Root.FilePath(), res.InterpProblem, res.Missing())
	}
	// ".." stops at the root, in the path and in a link's target; a link
	// to itself fails as the kernel's lookup does (ELOOP).
	link("opt/glibc/ld-up.so", "../../../../../../../../opt/glibc/ld-linux-x86-64.so.2")
	for interp, want := range map[string]string{
		"/../../../../../../lib64/ld-test.so.2": "",
		"/opt/glibc/ld-up.so":                   "",
		"/opt/glibc/libloop.so":                 "too many levels of symbolic links",
	} {
		prog := filepath.Join(root, "usr/bin/hello-"+filepath.Base(interp))
		put("usr/bin/hello-"+filepath.Base(interp), testenv.Testdata("hello"))
		setInterpreter(t, prog, interp)
		res := resolve(t, opts, prog)
		switch {
		case want == "" && (res.InterpProblem != "" || res.Interp == nil || res.Interp.FilePath() != filepath.Join(root, "opt/glibc/ld-linux-x86-64.so.2")):
			t.Errorf("interpreter %s: %+v (problem %q), want the root's loader", interp, res.Interp, res.InterpProblem)
		case !strings.Contains(res.InterpProblem, want):
			t.Errorf("interpreter %s: problem %q, want %q", interp, res.InterpProblem, want)
		}
	}
}

// copyFile copies src to dst (making its directory) with mode and
// returns dst.
func copyFile(t *testing.T, src, dst string, mode os.FileMode) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Dir(dst), 0o755)
	if err := os.WriteFile(dst, b, mode); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestRealInRoot: symbolic links inside a sysroot are followed as the
// kernel follows them for a process chrooted there.
func TestRealInRoot(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"opt/rocm-6.2.0/lib", "etc/alternatives", "usr/lib"} {
		os.MkdirAll(filepath.Join(root, d), 0o755)
	}
	for link, target := range map[string]string{
		"opt/rocm":              "/etc/alternatives/rocm", // absolute, twice: ROCm's alternatives
		"etc/alternatives/rocm": "/opt/rocm-6.2.0",
		"lib":                   "usr/lib",
		"usr/lib/up":            "../../../../../../opt/rocm-6.2.0", // '..' stops at the root
		"usr/lib/loop":          "/usr/lib/loop",
		"usr/lib/host":          "/etc", // exists on this machine, not in the root
		"usr/lib/viamissing":    "nothere" + strings.Repeat("/..", 30) + "/etc/passwd",
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		in, want string
		err      bool
	}{
		{"/opt/rocm/lib", "/opt/rocm-6.2.0/lib", false},
		{"/lib/up/lib", "/opt/rocm-6.2.0/lib", false},
		{"/opt/rocm/../rocm/lib/libamdhip64.so.6", "/opt/rocm-6.2.0/lib/libamdhip64.so.6", false},
		{"/usr/lib/loop/x", "", true},
	} {
		got, err := rpath.RealInRoot(root, filepath.Join(root, tt.in))
		switch {
		case tt.err != (err != nil):
			t.Errorf("%s: error %v", tt.in, err)
		case !tt.err && got != filepath.Join(root, tt.want):
			t.Errorf("%s: %s, want %s", tt.in, got, filepath.Join(root, tt.want))
		}
	}
	// Paths that do not lead to a file of the root do not lead to one of
	// this machine either: a link to /etc, and ".." after a missing name.
	for _, in := range []string{"/usr/lib/host/passwd", "/usr/lib/viamissing", "/usr/lib/missing" + strings.Repeat("/..", 30) + "/etc/passwd"} {
		got, err := rpath.RealInRoot(root, root+in)
		if _, serr := os.Stat(got); err == nil && serr == nil {
			t.Errorf("%s: %s names a file", in, got)
		}
	}
	// Outside the root, or with root "/", a path is left as it is.
	if got, _ := rpath.RealInRoot(root, "/etc/passwd"); got != "/etc/passwd" {
		t.Errorf("outside the root: %s", got)
	}
	if got, _ := rpath.RealInRoot("/", "/lib64/ld-linux-x86-64.so.2"); got != "/lib64/ld-linux-x86-64.so.2" {
		t.Errorf("root /: %s", got)
	}
}

// setInterpreter sets the PT_INTERP of the program at path.
func setInterpreter(t *testing.T, path, interp string) {
	t.Helper()
	if _, err := patchelf.EditFile(path, []patchelf.Edit{{Kind: patchelf.KindSetInterpreter, Arg: interp}}, patchelf.Options{}, patchelf.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
}
