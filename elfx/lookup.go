package elfx

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"strings"
	"sync"
	"unsafe"

	"github.com/rocmdoctor/rocmdoctor/internal/saferio"

	"github.com/rocmdoctor/rocmdoctor/internal/mapfile"
)

// SymbolTable answers name lookups in .dynsym the way ld.so does, through
// the GNU hash table (or the SysV one), without materialising every symbol:
// for libLLVM-15's 46k symbols a lookup reads a bloom word, a bucket and a
// short chain. Files with neither hash table fall back to a map built once.
//
// A table made by DynamicSymbolTable may view the file through a read-only
// memory mapping rather than copies of its sections; see Err.
type SymbolTable struct {
	f *File    // while the table is built
	m *mapping // nil when the sections were copied into memory
	// span holds the file's bytes from spanOff when the sections were
	// read together in one piece (small tables).
	span    []byte
	spanOff uint64
	is64    bool
	be      bigEndian // words are decoded inline, not through binary.ByteOrder
	entsz   int
	syms    []byte    // raw .dynsym
	strs    []byte    // its string table
	versym  []byte    // raw .gnu.version, nil when absent
	vers    []verName // by version index
	defs    []VersionDef
	needs   []VersionNeed

	gnu  *gnuHash
	sysv *sysvHash
	// noHash: the dynamic section names neither DT_GNU_HASH nor DT_HASH
	// (ld.so searches nothing here; Searched).
	noHash     bool
	byNameOnce sync.Once // tables are shared by concurrent binders
	byName     map[string][]int
}

type verName struct {
	name, lib string // lib is set for .gnu.version_r entries
}

// gnuHash and sysvHash keep the raw section bytes and decode words as they
// are visited, so preparing a table costs nothing per symbol.
type gnuHash struct {
	nbuckets, symoffset, shift uint32
	bloomWords                 uint32
	bloomBits                  uint32 // 32 or 64: the file's word size
	// What the lookup divides by, as glibc's do_lookup_x does: the
	// filter's word index is masked with bloomWords-1 (ld.so asserts that
	// the count is a power of two, and readGNUHash refuses other counts),
	// the bit numbers with bloomBits-1, and the bucket is h mod nbuckets,
	// by multiplication (bucketsM).
	bloomMask, bloomShift uint32
	bucketsM              uint64
	bloom, buckets, chain []byte
}

type sysvHash struct {
	nbuckets, nchain uint32
	buckets, chain   []byte
}

// DynamicSymbolTable prepares hashed lookups in .dynsym (an empty table
// for a file without one), choosing how to get at the sections: when the
// file was opened with Open on a 64-bit host, the table views them through
// a read-only memory mapping, so nothing is read until it is looked up and
// only the pages a lookup visits are touched (for libLLVM-15, a few of its
// 4.7 MB of symbol, string and hash tables); when the sections lie within
// 256 KiB of each other, or the file was not opened from a path, or no
// mapping can be made, they are read into memory instead. The table stays
// valid after the File is closed.
//
// The file must not be rewritten in place while the table is in use. If it
// is truncated under the mapping, the access that faults returns no
// result instead of crashing the process, and Err reports what happened.
func (f *File) DynamicSymbolTable() (*SymbolTable, error) {
	if f.fh == nil || f.Size <= 0 {
		return f.symbolTable(nil)
	}
	// Small tables (most libraries: they sit together after the program
	// headers) are read in one piece: a mapping costs an mmap, page faults
	// and an munmap, more than copying a few pages.
	if lo, hi, ok := f.tableSpan(); ok && hi-lo <= f.reads.smallTables {
		b, err := f.readRange(int64(lo), hi-lo, "dynamic symbol tables")
		if err != nil {
			return nil, err
		}
		return f.symbolTableIn(nil, b, lo)
	}
	data, err := mapfile.Map(f.fh.descriptor(), f.Size)
	if err != nil {
		return f.symbolTable(nil) // no mapping (address space, limits): copy instead
	}
	m := newMapping(data, f.Path)
	t, err := f.symbolTable(m)
	if ferr := m.failed(); ferr != nil {
		return nil, ferr
	}
	return t, err
}

// Err reports a fault while reading a mapped table (the file was truncated
// under it); lookups made after it return nothing. Nil for copied tables.
func (t *SymbolTable) Err() error { return t.m.failed() }

// VersionDefs returns the file's .gnu.version_d entries, read with the table.
func (t *SymbolTable) VersionDefs() []VersionDef { return t.defs }

// VersionNeeds returns the file's .gnu.version_r entries, read with the table.
func (t *SymbolTable) VersionNeeds() []VersionNeed { return t.needs }

// section returns the bytes of s: a view of the mapping when there is one,
// a bounded copy otherwise.
func (t *SymbolTable) section(s *elf.Section, what string) ([]byte, error) {
	if s.Type == elf.SHT_NOBITS {
		return nil, nil // no bytes in the file
	}
	if t.span != nil && s.Offset >= t.spanOff && s.Size <= uint64(len(t.span)) && s.Offset-t.spanOff <= uint64(len(t.span))-s.Size {
		i := s.Offset - t.spanOff
		return t.span[i : i+s.Size : i+s.Size], nil
	}
	if t.m == nil {
		if s.Type == elf.SHT_STRTAB {
			return t.f.readStrings(int64(s.Offset), s.Size, what)
		}
		return t.f.readRange(int64(s.Offset), s.Size, what)
	}
	if err := saferio.Check(int64(len(t.m.data)), int64(s.Offset), int64(s.Size)); err != nil || s.Size > maxTableBytes {
		if err == nil {
			err = fmt.Errorf("size %d exceeds limit %d", s.Size, maxTableBytes)
		}
		return nil, t.f.formatErr(int64(s.Offset), what, err)
	}
	return t.m.data[s.Offset : s.Offset+s.Size : s.Offset+s.Size], nil
}

// link returns the section s links to (its string or symbol table).
func (t *SymbolTable) link(s *elf.Section, what string) (*elf.Section, error) {
	if int(s.Link) <= 0 || int(s.Link) >= len(t.f.SymbolSections()) {
		return nil, t.f.formatErr(int64(s.Offset), what, fmt.Errorf("string table link %d out of range", s.Link))
	}
	return t.f.SymbolSections()[s.Link], nil
}

// readSizes are the sizes of the reads a File starts from: a default
// for every file (defaultReads), smaller for tests, which set them on a
// File (export_test.go) to map small fixtures and take every read that
// grows.
type readSizes struct {
	// smallTables is the most DynamicSymbolTable copies instead of
	// mapping, and the most readWindow reads in one piece.
	smallTables uint64
	// The first reads of a GNU hash chain (in entries) and of a version
	// table (in bytes) made from the dynamic segment.
	chainStart, versionStart uint64
	noWindow                 bool  // no readWindow
	dlopenWindow             int64 // how much of a section DlopenNames reads at a time
}

func defaultReads() readSizes {
	return readSizes{smallTables: 256 << 10, chainStart: 64, versionStart: 4 << 10, dlopenWindow: 1 << 20}
}

// tableSpan is the range of the file covering every section a symbol
// table reads, when they all have file bytes inside the file.
func (f *File) tableSpan() (lo, hi uint64, ok bool) {
	ds := f.SymbolSection(elf.SHT_DYNSYM)
	if ds == nil {
		return 0, 0, false
	}
	lo = math.MaxUint64
	add := func(s *elf.Section) bool {
		if s == nil {
			return true
		}
		if s.Type == elf.SHT_NOBITS || s.Offset > uint64(f.Size) || s.Size > uint64(f.Size)-s.Offset {
			return false
		}
		lo, hi = min(lo, s.Offset), max(hi, s.Offset+s.Size)
		return true
	}
	linked := func(s *elf.Section) *elf.Section {
		if s == nil || int(s.Link) <= 0 || int(s.Link) >= len(f.SymbolSections()) {
			return nil
		}
		return f.SymbolSections()[s.Link]
	}
	ok = true
	for _, typ := range []elf.SectionType{elf.SHT_DYNSYM, elf.SHT_GNU_VERSYM, elf.SHT_GNU_VERDEF, elf.SHT_GNU_VERNEED, elf.SHT_GNU_HASH, elf.SHT_HASH} {
		s := f.SymbolSection(typ)
		ok = ok && add(s)
		if typ == elf.SHT_DYNSYM || typ == elf.SHT_GNU_VERDEF || typ == elf.SHT_GNU_VERNEED {
			ok = ok && add(linked(s))
		}
	}
	return lo, hi, ok && lo < hi
}

func (f *File) symbolTable(m *mapping) (t *SymbolTable, err error) {
	return f.symbolTableIn(m, nil, 0)
}

func (f *File) symbolTableIn(m *mapping, span []byte, spanOff uint64) (t *SymbolTable, err error) {
	t = &SymbolTable{f: f, m: m, span: span, spanOff: spanOff, is64: f.Class == elf.ELFCLASS64, be: bigEndian(f.Data == elf.ELFDATA2MSB), entsz: 16}
	// A built table keeps nothing of f (its parsed headers and sections):
	// tables outlive their files in symcheck's cache, by the thousand.
	defer func() {
		if t != nil {
			t.f = nil
		}
	}()
	if t.is64 {
		t.entsz = 24
	}
	ds := f.SymbolSection(elf.SHT_DYNSYM)
	if ds == nil {
		return t, nil
	}
	defer m.leave(m.enter())
	if t.syms, err = t.section(ds, "dynamic symbol table"); err != nil {
		return nil, err
	}
	ss, err := t.link(ds, "dynamic symbol table")
	if err != nil {
		return nil, err
	}
	if t.strs, err = t.section(ss, "dynamic string table"); err != nil {
		return nil, err
	}
	if vs := f.SymbolSection(elf.SHT_GNU_VERSYM); vs != nil {
		if t.versym, err = t.section(vs, ".gnu.version"); err != nil {
			return nil, err
		}
	}
	if err := t.readVersions(); err != nil {
		return nil, err
	}
	var gnu, sysv *elf.Section
	gnu, sysv, t.noHash = f.hashTables()
	if gnu != nil {
		if t.gnu, err = t.readGNUHash(gnu); err != nil {
			return nil, err
		}
	} else if sysv != nil {
		if t.sysv, err = t.readSysVHash(sysv); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// hashTables returns the symbol hash table sections ld.so would search
// by: the dynamic section's tags decide (_dl_setup_hash reads DT_GNU_HASH
// when there is one, else DT_HASH), whatever the section headers list; a
// file without a readable dynamic section keeps what the headers list.
// none says the dynamic section names neither table, so ld.so searches
// nothing in the object.
func (f *File) hashTables() (gnu, sysv *elf.Section, none bool) {
	gnu, sysv = f.SymbolSection(elf.SHT_GNU_HASH), f.SymbolSection(elf.SHT_HASH)
	if d, err := f.Dynamic(); err == nil {
		_, hasGNU := d.Value(elf.DT_GNU_HASH)
		_, hasSysV := d.Value(elf.DT_HASH)
		if !hasGNU {
			gnu = nil
		}
		if !hasSysV {
			sysv = nil
		}
		none = !hasGNU && !hasSysV
	}
	return gnu, sysv, none
}

// readVersions decodes .gnu.version_d and .gnu.version_r through the
// table's views and indexes their names for Symbol.
func (t *SymbolTable) readVersions() error {
	f := t.f
	for _, v := range []struct {
		typ  elf.SectionType
		what string
	}{{elf.SHT_GNU_VERDEF, verdefWhat}, {elf.SHT_GNU_VERNEED, verneedWhat}} {
		sec := f.SymbolSection(v.typ)
		if sec == nil {
			continue
		}
		b, err := t.section(sec, v.what)
		if err != nil {
			return err
		}
		ss, err := t.link(sec, v.what)
		if err != nil {
			return err
		}
		b2, err := t.section(ss, v.what+" strings")
		if err != nil {
			return err
		}
		strs := strTab{b: b2}
		if v.typ == elf.SHT_GNU_VERDEF {
			t.defs, _, err = f.parseVersionDefs(int64(sec.Offset), b, strs)
		} else {
			t.needs, _, err = f.parseVersionNeeds(int64(sec.Offset), b, strs)
		}
		if err != nil {
			return err
		}
	}
	if t.versym == nil {
		return nil
	}
	// A slice by index: a map lookup per decoded symbol was a few percent
	// of binding a prefix. Indices above 0x7fff cannot be referenced.
	top := -1
	for _, d := range t.defs {
		if d.Index <= 0x7fff {
			top = max(top, int(d.Index))
		}
	}
	for _, n := range t.needs {
		for _, v := range n.Versions {
			if v.Index <= 0x7fff {
				top = max(top, int(v.Index))
			}
		}
	}
	t.vers = make([]verName, top+1)
	for _, d := range t.defs {
		if d.Index <= 0x7fff {
			t.vers[d.Index] = verName{name: d.Name}
		}
	}
	for _, n := range t.needs {
		for _, v := range n.Versions {
			if v.Index <= 0x7fff {
				t.vers[v.Index] = verName{name: v.Name, lib: n.File}
			}
		}
	}
	return nil
}

func (t *SymbolTable) readGNUHash(s *elf.Section) (*gnuHash, error) {
	b, err := t.section(s, ".gnu.hash")
	if err != nil {
		return nil, err
	}
	bad := func(why string) error { return t.f.formatErr(int64(s.Offset), ".gnu.hash", fmt.Errorf("%s", why)) }
	if len(b) < 16 {
		return nil, bad("header truncated")
	}
	bo := t.f.bo
	h := &gnuHash{nbuckets: bo.Uint32(b), symoffset: bo.Uint32(b[4:]), bloomWords: bo.Uint32(b[8:]), shift: bo.Uint32(b[12:])}
	word := uint64(4)
	h.bloomBits, h.bloomShift = 32, 5
	if t.is64 {
		word, h.bloomBits, h.bloomShift = 8, 64, 6
	}
	bloomSize := uint64(h.bloomWords)
	rest := uint64(len(b) - 16)
	// No buckets: glibc's do_lookup_x skips the object ("If the hash
	// table is empty there is nothing to do here"), without reading the
	// filter, so only its count matters (the power-of-two assertion
	// below, which 0 passes).
	if bloomSize == 0 && h.nbuckets > 0 || bloomSize > rest/word || uint64(h.nbuckets) > (rest-bloomSize*word)/4 {
		return nil, bad(fmt.Sprintf("%d bloom words and %d buckets do not fit in %d bytes", bloomSize, h.nbuckets, len(b)))
	}
	if h.bloomWords&(h.bloomWords-1) != 0 {
		// glibc's _dl_setup_hash asserts it ("Inconsistency detected by
		// ld.so: dl-setup_hash.c: ... Assertion `(bitmask_nwords &
		// (bitmask_nwords - 1)) == 0' failed!"): a program that loads
		// the library exits with status 127. The linkers write powers of
		// two; looked up anyway, references to what the library defines
		// seemed undefined.
		return nil, bad(fmt.Sprintf("%d bloom words, not a power of two: glibc's ld.so aborts every program that loads the library", bloomSize))
	}
	h.bloomMask = h.bloomWords - 1
	if h.nbuckets > 0 {
		h.bucketsM = fastmodM(h.nbuckets)
	}
	off := 16 + bloomSize*word
	h.bloom = b[16:off]
	h.buckets = b[off : off+uint64(h.nbuckets)*4]
	h.chain = b[off+uint64(h.nbuckets)*4:]
	return h, nil
}

// fastmodM is the multiplier bucket uses for d buckets (d > 0).
func fastmodM(d uint32) uint64 { return math.MaxUint64/uint64(d) + 1 }

// bucket returns h mod nbuckets (Lemire's fastmod: exact for 32-bit
// operands, and a multiplication where the division took 20 cycles).
func (g *gnuHash) bucket(h uint32) uint32 {
	hi, _ := bits.Mul64(g.bucketsM*uint64(h), uint64(g.nbuckets))
	return uint32(hi)
}

// bloomWord returns bloom word i widened to 64 bits.
func (t *SymbolTable) bloomWord(i uint32) uint64 {
	if t.gnu.bloomBits == 64 {
		return t.u64(t.gnu.bloom[8*uint64(i):])
	}
	return uint64(t.u32(t.gnu.bloom[4*uint64(i):]))
}

func (t *SymbolTable) word(b []byte, i uint32) uint32 { return t.u32(b[4*uint64(i):]) }

func (t *SymbolTable) u16(b []byte) uint16 { return t.be.u16(b) }
func (t *SymbolTable) u32(b []byte) uint32 { return t.be.u32(b) }
func (t *SymbolTable) u64(b []byte) uint64 { return t.be.u64(b) }

// bigEndian decodes in a file's byte order (true: big-endian) without
// binary.ByteOrder's interface call, so the loops over tables (the
// lookup, a section table's scan) inline it.
type bigEndian bool

func (be bigEndian) u16(b []byte) uint16 {
	if be {
		return binary.BigEndian.Uint16(b)
	}
	return binary.LittleEndian.Uint16(b)
}

func (be bigEndian) u32(b []byte) uint32 {
	if be {
		return binary.BigEndian.Uint32(b)
	}
	return binary.LittleEndian.Uint32(b)
}

func (be bigEndian) u64(b []byte) uint64 {
	if be {
		return binary.BigEndian.Uint64(b)
	}
	return binary.LittleEndian.Uint64(b)
}

// word decodes a 4- or 8-byte field (an ELF32 or ELF64 address, offset or
// size) widened to 64 bits.
func (be bigEndian) word(b []byte, w int) uint64 {
	if w == 4 {
		return uint64(be.u32(b))
	}
	return be.u64(b)
}

func (t *SymbolTable) readSysVHash(s *elf.Section) (*sysvHash, error) {
	b, err := t.section(s, ".hash")
	if err != nil {
		return nil, err
	}
	if len(b) < 8 {
		return nil, t.f.formatErr(int64(s.Offset), ".hash", fmt.Errorf("header truncated"))
	}
	nb, nc := uint64(t.f.bo.Uint32(b)), uint64(t.f.bo.Uint32(b[4:]))
	if nb+nc > uint64(len(b)-8)/4 { // nb 0: ld.so skips the object (Searched)
		return nil, t.f.formatErr(int64(s.Offset), ".hash", fmt.Errorf("%d buckets and %d chains do not fit", nb, nc))
	}
	return &sysvHash{nbuckets: uint32(nb), nchain: uint32(nc), buckets: b[8 : 8+4*nb], chain: b[8+4*nb : 8+4*(nb+nc)]}, nil
}

// Len is the number of symbols including the null symbol at index 0.
func (t *SymbolTable) Len() int { return len(t.syms) / t.entsz }

// rawName returns the name bytes of symbol i without allocating.
func (t *SymbolTable) rawName(i int) []byte {
	b, _ := saferio.CBytes(t.strs, uint64(t.u32(t.syms[i*t.entsz:])))
	return b
}

// NameBytes returns symbol i's name as a slice of the string table (no
// copy; the caller must not modify it, and for a mapped table must keep the
// table reachable while using it).
func (t *SymbolTable) NameBytes(i int) []byte {
	if i <= 0 || i >= t.Len() || t.Err() != nil {
		return nil
	}
	defer t.m.leave(t.m.enter())
	return t.rawName(i)
}

// nameIs reports whether symbol i is named name, comparing in place.
func (t *SymbolTable) nameIs(i int, name string) bool {
	off := uint64(t.u32(t.syms[i*t.entsz:]))
	end := off + uint64(len(name))
	return end < uint64(len(t.strs)) && t.strs[end] == 0 && string(t.strs[off:end]) == name
}

// hasPrefix reports whether symbol i's name starts with p.
func (t *SymbolTable) hasPrefix(i int, p []byte) bool {
	off := uint64(t.u32(t.syms[i*t.entsz:]))
	end := off + uint64(len(p))
	return end <= uint64(len(t.strs)) && bytes.Equal(t.strs[off:end], p) && bytes.IndexByte(t.strs[off:end], 0) < 0
}

// shndx returns the section index of symbol i.
func (t *SymbolTable) shndx(i int) elf.SectionIndex {
	e := t.syms[i*t.entsz:]
	if t.is64 {
		return elf.SectionIndex(t.u16(e[6:]))
	}
	return elf.SectionIndex(t.u16(e[14:]))
}

// Symbol decodes symbol i (1 ≤ i < Len()).
func (t *SymbolTable) Symbol(i int) (s Symbol) {
	if t.Err() != nil {
		return Symbol{}
	}
	defer t.m.leave(t.m.enter())
	return t.symbol(i, nil)
}

// symbol decodes symbol i; name, when not nil, is its already known name
// (a lookup's key), which saves copying it out of the string table.
func (t *SymbolTable) symbol(i int, name *string) Symbol {
	var s Symbol
	var info, other byte
	info, other, s.Section = t.entry(i)
	s.Bind, s.Type, s.Visibility = elf.ST_BIND(info), elf.ST_TYPE(info), elf.ST_VISIBILITY(other)
	e := t.syms[i*t.entsz:]
	if t.is64 {
		s.Value, s.Size = t.u64(e[8:]), t.u64(e[16:])
	} else {
		s.Value, s.Size = uint64(t.u32(e[4:])), uint64(t.u32(e[8:]))
	}
	if name != nil {
		s.Name = *name
	} else {
		s.Name = string(t.rawName(i))
	}
	s.VersionIndex, s.HiddenVersion = t.version(i)
	if s.VersionIndex > 1 && int(s.VersionIndex) < len(t.vers) {
		vn := t.vers[s.VersionIndex]
		s.Version, s.Library = vn.name, vn.lib
	}
	return s
}

// entry returns symbol i's st_info, st_other and section index.
func (t *SymbolTable) entry(i int) (info, other byte, shndx elf.SectionIndex) {
	e := t.syms[i*t.entsz:]
	if t.is64 {
		return e[4], e[5], elf.SectionIndex(t.u16(e[6:]))
	}
	return e[12], e[13], elf.SectionIndex(t.u16(e[14:]))
}

// value returns symbol i's st_value.
func (t *SymbolTable) value(i int) uint64 {
	e := t.syms[i*t.entsz:]
	if t.is64 {
		return t.u64(e[8:])
	}
	return uint64(t.u32(e[4:]))
}

// version returns symbol i's .gnu.version index and hidden bit (0 and
// false without the section).
func (t *SymbolTable) version(i int) (idx uint16, hidden bool) {
	if t.versym == nil || 2*i+2 > len(t.versym) {
		return 0, false
	}
	v := t.u16(t.versym[2*i:])
	return v & 0x7fff, v&0x8000 != 0
}

// HeapBytes is how much of the file the table holds in memory: its copied
// sections, or 0 for a table that views a mapping.
func (t *SymbolTable) HeapBytes() int {
	if t.m != nil {
		return 0
	}
	if t.span != nil {
		return len(t.span)
	}
	n := len(t.syms) + len(t.strs) + len(t.versym)
	if t.gnu != nil {
		n += len(t.gnu.bloom) + len(t.gnu.buckets) + len(t.gnu.chain)
	}
	if t.sysv != nil {
		n += len(t.sysv.buckets) + len(t.sysv.chain)
	}
	return n
}

// HasVersions reports whether the table has .gnu.version.
func (t *SymbolTable) HasVersions() bool { return t.versym != nil }

// Searched reports whether ld.so looks symbols up in the object: its
// dynamic section names a hash table, and that table has buckets. glibc's
// _dl_setup_hash reads DT_GNU_HASH when there is one (DT_HASH otherwise)
// and leaves the bucket count 0 without either; do_lookup_x then skips
// the object, so none of its definitions satisfies any reference, its own
// included ("symbol lookup error: undefined symbol"). Binds follows;
// Lookup still finds definitions by name, for the messages that say why.
// A table named by the dynamic section whose section headers do not list
// it is searched by name.
func (t *SymbolTable) Searched() bool {
	switch {
	case t.noHash:
		return false
	case t.gnu != nil:
		return t.gnu.nbuckets > 0
	case t.sysv != nil:
		return t.sysv.nbuckets > 0
	}
	return true
}

// GNUHash is the DT_GNU_HASH hash of a symbol name (Bernstein's h*33+c
// from 5381), as ld.so and the linkers compute it.
func GNUHash[S string | []byte](name S) uint32 {
	h := uint32(5381)
	i := 0
	// Four bytes a step (h*33^4 + c0*33^3 + c1*33^2 + c2*33 + c3): the
	// products do not wait for each other, and binding a scan hashes the
	// name of every reference (C++ names run to 50 bytes and more).
	for ; i+4 <= len(name); i += 4 {
		h = h*1185921 + uint32(name[i])*35937 + uint32(name[i+1])*1089 + uint32(name[i+2])*33 + uint32(name[i+3])
	}
	for ; i < len(name); i++ {
		h = h*33 + uint32(name[i])
	}
	return h
}

// SysVHash is the classic ELF (DT_HASH) hash of a symbol name.
func SysVHash[S string | []byte](name S) uint32 {
	h := uint32(0)
	for i := 0; i < len(name); i++ {
		h = h<<4 + uint32(name[i])
		g := h & 0xf0000000
		h ^= g >> 24
		h &^= g
	}
	return h
}

// Key is a symbol name with its hashes computed once, for looking the same
// name up in many tables (every library of a closure). LookupKey fills in
// the SysV hash the first time a table without DT_GNU_HASH needs it, so a
// Key is not for sharing between goroutines.
type Key struct {
	Name      string
	gnu, sysv uint32
	hasSysv   bool // the SysV hash is computed when a table without DT_GNU_HASH needs it
}

// NewKey hashes name for LookupKey.
func NewKey(name string) Key { return Key{Name: name, gnu: GNUHash(name)} }

// Lookup returns the symbols named name: every defined version, as ld.so
// sees them through the hash table (GNU hash tables omit undefined symbols;
// SysV ones and the fallback include them, so callers filter on Defined).
func (t *SymbolTable) Lookup(name string) []Symbol {
	k := NewKey(name)
	return t.LookupKey(nil, &k)
}

// LookupKey is Lookup for a prepared key, appending to dst.
func (t *SymbolTable) LookupKey(dst []Symbol, k *Key) (out []Symbol) {
	out = dst
	if t.m != nil {
		if t.Err() != nil {
			return out
		}
		defer t.m.leave(t.m.enter())
	}
	t.find(k, func(i int) bool {
		out = append(out, t.symbol(i, &k.Name))
		return true
	})
	return out
}

// Binds reports whether the table has a definition that ld.so binds a
// reference to k requiring version ("" for none) to: an Exportable one
// that Accepts the version. defined says whether it has any exportable
// definition of the name at all (when binds is false, one the version
// turned down). Nothing is collected: binding a scan's every reference
// asks this of one table after another.
func (t *SymbolTable) Binds(k *Key, version string) (binds, defined bool) {
	if !t.Searched() {
		return false, false
	}
	if t.m != nil {
		if t.Err() != nil {
			return false, false
		}
		defer t.m.leave(t.m.enter())
	}
	versioned := t.HasVersions()
	t.find(k, func(i int) bool {
		info, other, shndx := t.entry(i)
		if !exportable(shndx, elf.ST_BIND(info), elf.ST_TYPE(info), elf.ST_VISIBILITY(other), t.value(i)) {
			return true
		}
		defined = true
		idx, hidden := t.version(i)
		def := ""
		if idx > 1 && int(idx) < len(t.vers) {
			def = t.vers[idx].name
		}
		binds = accepts(idx, hidden, def, version, versioned)
		return !binds
	})
	return binds, defined
}

// Exportable reports whether the definition s can satisfy another
// object's reference, as glibc's do_lookup_x and check_match decide:
// defined (not SHN_UNDEF), of a binding it accepts (global, weak or
// STB_GNU_UNIQUE; local and the reserved values are skipped), of default
// or protected visibility, with a value (st_value 0 is "no value" unless
// the symbol is absolute or thread-local), and of a type ld.so binds to.
func Exportable(s Symbol) bool {
	return exportable(s.Section, s.Bind, s.Type, s.Visibility, s.Value)
}

// stbGNUUnique is STB_GNU_UNIQUE (debug/elf has no name for it).
const stbGNUUnique elf.SymBind = 10

func exportable(shndx elf.SectionIndex, bind elf.SymBind, typ elf.SymType, vis elf.SymVis, value uint64) bool {
	if shndx == elf.SHN_UNDEF || vis == elf.STV_HIDDEN || vis == elf.STV_INTERNAL {
		return false
	}
	if bind != elf.STB_GLOBAL && bind != elf.STB_WEAK && bind != stbGNUUnique {
		return false
	}
	if value == 0 && shndx != elf.SHN_ABS && typ != elf.STT_TLS {
		return false
	}
	switch typ {
	case elf.STT_NOTYPE, elf.STT_OBJECT, elf.STT_FUNC, elf.STT_COMMON, elf.STT_TLS, elf.STT_GNU_IFUNC:
		return true
	}
	return false
}

// Accepts reports whether the exportable definition s, from a table
// with symbol versions or not (versioned), satisfies a reference
// requiring version ("" for none), following glibc's check_match: an
// unversioned object satisfies every reference; an unversioned reference
// takes a global definition, one of the first version node (index 2,
// the oldest: hidden or not, as an old unversioned program expects) or a
// default-version one; a versioned one takes its version, or a global
// definition that is not hidden.
func Accepts(s Symbol, version string, versioned bool) bool {
	return accepts(s.VersionIndex, s.HiddenVersion, s.Version, version, versioned)
}

// accepts is Accepts for a definition with version index idx, hidden
// bit hidden and version name def.
func accepts(idx uint16, hidden bool, def, version string, versioned bool) bool {
	global := idx <= 1
	switch {
	case !versioned:
		return true
	case version == "":
		// check_match accepts indexes below 3 outright; a higher one only
		// when not hidden (num_versions: there is one default).
		return idx <= 2 || !hidden
	case def == version:
		return true
	}
	return global && !hidden
}

// find calls match with each symbol named k.Name that the table's hash
// table leads to, until match returns false. The caller guards mapped
// tables.
func (t *SymbolTable) find(k *Key, match func(i int) bool) {
	n := t.Len()
	name := k.Name
	switch {
	case t.gnu != nil && t.gnu.nbuckets > 0:
		h := k.gnu
		g := t.gnu
		w := t.bloomWord((h >> g.bloomShift) & g.bloomMask)
		bit := g.bloomBits - 1
		mask := uint64(1)<<(h&bit) | uint64(1)<<((h>>g.shift)&bit)
		if w&mask != mask {
			return
		}
		idx := t.word(g.buckets, g.bucket(h))
		if idx < g.symoffset {
			return
		}
		for ; ; idx++ {
			ci := uint64(idx) - uint64(g.symoffset)
			if ci >= uint64(len(g.chain)/4) || int(idx) >= n {
				return
			}
			h2 := t.word(g.chain, uint32(ci))
			if h|1 == h2|1 && idx > 0 && t.nameIs(int(idx), name) && !match(int(idx)) {
				return
			}
			if h2&1 != 0 {
				return
			}
		}
	case t.gnu == nil && t.sysv != nil && t.sysv.nbuckets > 0:
		if !k.hasSysv {
			k.sysv, k.hasSysv = SysVHash(k.Name), true
		}
		h := k.sysv
		s := t.sysv
		seen := 0
		for idx := t.word(s.buckets, h%s.nbuckets); idx != 0 && idx < s.nchain && seen < int(s.nchain); idx = t.word(s.chain, idx) {
			if int(idx) < n && t.nameIs(int(idx), name) && !match(int(idx)) {
				return
			}
			seen++
		}
	default:
		// No hash table to search (or one without buckets): by name, for
		// Lookup's callers; Binds says ld.so finds nothing here.
		t.byNameOnce.Do(func() {
			t.byName = map[string][]int{}
			for i := 1; i < n; i++ {
				nm := string(t.rawName(i))
				t.byName[nm] = append(t.byName[nm], i)
			}
		})
		for _, i := range t.byName[name] {
			if !match(i) {
				return
			}
		}
	}
}

// Counts counts the table's symbols (every entry after the null one) as
// CountSymbols counts decoded ones, from the raw entries: no name is read.
// A table that faulted (see Err) counts what was read before the fault.
func (t *SymbolTable) Counts() (s Summary) {
	if t.Err() != nil {
		return s
	}
	defer t.m.leave(t.m.enter())
	info := 4 // st_info's offset in an entry
	if !t.is64 {
		info = 12
	}
	for i := 1; i < t.Len(); i++ {
		if t.shndx(i) != elf.SHN_UNDEF {
			s.Defined++
			continue
		}
		s.Undefined++
		if elf.ST_BIND(t.syms[i*t.entsz+info]) == elf.STB_WEAK {
			s.Weak++
		}
	}
	return s
}

// Undefined returns the undefined symbols (SHN_UNDEF, named).
func (t *SymbolTable) Undefined() (out []Symbol) {
	t.EachUndefined(func(s Symbol) bool {
		out = append(out, s)
		return true
	})
	return out
}

// EachUndefined calls fn with each undefined symbol (SHN_UNDEF, named) in
// table order until fn returns false, without collecting them.
func (t *SymbolTable) EachUndefined(fn func(Symbol) bool) {
	t.EachUndefinedTransient(func(s Symbol) bool {
		s.Name = strings.Clone(s.Name)
		return fn(s)
	})
}

// EachUndefinedTransient is EachUndefined without a copy of each name:
// the Symbol's Name views the table's string bytes and is valid only until
// fn returns (strings.Clone what is kept). Binding a large scan's every
// reference allocated a string per reference that almost always died
// before the next one.
func (t *SymbolTable) EachUndefinedTransient(fn func(Symbol) bool) {
	if t.Err() != nil {
		return
	}
	defer t.m.leave(t.m.enter())
	for i := 1; i < t.Len(); i++ {
		if t.shndx(i) != elf.SHN_UNDEF {
			continue
		}
		if raw := t.rawName(i); len(raw) > 0 {
			name := unsafe.String(unsafe.SliceData(raw), len(raw))
			if !fn(t.symbol(i, &name)) {
				return
			}
		}
	}
}

// UndefinedNamed returns the undefined symbols with one of the given
// names, comparing names in place (nothing is decoded for the others).
func (t *SymbolTable) UndefinedNamed(names ...string) (out []Symbol) {
	if t.Err() != nil {
		return nil
	}
	defer t.m.leave(t.m.enter())
	for i := 1; i < t.Len(); i++ {
		if t.shndx(i) != elf.SHN_UNDEF {
			continue
		}
		for j := range names {
			if t.nameIs(i, names[j]) {
				out = append(out, t.symbol(i, &names[j]))
				break
			}
		}
	}
	return out
}

// DefinedWithPrefix returns the defined symbols whose names start with
// prefix, scanning the raw table without decoding the others.
func (t *SymbolTable) DefinedWithPrefix(prefix string) []Symbol {
	return t.withPrefix(prefix, false)
}

// UndefinedWithPrefix returns the undefined symbols whose names start with
// prefix, scanning the raw table without decoding the others.
func (t *SymbolTable) UndefinedWithPrefix(prefix string) []Symbol {
	return t.withPrefix(prefix, true)
}

func (t *SymbolTable) withPrefix(prefix string, undefined bool) (out []Symbol) {
	if t.Err() != nil {
		return nil
	}
	defer t.m.leave(t.m.enter())
	p := []byte(prefix)
	for i := 1; i < t.Len(); i++ {
		if (t.shndx(i) == elf.SHN_UNDEF) == undefined && t.hasPrefix(i, p) {
			out = append(out, t.symbol(i, nil))
		}
	}
	return out
}
