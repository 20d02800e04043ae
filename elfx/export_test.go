package elfx

import (
	"io"
	"unsafe"
)

// MapAlways makes DynamicSymbolTable map f, however small its tables.
func (f *File) MapAlways() { f.reads.smallTables = 0 }

// Mapped reports whether the table reads a mapping of its file.
func (t *SymbolTable) Mapped() bool { return t.m != nil }

// OpenTinyReads is Open (OpenSegments when segments is set) with the
// reads of GNU hash chains and version tables found through the dynamic
// segment starting at one entry and one byte, and not from a window read
// first, so that every table takes the reads that grow.
func OpenTinyReads(path string, segments bool) (*File, error) {
	h, st, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	tiny := defaultReads()
	tiny.chainStart, tiny.versionStart, tiny.noWindow = 1, 1, true
	if segments {
		return openSegments(h, newBlockReader(h, st.Size()), st, path, tiny)
	}
	return openFile(h, newBlockReader(h, st.Size()), st, path, tiny)
}

// PlainSectionHeaders reports whether SectionHeaderError takes f's section
// header table as it is, without parsing it.
func (f *File) PlainSectionHeaders() bool { return f.plainSectionHeaders() }

// ViewsWindow reports whether t's tables are a view of the bytes f read
// in one piece when it found them through the dynamic segment.
func (t *SymbolTable) ViewsWindow(f *File) bool {
	if len(t.span) == 0 || len(f.window) == 0 {
		return false
	}
	base, end := &f.window[0], &f.window[len(f.window)-1]
	p := &t.span[0]
	return uintptr(unsafe.Pointer(p)) >= uintptr(unsafe.Pointer(base)) && uintptr(unsafe.Pointer(p)) <= uintptr(unsafe.Pointer(end))
}

// NewArchiveMembers is Probe.ArchiveMembers for an archive in memory,
// read through a block cache as a Probe reads the file.
func NewArchiveMembers(r io.ReaderAt, size int64, name string) (*Archive, error) {
	return newArchive(newBlockReader(r, size), size, name, false)
}

// SetDlopenWindow makes DlopenNames read f's sections n bytes at a time.
func (f *File) SetDlopenWindow(n int64) { f.reads.dlopenWindow = n }

// ParseDlopenNote is parseDlopenNote.
func ParseDlopenNote(desc []byte) ([]DlopenDep, error) { return parseDlopenNote(desc, 0) }

// CopiedSymbolTable is DynamicSymbolTable read into memory, whatever the
// file: the way the table is made for a File that was not opened from a
// path.
func (f *File) CopiedSymbolTable() (*SymbolTable, error) { return f.symbolTable(nil) }
