package check_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/check"
	"github.com/rocmdoctor/rocmdoctor/ck"
	"github.com/rocmdoctor/rocmdoctor/finding"
	"github.com/rocmdoctor/rocmdoctor/gpu"
	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
)

// oddInputs makes files that are not what a command expects: a named pipe
// (whose open would wait for a writer), an empty file, a truncated ELF
// and text.
func oddInputs(t *testing.T) (dir string, files map[string]string) {
	t.Helper()
	dir = t.TempDir()
	files = map[string]string{}
	put := func(name string, b []byte) {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		files[name] = p
	}
	elf, err := os.ReadFile(testenv.Testdata("libfoo.so.1"))
	if err != nil {
		t.Fatal(err)
	}
	put("empty.so", nil)
	put("trunc.so", elf[:100])
	put("script.so", []byte("/* GNU ld script */\nINPUT(libfoo.so.1)\n"))
	if p := filepath.Join(dir, "pipe.so"); havePipes {
		if err := mkfifo(p); err != nil {
			t.Fatal(err)
		}
		files["pipe.so"] = p
	}
	return dir, files
}

// TestCheckNamedFilesItCannotCheck: a file named on the command line that
// check cannot read as anything it checks is an error, not a silent pass;
// in a walked directory the same files are passed over.
func TestCheckNamedFilesItCannotCheck(t *testing.T) {
	dir, files := oddInputs(t)
	// A named pipe or a path that does not exist is an error of the
	// report too, and the other paths are still checked (either one
	// stopped the whole check).
	good, missing := testenv.Testdata("libfoo.so.1"), filepath.Join(dir, "nowhere.so")
	roots := []string{missing, good}
	want := []finding.FileError{{Path: missing, Error: missing + ": no such file or directory"}}
	if p, ok := files["pipe.so"]; ok {
		roots = append(roots, p)
		want = append(want, finding.FileError{Path: p, Error: p + ": a named pipe, not a regular file"})
	}
	rep, err := check.Run(context.Background(), roots, check.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rep.Errors, want) || !reflect.DeepEqual(rep.Files, []string{good}) {
		t.Errorf("Check(%q): errors %+v, files %q; want errors %+v and the good file", roots, rep.Errors, rep.Files, want)
	}
	for _, c := range []struct{ name, want string }{
		{"empty.so", "nothing to check"},
		{"script.so", "nothing to check"},
		{"trunc.so", "malformed file at offset"},
	} {
		rep, err := check.Run(context.Background(), []string{files[c.name]}, check.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Errors) != 1 || rep.Errors[0].Path != files[c.name] || !strings.Contains(rep.Errors[0].Error, c.want) || !strings.Contains(rep.Errors[0].Error, files[c.name]) {
			t.Errorf("Check(%s): errors %+v, want one with %q", c.name, rep.Errors, c.want)
		}
	}
	rep, err = check.Run(context.Background(), []string{dir}, check.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The truncated ELF is still an error when walked; the rest are not
	// ELF files, and the pipe is not listed.
	if len(rep.Errors) != 1 || !strings.HasSuffix(rep.Errors[0].Path, "trunc.so") {
		t.Errorf("Check(dir): errors %+v, want the truncated ELF only", rep.Errors)
	}
}

// TestGPUsNamedFilesItCannotRead: the same for gpus, where each such path
// is one of the report's errors and the other paths are still reported
// (any one of them stopped the whole command).
func TestGPUsNamedFilesItCannotRead(t *testing.T) {
	dir, files := oddInputs(t)
	good := testenv.Testdata("libraw.so")
	for name, want := range map[string]string{
		"pipe.so":    "a named pipe, not a regular file",
		"empty.so":   "not an ELF file, an archive or a wheel",
		"script.so":  "not an ELF file, an archive or a wheel",
		"trunc.so":   "malformed file at offset",
		"missing.so": "missing.so: no such file or directory",
	} {
		p, ok := files[name]
		if name == "missing.so" {
			p, ok = filepath.Join(dir, name), true
		}
		if !ok {
			continue
		}
		rep, err := gpu.Check(context.Background(), []string{good, p}, gpu.Options{})
		if err != nil {
			t.Fatalf("GPUs(%s) = %v", name, err)
		}
		if len(rep.Errors) != 1 || rep.Errors[0].Path != p || !strings.HasPrefix(rep.Errors[0].Error, p+": ") || !strings.Contains(rep.Errors[0].Error, want) {
			t.Errorf("GPUs(%s): errors %+v, want one naming it with %q", name, rep.Errors, want)
		}
		if len(rep.Libraries) != 1 || rep.Libraries[0].Path != good {
			t.Errorf("GPUs(%s): the readable library is not reported: %+v", name, rep.Libraries)
		}
	}
	rep, err := gpu.Check(context.Background(), []string{dir}, gpu.Options{})
	if err != nil {
		t.Fatalf("GPUs(dir) = %v", err)
	}
	// As in Check: the truncated ELF is an error when walked too (it was
	// listed as having no device code, its parse error dropped); the
	// rest are not ELF files.
	if len(rep.Libraries) != 0 || len(rep.NoDeviceCode) != 0 || len(rep.Errors) != 1 || !strings.HasSuffix(rep.Errors[0].Path, "trunc.so") || !strings.Contains(rep.Errors[0].Error, "malformed file at offset") {
		t.Errorf("GPUs(dir): %d libraries, no device code in %v, errors %+v; want the truncated ELF as the one error", len(rep.Libraries), rep.NoDeviceCode, rep.Errors)
	}
}

// TestCKRefusesBinaryAndHugeConfigs: a binary or huge file given as the
// config is refused with what is wrong, before a huge one is read.
func TestCKRefusesBinaryAndHugeConfigs(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin.cmake")
	os.WriteFile(bin, []byte("set(X 1)\x00\x01"), 0o644)
	if _, err := ck.Check(bin, ck.Options{}); err == nil || !strings.Contains(err.Error(), "binary data, not a CMake file") {
		t.Errorf("binary config: %v", err)
	}
	huge := filepath.Join(dir, "huge.cmake")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(5 << 30) // sparse: nothing is written
	f.Close()
	if _, err := ck.Check(huge, ck.Options{}); err == nil || !strings.Contains(err.Error(), "more than the") {
		t.Errorf("5 GiB config: %v", err)
	}
}

// TestBindsAgainstALibraryWithoutSectionHeaders: a library stripped of its
// section headers (sstrip) still defines its symbols and versions; the
// loader binds hello against it, and so does check (it reported hello's
// references to it and their version nodes as missing).
func TestBindsAgainstALibraryWithoutSectionHeaders(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"hello", "libfoo.so.1"} {
		b, err := os.ReadFile(testenv.Testdata(name))
		if err != nil {
			t.Fatal(err)
		}
		if name == "libfoo.so.1" {
			testenv.StripSectionHeaders(b)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := check.Run(context.Background(), []string{dir}, check.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Files) != 2 || len(rep.Findings) != 0 || len(rep.Errors) != 0 {
		t.Errorf("check: %d files, findings %+v, errors %+v", len(rep.Files), rep.Findings, rep.Errors)
	}
	// The loader as oracle, where the fixtures run (x86-64 glibc).
	if runtime.GOOS == "linux" && runtime.GOARCH == "amd64" {
		if out, err := exec.Command(filepath.Join(dir, "hello")).CombinedOutput(); err != nil {
			t.Errorf("hello against the stripped libfoo: %v: %s", err, out)
		}
	}
}

// TestCheckEmptyDirectory: a directory with nothing check can check in it
// is one of the report's errors (the gate passed an empty install with
// "checked 0 file(s)"), unless AllowEmpty; one with something is not.
func TestCheckEmptyDirectory(t *testing.T) {
	empty, headers, lib := t.TempDir(), t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(headers, "a.h"), []byte("int x;\n"), 0o644)
	b, err := os.ReadFile(testenv.Testdata("libfoo.so.1"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(lib, "libfoo.so.1"), b, 0o644)
	rep, err := check.Run(context.Background(), []string{empty, lib, headers}, check.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, e := range rep.Errors {
		if !strings.HasPrefix(e.Error, e.Path+": nothing to check under it") {
			t.Errorf("error %q", e.Error)
		}
		paths = append(paths, e.Path)
	}
	if want := []string{empty, headers}; !reflect.DeepEqual(paths, want) {
		t.Errorf("errors for %q, want %q", paths, want)
	}
	if len(rep.Files) != 1 {
		t.Errorf("files %q", rep.Files)
	}
	rep, err = check.Run(context.Background(), []string{empty, headers}, check.Options{AllowEmpty: true})
	if err != nil || len(rep.Errors) != 0 {
		t.Errorf("AllowEmpty: %v %+v", err, rep.Errors)
	}
}
