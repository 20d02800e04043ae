package elfx

import (
	"debug/elf"
	"io"
)

// FileKind classifies an input by its magic.
type FileKind int

const (
	KindOther       FileKind = iota // neither ELF nor ar
	KindELF                         // starts with "\x7fELF"
	KindArchive                     // "!<arch>\n"
	KindThinArchive                 // "!<thin>\n"
)

func (k FileKind) String() string {
	return [...]string{"other", "elf", "archive", "thin-archive"}[k]
}

// Sniff reads the first bytes of r and classifies it.
func Sniff(r io.ReaderAt) FileKind {
	var m [8]byte
	n, _ := r.ReadAt(m[:], 0)
	return kindOf(m[:n])
}

// kindOf classifies a file by its first bytes.
func kindOf(m []byte) FileKind {
	switch {
	case len(m) >= 4 && string(m[:4]) == elf.ELFMAG:
		return KindELF
	case len(m) >= 8 && string(m[:8]) == arMagic:
		return KindArchive
	case len(m) >= 8 && string(m[:8]) == arThinMagic:
		return KindThinArchive
	}
	return KindOther
}

// HostHeaderLen is how much of an ELF header HostLoadable reads: e_ident,
// e_type and e_machine.
const HostHeaderLen = 20

// HostLoadable reports whether a file beginning with hdr (HostHeaderLen
// bytes, fewer for a shorter file) is an ELF file the host's dynamic
// loader loads: a shared object or executable of a machine other than
// AMDGPU. AMDGPU code objects (PyTorch's ROCm wheels carry thousands of
// rocBLAS and hipBLASLt kernels), relocatable objects and core files are
// not. A header too short or too odd to tell (no data encoding, a type
// ELF does not define) counts as loadable, so that parsing the file
// reports what is wrong with it.
func HostLoadable(hdr []byte) bool {
	if kindOf(hdr) != KindELF {
		return false
	}
	if len(hdr) < HostHeaderLen {
		return true
	}
	bo := byteOrder(elf.Data(hdr[elf.EI_DATA]))
	if bo == nil {
		return true
	}
	typ, machine := elf.Type(bo.Uint16(hdr[16:])), elf.Machine(bo.Uint16(hdr[18:]))
	return machine != elf.EM_AMDGPU && typ != elf.ET_REL && typ != elf.ET_CORE
}
