//go:build unix

package root_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rocmdoctor/rocmdoctor/cmd/internal/clitest"
)

// TestNamedPipeIsRefused: every command given a named pipe where it reads
// a file says what it is and exits 1 at once; opening one to read would
// wait for a writer for ever.
func TestNamedPipeIsRefused(t *testing.T) {
	dir := t.TempDir()
	rocm := filepath.Join(dir, "rocm")
	os.MkdirAll(filepath.Join(rocm, "lib"), 0o755)
	pipe := func(name string) string {
		p := filepath.Join(dir, name)
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Fatalf("mkfifo: %v", err)
		}
		return p
	}
	so, whl := pipe("libfoo.so"), pipe("foo-1.0-py3-none-linux_x86_64.whl")
	cfg := filepath.Join(dir, "ck", "lib", "cmake", "composable_kernel")
	os.MkdirAll(cfg, 0o755)
	syscall.Mkfifo(filepath.Join(cfg, "composable_kernelConfig.cmake"), 0o644)
	for _, args := range [][]string{
		{"symbols", so},
		{"inspect", so},
		{"deps", so},
		{"unwind", so},
		{"gpus", so},
		{"check", so},
		{"patch", "--set-rpath", "/x", "--dry-run", so},
		{"patchelf", "--print-rpath", so},
		{"ck", filepath.Join(dir, "ck")},
		{"wheel", "relink", "--rocm", rocm, "--dry-run", whl},
	} {
		done := make(chan struct{})
		var code int
		var errOut string
		go func() {
			code, _, errOut = clitest.Run(args...)
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: still running after 10 s", strings.Join(args, " "))
		}
		if code != 1 || !strings.Contains(errOut, "a named pipe, not a regular file") {
			t.Errorf("%s: exit %d, stderr %q", strings.Join(args, " "), code, errOut)
		}
	}
}
