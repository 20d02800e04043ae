package elfx

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"unsafe"

	"github.com/rocmdoctor/rocmdoctor/internal/mapfile"
)

// mapping is a read-only memory mapping of a whole file. Views into it are
// only touched inside guarded calls (enter/leave), so that a file truncated
// by someone else while it is mapped turns the SIGBUS into an error on the
// table instead of killing the process. The mapping is released when the
// last object holding it becomes unreachable.
type mapping struct {
	data []byte
	path string
	err  atomic.Pointer[error]
}

func newMapping(data []byte, path string) *mapping {
	m := &mapping{data: data, path: path}
	runtime.AddCleanup(m, mapfile.Unmap, data)
	return m
}

// failed returns the fault recorded on the mapping, if any.
func (m *mapping) failed() error {
	if m == nil {
		return nil
	}
	if p := m.err.Load(); p != nil {
		return *p
	}
	return nil
}

// enter makes memory faults in this goroutine panics for the duration of
// a guarded call; its result is passed to leave.
func (m *mapping) enter() bool {
	if m == nil {
		return false
	}
	return debug.SetPanicOnFault(true)
}

// leave must be deferred directly after enter. It restores the goroutine's
// fault mode and turns a fault inside the mapping into the mapping's error;
// any other panic continues.
func (m *mapping) leave(old bool) {
	if m == nil {
		return
	}
	debug.SetPanicOnFault(old)
	r := recover()
	if r == nil {
		return
	}
	if f, ok := r.(interface{ Addr() uintptr }); ok && m.contains(f.Addr()) {
		err := fmt.Errorf("%s: file changed while it was being read (memory fault at offset %#x; was it truncated or rewritten in place?)",
			nameOr(m.path), f.Addr()-uintptr(unsafe.Pointer(unsafe.SliceData(m.data))))
		m.err.CompareAndSwap(nil, &err)
		return
	}
	panic(r)
}

func (m *mapping) contains(addr uintptr) bool {
	base := uintptr(unsafe.Pointer(unsafe.SliceData(m.data)))
	return addr >= base && addr-base < uintptr(len(m.data))
}
