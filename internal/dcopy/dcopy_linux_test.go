//go:build linux && (amd64 || arm64 || ppc64le || ppc64 || s390x || riscv64 || loong64 || mips64 || mips64le)

package dcopy

import (
	"bytes"
	"os"
	"syscall"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
)

func init() {
	dirInMemory = func(dir string) bool {
		var st syscall.Statfs_t
		return syscall.Statfs(dir, &st) == nil && (uint32(st.Type) == tmpfsMagic || uint32(st.Type) == ramfsMagic)
	}
}

// TestNoDirectWritesInMemory: a destination on tmpfs is copied with
// copy_file_range, not written "directly" from the source's mapping
// (tmpfs accepts O_DIRECT since Linux 6.6 but buffers it all the same,
// and the mapping's page faults made a wheel relink's copy ~10% slower).
func TestNoDirectWritesInMemory(t *testing.T) {
	if !dirInMemory("/dev/shm") {
		testenv.Missing(t, "a tmpfs at /dev/shm", "")
	}
	dir, err := os.MkdirTemp("/dev/shm", "dcopy-test-")
	if err != nil {
		testenv.Missing(t, "a writable /dev/shm", err.Error())
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	src, dst, data := files(t, dir, 1<<20, 2<<20)
	if !inMemory(dst) {
		t.Fatalf("%s is not recognised as a file in memory", dst.Name())
	}
	cp := New(src, dst)
	defer cp.Close()
	if cp.Direct() {
		t.Error("direct writes chosen for a destination on tmpfs")
	}
	direct, err := cp.Copy(Align, 0, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if direct != 0 {
		t.Errorf("%d bytes written directly to tmpfs", direct)
	}
	got, err := os.ReadFile(dst.Name())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got[Align:Align+1<<20], data) {
		t.Error("destination differs")
	}
}
