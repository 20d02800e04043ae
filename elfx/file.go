package elfx

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/rocmdoctor/rocmdoctor/internal/regfile"
	"github.com/rocmdoctor/rocmdoctor/internal/saferio"
)

// Caps on how much of a file is materialised in memory for one table. They
// are far above anything seen in real libraries (libLLVM-15.so.1 has a 3 MB
// .dynstr) and exist so that a hostile size field cannot exhaust memory.
const (
	maxTableBytes = 1 << 30
	maxInterp     = 4096
)

// Header holds the ELF file header with readable accessors.
type Header struct {
	Class      elf.Class
	Data       elf.Data
	OSABI      elf.OSABI
	ABIVersion uint8
	Type       elf.Type
	Machine    elf.Machine
	Flags      uint32 // e_flags
	Entry      uint64
	// AMDGPU is the decoded processor and code-object version when Machine
	// is EM_AMDGPU, nil otherwise.
	AMDGPU *AMDGPUTarget
}

// Identity names the class and machine as a link or load sees them
// ("ELF64 EM_X86_64"), with the target ID of an AMDGPU code object
// ("ELF64 EM_AMDGPU gfx906").
func (h Header) Identity() string {
	s := h.ClassName() + " " + h.MachineName()
	if h.AMDGPU != nil {
		s += " " + h.AMDGPU.TargetID()
	}
	return s
}

// ClassName is "ELF32" or "ELF64".
func (h Header) ClassName() string {
	switch h.Class {
	case elf.ELFCLASS32:
		return "ELF32"
	case elf.ELFCLASS64:
		return "ELF64"
	}
	return h.Class.String()
}

// DataName is "LSB" or "MSB".
func (h Header) DataName() string {
	switch h.Data {
	case elf.ELFDATA2LSB:
		return "LSB"
	case elf.ELFDATA2MSB:
		return "MSB"
	}
	return h.Data.String()
}

// MachineName is the spec spelling of e_machine, e.g. "EM_X86_64", "EM_AMDGPU".
func (h Header) MachineName() string { return MachineName(h.Machine) }

// OSABIName is the spec spelling of EI_OSABI including the AMDGPU values.
func (h Header) OSABIName() string { return OSABIName(h.OSABI) }

// TypeName is "ET_DYN", "ET_EXEC", ….
func (h Header) TypeName() string { return h.Type.String() }

// Describe is a one-line summary such as "ELF64 LSB ET_DYN EM_X86_64".
func (h Header) Describe() string {
	s := fmt.Sprintf("%s %s %s %s", h.ClassName(), h.DataName(), h.TypeName(), h.MachineName())
	if h.AMDGPU != nil {
		s += " " + h.AMDGPU.String()
	}
	return s
}

// MachineName is the spec spelling of m, e.g. "EM_X86_64".
func MachineName(m elf.Machine) string {
	if m == elf.EM_AMDGPU {
		return "EM_AMDGPU"
	}
	return m.String()
}

// OSABI values used by AMDGPU code objects.
const (
	ELFOSABI_AMDGPU_HSA    elf.OSABI = 64
	ELFOSABI_AMDGPU_PAL    elf.OSABI = 65
	ELFOSABI_AMDGPU_MESA3D elf.OSABI = 66
)

// OSABIName is the spec spelling of o, including the AMDGPU values.
func OSABIName(o elf.OSABI) string {
	switch o {
	case ELFOSABI_AMDGPU_HSA:
		return "ELFOSABI_AMDGPU_HSA"
	case ELFOSABI_AMDGPU_PAL:
		return "ELFOSABI_AMDGPU_PAL"
	case ELFOSABI_AMDGPU_MESA3D:
		return "ELFOSABI_AMDGPU_MESA3D"
	}
	return o.String()
}

// File is an open ELF file. Its tables are read lazily on first use.
type File struct {
	Header
	// Path is the name the file was opened under ("" for NewFile).
	Path string
	// Size is the size of the input in bytes.
	Size int64

	ef *elf.File
	r  io.ReaderAt
	bo binary.ByteOrder
	fh *handle // set by Open: closed by Close, mapped by DynamicSymbolTable
	fi os.FileInfo

	dyn    *Dynamic
	dynErr error
	// tables caches string tables by (offset, size): .dynstr is shared by
	// the dynamic section, .dynsym and the version sections, and is
	// several megabytes in libLLVM.
	tables map[[2]int64][]byte
	// synth holds the dynamic symbol sections made from the dynamic
	// segment for a file without a .dynsym header (dynsections.go).
	synth     []*elf.Section
	synthDone bool
	// window holds the file's bytes from windowOff, read in one piece
	// when the dynamic symbol tables were found through the dynamic
	// segment; readRange answers from it without copying.
	window    []byte
	windowOff int64
	// segments: opened by OpenSegments, without the section headers;
	// shdrErr is what SectionHeaderError found in them.
	segments    bool
	shdrChecked bool
	shdrErr     error
	reads       readSizes // how large the first reads are
}

// Open opens the named file. The caller must Close it.
func Open(path string) (*File, error) {
	h, st, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	return openFile(h, newBlockReader(h, st.Size()), st, path, defaultReads())
}

// openRegular opens path, which must be a regular file, and stats it.
func openRegular(path string) (*handle, os.FileInfo, error) {
	h, err := openHandle(path)
	if err != nil {
		return nil, nil, err
	}
	st, err := h.stat()
	if err != nil {
		h.Close()
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		h.Close()
		return nil, nil, regfile.NotRegular(path, st.Mode())
	}
	return h, st, nil
}

// OpenSegments is Open for what the dynamic loader reads: the ELF header,
// the program headers and what they point to (PT_INTERP, PT_DYNAMIC and
// the strings it names). The section header table is not read, so the
// File has no sections, as a file stripped of them has none (and a
// damaged section table does not stop it, as it does not stop ld.so).
// Resolving a closure needs no more: parsing every library's sections
// was a fifth of resolving libamd_comgr.so.2 and most of what it
// allocated.
func OpenSegments(path string) (*File, error) {
	h, st, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	return openSegments(h, newBlockReader(h, st.Size()), st, path, defaultReads())
}

// openSegments is openFile without the section header table.
func openSegments(h *handle, br *blockReader, st os.FileInfo, path string, reads readSizes) (*File, error) {
	var ident [elf.EI_NIDENT]byte
	br.ReadAt(ident[:], 0) // newFile reports a file too short for it
	f, err := newFileReads(hideSections{br, elf.Class(ident[elf.EI_CLASS]) == elf.ELFCLASS32}, st.Size(), path, reads)
	if err != nil {
		br.release()
		h.Close()
		return nil, err
	}
	f.r = br
	f.fh, f.fi = h, st
	f.segments = true
	return f, nil
}

// hideSections reads r with the ELF header's section header table
// fields (e_shoff, e_shnum, e_shstrndx) read as zero: debug/elf then
// reads no section headers.
type hideSections struct {
	r    io.ReaderAt
	is32 bool // ELFCLASS32: the fields lie elsewhere
}

func (h hideSections) ReadAt(p []byte, off int64) (int, error) {
	n, err := h.r.ReadAt(p, off)
	if off >= 64 || n == 0 {
		return n, err
	}
	fields := [][2]int64{{40, 8}, {60, 2}, {62, 2}} // ELF64: e_shoff, e_shnum, e_shstrndx
	if h.is32 {
		fields = [][2]int64{{32, 4}, {48, 2}, {50, 2}}
	}
	for _, fl := range fields {
		for i := max(fl[0], off); i < fl[0]+fl[1] && i < off+int64(n); i++ {
			p[i-off] = 0
		}
	}
	return n, err
}

// openFile parses an opened file read through br; the File owns h, which
// is closed on failure.
func openFile(h *handle, br *blockReader, st os.FileInfo, path string, reads readSizes) (*File, error) {
	f, err := newFileReads(br, st.Size(), path, reads)
	if err != nil {
		br.release()
		h.Close()
		return nil, err
	}
	f.fh, f.fi = h, st
	return f, nil
}

// FileInfo is what Open found when it opened the file (device, inode,
// size, times), or nil for a File made by NewFile.
func (f *File) FileInfo() os.FileInfo { return f.fi }

// NewFile reads the ELF header of r. The size of r is taken from a Size or
// Seek method when r has one; otherwise reads past the end fail as they go.
func NewFile(r io.ReaderAt) (*File, error) {
	size, ok := saferio.Size(r)
	if !ok {
		size = math.MaxInt64
	}
	return newFile(r, size, "")
}

// NewFileSize is NewFile with an explicit size and a name for errors.
func NewFileSize(r io.ReaderAt, size int64, name string) (*File, error) {
	return newFile(r, size, name)
}

// Close closes the underlying file when the File was made by Open.
func (f *File) Close() error {
	if f.fh == nil {
		return nil
	}
	err := f.fh.Close()
	f.fh = nil
	if br, ok := f.r.(*blockReader); ok {
		br.release()
	}
	return err
}

// ELF returns the debug/elf view of the file for callers that need its
// section table directly.
func (f *File) ELF() *elf.File { return f.ef }

// ByteOrder is the file's byte order.
func (f *File) ByteOrder() binary.ByteOrder { return f.bo }

// ReaderAt is the input the file reads from.
func (f *File) ReaderAt() io.ReaderAt { return f.r }

// guard turns a panic inside debug/elf into a FormatError.
func guard(path string, what string, err *error) {
	if r := recover(); r != nil {
		*err = &FormatError{Path: path, Offset: -1, What: what, Err: fmt.Errorf("debug/elf: %v", r)}
	}
}

// byteOrder is the byte order of an EI_DATA value, nil for an unknown one.
func byteOrder(d elf.Data) binary.ByteOrder {
	switch d {
	case elf.ELFDATA2LSB:
		return binary.LittleEndian
	case elf.ELFDATA2MSB:
		return binary.BigEndian
	}
	return nil
}

func newFile(r io.ReaderAt, size int64, path string) (*File, error) {
	return newFileReads(r, size, path, defaultReads())
}

func newFileReads(r io.ReaderAt, size int64, path string, reads readSizes) (f *File, err error) {
	f = &File{Path: path, Size: size, r: r, reads: reads}
	var ident [elf.EI_NIDENT]byte
	if n, _ := r.ReadAt(ident[:], 0); n < 4 || string(ident[:4]) != elf.ELFMAG {
		return nil, fmt.Errorf("%s: %w%s", nameOr(path), ErrNotELF, notELFKind(ident[:n]))
	} else if n < len(ident) {
		return nil, f.formatErr(0, "ELF identification", fmt.Errorf("the file is %d bytes, shorter than the %d-byte identification: %w", n, len(ident), io.ErrUnexpectedEOF))
	}
	f.Class = elf.Class(ident[elf.EI_CLASS])
	f.Data = elf.Data(ident[elf.EI_DATA])
	f.OSABI = elf.OSABI(ident[elf.EI_OSABI])
	f.ABIVersion = ident[elf.EI_ABIVERSION]
	if f.bo = byteOrder(f.Data); f.bo == nil {
		return nil, f.formatErr(int64(elf.EI_DATA), "ELF identification", fmt.Errorf("unknown data encoding %d", ident[elf.EI_DATA]))
	}
	var hdrSize int64
	switch f.Class {
	case elf.ELFCLASS32:
		hdrSize = 52
	case elf.ELFCLASS64:
		hdrSize = 64
	default:
		return nil, f.formatErr(int64(elf.EI_CLASS), "ELF identification", fmt.Errorf("unknown class %d", ident[elf.EI_CLASS]))
	}
	hdr, err := saferio.ReadAt(r, size, 0, hdrSize, 0)
	if err != nil {
		return nil, f.formatErr(0, "ELF header", err)
	}
	f.Type = elf.Type(f.bo.Uint16(hdr[16:]))
	f.Machine = elf.Machine(f.bo.Uint16(hdr[18:]))
	if f.Class == elf.ELFCLASS32 {
		f.Entry = uint64(f.bo.Uint32(hdr[24:]))
		f.Flags = f.bo.Uint32(hdr[36:])
	} else {
		f.Entry = f.bo.Uint64(hdr[24:])
		f.Flags = f.bo.Uint32(hdr[48:])
	}
	if f.Machine == elf.EM_AMDGPU {
		t := DecodeAMDGPU(f.Flags, f.OSABI, f.ABIVersion)
		t.readNotes(r, 0, size, hdr)
		f.AMDGPU = &t
	}
	sr := io.NewSectionReader(r, 0, size)
	func() {
		defer guard(path, "ELF header", &err)
		f.ef, err = elf.NewFile(sr)
	}()
	if err != nil {
		var fe *elf.FormatError
		if errors.As(err, &fe) {
			return nil, &FormatError{Path: path, Offset: formatErrOffset(fe), What: "ELF structure", Err: err}
		}
		if _, ok := err.(*FormatError); ok {
			return nil, err
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			// debug/elf says only "EOF": name the table that runs past
			// the end of the file, as readelf does.
			if te := f.truncation(hdr); te != nil {
				return nil, te
			}
		}
		return nil, f.formatErr(0, "ELF structure", err)
	}
	return f, nil
}

// notELFKind says what a file that is not ELF is, when its first bytes
// tell (an archive handed to a command that reads ELF files), or "".
func notELFKind(head []byte) string {
	switch kindOf(head) {
	case KindArchive:
		return " but an ar archive (a static library)"
	case KindThinArchive:
		return " but a thin ar archive (a static library)"
	}
	return ""
}

// truncation names the first of the tables debug/elf reads at open (the
// program headers, the section headers, the section name table) that
// runs past the end of the file, from the ELF header hdr; nil when all
// lie inside it.
func (f *File) truncation(hdr []byte) error {
	bo, is32 := f.bo, f.Class == elf.ELFCLASS32
	var phoff, shoff uint64
	at := 52 // e_ehsize; the counts and sizes follow it
	if is32 {
		phoff, shoff, at = uint64(bo.Uint32(hdr[28:])), uint64(bo.Uint32(hdr[32:])), 40
	} else {
		phoff, shoff = bo.Uint64(hdr[32:]), bo.Uint64(hdr[40:])
	}
	phentsize, phnum := uint64(bo.Uint16(hdr[at+2:])), uint64(bo.Uint16(hdr[at+4:]))
	shentsize, shnum := uint64(bo.Uint16(hdr[at+6:])), uint64(bo.Uint16(hdr[at+8:]))
	shstrndx := uint64(bo.Uint16(hdr[at+10:]))
	size := uint64(f.Size)
	past := func(what string, off, n, entsize uint64) error {
		if n == 0 || entsize == 0 || n > math.MaxUint64/entsize || off > math.MaxUint64-n*entsize || off+n*entsize <= size {
			return nil
		}
		return f.formatErr(int64(min(off, math.MaxInt64)), what, fmt.Errorf("%d entries of %d bytes end at 0x%x, past the end of the file (%d bytes): %s", n, entsize, off+n*entsize, size, cutOrCorrupt(off, size)))
	}
	// shdr reads section header i, when it lies in the file.
	shdr := func(i uint64) (h rawShdr, ok bool) {
		want := uint64(64)
		if is32 {
			want = 40
		}
		// i < 2^32 and shentsize < 2^16: no overflow.
		if shentsize < want || shoff > size || (i+1)*shentsize > size-shoff {
			return h, false
		}
		b := make([]byte, want)
		if n, _ := f.r.ReadAt(b, int64(shoff+i*shentsize)); n < len(b) {
			return h, false
		}
		return decodeShdr(bigEndian(f.Data == elf.ELFDATA2MSB), b, is32), true
	}
	// Counts too large for the header are in section 0 (extended
	// numbering).
	sec0, have0 := shdr(0)
	if phnum == 0xffff && have0 {
		phnum = sec0.info
	}
	if err := past("program header table", phoff, phnum, phentsize); err != nil {
		return err
	}
	if shnum == 0 && shoff != 0 && have0 {
		shnum = sec0.size
	}
	if err := past("section header table", shoff, shnum, shentsize); err != nil {
		return err
	}
	if shstrndx == uint64(elf.SHN_XINDEX) && have0 {
		shstrndx = sec0.link
	}
	if shstrndx == 0 || shstrndx >= shnum {
		return nil
	}
	h, ok := shdr(shstrndx)
	if !ok || h.typ == elf.SHT_NOBITS || h.off > math.MaxUint64-h.size || h.off+h.size <= size {
		return nil
	}
	return f.formatErr(int64(min(h.off, math.MaxInt64)), "section name table", fmt.Errorf("%d bytes end at 0x%x, past the end of the file (%d bytes): %s", h.size, h.off+h.size, size, cutOrCorrupt(h.off, size)))
}

// rawShdr is a section header's fields as they are in the file.
type rawShdr struct {
	name, flags, off, size, link, info uint64
	typ                                elf.SectionType
}

// decodeShdr decodes the section header at the start of b (40 bytes for
// ELF32, 64 for ELF64).
func decodeShdr(be bigEndian, b []byte, is32 bool) (h rawShdr) {
	h.name, h.typ = uint64(be.u32(b)), elf.SectionType(be.u32(b[4:]))
	if is32 {
		h.flags, h.off, h.size = uint64(be.u32(b[8:])), uint64(be.u32(b[16:])), uint64(be.u32(b[20:]))
		h.link, h.info = uint64(be.u32(b[24:])), uint64(be.u32(b[28:]))
	} else {
		h.flags, h.off, h.size = be.u64(b[8:]), be.u64(b[24:]), be.u64(b[32:])
		h.link, h.info = uint64(be.u32(b[40:])), uint64(be.u32(b[44:]))
	}
	return h
}

// cutOrCorrupt says what a table at off that runs past the end of a file of
// size bytes suggests: one that starts inside the file was cut short; one
// that starts past its end may as well have a corrupt offset.
func cutOrCorrupt(off, size uint64) string {
	if off < size {
		return "the file is truncated"
	}
	return "the file is truncated or its header is corrupt"
}

// formatErrOffset extracts the offset from debug/elf's error text, which has
// the form "... at offset 0x1234".
func formatErrOffset(fe *elf.FormatError) int64 {
	var off int64
	s := fe.Error()
	for i := len(s) - 1; i >= 2; i-- {
		if s[i-1] == '0' && s[i] == 'x' {
			if _, err := fmt.Sscanf(s[i-1:], "0x%x", &off); err == nil {
				return off
			}
		}
	}
	return -1
}

func nameOr(path string) string {
	if path == "" {
		return "<input>"
	}
	return path
}

// Prog is a program header.
type Prog = elf.ProgHeader

// Progs returns the program headers.
func (f *File) Progs() []Prog {
	out := make([]Prog, len(f.ef.Progs))
	for i, p := range f.ef.Progs {
		out[i] = p.ProgHeader
	}
	return out
}

// Interp returns the PT_INTERP path, or "" when the file has none.
func (f *File) Interp() (string, error) {
	for _, p := range f.ef.Progs {
		if p.Type != elf.PT_INTERP {
			continue
		}
		if p.Filesz > maxInterp {
			return "", f.formatErr(int64(p.Off), "PT_INTERP", fmt.Errorf("size %d exceeds %d", p.Filesz, maxInterp))
		}
		b, err := saferio.ReadAt(f.r, f.Size, int64(p.Off), int64(p.Filesz), maxInterp)
		if err != nil {
			return "", f.formatErr(int64(p.Off), "PT_INTERP", err)
		}
		if i := indexByte(b, 0); i >= 0 {
			b = b[:i]
		}
		return string(b), nil
	}
	return "", nil
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

// Stack describes PT_GNU_STACK.
type Stack struct {
	Present    bool // a PT_GNU_STACK header exists
	Executable bool // PF_X is set, or the header is absent (the loader then defaults to an executable stack on most targets)
}

// GNUStack reports the PT_GNU_STACK permissions.
func (f *File) GNUStack() Stack {
	for _, p := range f.ef.Progs {
		if p.Type == elf.PT_GNU_STACK {
			return Stack{Present: true, Executable: p.Flags&elf.PF_X != 0}
		}
	}
	return Stack{Executable: f.Type == elf.ET_EXEC || f.Type == elf.ET_DYN}
}

// OffsetOf maps a virtual address to its file offset through the PT_LOAD
// segments (false for an address no segment holds file bytes for).
func (f *File) OffsetOf(addr uint64) (int64, bool) {
	off, _, ok := f.vaddrToOffset(addr)
	return off, ok
}

// vaddrToOffset maps a virtual address to a file offset through PT_LOAD,
// returning the number of file-backed bytes that follow it in that segment.
func (f *File) vaddrToOffset(addr uint64) (off int64, avail uint64, ok bool) {
	for _, p := range f.ef.Progs {
		if p.Type != elf.PT_LOAD {
			continue
		}
		if addr >= p.Vaddr && addr-p.Vaddr < p.Filesz {
			d := addr - p.Vaddr
			o := p.Off + d
			if o < p.Off || o > uint64(f.Size) {
				return 0, 0, false
			}
			return int64(o), p.Filesz - d, true
		}
	}
	return 0, 0, false
}

// readStrings reads a string table through the per-file cache.
// ForgetTables drops the string tables the file has cached, for callers
// that hold a large file open but are done with them.
func (f *File) ForgetTables() { f.tables = nil }

func (f *File) readStrings(off int64, n uint64, what string) ([]byte, error) {
	key := [2]int64{off, int64(n)}
	if b, ok := f.tables[key]; ok {
		return b, nil
	}
	b, err := f.readRange(off, n, what)
	if err != nil {
		return nil, err
	}
	if f.tables == nil {
		f.tables = map[[2]int64][]byte{}
	}
	f.tables[key] = b
	return b, nil
}

// strTab is a string table at (off, size) of the file, read string by
// string unless it is already in memory (b).
type strTab struct {
	f    *File
	off  int64
	size uint64
	b    []byte
}

// strTab returns the string table at off: the cached copy when the file
// has read it whole, otherwise a reader that fetches one string at a time.
func (f *File) strTab(off int64, size uint64) strTab {
	return strTab{f: f, off: off, size: size, b: f.tables[[2]int64{off, int64(size)}]}
}

// at returns the NUL-terminated string at offset o of the table.
func (t strTab) at(o uint64) (string, bool) {
	if t.b != nil || t.f == nil {
		return saferio.CString(t.b, o)
	}
	if o >= t.size {
		return "", false
	}
	var out []byte
	const chunk = 64 // most names are shorter; a longer one takes a read per 64 bytes
	for pos := o; pos < t.size; pos += chunk {
		n := min(uint64(chunk), t.size-pos)
		b, err := saferio.ReadAt(t.f.r, t.f.Size, t.off+int64(pos), int64(n), 0)
		if err != nil {
			return "", false
		}
		if i := indexByte(b, 0); i >= 0 {
			return string(append(out, b[:i]...)), true
		}
		out = append(out, b...)
	}
	return "", false
}

// inWindow is the n bytes at off when the window holds them (a view: the
// window is never written).
func (f *File) inWindow(off int64, n uint64) ([]byte, bool) {
	if f.window == nil || off < f.windowOff || uint64(off-f.windowOff) > uint64(len(f.window)) || n > uint64(len(f.window))-uint64(off-f.windowOff) {
		return nil, false
	}
	i := uint64(off - f.windowOff)
	return f.window[i : i+n : i+n], true
}

// readRange reads a table of n bytes at off, bounded by the file size and
// maxTableBytes.
func (f *File) readRange(off int64, n uint64, what string) ([]byte, error) {
	if n > maxTableBytes {
		return nil, f.formatErr(off, what, fmt.Errorf("size %d exceeds limit %d", n, maxTableBytes))
	}
	if b, ok := f.inWindow(off, n); ok {
		return b, nil
	}
	b, err := saferio.ReadAt(f.r, f.Size, off, int64(n), maxTableBytes)
	if err != nil {
		return nil, f.formatErr(off, what, err)
	}
	return b, nil
}
