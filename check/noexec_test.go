package check_test

import (
	"archive/zip"
	"context"
	"debug/elf"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/check"
	"github.com/rocmdoctor/rocmdoctor/internal/record"
	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
)

// rd1213 is the files check reports RD1213 for under root, relative to it
// (wheel members as WHEEL!/MEMBER).
func rd1213(t *testing.T, root string) []string {
	t.Helper()
	rep, err := check.Run(context.Background(), []string{root}, check.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Errors) != 0 {
		t.Errorf("errors: %+v", rep.Errors)
	}
	t.Cleanup(func() {
		if t.Failed() { // what else the scan said
			t.Logf("files %q", rep.Files)
			for _, f := range rep.Findings {
				t.Logf("%s %s %s", f.ID, f.File, f.Message)
			}
		}
	})
	var got []string
	for _, f := range rep.Findings {
		if f.ID == "RD1213" {
			rel, _ := filepath.Rel(root, f.File)
			got = append(got, rel)
		}
	}
	slices.Sort(got)
	return got
}

// A program nobody may execute is RD1213, whatever kind of program it is
// (a PIE, a static ET_EXEC); one with any execute bit, and a library
// without one (libraries are mapped, not executed: glibc's libc.so.6 has
// an interpreter too, and a SONAME), are not. The kernel is the oracle:
// exactly the flagged files fail execve with EACCES (root included: it
// needs one execute bit too).
func TestProgramNotExecutable(t *testing.T) {
	gcc := testenv.Tool(t, "gcc", "gcc")
	dir := t.TempDir()
	src := filepath.Join(dir, "start.c")
	os.WriteFile(src, []byte("void _start(void){ __asm__ volatile(\"mov $60, %eax; xor %edi, %edi; syscall\"); }\n"), 0o644)
	// A library with a program interpreter, as glibc gives libc.so.6 one.
	withInterp := filepath.Join(dir, "interp.c")
	os.WriteFile(withInterp, []byte("const char interp[] __attribute__((section(\".interp\"))) = \"/lib64/ld-linux-x86-64.so.2\";\nvoid _start(void){}\n"), 0o644)
	testenv.Tool(t, "objcopy", "binutils")
	build := func(out string, mode os.FileMode, args ...string) {
		t.Helper()
		in := src
		if strings.Contains(out, "interp") {
			in = withInterp
		}
		all := append([]string{"-O1", "-nostdlib", "-o", filepath.Join(dir, out), in}, args...)
		if o, err := exec.Command(gcc, all...).CombinedOutput(); err != nil {
			t.Fatalf("gcc %v: %v\n%s", all, err, o)
		}
		if err := os.Chmod(filepath.Join(dir, out), mode); err != nil {
			t.Fatal(err)
		}
	}
	build("pie-644", 0o644)
	build("pie-600", 0o600)
	build("pie-755", 0o755)
	build("pie-744", 0o744)
	build("pie-001", 0o001)
	build("static-644", 0o644, "-static")
	build("libwith-interp.so", 0o644, "-shared", "-Wl,-soname,libwith-interp.so")
	build("libplain.so", 0o644, "-shared", "-Wl,-soname,libplain.so")
	// Without its SONAME too (libcap's pam_cap.so: a PAM module that
	// prints its version when run), and a separate debug file (objcopy
	// --only-keep-debug: the program's headers, no code).
	build("module-interp.so", 0o644, "-shared")
	build("pie-debug", 0o755)
	if o, err := exec.Command("objcopy", "--only-keep-debug", filepath.Join(dir, "pie-debug"), filepath.Join(dir, "pie.debug")).CombinedOutput(); err != nil {
		t.Fatalf("objcopy: %v %s", err, o)
	}
	os.Remove(filepath.Join(dir, "pie-debug"))
	os.Chmod(filepath.Join(dir, "pie.debug"), 0o644)
	// Firmware: a static ET_EXEC for another processor (a copy of the
	// static program with e_machine set to EM_RISCV, or to EM_X86_64 on a
	// RISC-V machine), installed 644 as linux-firmware's are: not a
	// program for this machine.
	fw, _ := os.ReadFile(filepath.Join(dir, "static-644"))
	other := uint16(elf.EM_RISCV)
	if runtime.GOARCH == "riscv64" {
		other = uint16(elf.EM_X86_64)
	}
	binary.LittleEndian.PutUint16(fw[18:], other)
	os.WriteFile(filepath.Join(dir, "firmware.elf"), fw, 0o644)
	want := []string{"pie-600", "pie-644", "static-644"}
	if got := rd1213(t, dir); !slices.Equal(got, want) {
		t.Errorf("RD1213 on %q, want %q", got, want)
	}
	for _, name := range []string{"pie-644", "pie-600", "pie-755", "pie-744", "pie-001", "static-644"} {
		err := exec.Command(filepath.Join(dir, name)).Run()
		refused := errors.Is(err, syscall.EACCES)
		if flagged := slices.Contains(want, name); refused != flagged {
			t.Errorf("%s: execve refuses it: %v (%v); flagged: %v", name, refused, err, flagged)
		}
	}
}

// In a wheel, what counts is what pip makes of the entry: it sets the
// execute bits of an extracted file only when the entry's Unix mode is a
// regular file with one. A program zipped without that mode (no mode at
// all, as zipfile.writestr leaves it, or 0644, or a mode without the
// file type) is RD1213; one with 0100755 is not. With CI's python3-venv,
// pip is the oracle: it installs exactly the flagged programs without an
// execute bit.
func TestProgramNotExecutableInWheel(t *testing.T) {
	prog, err := os.ReadFile(testenv.Testdata("checktree", "bin", "buildinterp"))
	if err != nil {
		t.Fatal(err)
	}
	modes := map[string]uint32{
		"pkg/bin/tool-755":    0o100755,
		"pkg/bin/tool-700":    0o100700,
		"pkg/bin/tool-644":    0o100644,
		"pkg/bin/tool-nomode": 0,
		"pkg/bin/tool-notype": 0o755,
	}
	dir := t.TempDir()
	whl := filepath.Join(dir, "pkg-1.0-py3-none-linux_x86_64.whl")
	fh, err := os.Create(whl)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(fh)
	var rec strings.Builder
	add := func(name string, data []byte, mode uint32) {
		h := &zip.FileHeader{Name: name, Method: zip.Deflate, CreatorVersion: 3 << 8, ExternalAttrs: mode << 16}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
		rec.WriteString(record.Line(name, record.Hash(data), int64(len(data))) + "\n")
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range modes {
			if !yield(n) {
				return
			}
		}
	})
	for _, n := range names {
		add(n, prog, modes[n])
	}
	add("pkg/__init__.py", []byte("\n"), 0o100644)
	add("pkg-1.0.dist-info/METADATA", []byte("Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n"), 0o100644)
	add("pkg-1.0.dist-info/WHEEL", []byte("Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\nTag: py3-none-linux_x86_64\n"), 0o100644)
	w, _ := zw.Create("pkg-1.0.dist-info/RECORD")
	w.Write([]byte(rec.String() + "pkg-1.0.dist-info/RECORD,,\n"))
	zw.Close()
	fh.Close()

	want := []string{"pkg/bin/tool-644", "pkg/bin/tool-nomode", "pkg/bin/tool-notype"}
	var got []string
	for _, f := range rd1213(t, dir) {
		got = append(got, strings.TrimPrefix(f, filepath.Base(whl)+"!/"))
	}
	if !slices.Equal(got, want) {
		t.Errorf("RD1213 on %q, want %q", got, want)
	}

	py := testenv.Tool(t, "python3", "python3")
	venv := filepath.Join(dir, "venv")
	if out, err := exec.Command(py, "-m", "venv", venv).CombinedOutput(); err != nil {
		testenv.Missing(t, "python3 venv ("+strings.TrimSpace(string(out))+")", "apt-get install python3-venv")
	}
	vpy := filepath.Join(venv, "bin", "python")
	if out, err := exec.Command(vpy, "-m", "pip", "install", "--no-deps", "--no-index", "--disable-pip-version-check", whl).CombinedOutput(); err != nil {
		t.Fatalf("pip install: %v\n%s", err, out)
	}
	site, _ := filepath.Glob(filepath.Join(venv, "lib", "python*", "site-packages"))
	if len(site) != 1 {
		t.Fatalf("site-packages: %q", site)
	}
	for _, n := range names {
		st, err := os.Stat(filepath.Join(site[0], n))
		if err != nil {
			t.Fatal(err)
		}
		if noX, flagged := st.Mode().Perm()&0o111 == 0, slices.Contains(want, n); noX != flagged {
			t.Errorf("%s: pip installed it %s; flagged: %v", n, st.Mode().Perm(), flagged)
		}
	}
}
