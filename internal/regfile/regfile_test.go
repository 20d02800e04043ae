//go:build unix

package regfile_test

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rocmdoctor/rocmdoctor/internal/regfile"
)

// within fails the test when fn has not returned after a few seconds: an
// open that blocks is the bug these tests are about.
func within(t *testing.T, fn func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		t.Fatal("still blocked after 5 s")
		return nil
	}
}

func TestOpenRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "libfoo.so")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	// A socket cannot be opened (ENXIO): it is named as what it is too.
	sock := filepath.Join(dir, "libsock.so")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	defer ln.Close()
	for _, c := range []struct {
		path, what string
		open       func(string) error
	}{
		{fifo, "a named pipe, not a regular file", func(p string) error { f, err := regfile.Open(p); closeIf(f); return err }},
		{fifo, "a named pipe, not a regular file", func(p string) error { _, err := regfile.ReadFile(p); return err }},
		{dir, "a directory, not a regular file", func(p string) error { f, err := regfile.Open(p); closeIf(f); return err }},
		{"/dev/null", "a device, not a regular file", func(p string) error { _, err := regfile.ReadFile(p); return err }},
		{sock, "a socket, not a regular file", func(p string) error { f, err := regfile.Open(p); closeIf(f); return err }},
		{sock, "a socket, not a regular file", func(p string) error { _, err := regfile.OpenFD(p); return err }},
	} {
		err := within(t, func() error { return c.open(c.path) })
		if err == nil || err.Error() != c.path+": "+c.what {
			t.Errorf("%s: error %v, want %q", c.path, err, c.path+": "+c.what)
		}
	}
	if _, err := regfile.Open(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v, want fs.ErrNotExist", err)
	}
}

func closeIf(f *os.File) {
	if f != nil {
		f.Close()
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{0, 1, 4095, 4096, 70000} {
		p := filepath.Join(dir, "f")
		want := strings.Repeat("x", n)
		if err := os.WriteFile(p, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := regfile.ReadFile(p)
		if err != nil || string(got) != want {
			t.Errorf("%d bytes: got %d bytes, %v", n, len(got), err)
		}
		f, err := regfile.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		// The descriptor is blocking again, as os.Open's is.
		fl, _, e := syscall.Syscall(syscall.SYS_FCNTL, f.Fd(), syscall.F_GETFL, 0)
		if e != 0 || fl&syscall.O_NONBLOCK != 0 {
			t.Errorf("flags %#x (%v): O_NONBLOCK left set", fl, e)
		}
		f.Close()
	}
	// A file that grows between the stat and the read (procfs files
	// say size 0) is read to its end.
	if b, err := regfile.ReadFile("/proc/self/status"); err == nil && !strings.Contains(string(b), "Name:") {
		t.Errorf("/proc/self/status read as %q", b)
	}
}

// The buffer is sized from the stat, not grown from 512 bytes (ld.so.cache,
// read by every resolving command, took a dozen copies).
func TestReadFileSizedOnce(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, make([]byte, 70000), 0o644); err != nil {
		t.Fatal(err)
	}
	var big int
	allocs := testing.AllocsPerRun(20, func() {
		b, err := regfile.ReadFileMax(p, 1<<20)
		if err != nil || len(b) != 70000 {
			t.Fatalf("%d bytes, %v", len(b), err)
		}
		big = cap(b)
	})
	if big != 70001 {
		t.Errorf("buffer of %d bytes for a 70000-byte file, want 70001", big)
	}
	if allocs > 8 {
		t.Errorf("%.0f allocations to read a file, want at most 8", allocs)
	}
	if _, err := regfile.ReadFileMax(p, 69999); err == nil || !strings.Contains(err.Error(), "70000 bytes, more than the 69999 expected") {
		t.Errorf("over the limit: %v", err)
	}
}
