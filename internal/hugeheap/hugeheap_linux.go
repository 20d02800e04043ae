//go:build linux

package hugeheap

import (
	"bytes"
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
	// A small object in the heap as it is, then a fresh large one: its
	// pages come straight from a new mapping, so the runtime does not
	// clear (touch) them. When the large one does not fit in the current
	// 64 MiB arena, the rest of that arena is mapped and freed first: it
	// lies below the new arena and is handed out before it, so it is
	// advised too (the whole mappings holding both objects).
	small := new([64]byte)
	b := make([]byte, n)
	obj := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	ranges := heapMappings(uintptr(unsafe.Pointer(small)), obj)
	if len(ranges) == 0 {
		ranges = [][2]uintptr{{obj, obj + uintptr(n)}}
	}
	ok := true
	for _, r := range ranges {
		if _, _, e := syscall.Syscall(syscall.SYS_MADVISE, r[0], r[1]-r[0], syscall.MADV_HUGEPAGE); e != 0 {
			ok = false
		}
	}
	runtime.KeepAlive(small)
	runtime.KeepAlive(b)
	// Free the large object now, so its pages are among the next ones
	// handed out.
	runtime.GC()
	return ok
}

// heapMappings returns the address ranges of the mappings (from
// /proc/self/maps) that hold the given addresses, each once. The Go heap
// lives in its own arenas, apart from other mappings.
func heapMappings(addrs ...uintptr) [][2]uintptr {
	b, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return nil
	}
	var out [][2]uintptr
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		lo, hi, ok := mappingRange(line)
		if !ok {
			continue
		}
		for _, a := range addrs {
			if lo <= a && a < hi {
				out = append(out, [2]uintptr{lo, hi})
				break
			}
		}
	}
	return out
}

// mappingRange parses the "start-end" that begins a line of
// /proc/self/maps.
func mappingRange(line []byte) (lo, hi uintptr, ok bool) {
	r, _, found := bytes.Cut(line, []byte(" "))
	if !found {
		return 0, 0, false
	}
	a, c, found := bytes.Cut(r, []byte("-"))
	if !found {
		return 0, 0, false
	}
	x, err1 := strconv.ParseUint(string(a), 16, 64)
	y, err2 := strconv.ParseUint(string(c), 16, 64)
	if err1 != nil || err2 != nil || x >= y {
		return 0, 0, false
	}
	return uintptr(x), uintptr(y), true
}
