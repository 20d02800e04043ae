package elfx

import (
	"bytes"
	"debug/elf"
	"fmt"
)

// SymbolTable answers name lookups in .dynsym the way ld.so does, through
// the GNU hash table (or the SysV one), without materialising every symbol:
// for libLLVM-15's 46k symbols a lookup reads a bucket and a short chain.
// Files with neither hash table fall back to a map built once.
type SymbolTable struct {
	f      *File
	is64   bool
	entsz  int
	syms   []byte // raw .dynsym
	strs   []byte // its string table
	versym []byte // raw .gnu.version, nil when absent
	vers   map[uint16]verName

	gnu    *gnuHash
	sysv   *sysvHash
	byName map[string][]int
}

type verName struct {
	name, lib string // lib is set for .gnu.version_r entries
}

type gnuHash struct {
	nbuckets, symoffset, shift uint32
	bloom                      []uint64 // 32-bit files store 32-bit words, widened here
	bloomBits                  uint32
	buckets, chain             []uint32
}

type sysvHash struct {
	buckets, chain []uint32
}

// DynamicSymbolTable prepares hashed lookups in .dynsym. A file without
// .dynsym returns an empty table.
func (f *File) DynamicSymbolTable() (*SymbolTable, error) {
	t := &SymbolTable{f: f, is64: f.Class == elf.ELFCLASS64, entsz: 16}
	if t.is64 {
		t.entsz = 24
	}
	ds := f.ef.SectionByType(elf.SHT_DYNSYM)
	if ds == nil {
		return t, nil
	}
	var err error
	if t.syms, err = f.readRange(int64(ds.Offset), ds.Size, "dynamic symbol table"); err != nil {
		return nil, err
	}
	if int(ds.Link) <= 0 || int(ds.Link) >= len(f.ef.Sections) {
		return nil, f.formatErr(int64(ds.Offset), "dynamic symbol table", fmt.Errorf("string table link %d out of range", ds.Link))
	}
	ss := f.ef.Sections[ds.Link]
	if t.strs, err = f.readStrings(int64(ss.Offset), ss.Size, "dynamic string table"); err != nil {
		return nil, err
	}
	if vs := f.ef.SectionByType(elf.SHT_GNU_VERSYM); vs != nil {
		if t.versym, err = f.readRange(int64(vs.Offset), vs.Size, ".gnu.version"); err != nil {
			return nil, err
		}
		t.vers = map[uint16]verName{}
		defs, err := f.VersionDefs()
		if err != nil {
			return nil, err
		}
		for _, d := range defs {
			t.vers[d.Index] = verName{name: d.Name}
		}
		needs, err := f.VersionNeeds()
		if err != nil {
			return nil, err
		}
		for _, n := range needs {
			for _, v := range n.Versions {
				t.vers[v.Index] = verName{name: v.Name, lib: n.File}
			}
		}
	}
	if s := f.ef.SectionByType(elf.SHT_GNU_HASH); s != nil {
		if t.gnu, err = t.readGNUHash(s); err != nil {
			return nil, err
		}
	} else if s := f.ef.SectionByType(elf.SHT_HASH); s != nil {
		if t.sysv, err = t.readSysVHash(s); err != nil {
			return nil, err
		}
	}
	return t, nil
}

func (t *SymbolTable) words32(b []byte) []uint32 {
	out := make([]uint32, len(b)/4)
	for i := range out {
		out[i] = t.f.bo.Uint32(b[4*i:])
	}
	return out
}

func (t *SymbolTable) readGNUHash(s *elf.Section) (*gnuHash, error) {
	b, err := t.f.readRange(int64(s.Offset), s.Size, ".gnu.hash")
	if err != nil {
		return nil, err
	}
	bad := func(why string) error { return t.f.formatErr(int64(s.Offset), ".gnu.hash", fmt.Errorf("%s", why)) }
	if len(b) < 16 {
		return nil, bad("header truncated")
	}
	bo := t.f.bo
	h := &gnuHash{nbuckets: bo.Uint32(b), symoffset: bo.Uint32(b[4:]), shift: bo.Uint32(b[12:])}
	bloomSize := uint64(bo.Uint32(b[8:]))
	word := uint64(4)
	h.bloomBits = 32
	if t.is64 {
		word, h.bloomBits = 8, 64
	}
	rest := uint64(len(b) - 16)
	if bloomSize == 0 || h.nbuckets == 0 || bloomSize > rest/word || uint64(h.nbuckets) > (rest-bloomSize*word)/4 {
		return nil, bad(fmt.Sprintf("%d bloom words and %d buckets do not fit in %d bytes", bloomSize, h.nbuckets, len(b)))
	}
	off := uint64(16)
	h.bloom = make([]uint64, bloomSize)
	for i := range h.bloom {
		if t.is64 {
			h.bloom[i] = bo.Uint64(b[off:])
		} else {
			h.bloom[i] = uint64(bo.Uint32(b[off:]))
		}
		off += word
	}
	h.buckets = t.words32(b[off : off+uint64(h.nbuckets)*4])
	off += uint64(h.nbuckets) * 4
	h.chain = t.words32(b[off:])
	return h, nil
}

func (t *SymbolTable) readSysVHash(s *elf.Section) (*sysvHash, error) {
	b, err := t.f.readRange(int64(s.Offset), s.Size, ".hash")
	if err != nil {
		return nil, err
	}
	if len(b) < 8 {
		return nil, t.f.formatErr(int64(s.Offset), ".hash", fmt.Errorf("header truncated"))
	}
	nb, nc := uint64(t.f.bo.Uint32(b)), uint64(t.f.bo.Uint32(b[4:]))
	if nb == 0 || nb+nc > uint64(len(b)-8)/4 {
		return nil, t.f.formatErr(int64(s.Offset), ".hash", fmt.Errorf("%d buckets and %d chains do not fit", nb, nc))
	}
	w := t.words32(b[8:])
	return &sysvHash{buckets: w[:nb], chain: w[nb : nb+nc]}, nil
}

// Len is the number of symbols including the null symbol at index 0.
func (t *SymbolTable) Len() int { return len(t.syms) / t.entsz }

// rawName returns the name bytes of symbol i without allocating.
func (t *SymbolTable) rawName(i int) []byte {
	e := t.syms[i*t.entsz:]
	off := uint64(t.f.bo.Uint32(e))
	if off >= uint64(len(t.strs)) {
		return nil
	}
	s := t.strs[off:]
	if j := bytes.IndexByte(s, 0); j >= 0 {
		return s[:j]
	}
	return nil
}

// NameBytes returns symbol i's name as a slice of the string table (no
// copy; the caller must not modify it).
func (t *SymbolTable) NameBytes(i int) []byte {
	if i <= 0 || i >= t.Len() {
		return nil
	}
	return t.rawName(i)
}

// nameIs reports whether symbol i is named name, comparing in place.
func (t *SymbolTable) nameIs(i int, name string) bool {
	off := uint64(t.f.bo.Uint32(t.syms[i*t.entsz:]))
	end := off + uint64(len(name))
	return end < uint64(len(t.strs)) && t.strs[end] == 0 && string(t.strs[off:end]) == name
}

// hasPrefix reports whether symbol i's name starts with p.
func (t *SymbolTable) hasPrefix(i int, p []byte) bool {
	off := uint64(t.f.bo.Uint32(t.syms[i*t.entsz:]))
	end := off + uint64(len(p))
	return end <= uint64(len(t.strs)) && bytes.Equal(t.strs[off:end], p) && bytes.IndexByte(t.strs[off:end], 0) < 0
}

// shndx returns the section index of symbol i.
func (t *SymbolTable) shndx(i int) elf.SectionIndex {
	e := t.syms[i*t.entsz:]
	if t.is64 {
		return elf.SectionIndex(t.f.bo.Uint16(e[6:]))
	}
	return elf.SectionIndex(t.f.bo.Uint16(e[14:]))
}

// Symbol decodes symbol i (1 ≤ i < Len()).
func (t *SymbolTable) Symbol(i int) Symbol {
	e := t.syms[i*t.entsz:]
	bo := t.f.bo
	var s Symbol
	var info, other byte
	if t.is64 {
		info, other = e[4], e[5]
		s.Section = elf.SectionIndex(bo.Uint16(e[6:]))
		s.Value, s.Size = bo.Uint64(e[8:]), bo.Uint64(e[16:])
	} else {
		s.Value, s.Size = uint64(bo.Uint32(e[4:])), uint64(bo.Uint32(e[8:]))
		info, other = e[12], e[13]
		s.Section = elf.SectionIndex(bo.Uint16(e[14:]))
	}
	s.Name = string(t.rawName(i))
	s.Bind, s.Type, s.Visibility = elf.ST_BIND(info), elf.ST_TYPE(info), elf.ST_VISIBILITY(other)
	if t.versym != nil && 2*i+2 <= len(t.versym) {
		v := bo.Uint16(t.versym[2*i:])
		s.VersionIndex, s.HiddenVersion = v&0x7fff, v&0x8000 != 0
		if s.VersionIndex > 1 {
			vn := t.vers[s.VersionIndex]
			s.Version, s.Library = vn.name, vn.lib
		}
	}
	return s
}

// HasVersions reports whether the table has .gnu.version.
func (t *SymbolTable) HasVersions() bool { return t.versym != nil }

// GNUHash is the DT_GNU_HASH hash of a symbol name (Bernstein's h*33+c
// from 5381), as ld.so and the linkers compute it.
func GNUHash[S string | []byte](name S) uint32 {
	h := uint32(5381)
	for i := 0; i < len(name); i++ {
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

// Lookup returns the symbols named name: every defined version, as ld.so
// sees them through the hash table (GNU hash tables omit undefined symbols;
// SysV ones and the fallback include them, so callers filter on Defined).
func (t *SymbolTable) Lookup(name string) []Symbol {
	n := t.Len()
	var out []Symbol
	match := func(i int) {
		if i > 0 && i < n && t.nameIs(i, name) {
			out = append(out, t.Symbol(i))
		}
	}
	switch {
	case t.gnu != nil:
		h := GNUHash(name)
		g := t.gnu
		w := g.bloom[(h/g.bloomBits)%uint32(len(g.bloom))]
		mask := uint64(1)<<(h%g.bloomBits) | uint64(1)<<((h>>g.shift)%g.bloomBits)
		if w&mask != mask {
			return nil
		}
		idx := g.buckets[h%g.nbuckets]
		if idx < g.symoffset {
			return nil
		}
		for ; ; idx++ {
			ci := uint64(idx) - uint64(g.symoffset)
			if ci >= uint64(len(g.chain)) || int(idx) >= n {
				break
			}
			h2 := g.chain[ci]
			if h|1 == h2|1 {
				match(int(idx))
			}
			if h2&1 != 0 {
				break
			}
		}
	case t.sysv != nil:
		h := SysVHash(name)
		s := t.sysv
		seen := 0
		for idx := s.buckets[h%uint32(len(s.buckets))]; idx != 0 && int(idx) < len(s.chain) && seen < len(s.chain); idx = s.chain[idx] {
			match(int(idx))
			seen++
		}
	default:
		if t.byName == nil {
			t.byName = map[string][]int{}
			for i := 1; i < n; i++ {
				nm := string(t.rawName(i))
				t.byName[nm] = append(t.byName[nm], i)
			}
		}
		for _, i := range t.byName[name] {
			out = append(out, t.Symbol(i))
		}
	}
	return out
}

// Undefined returns the undefined symbols (SHN_UNDEF, named).
func (t *SymbolTable) Undefined() []Symbol {
	var out []Symbol
	for i := 1; i < t.Len(); i++ {
		if t.shndx(i) == elf.SHN_UNDEF && len(t.rawName(i)) > 0 {
			out = append(out, t.Symbol(i))
		}
	}
	return out
}

// DefinedWithPrefix returns the defined symbols whose names start with
// prefix, scanning the raw table without decoding the others.
func (t *SymbolTable) DefinedWithPrefix(prefix string) []Symbol {
	var out []Symbol
	p := []byte(prefix)
	for i := 1; i < t.Len(); i++ {
		if t.shndx(i) != elf.SHN_UNDEF && t.hasPrefix(i, p) {
			out = append(out, t.Symbol(i))
		}
	}
	return out
}
