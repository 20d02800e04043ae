package elfx

import (
	"io"
	"unsafe"
)

// MapAlways makes DynamicSymbolTable map every file, however small its
// tables, until the returned function is called.
func MapAlways() (restore func()) {
	old := smallTables
	smallTables = 0
	return func() { smallTables = old }
}

// Mapped reports whether the table reads a mapping of its file.
func (t *SymbolTable) Mapped() bool { return t.m != nil }

// TinyDynamicReads makes the reads of GNU hash chains and version tables
// found through the dynamic segment start at one entry and one byte, and
// not from a window read first, so that every table takes the reads that
// grow, until restore is called.
func TinyDynamicReads() (restore func()) {
	c, v, w := chainReadStart, versionReadStart, noWindow
	chainReadStart, versionReadStart, noWindow = 1, 1, true
	return func() { chainReadStart, versionReadStart, noWindow = c, v, w }
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

// SmallDlopenWindow makes DlopenNames read sections n bytes at a time,
// until restore is called.
func SmallDlopenWindow(n int64) (restore func()) {
	old := dlopenWindow
	dlopenWindow = n
	return func() { dlopenWindow = old }
}

// ParseDlopenNote is parseDlopenNote.
func ParseDlopenNote(desc []byte) ([]DlopenDep, error) { return parseDlopenNote(desc, 0) }

// CopiedSymbolTable is DynamicSymbolTable read into memory, whatever the
// file: the way the table is made for a File that was not opened from a
// path.
func (f *File) CopiedSymbolTable() (*SymbolTable, error) { return f.symbolTable(nil) }
