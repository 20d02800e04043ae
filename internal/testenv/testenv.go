// Package testenv lets tests depend on tools and data that may be missing:
// outside CI such a test skips with a message naming what is missing; with
// ROCMDOCTOR_REQUIRE_ALL=1 (the CI tier) it fails instead.
package testenv

import (
	"archive/zip"
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/internal/mapfile"
	"github.com/rocmdoctor/rocmdoctor/internal/record"
)

// RequireAll reports whether missing tools and data must fail tests.
func RequireAll() bool { return os.Getenv("ROCMDOCTOR_REQUIRE_ALL") == "1" }

// Missing skips or fails t because what is not available; hint says how to
// get it (e.g. the Debian package).
func Missing(t testing.TB, what, hint string) {
	t.Helper()
	msg := what + " is not available"
	if hint != "" {
		msg += " (" + hint + ")"
	}
	if RequireAll() {
		t.Fatalf("%s; ROCMDOCTOR_REQUIRE_ALL=1 makes this a failure", msg)
	}
	t.Skip(msg)
}

// Tool returns the path of an executable, or skips/fails when absent.
func Tool(t testing.TB, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Missing(t, "tool "+name, "apt-get install "+pkg)
	}
	return p
}

// Python returns a python3 that imports module (the first python3 on PATH,
// else the system's /usr/bin/python3, where Debian's python3-* packages
// install), or skips/fails naming pkg.
func Python(t testing.TB, module, pkg string) string {
	t.Helper()
	for _, py := range []string{"python3", "/usr/bin/python3"} {
		if p, err := exec.LookPath(py); err == nil && exec.Command(p, "-c", "import "+module).Run() == nil {
			return p
		}
	}
	Missing(t, "a python3 with the "+module+" module", "apt-get install "+pkg)
	return ""
}

// GCC32 returns gcc's path when it links 32-bit x86 programs, or
// skips/fails: gcc -m32 needs the 32-bit C library and libgcc, which a
// machine with gcc alone lacks (Debian's gcc-multilib brings them).
func GCC32(t testing.TB) string {
	t.Helper()
	gcc := Tool(t, "gcc", "gcc")
	if err := linksM32(); err != nil {
		t.Logf("gcc -m32 cannot link: %v", err)
		Missing(t, "gcc -m32 (the 32-bit C library and libgcc)", "apt-get install gcc-multilib")
	}
	return gcc
}

// linksM32 links a program with gcc -m32 once per test process and
// reports why it could not.
var linksM32 = sync.OnceValue(func() error {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "rocmdoctor-m32-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	src := filepath.Join(dir, "m.c")
	if err := os.WriteFile(src, []byte("int main(void) { return 0; }\n"), 0o644); err != nil {
		return err
	}
	if out, err := exec.Command(gcc, "-m32", "-o", filepath.Join(dir, "m"), src).CombinedOutput(); err != nil {
		return fmt.Errorf("%v: %s", err, bytes.TrimSpace(out))
	}
	return nil
})

// File returns path when it exists, or skips/fails naming the package.
func File(t testing.TB, path, pkg string) string {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		Missing(t, path, "apt-get install "+pkg)
	}
	return path
}

// Testdata returns the absolute path of a file in the repository's testdata.
func Testdata(elem ...string) string {
	return filepath.Join(append([]string{root(), "testdata"}, elem...)...)
}

// root is the repository's top directory.
func root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Corpus gates the differential tests over system libraries: they run in
// the CI tier (ROCMDOCTOR_REQUIRE_ALL=1) or when ROCMDOCTOR_CORPUS=1, and
// skip otherwise so that the default `go test ./...` stays fast.
func Corpus(t testing.TB) {
	t.Helper()
	if !RequireAll() && os.Getenv("ROCMDOCTOR_CORPUS") != "1" {
		t.Skip("corpus differential: runs in the CI tier; set ROCMDOCTOR_CORPUS=1 to run it here")
	}
}

// ELFFiles returns the regular files under root that start with the ELF
// magic, each inode once, in walk order. Symlinks are not followed.
func ELFFiles(t testing.TB, root string) []string {
	t.Helper()
	var out []string
	seen := map[[2]uint64]bool{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable directories are not the test's subject
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		if id, ok := inode(info); ok {
			if seen[id] {
				return nil
			}
			seen[id] = true
		}
		f, err := os.Open(p)
		if err != nil {
			return nil
		}
		var m [4]byte
		n, _ := f.Read(m[:])
		f.Close()
		if n == 4 && string(m[:]) == "\x7fELF" {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// DynamicFiles returns the ELF files under root (ELFFiles) that the
// loader loads for machine: executables and shared objects with a
// dynamic segment.
func DynamicFiles(t testing.TB, root string, machine elf.Machine) []string {
	t.Helper()
	var out []string
	for _, p := range ELFFiles(t, root) {
		f, err := elf.Open(p)
		if err != nil {
			continue
		}
		ok := f.Machine == machine && (f.Type == elf.ET_DYN || f.Type == elf.ET_EXEC)
		dynamic := false
		for _, ph := range f.Progs {
			dynamic = dynamic || ph.Type == elf.PT_DYNAMIC
		}
		f.Close()
		if ok && dynamic {
			out = append(out, p)
		}
	}
	return out
}

// EmptyFiles creates empty files at the slash-separated paths under root,
// with their directories.
func EmptyFiles(t testing.TB, root string, paths ...string) {
	t.Helper()
	for _, p := range paths {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// StripSectionHeaders zeroes e_shoff, e_shnum and e_shstrndx in the ELF
// image b, as sstrip leaves a file (the loader never reads section
// headers), and returns b.
func StripSectionHeaders(b []byte) []byte {
	if len(b) < 0x40 {
		return b
	}
	var bo binary.ByteOrder = binary.LittleEndian
	if b[elf.EI_DATA] == byte(elf.ELFDATA2MSB) {
		bo = binary.BigEndian
	}
	if b[elf.EI_CLASS] == byte(elf.ELFCLASS64) {
		bo.PutUint64(b[0x28:], 0) // e_shoff
		bo.PutUint32(b[0x3c:], 0) // e_shnum, e_shstrndx
	} else {
		bo.PutUint32(b[0x20:], 0)
		bo.PutUint32(b[0x30:], 0)
	}
	return b
}

// WheelMember is a wheel of distribution dist ("pkg-1.0", as its file
// name begins) holding data as member name, recorded as compressed with
// method but stored as it is (for readers that must refuse a method they
// do not support, such as bzip2's 12), and the RECORD that lists it.
func WheelMember(dist, name string, data []byte, method uint16) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	zw.RegisterCompressor(method, func(w io.Writer) (io.WriteCloser, error) { return nopCloser{w}, nil })
	w, _ := zw.CreateHeader(&zip.FileHeader{Name: name, Method: method})
	w.Write(data)
	rec := dist + ".dist-info/RECORD"
	w, _ = zw.Create(rec)
	w.Write([]byte(record.Line(name, record.Hash(data), int64(len(data))) + "\n" + record.Line(rec, "", 0) + "\n"))
	zw.Close()
	return buf.Bytes()
}

// OneMember is a zip archive holding data as member name, compressed with
// method (zip.Store or zip.Deflate), and that member read back from it.
// The member reads from b: a test can damage it there.
func OneMember(t testing.TB, name string, data []byte, method uint16) (b []byte, zf *zip.File) {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: method})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	zw.Close()
	b = buf.Bytes()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	return b, zr.File[0]
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// MapsFiles reports whether this host maps files (internal/mapfile): it
// does not on 32-bit hosts, where the mapped code paths copy instead.
func MapsFiles(t testing.TB) bool {
	f, err := os.Open(Testdata("hello"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := mapfile.Map(f.Fd(), 4096)
	if errors.Is(err, errors.ErrUnsupported) {
		return false
	}
	if err != nil {
		t.Fatalf("mapping %s: %v", f.Name(), err)
	}
	mapfile.Unmap(b)
	return true
}

// DlopenHarness builds (with gcc) and returns a program that loads its
// argument with dlopen(RTLD_NOW | RTLD_LOCAL), as a program loads a plugin:
// it exits 0 when the real loader loads the file and binds every symbol,
// else 1 with dlerror()'s message on stderr. With no other library than
// libc, nothing of its own stands in for what the file misses.
func DlopenHarness(t testing.TB) string {
	t.Helper()
	gcc := Tool(t, "gcc", "gcc")
	dir := t.TempDir()
	src := filepath.Join(dir, "load.c")
	prog := filepath.Join(dir, "load")
	code := "#include <dlfcn.h>\n#include <stdio.h>\n" +
		"int main(int c, char **v) { if (!dlopen(v[1], RTLD_NOW | RTLD_LOCAL)) { fprintf(stderr, \"%s\\n\", dlerror()); return 1; } return 0; }\n"
	if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(gcc, "-o", prog, src).CombinedOutput(); err != nil {
		t.Fatalf("building the dlopen harness: %v\n%s", err, out)
	}
	return prog
}
