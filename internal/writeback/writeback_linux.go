//go:build linux && (amd64 || arm64 || riscv64 || loong64 || s390x || mips64 || mips64le)

package writeback

import (
	"os"
	"syscall"
)

// Start asks the kernel to begin writing n bytes of f at off to disk
// without waiting for them (sync_file_range SYNC_FILE_RANGE_WRITE), so a
// later fsync has less left to wait for. Failure is harmless: the fsync
// does all the work then.
func Start(f *os.File, off, n int64) {
	const syncFileRangeWrite = 2
	if n > 0 {
		_, _, _ = syscall.Syscall6(syscall.SYS_SYNC_FILE_RANGE, f.Fd(), uintptr(off), uintptr(n), syncFileRangeWrite, 0, 0)
	}
}
