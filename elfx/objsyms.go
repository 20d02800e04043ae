package elfx

import (
	"bytes"
	"debug/elf"
	"io"
	"math"
	"sync"

	"github.com/rocmdoctor/rocmdoctor/internal/saferio"
)

// ObjectSymbol is a symbol of a relocatable object's .symtab as
// EachObjectSymbol reports it. Name is only valid during the call.
type ObjectSymbol struct {
	Name    []byte
	Bind    elf.SymBind
	Type    elf.SymType
	Section elf.SectionIndex
}

// objScratch holds EachObjectSymbol's reads between calls: a static
// link line's archives have thousands of members.
var objScratch = sync.Pool{New: func() any { return new(objBufs) }}

type objBufs struct{ hdr, shdrs, names, strs, syms []byte }

// keptScratch bounds what the pools keep between calls: a buffer grown
// for an unusually large table is dropped.
const keptScratch = 8 << 20

func (b *objBufs) put() {
	for _, p := range []*[]byte{&b.hdr, &b.shdrs, &b.names, &b.strs, &b.syms} {
		if cap(*p) > keptScratch {
			*p = nil
		}
	}
	objScratch.Put(b)
}

// grow returns b resized to n bytes, reusing its array when it can.
func grow(b []byte, n uint64) []byte {
	if uint64(cap(b)) < n {
		return make([]byte, n)
	}
	return b[:n]
}

// EachObjectSymbol calls fn with each entry after the first of the
// .symtab of the relocatable ELF object read from r (size bytes) whose
// name starts with prefix, the names as Open and Symbols would decode them
// (an index out of the string table, or a string not ending in NUL, reads
// as ""). It reads the ELF header, the section headers (with the last
// byte of the section name table, which they usually follow), the string
// table and, when some name may start with prefix, the symbol table: a
// few reads, without decoding or copying what does not match.
// Checking LLVM's static archives for LLVMInitialize* names this way
// reads them several times faster than Open and Symbols.
//
// plain is false, and fn has not been called, for an object this reader
// does not read exactly as Open and Symbols do: anything but ET_REL, a
// header or section table Open would complain about, a compressed section,
// a symbol table Symbols would refuse, and the unusual (program headers,
// extended section numbering). The caller then reads the object with
// Open, which reports what is wrong with it.
func EachObjectSymbol(r io.ReaderAt, size int64, prefix string, fn func(ObjectSymbol)) (plain bool) {
	b := objScratch.Get().(*objBufs)
	defer b.put()
	o, ok := b.sections(r, size, false)
	if !ok {
		return false
	}
	if o.symtab == o.shnum {
		return true // no .symtab: Symbols has none
	}
	st := o.shdr(o.symtab) // the first SHT_SYMTAB, as Symbols takes it
	symsize := uint64(16)
	if o.is64 {
		symsize = 24
	}
	if st.size == 0 || st.size%symsize != 0 || !o.readable(st) || st.link == 0 || st.link >= o.shnum {
		return false
	}
	str := o.shdr(st.link)
	if !o.readable(str) {
		return false
	}
	strs := o.names
	if st.link != o.shstrndx || strs == nil {
		if !o.read(&b.strs, str.off, str.size) {
			return false
		}
		strs = b.strs
	}
	if !bytes.Contains(strs, []byte(prefix)) {
		return true // no name can start with it
	}
	if !o.read(&b.syms, st.off, st.size) {
		return false
	}
	for e := b.syms[symsize:]; len(e) > 0; e = e[symsize:] {
		var name uint32
		var info uint8
		var shndx uint16
		if o.is64 {
			name, info, shndx = o.be.u32(e), e[4], o.be.u16(e[6:])
		} else {
			name, info, shndx = o.be.u32(e), e[12], o.be.u16(e[14:])
		}
		n, _ := saferio.CBytes(strs, uint64(name))
		if !bytes.HasPrefix(n, []byte(prefix)) {
			continue
		}
		fn(ObjectSymbol{Name: n, Bind: elf.ST_BIND(info), Type: elf.ST_TYPE(info), Section: elf.SectionIndex(shndx)})
	}
	return true
}

// objSections is an object's header and section table as
// objBufs.sections read and checked them.
type objSections struct {
	r        io.ReaderAt
	size     int64
	be       bigEndian
	is64     bool
	machine  elf.Machine
	shnum    uint64
	shstrndx uint64
	entsize  uint64
	tab      []byte // the section headers
	names    []byte // the section name table, when it was read whole
	symtab   uint64 // the first SHT_SYMTAB section, shnum when none
	maxName  uint64 // the largest section name index
}

// scan checks each section header as Open does (offset and size fit in
// an int64, not compressed: what EachObjectSymbol leaves to Open) and
// notes the first SHT_SYMTAB and the largest name index. One pass over
// the table reading those five fields: decoding whole headers was most of
// the time reading LLVM's archives, whose objects have hundreds of
// sections each.
func (o *objSections) scan() bool {
	w, flagsAt, offAt := 8, 8, 24 // ELF64: off and size are adjacent
	if !o.is64 {
		w, flagsAt, offAt = 4, 8, 16
	}
	be := o.be
	o.symtab, o.maxName = o.shnum, 0
	for i := range o.shnum {
		h := o.tab[i*o.entsize : (i+1)*o.entsize]
		if off, size := be.word(h[offAt:], w), be.word(h[offAt+w:], w); off > math.MaxInt64 || size > math.MaxInt64 {
			return false
		}
		if be.word(h[flagsAt:], w)&uint64(elf.SHF_COMPRESSED) != 0 {
			return false
		}
		o.maxName = max(o.maxName, uint64(be.u32(h)))
		if o.symtab == o.shnum && elf.SectionType(be.u32(h[4:])) == elf.SHT_SYMTAB {
			o.symtab = i
		}
	}
	return true
}

func (o *objSections) shdr(i uint64) rawShdr {
	return decodeShdr(o.be, o.tab[i*o.entsize:], !o.is64)
}

// readable says whether Open reads section s's data: inside the file,
// not SHT_NOBITS.
func (o *objSections) readable(s rawShdr) bool {
	return s.typ != elf.SHT_NOBITS && s.off <= uint64(o.size) && s.size <= uint64(o.size)-s.off
}

// read reads n bytes at off into *dst, reusing its array.
func (o *objSections) read(dst *[]byte, off, n uint64) bool {
	// (An offset or size past MaxInt64 turns negative, which the check
	// refuses.)
	if saferio.CheckRead(o.size, int64(off), int64(n), maxTableBytes) != nil {
		return false
	}
	*dst = grow(*dst, n)
	return saferio.ReadFull(o.r, *dst, int64(off)) == nil
}

// sections reads and checks the ELF header and section table of the
// relocatable object read from r as Open would: ok is false where Open
// would complain, and for what EachObjectSymbol leaves to Open (see
// there). The section name table is read whole with names (o.names), else
// only where it does not end in NUL (a table that does holds every name
// index inside it). An object without sections has shnum 0.
func (b *objBufs) sections(r io.ReaderAt, size int64, names bool) (o objSections, ok bool) {
	o = objSections{r: uncached(r), size: size}
	// An ELF64 header is 64 bytes, an ELF32 one 52: one read for either.
	if size < 52 || !o.read(&b.hdr, 0, uint64(min(size, 64))) {
		return o, false
	}
	h := b.hdr
	if string(h[:4]) != elf.ELFMAG || h[elf.EI_VERSION] != byte(elf.EV_CURRENT) {
		return o, false
	}
	switch elf.Data(h[elf.EI_DATA]) {
	case elf.ELFDATA2LSB:
	case elf.ELFDATA2MSB:
		o.be = true
	default:
		return o, false
	}
	switch elf.Class(h[elf.EI_CLASS]) {
	case elf.ELFCLASS32:
	case elf.ELFCLASS64:
		o.is64 = true
		if len(h) < 64 {
			return o, false
		}
	default:
		return o, false
	}
	be := o.be
	if elf.Type(be.u16(h[16:])) != elf.ET_REL || elf.Version(be.u32(h[20:])) != elf.EV_CURRENT {
		return o, false
	}
	o.machine = elf.Machine(be.u16(h[18:]))
	var phoff, shoff, shentsize, phnum uint64
	if o.is64 {
		phoff, shoff = be.u64(h[32:]), be.u64(h[40:])
		phnum, shentsize, o.shnum, o.shstrndx = uint64(be.u16(h[56:])), uint64(be.u16(h[58:])), uint64(be.u16(h[60:])), uint64(be.u16(h[62:]))
		o.entsize = 64
	} else {
		phoff, shoff = uint64(be.u32(h[28:])), uint64(be.u32(h[32:]))
		phnum, shentsize, o.shnum, o.shstrndx = uint64(be.u16(h[44:])), uint64(be.u16(h[46:])), uint64(be.u16(h[48:])), uint64(be.u16(h[50:]))
		o.entsize = 40
	}
	// What debug/elf checks of the header (and no program headers or
	// extended numbering at all).
	if phoff > math.MaxInt64 || shoff > math.MaxInt64 || phnum != 0 {
		return o, false
	}
	if o.shnum == 0 {
		return o, shoff == 0
	}
	if shentsize != o.entsize || shoff == 0 || o.shstrndx >= o.shnum || o.shstrndx >= uint64(elf.SHN_LORESERVE) {
		return o, false
	}
	// The section headers, and the 8 bytes before them: the linkers and
	// assemblers put the section name table there, whose last byte is
	// looked at below.
	lead := min(shoff, 8)
	if !o.read(&b.shdrs, shoff-lead, lead+o.shnum*o.entsize) {
		return o, false
	}
	before := b.shdrs[:lead]
	o.tab = b.shdrs[lead:]
	if !o.scan() {
		return o, false
	}
	if o.shstrndx == 0 {
		return o, true // no section names
	}
	st := o.shdr(o.shstrndx)
	if st.typ != elf.SHT_STRTAB || !o.readable(st) {
		return o, false
	}
	// Each name index must start a string that ends inside the table
	// (Open: "bad section name index"). In a table that ends in NUL
	// every index inside it does: one byte read, not the table.
	if o.maxName >= st.size {
		return o, false
	}
	if !names {
		var last [1]byte
		n := 0
		if at := st.off + st.size - 1; at < shoff && at >= shoff-lead {
			n = copy(last[:], before[at-(shoff-lead):])
		} else {
			n, _ = r.ReadAt(last[:], int64(at))
		}
		if n == 1 && last[0] == 0 {
			return o, true
		}
	}
	if !o.read(&b.names, st.off, st.size) {
		return o, false
	}
	for i := range o.shnum {
		if _, ok := saferio.CBytes(b.names, uint64(be.u32(o.tab[i*o.entsize:]))); !ok {
			return o, false
		}
	}
	o.names = b.names
	return o, true
}

// ObjectWithoutDeviceCode reports that the relocatable object read from r
// (size bytes) certainly holds no device code that GPUCodeObjects would
// find in it: it is read as EachObjectSymbol reads objects (and as Open
// would read it), is not an AMDGPU code object, has no offload bundle
// section (.hip_fatbin, __CLANG_OFFLOAD_BUNDLE__*), and none of its data
// sections holds the ELF magic a raw code object starts with. False means
// it may hold some, or is not read plainly: open it and ask GPUCodeObjects.
// The members of a host library's archive are told apart this way without
// Open, whose section table parse was most of `gpus` over LLVM's archives.
func ObjectWithoutDeviceCode(r io.ReaderAt, size int64) bool {
	b := objScratch.Get().(*objBufs)
	defer b.put()
	o, ok := b.sections(r, size, true)
	if !ok || o.shnum == 0 || o.machine == elf.EM_AMDGPU {
		return false
	}
	for i := range o.shnum {
		s := o.shdr(i)
		if s.typ == elf.SHT_NOBITS || s.size == 0 || s.size > uint64(size) || s.off > uint64(size)-s.size {
			continue // as GPUCodeObjects: no data in the file
		}
		name := ""
		if o.names != nil {
			n, _ := saferio.CBytes(o.names, s.name)
			name = string(n)
		}
		switch {
		case isBundleSection(name):
			return false
		case s.typ == elf.SHT_PROGBITS && s.flags&uint64(elf.SHF_EXECINSTR) == 0 && isDataSection(name):
			scan := newMagicScanner(r, int64(s.off), int64(s.off+s.size), elf.ELFMAG)
			_, found, err := scan.next(int64(s.off))
			scan.release()
			if found || err != nil {
				return false
			}
		}
	}
	return true
}
