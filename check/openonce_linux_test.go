package check_test

import (
	"context"
	"encoding/binary"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/check"
	"github.com/rocmdoctor/rocmdoctor/finding"
	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
)

// opens counts the times path is opened while fn runs (inotify IN_OPEN;
// closes are watched too, as the kernel folds an event into an identical
// one not yet read: two opens in a row would count once).
func opens(t *testing.T, path string, fn func()) int {
	t.Helper()
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		t.Fatalf("inotify: %v", err)
	}
	defer syscall.Close(fd)
	if _, err := syscall.InotifyAddWatch(fd, path, syscall.IN_OPEN|syscall.IN_CLOSE); err != nil {
		t.Fatalf("inotify watch on %s: %v", path, err)
	}
	fn()
	n := 0
	buf := make([]byte, 64<<10)
	for {
		got, err := syscall.Read(fd, buf)
		if err != nil || got <= 0 {
			return n
		}
		for off := 0; off+syscall.SizeofInotifyEvent <= got; {
			if binary.NativeEndian.Uint32(buf[off+4:])&syscall.IN_OPEN != 0 {
				n++
			}
			off += syscall.SizeofInotifyEvent + int(binary.NativeEndian.Uint32(buf[off+12:]))
		}
	}
}

// TestCheckOpensAnArchiveOnce: the LLVMInitialize* diagnosis and the
// device-code rules read an archive in one pass (they opened it twice, and
// with GPU targets parsed its members twice).
func TestCheckOpensAnArchiveOnce(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "librockCompiler.a")
	testenv.CopyFile(t, testenv.Testdata("librockCompiler.a"), a)
	for _, targets := range [][]string{nil, {"gfx90a"}} {
		var rep *check.Report
		n := opens(t, a, func() {
			var err error
			rep, err = check.Run(context.Background(), []string{dir}, check.Options{GPUTargets: targets, AllowEmpty: true})
			if err != nil {
				t.Fatal(err)
			}
		})
		diagnosed := false
		for _, f := range rep.Findings {
			diagnosed = diagnosed || (f.Rule == finding.RuleLLVMTargets && f.File == a)
		}
		if n != 1 || !diagnosed || len(rep.Errors) > 0 {
			t.Errorf("GPU targets %v: %s opened %d times (want 1), LLVM diagnosis %v, errors %v", targets, a, n, diagnosed, rep.Errors)
		}
	}
}
