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
	switch {
	case n >= 4 && string(m[:4]) == elf.ELFMAG:
		return KindELF
	case n == 8 && string(m[:]) == arMagic:
		return KindArchive
	case n == 8 && string(m[:]) == arThinMagic:
		return KindThinArchive
	}
	return KindOther
}

// SniffFile opens path, classifies it by its magic and closes it.
func SniffFile(path string) (FileKind, error) {
	fh, err := OpenRead(path)
	if err != nil {
		return KindOther, err
	}
	defer fh.Close()
	return Sniff(fh), nil
}
