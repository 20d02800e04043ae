//go:build unix && (amd64 || arm64 || ppc64le || ppc64 || s390x || riscv64 || loong64 || mips64 || mips64le)

package mapfile

import (
	"syscall"
)

// Map maps the first size bytes of the open file fd read-only and shared.
// It is only built for 64-bit hosts, where mapping a 1.3 GB library costs
// address space and no memory until pages are touched; elsewhere it fails
// with errors.ErrUnsupported and callers read instead. Reading a mapping
// saves the copy read(2) makes; the file must not shrink while it is
// mapped (a read past its end would fault).
func Map(fd uintptr, size int64) ([]byte, error) { return MapRange(fd, 0, size) }

// MapRange maps size bytes of fd from off, which must be a multiple of
// the page size, like Map.
func MapRange(fd uintptr, off, size int64) ([]byte, error) {
	if size <= 0 || size != int64(int(size)) || off < 0 {
		return nil, syscall.EINVAL
	}
	return syscall.Mmap(int(fd), off, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
}

// Unmap releases a mapping made by Map.
func Unmap(b []byte) { _ = syscall.Munmap(b) }
