//go:build linux

package hugeheap

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"unsafe"
)

// hugePageSize is the kernel's THP size (2 MiB on x86-64), 0 without THP.
func hugePageSize() uintptr {
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size")
	if err != nil {
		return 0
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || n == 0 || n&(n-1) != 0 {
		return 0
	}
	return uintptr(n)
}

func prepare(n int) bool {
	// Not on 32-bit address spaces, and not under a memory limit, which
	// the momentarily live object would count against.
	if unsafe.Sizeof(uintptr(0)) < 8 || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		return false
	}
	huge := hugePageSize()
	if huge == 0 || uintptr(n) < 2*huge {
		return false
	}
	// A fresh large object: its pages come straight from a new mapping, so
	// the runtime does not clear (touch) them.
	b := make([]byte, n)
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	beg := (p+huge-1)&^(huge-1) - p
	end := (p+uintptr(n))&^(huge-1) - p
	err := syscall.Madvise(b[beg:end], syscall.MADV_HUGEPAGE)
	runtime.KeepAlive(b)
	// Free the object now, so its pages are the next ones handed out.
	runtime.GC()
	return err == nil
}
