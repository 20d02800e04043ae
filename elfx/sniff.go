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
