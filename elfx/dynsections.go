package elfx

import (
	"debug/elf"
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
	}
	return f.synth
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
	secs := []*elf.Section{{}}
	// Address and alignment as the linker gives them: word-aligned
	// tables, bytes for strings, half-words for .gnu.version.
	word := uint64(4)
	if f.Class == elf.ELFCLASS64 {
		word = 8
	}
	add := func(name string, t elf.SectionType, tag elf.DynTag, off int64, size uint64, link int, info uint32, ent, align uint64) int {
		s := &elf.Section{SectionHeader: elf.SectionHeader{Name: name, Type: t, Flags: elf.SHF_ALLOC, Addr: addr(tag), Offset: uint64(off), Size: size, FileSize: size,
			Link: uint32(link), Info: info, Addralign: align, Entsize: ent}}
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

// sysvHashCount reads DT_HASH's header: the number of symbols (nchain)
// and the table's size, or zeros when it does not fit.
func (f *File) sysvHashCount(off int64, avail uint64) (nsyms, size uint64) {
	b, err := f.readRange(off, min(avail, 8), ".hash")
	if err != nil || len(b) < 8 {
		return 0, 0
	}
	nb, nc := uint64(f.bo.Uint32(b)), uint64(f.bo.Uint32(b[4:]))
	size = (2 + nb + nc) * 4
	if nb == 0 || size > avail {
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
	if nb == 0 || bloom > avail/word || bucketsAt > avail || nb > (avail-bucketsAt)/4 {
		return 0, 0
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
	step := chainReadStart
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

// The first reads of a GNU hash chain (in entries) and of a version table
// (in bytes) made from the dynamic segment; variables for tests, which
// make them tiny to exercise the reads that follow.
var (
	chainReadStart   uint64 = 64
	versionReadStart uint64 = 4 << 10
)

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
	for n := min(limit, versionReadStart); ; n = min(n*4, limit) {
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
