package elfx

import (
	"debug/elf"
	"io"
	"math"
	"slices"
	"sync"
)

// The dynamic loader never reads section headers: it finds the dynamic
// symbol table, its strings, hash tables and version tables through the
// dynamic segment (DT_SYMTAB, DT_STRTAB, DT_GNU_HASH, DT_VERSYM, …). A file
// whose section headers were stripped (sstrip, some vendor packers) or
// whose .dynsym header is missing still loads and binds, so its symbols
// are read the same way here, as readelf -D does: without this such a
// library defined nothing and needed nothing, and every reference to it
// looked unresolved while its own undefined symbols went unchecked.

// SymbolSections is the section table the dynamic symbol readers use:
// the file's section headers when it has a .dynsym one, else sections
// made from the dynamic segment (.dynsym, .dynstr, .gnu.version,
// .gnu.version_r, .gnu.version_d, .gnu.hash, .hash; index 0 the null
// section, Link fields between them, addresses and offsets, no data
// readers). Editors that must know every reference to .dynstr read the
// tables through it.
func (f *File) SymbolSections() []*elf.Section {
	if f.ef.SectionByType(elf.SHT_DYNSYM) != nil {
		return f.ef.Sections
	}
	if !f.synthDone {
		f.synth, f.synthDone = f.dynamicSections(), true
		if f.synth == nil && f.segments {
			f.synth = f.sectionHeaders()
		}
	}
	return f.synth
}

// sectionHeaders reads the section header table of a file opened without
// it (OpenSegments) whose dynamic segment gave no symbol table (no hash
// table to count the symbols by): its .dynsym header, when it has one, is
// read as Open would. Nil when there is none or the table is damaged.
func (f *File) sectionHeaders() (secs []*elf.Section) {
	defer func() {
		if recover() != nil {
			secs = nil // debug/elf on a corrupt table: as unreadable
		}
	}()
	ef, err := elf.NewFile(io.NewSectionReader(f.r, 0, f.Size))
	if err != nil || ef.SectionByType(elf.SHT_DYNSYM) == nil {
		return nil
	}
	return ef.Sections
}

// SymbolSection is the first section of type t in SymbolSections, or nil.
func (f *File) SymbolSection(t elf.SectionType) *elf.Section {
	for _, s := range f.SymbolSections() {
		if s.Type == t {
			return s
		}
	}
	return nil
}

// dynamicSections makes the dynamic symbol sections from the dynamic
// segment, or returns nil when it has no usable DT_SYMTAB. Sizes the
// dynamic section does not give are derived as the loader's users do:
// the number of symbols from DT_HASH's nchain or by walking DT_GNU_HASH's
// last chain, the version tables' extents by walking their entries.
func (f *File) dynamicSections() []*elf.Section {
	d, err := f.Dynamic()
	if err != nil {
		return nil
	}
	at := func(tag elf.DynTag) (off int64, avail uint64, ok bool) {
		v, ok := d.Value(tag)
		if !ok || v == 0 {
			return 0, 0, false
		}
		return f.vaddrToOffset(v)
	}
	addr := func(tag elf.DynTag) uint64 { v, _ := d.Value(tag); return v }
	entsz := uint64(16)
	if f.Class == elf.ELFCLASS64 {
		entsz = 24
	}
	if v, ok := d.Value(elf.DT_SYMENT); ok && v != entsz {
		return nil
	}
	symOff, symAvail, ok := at(elf.DT_SYMTAB)
	if !ok {
		return nil
	}
	strOff, strAvail, ok := at(elf.DT_STRTAB)
	strSize, hasSize := d.Value(elf.DT_STRSZ)
	if !ok || !hasSize || strSize > strAvail {
		return nil
	}
	f.readWindow(strOff, strSize, at)
	var nsyms, gnuSize, sysvSize uint64
	gnuOff, gnuAvail, hasGNU := at(elf.DT_GNU_HASH)
	sysvOff, sysvAvail, hasSysV := at(elf.DT_HASH)
	if hasSysV {
		nsyms, sysvSize = f.sysvHashCount(sysvOff, sysvAvail)
	}
	if hasGNU {
		n, size := f.gnuHashCount(gnuOff, gnuAvail)
		if size > 0 && nsyms == 0 {
			nsyms = n
		}
		gnuSize = size
	}
	nsyms = min(nsyms, symAvail/entsz)
	if nsyms == 0 {
		return nil
	}
	// At most eight sections, made in one piece (a scan makes them for
	// every file).
	slab := make([]elf.Section, 8)
	secs := make([]*elf.Section, 1, 8)
	secs[0] = &slab[0]
	// Address and alignment as the linker gives them: word-aligned
	// tables, bytes for strings, half-words for .gnu.version.
	word := uint64(4)
	if f.Class == elf.ELFCLASS64 {
		word = 8
	}
	add := func(name string, t elf.SectionType, tag elf.DynTag, off int64, size uint64, link int, info uint32, ent, align uint64) int {
		s := &slab[len(secs)]
		s.SectionHeader = elf.SectionHeader{Name: name, Type: t, Flags: elf.SHF_ALLOC, Addr: addr(tag), Offset: uint64(off), Size: size, FileSize: size,
			Link: uint32(link), Info: info, Addralign: align, Entsize: ent}
		secs = append(secs, s)
		return len(secs) - 1
	}
	strs := f.strTab(strOff, strSize)
	dynstr := add(".dynstr", elf.SHT_STRTAB, elf.DT_STRTAB, strOff, strSize, 0, 0, 0, 1)
	dynsym := add(".dynsym", elf.SHT_DYNSYM, elf.DT_SYMTAB, symOff, nsyms*entsz, dynstr, 1, entsz, word)
	if off, avail, ok := at(elf.DT_VERSYM); ok && avail >= nsyms*2 {
		add(".gnu.version", elf.SHT_GNU_VERSYM, elf.DT_VERSYM, off, nsyms*2, dynsym, 0, 2, 2)
	}
	if off, avail, ok := at(elf.DT_VERNEED); ok {
		n, _ := d.Value(elf.DT_VERNEEDNUM)
		add(".gnu.version_r", elf.SHT_GNU_VERNEED, elf.DT_VERNEED, off, f.versionExtent(off, avail, strs, false), dynstr, uint32(n), 0, word)
	}
	if off, avail, ok := at(elf.DT_VERDEF); ok {
		n, _ := d.Value(elf.DT_VERDEFNUM)
		add(".gnu.version_d", elf.SHT_GNU_VERDEF, elf.DT_VERDEF, off, f.versionExtent(off, avail, strs, true), dynstr, uint32(n), 0, word)
	}
	if gnuSize > 0 {
		add(".gnu.hash", elf.SHT_GNU_HASH, elf.DT_GNU_HASH, gnuOff, gnuSize, dynsym, 0, 0, word)
	}
	if sysvSize > 0 {
		add(".hash", elf.SHT_HASH, elf.DT_HASH, sysvOff, sysvSize, dynsym, 0, 4, word)
	}
	return secs
}

// windowSlack is how far past the last table's start, or the end of the
// string table when it comes last, the window reaches: the tables whose
// sizes are not in the dynamic section (the symbols, their versions and
// the version tables) come before the string table in what GNU ld
// writes, except the version tables, a few hundred bytes; lld, gold and
// mold put the string table last.
const windowSlack = 2 << 10

// readWindow reads the dynamic symbol tables in one piece when they lie
// together, as they do in what linkers write, so that finding their
// extents and the table made from them (DynamicSymbolTable reads the same
// span) copy nothing more: read one by one, a scan of /usr/lib
// allocated 4 MB more for them than through the section headers. What
// the window misses is read as before.
func (f *File) readWindow(strOff int64, strSize uint64, at func(elf.DynTag) (int64, uint64, bool)) {
	lo, hi := strOff, strOff+int64(strSize)
	for _, tag := range []elf.DynTag{elf.DT_SYMTAB, elf.DT_GNU_HASH, elf.DT_HASH, elf.DT_VERSYM, elf.DT_VERNEED, elf.DT_VERDEF} {
		if off, _, ok := at(tag); ok {
			lo, hi = min(lo, off), max(hi, off)
		}
	}
	hi = min(hi+windowSlack, f.Size)
	if f.reads.noWindow || lo < 0 || hi <= lo || uint64(hi-lo) > f.reads.smallTables {
		return
	}
	if b, err := f.readRange(lo, uint64(hi-lo), "dynamic symbol tables"); err == nil {
		f.window, f.windowOff = b, lo
		if f.tables == nil {
			f.tables = map[[2]int64][]byte{}
		}
		f.tables[[2]int64{strOff, int64(strSize)}], _ = f.inWindow(strOff, strSize)
	}
}

// sysvHashCount reads DT_HASH's header: the number of symbols (nchain)
// and the table's size, or zeros when it does not fit.
func (f *File) sysvHashCount(off int64, avail uint64) (nsyms, size uint64) {
	b, err := f.readRange(off, min(avail, 8), ".hash")
	if err != nil || len(b) < 8 {
		return 0, 0
	}
	nb, nc := uint64(f.bo.Uint32(b)), uint64(f.bo.Uint32(b[4:]))
	size = (2 + nb + nc) * 4
	if size > avail { // nb 0 still counts the symbols (ld.so searches none: Searched)
		return 0, 0
	}
	return nc, size
}

// gnuHashCount finds the number of symbols DT_GNU_HASH covers: past the
// chain of the highest bucket's first symbol, to the entry that ends it
// (low bit set). It returns the table's size too, zeros when malformed.
func (f *File) gnuHashCount(off int64, avail uint64) (nsyms, size uint64) {
	hdr, err := f.readRange(off, min(avail, 16), ".gnu.hash")
	if err != nil || len(hdr) < 16 {
		return 0, 0
	}
	nb, symoff, bloom := uint64(f.bo.Uint32(hdr)), uint64(f.bo.Uint32(hdr[4:])), uint64(f.bo.Uint32(hdr[8:]))
	word := uint64(4)
	if f.Class == elf.ELFCLASS64 {
		word = 8
	}
	bucketsAt := 16 + bloom*word
	if bloom > avail/word || bucketsAt > avail || nb > (avail-bucketsAt)/4 {
		return 0, 0
	}
	if nb == 0 {
		return symoff, bucketsAt // nothing hashed: the symbols are those before symoffset
	}
	buckets, err := f.readRange(off+int64(bucketsAt), nb*4, ".gnu.hash")
	if err != nil {
		return 0, 0
	}
	last := uint64(0)
	for i := uint64(0); i < nb; i++ {
		last = max(last, uint64(f.bo.Uint32(buckets[4*i:])))
	}
	chainAt := bucketsAt + nb*4
	if last < symoff {
		return symoff, chainAt // no symbol is hashed
	}
	// The chain of the last bucket runs to an entry with the low bit set.
	// Chains are a few entries long: the reads start at 64 entries and
	// grow to 16 Ki entries.
	step := f.reads.chainStart
	for i := last - symoff; ; step = min(step*4, 16<<10) {
		at := chainAt + i*4
		if at >= avail {
			return 0, 0
		}
		b, err := f.readRange(off+int64(at), min(step*4, (avail-at)/4*4), ".gnu.hash")
		if err != nil || len(b) < 4 {
			return 0, 0
		}
		for j := 0; j+4 <= len(b); j, i = j+4, i+1 {
			if f.bo.Uint32(b[j:])&1 != 0 {
				return symoff + i + 1, chainAt + (i+1)*4
			}
		}
	}
}

// versionExtent is the size of the version table (.gnu.version_d when
// def, else .gnu.version_r) at off, whose names are in the string table
// strs: where the parser's walk of its entries ends. A table the parser
// rejects is given all that can be read of it (up to 1 MiB), and the
// parser reports where it breaks when the table is used.
//
// The walk starts on the first 4 KiB and reads four times more while it
// runs past what was read: a version table is a few hundred bytes, and
// reading the full 1 MiB for each one made a check of stripped libraries
// copy megabytes per file.
func (f *File) versionExtent(off int64, avail uint64, strs strTab, def bool) uint64 {
	limit := min(avail, 1<<20)
	start := min(limit, f.reads.versionStart)
	if off >= f.windowOff && f.window != nil && off-f.windowOff < int64(len(f.window)) {
		// What the window holds first: no read.
		start = min(limit, uint64(len(f.window))-uint64(off-f.windowOff))
	}
	for n := start; ; n = min(n*4, limit) {
		b, err := f.readRange(off, n, "version table")
		if err != nil {
			return 0
		}
		var end uint64
		if def {
			_, end, err = f.parseVersionDefs(off, b, strs)
		} else {
			_, end, err = f.parseVersionNeeds(off, b, strs)
		}
		if err == nil {
			return end
		}
		if n == limit {
			return uint64(len(b))
		}
	}
}

// SectionHeaderError is what Open and the symbol readers would report
// about the section header table of a file opened by OpenSegments, which
// does not read it: nil when they would accept it, and for a file opened
// by Open. A scan that parses files for what the loader reads still
// reports a truncated or corrupt section table (strip, objcopy and
// debuggers reject such a file even though ld.so loads it), and dynamic
// symbol sections that are not where the dynamic segment puts the
// tables. The table is read once, 1-2 KB, into nothing that is kept;
// only a table this look finds odd is parsed as Open parses it, and its
// dynamic symbol tables read through it, for the same error. The first
// call must come before Close.
func (f *File) SectionHeaderError() error {
	if !f.segments {
		return nil
	}
	if !f.shdrChecked {
		f.shdrChecked = true
		if !f.plainSectionHeaders() {
			f.shdrErr = f.sectionsError()
		}
	}
	return f.shdrErr
}

// sectionsError parses the file as Open does and reads its dynamic symbol
// tables through the section headers (as DynamicSymbolTable would after
// Open), and returns the first error.
func (f *File) sectionsError() error {
	whole, err := newFileReads(f.r, f.Size, f.Path, f.reads)
	if err != nil {
		return err
	}
	whole.fh, whole.fi = f.fh, f.fi // f's: whole is not closed
	_, err = whole.DynamicSymbolTable()
	return err
}

var shdrBuf = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

// symbolSectionTypes are the sections the dynamic symbol readers use.
var symbolSectionTypes = []elf.SectionType{elf.SHT_DYNSYM, elf.SHT_GNU_VERSYM, elf.SHT_GNU_VERDEF, elf.SHT_GNU_VERNEED, elf.SHT_GNU_HASH, elf.SHT_HASH}

// plainSectionHeaders reports whether the section header table is one
// Open and the symbol readers accept without doubt: inside the file, of
// the usual entry size and count fields, offsets and sizes debug/elf
// takes, no compressed section (whose header it reads), a section name
// table of type SHT_STRTAB inside the file, ending in NUL, that every
// name index is inside; and the dynamic symbol sections (with the string
// tables they link to) inside the file, where and as large as the
// dynamic segment makes the tables. False is no verdict: sectionsError decides.
func (f *File) plainSectionHeaders() bool {
	is32 := f.Class == elf.ELFCLASS32
	var hdr [64]byte
	if n, _ := f.r.ReadAt(hdr[:], 0); n < len(hdr) && !(is32 && n >= 52) {
		return false
	}
	bo := f.bo
	var shoff, entsize uint64
	at := 58 // e_shentsize
	if is32 {
		shoff, entsize, at = uint64(bo.Uint32(hdr[32:])), 40, 46
	} else {
		shoff, entsize = bo.Uint64(hdr[40:]), 64
	}
	shentsize, shnum, shstrndx := uint64(bo.Uint16(hdr[at:])), uint64(bo.Uint16(hdr[at+2:])), uint64(bo.Uint16(hdr[at+4:]))
	syn := f.SymbolSections() // from the dynamic segment
	if shnum == 0 {
		// No table (and no symbol sections to disagree), or extended
		// numbering (parsed).
		return shoff == 0
	}
	size := uint64(f.Size)
	// (A table at offset 0 with entries in it Open refuses: "invalid ELF
	// shnum for shoff=0".)
	if shentsize != entsize || shoff == 0 || shoff > size || shnum*entsize > size-shoff || shstrndx >= shnum || shstrndx >= uint64(elf.SHN_LORESERVE) {
		return false
	}
	bp := shdrBuf.Get().(*[]byte)
	defer shdrBuf.Put(bp)
	if uint64(cap(*bp)) < shnum*entsize {
		*bp = make([]byte, shnum*entsize)
	}
	tab := (*bp)[:shnum*entsize]
	if n, _ := f.r.ReadAt(tab, int64(shoff)); n < len(tab) {
		return false
	}
	be := bigEndian(f.Data == elf.ELFDATA2MSB)
	read := func(i uint64) (s rawShdr, ok bool) {
		s = decodeShdr(be, tab[i*entsize:], is32)
		return s, s.flags&uint64(elf.SHF_COMPRESSED) == 0 && s.off <= math.MaxInt64 && s.size <= math.MaxInt64
	}
	inFile := func(s rawShdr) bool { return s.off <= size && s.size <= size-s.off }
	var names uint64 // the name table's size, 0 without one
	if shstrndx != 0 {
		st, ok := read(shstrndx)
		if !ok || st.typ != elf.SHT_STRTAB || st.size == 0 || !inFile(st) {
			return false
		}
		var last [1]byte
		if n, _ := f.r.ReadAt(last[:], int64(st.off+st.size-1)); n < 1 || last[0] != 0 {
			return false
		}
		names = st.size
	}
	// synAt is where the dynamic segment puts the first section of
	// type t.
	synAt := func(t elf.SectionType) (off, size uint64, ok bool) {
		for _, s := range syn {
			if s.Type == t {
				return s.Offset, s.Size, true
			}
		}
		return 0, 0, false
	}
	strAt, strSize, hasStr := synAt(elf.SHT_STRTAB)
	seen := make([]bool, len(symbolSectionTypes))
	for i := uint64(0); i < shnum; i++ {
		s, ok := read(i)
		if !ok || (names > 0 && s.name >= names) {
			return false
		}
		k := slices.Index(symbolSectionTypes, s.typ)
		if k < 0 || seen[k] {
			continue
		}
		seen[k] = true
		if off, n, ok := synAt(s.typ); !ok || off != s.off || n != s.size || !inFile(s) {
			return false
		}
		if s.typ == elf.SHT_DYNSYM || s.typ == elf.SHT_GNU_VERDEF || s.typ == elf.SHT_GNU_VERNEED {
			if s.link >= shnum {
				return false
			}
			l, ok := read(s.link)
			if !ok || !hasStr || l.typ != elf.SHT_STRTAB || l.off != strAt || l.size != strSize || !inFile(l) {
				return false
			}
		}
	}
	return true
}
