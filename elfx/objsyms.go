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
	if size < 0 {
		return false
	}
	b := objScratch.Get().(*objBufs)
	defer b.put()
	read := func(dst *[]byte, off, n uint64) bool {
		if off > uint64(size) || n > uint64(size)-off || n > maxTableBytes {
			return false
		}
		*dst = grow(*dst, n)
		got, _ := r.ReadAt(*dst, int64(off))
		return got == int(n)
	}
	if !read(&b.hdr, 0, 52) {
		return false
	}
	h := b.hdr
	if string(h[:4]) != elf.ELFMAG || h[elf.EI_VERSION] != byte(elf.EV_CURRENT) {
		return false
	}
	bo := byteOrder(elf.Data(h[elf.EI_DATA]))
	if bo == nil {
		return false
	}
	is64 := false
	switch elf.Class(h[elf.EI_CLASS]) {
	case elf.ELFCLASS32:
	case elf.ELFCLASS64:
		is64 = true
		if !read(&b.hdr, 0, 64) {
			return false
		}
		h = b.hdr
	default:
		return false
	}
	if elf.Type(bo.Uint16(h[16:])) != elf.ET_REL || elf.Version(bo.Uint32(h[20:])) != elf.EV_CURRENT {
		return false
	}
	var phoff, shoff, shentsize, phnum, shnum, shstrndx, entsize, symsize uint64
	if is64 {
		phoff, shoff = bo.Uint64(h[32:]), bo.Uint64(h[40:])
		phnum, shentsize, shnum, shstrndx = uint64(bo.Uint16(h[56:])), uint64(bo.Uint16(h[58:])), uint64(bo.Uint16(h[60:])), uint64(bo.Uint16(h[62:]))
		entsize, symsize = 64, 24
	} else {
		phoff, shoff = uint64(bo.Uint32(h[28:])), uint64(bo.Uint32(h[32:]))
		phnum, shentsize, shnum, shstrndx = uint64(bo.Uint16(h[44:])), uint64(bo.Uint16(h[46:])), uint64(bo.Uint16(h[48:])), uint64(bo.Uint16(h[50:]))
		entsize, symsize = 40, 16
	}
	// What debug/elf checks of the header (and no program headers or
	// extended numbering at all).
	if phoff > math.MaxInt64 || shoff > math.MaxInt64 || phnum != 0 {
		return false
	}
	if shnum == 0 {
		return shoff == 0 // no sections: no symbols
	}
	if shentsize != entsize || shstrndx >= shnum || shstrndx >= uint64(elf.SHN_LORESERVE) {
		return false
	}
	// The section headers, and the 8 bytes before them: the linkers and
	// assemblers put the section name table there, whose last byte is
	// looked at below.
	lead := min(shoff, 8)
	if !read(&b.shdrs, shoff-lead, lead+shnum*entsize) {
		return false
	}
	before, tab := b.shdrs[:lead], b.shdrs[lead:]
	shdr := func(i uint64) rawShdr { return decodeShdr(bo, tab[i*entsize:], !is64) }
	symtab, hasSymtab := uint64(0), false // the first SHT_SYMTAB, as Symbols takes it
	for i := range shnum {
		s := shdr(i)
		if s.off > math.MaxInt64 || s.size > math.MaxInt64 || s.flags&uint64(elf.SHF_COMPRESSED) != 0 {
			return false
		}
		if !hasSymtab && s.typ == elf.SHT_SYMTAB {
			symtab, hasSymtab = i, true
		}
	}
	// Section data Open or Symbols read: inside the file, not SHT_NOBITS.
	readable := func(s rawShdr) bool {
		return s.typ != elf.SHT_NOBITS && s.off <= uint64(size) && s.size <= uint64(size)-s.off
	}
	namesRead := false
	if shstrndx != 0 {
		st := shdr(shstrndx)
		if st.typ != elf.SHT_STRTAB || !readable(st) {
			return false
		}
		// Each name index must start a string that ends inside the table
		// (Open: "bad section name index"). In a table that ends in NUL
		// every index inside it does: one byte read, not the table.
		maxName := uint64(0)
		for i := range shnum {
			maxName = max(maxName, uint64(bo.Uint32(tab[i*entsize:])))
		}
		if maxName >= st.size {
			return false
		}
		var last [1]byte
		n := 0
		if at := st.off + st.size - 1; at < shoff && at >= shoff-lead {
			n = copy(last[:], before[at-(shoff-lead):])
		} else {
			n, _ = r.ReadAt(last[:], int64(at))
		}
		if n != 1 || last[0] != 0 {
			if !read(&b.names, st.off, st.size) {
				return false
			}
			for i := range shnum {
				if _, ok := saferio.CBytes(b.names, uint64(bo.Uint32(tab[i*entsize:]))); !ok {
					return false
				}
			}
			namesRead = true
		}
	}
	if !hasSymtab {
		return true // no .symtab: Symbols has none
	}
	st := shdr(symtab)
	if st.size == 0 || st.size%symsize != 0 || !readable(st) || st.link == 0 || st.link >= shnum {
		return false
	}
	str := shdr(st.link)
	if !readable(str) {
		return false
	}
	strs := b.names
	if st.link != shstrndx || !namesRead {
		if !read(&b.strs, str.off, str.size) {
			return false
		}
		strs = b.strs
	}
	if !bytes.Contains(strs, []byte(prefix)) {
		return true // no name can start with it
	}
	if !read(&b.syms, st.off, st.size) {
		return false
	}
	for e := b.syms[symsize:]; len(e) > 0; e = e[symsize:] {
		var name uint32
		var info uint8
		var shndx uint16
		if is64 {
			name, info, shndx = bo.Uint32(e), e[4], bo.Uint16(e[6:])
		} else {
			name, info, shndx = bo.Uint32(e), e[12], bo.Uint16(e[14:])
		}
		n, _ := saferio.CBytes(strs, uint64(name))
		if !bytes.HasPrefix(n, []byte(prefix)) {
			continue
		}
		fn(ObjectSymbol{Name: n, Bind: elf.ST_BIND(info), Type: elf.ST_TYPE(info), Section: elf.SectionIndex(shndx)})
	}
	return true
}
