package testenv

import (
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
)

// Runs32 reports whether this machine executes 32-bit x86 programs: an
// x86-64 kernel built without IA32 emulation (as some VM kernels are)
// refuses them with ENOEXEC, and then no 32-bit loader, program or Go test
// binary runs, whatever apt installs. It runs a minimal static i386
// program that exits 0; only the kernel's ENOEXEC counts as "no": any
// other failure (a temporary directory mounted noexec) says yes, so that
// the tests which need 32-bit programs run and fail loudly rather than
// skip.
var Runs32 = sync.OnceValue(func() bool {
	if runtime.GOOS != "linux" || (runtime.GOARCH != "amd64" && runtime.GOARCH != "386") {
		return false
	}
	dir, err := os.MkdirTemp("", "rocmdoctor-runs32-")
	if err != nil {
		return true
	}
	defer os.RemoveAll(dir)
	p := filepath.Join(dir, "exit0")
	if err := os.WriteFile(p, exit0i386(), 0o755); err != nil {
		return true
	}
	return !errors.Is(exec.Command(p).Run(), syscall.ENOEXEC)
})

// exit0i386 is an ELF32 i386 executable of one PT_LOAD segment whose
// code is exit(0) through int 0x80.
func exit0i386() []byte {
	const base, hdr = 0x08048000, 52 + 32
	code := []byte{0xb8, 1, 0, 0, 0, 0x31, 0xdb, 0xcd, 0x80} // mov eax,1; xor ebx,ebx; int 0x80
	b := make([]byte, hdr, hdr+len(code))
	copy(b, "\x7fELF\x01\x01\x01")
	le := binary.LittleEndian
	le.PutUint16(b[16:], 2)        // ET_EXEC
	le.PutUint16(b[18:], 3)        // EM_386
	le.PutUint32(b[20:], 1)        // EV_CURRENT
	le.PutUint32(b[24:], base+hdr) // e_entry
	le.PutUint32(b[28:], 52)       // e_phoff
	le.PutUint16(b[40:], 52)       // e_ehsize
	le.PutUint16(b[42:], 32)       // e_phentsize
	le.PutUint16(b[44:], 1)        // e_phnum
	ph := b[52:]
	le.PutUint32(ph[0:], 1)                      // PT_LOAD
	le.PutUint32(ph[8:], base)                   // p_vaddr
	le.PutUint32(ph[12:], base)                  // p_paddr
	le.PutUint32(ph[16:], uint32(hdr+len(code))) // p_filesz
	le.PutUint32(ph[20:], uint32(hdr+len(code))) // p_memsz
	le.PutUint32(ph[24:], 5)                     // PF_R|PF_X
	le.PutUint32(ph[28:], 0x1000)                // p_align
	return append(b, code...)
}
