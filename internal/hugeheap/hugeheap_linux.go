//go:build linux

package hugeheap

import (
	"math"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"unsafe"
)

// hugePageSize is the kernel's THP size (2 MiB on x86-64), 0 without THP.
// The file is read with plain system calls: the os package's first open
// sets up the runtime's network poller (epoll, an eventfd), which the
// scheduler then polls for the rest of a run that never uses it.
func hugePageSize() uintptr {
	fd, err := syscall.Open("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return 0
	}
	var buf [32]byte
	k, err := syscall.Read(fd, buf[:])
	syscall.Close(fd)
	if err != nil || k <= 0 {
		return 0
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(buf[:k])), 10, 64)
	if err != nil || n == 0 || n&(n-1) != 0 {
		return 0
	}
	return uintptr(n)
}

// mark makes the small object escape to the heap.
var mark *[64]byte

// heapArena is the Go heap's arena size on 64-bit Linux: the heap grows
// in arenas of its own, aligned to their size.
const heapArena = 64 << 20

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
	// No collection while the large object is live: it would find it
	// live and only cost time.
	gc := debug.SetGCPercent(-1)
	// A small object in the heap as it is, then a fresh large one: its
	// pages come straight from a new mapping, so the runtime does not
	// clear (touch) them. When the large one does not fit in the current
	// arena, the rest of that arena is mapped and freed first: it lies
	// below the new arenas and is handed out before them, so the whole
	// arena of the small object is advised too. Where part of a range is
	// not mapped, madvise advises the rest and says ENOMEM.
	mark = new([64]byte) // in the heap, not on the stack
	small := mark
	mark = nil
	b := make([]byte, n)
	ok := true
	for _, r := range [][2]uintptr{
		{uintptr(unsafe.Pointer(small)) &^ (heapArena - 1), heapArena},
		{uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(n)},
	} {
		_, _, e := syscall.Syscall(syscall.SYS_MADVISE, r[0], r[1], syscall.MADV_HUGEPAGE)
		ok = ok && (e == 0 || e == syscall.ENOMEM)
	}
	runtime.KeepAlive(small)
	runtime.KeepAlive(b)
	debug.SetGCPercent(gc)
	// Free the large object now, so its pages are among the next ones
	// handed out.
	runtime.GC()
	return ok
}
