//go:build unix && (amd64 || arm64 || ppc64le || ppc64 || s390x || riscv64 || loong64 || mips64 || mips64le)

package elfx

import (
	"syscall"
)

// mapFile maps size bytes of fh read-only and shared. It is only built for
// 64-bit hosts, where mapping a 1.3 GB library costs address space and no
// memory until pages are touched.
func mapFile(fd uintptr, size int64) ([]byte, error) {
	if size <= 0 || size != int64(int(size)) {
		return nil, syscall.EINVAL
	}
	return syscall.Mmap(int(fd), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
}

func unmapFile(b []byte) { _ = syscall.Munmap(b) }
