package patchelf

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/internal/rawpath"
	"github.com/rocmdoctor/rocmdoctor/internal/saferio"
)

// Patch is a byte range to write.
type Patch struct {
	Offset int64  `json:"offset"`
	Size   int    `json:"size"`
	What   string `json:"what"`
	Data   []byte `json:"-"`
	// Fill, when Data is nil, is the byte the Size bytes are set to (the
	// vacated bytes of moved sections: megabytes for a large library,
	// never held in memory).
	Fill byte `json:"-"`
}

// n is how many bytes the patch writes.
func (pt Patch) n() int {
	if pt.Data != nil {
		return len(pt.Data)
	}
	return pt.Size
}

// bytes is the patch's content, made when it is a fill.
func (pt Patch) bytes() []byte {
	if pt.Data != nil || pt.Size == 0 {
		return pt.Data
	}
	return bytes.Repeat([]byte{pt.Fill}, pt.Size)
}

// Plan is a computed edit: patches at known offsets and, when something
// grows, one appended segment.
type Plan struct {
	Path    string  `json:"path"`
	Edits   []Edit  `json:"edits"`
	Changed bool    `json:"changed"`
	Patches []Patch `json:"patches"`
	// AppendOffset, Append and AppendTail describe the new PT_LOAD's bytes:
	// Append followed by AppendTail (the grown .dynstr, kept as its own
	// slice so a multi-megabyte table is not copied again). Both are empty
	// when nothing grows.
	AppendOffset int64    `json:"append_offset,omitempty"`
	Append       []byte   `json:"-"`
	AppendTail   []byte   `json:"-"`
	AppendSize   int      `json:"append_size,omitempty"`
	Moved        []string `json:"moved,omitempty"` // ".dynstr", ".dynamic", ".interp", "program headers"
	// Extended names a section that grew where it is, at the end of the
	// last PT_LOAD and of the file (a .dynstr an earlier edit moved
	// there): the appended bytes extend that segment instead of adding one.
	Extended string `json:"extended,omitempty"`
	OldSize  int64  `json:"old_size"`
	NewSize  int64  `json:"new_size"`
	// Output holds what --print-* options report after the edits.
	Output map[string]string `json:"-"`
	// Warnings are what patchelf warns of and goes on (an edit with
	// nothing to do, such as a resolution cache with nothing to resolve).
	Warnings []string `json:"warnings,omitempty"`

	expect expectation
}

type expectation struct {
	dyn    []ent
	interp *string
	osabi  *byte
	stack  *uint32
	needs  map[string]bool
	rename *renameExpect
}

// ent is one dynamic entry of the model.
type ent struct {
	tag elf.DynTag
	val uint64
	str string
	ok  bool // str is valid (string tag)
}

func isStrTag(t elf.DynTag) bool {
	switch t {
	case elf.DT_NEEDED, elf.DT_SONAME, elf.DT_RPATH, elf.DT_RUNPATH, elf.DT_AUXILIARY, elf.DT_FILTER:
		return true
	}
	return false
}

type phdr struct {
	elf.ProgHeader
}

// model is the file's dynamic linking information being edited.
type model struct {
	f           *elfx.File
	path        string
	bo          binary.ByteOrder
	is64        bool
	ehdr        []byte
	phoff       uint64
	phent       int
	phdrs       []phdr
	dyn         *elfx.Dynamic
	ents        []ent
	str         []byte // current dynstr (original bytes, possibly overwritten, plus appended)
	orig        []byte // original dynstr, dropped once the table grows (it then moves whole)
	origLen     int    // its length
	strOwned    bool   // m.str no longer shares orig's array
	refOff      []uint64
	interp      *string
	interpRoom  uint64        // the bytes of PT_INTERP an edit may write: the old name and its NUL
	undescribed []undescribed // dynamic tables whose section headers were stripped
	osabi       *byte
	stack       *uint32 // new PT_GNU_STACK flags
	addGNUStack bool
	verneedFile map[int64]string // file offset of a vn_file field → new name
	versym      map[int64]uint16 // file offset of a .gnu.version entry → value
	symRename   map[int]string   // .dynsym index → new name
	symNameOff  map[int]uint64   // .dynsym index → .dynstr offset of the new name
	opts        Options
	output      map[string]string
	// cacheStale: an edit changed the run path or the NEEDED set, so a
	// resolution cache note is removed (removeResolutionCache's rules);
	// buildCache: --build-resolution-cache was asked for.
	cacheStale, buildCache bool
	// secs are the section headers, or for a file without any, sections
	// standing in for them (loaderSections); pseudo says which.
	secs   []*elf.Section
	pseudo bool
}

func (m *model) errf(format string, args ...any) error { return errorf(m.path, format, args...) }

// PlanFile computes the plan for edits on f without writing anything.
func PlanFile(f *elfx.File, edits []Edit, opts Options) (*Plan, error) {
	m := &model{f: f, path: f.Path, bo: f.ByteOrder(), is64: f.Class == elf.ELFCLASS64, opts: opts, output: map[string]string{},
		verneedFile: map[int64]string{}, versym: map[int64]uint16{}}
	if err := m.load(); err != nil {
		return nil, err
	}
	for _, e := range edits {
		if err := m.apply(e); err != nil {
			return nil, err
		}
	}
	p, err := m.layout()
	if err != nil {
		return nil, err
	}
	p.Edits = edits
	p.Output = m.output
	return p, nil
}

func (m *model) load() error {
	f := m.f
	hsz := int64(52)
	if m.is64 {
		hsz = 64
	}
	var err error
	if m.ehdr, err = saferio.ReadAt(f.ReaderAt(), f.Size, 0, hsz, 0); err != nil {
		return m.errf("reading the ELF header: %v", err)
	}
	if m.is64 {
		m.phoff = m.bo.Uint64(m.ehdr[32:])
		m.phent = int(m.bo.Uint16(m.ehdr[54:]))
	} else {
		m.phoff = uint64(m.bo.Uint32(m.ehdr[28:]))
		m.phent = int(m.bo.Uint16(m.ehdr[42:]))
	}
	if err := m.loadSegments(); err != nil {
		return err
	}
	m.secs = f.ELF().Sections
	if err := m.loadSections(); err != nil {
		return err
	}
	if done, err := m.loadDynamic(); done || err != nil {
		return err
	}
	if err := m.headersDescribeTables(); err != nil {
		return err
	}
	// Verify reads the result's version requirements; unreadable ones are
	// the input's fault, said now.
	if _, err := f.VersionNeeds(); err != nil {
		return err
	}
	m.standIn()
	return m.countRefs()
}

// loadSegments reads the program headers, refuses what the loader could
// not map, and finds how much room the interpreter's name has.
func (m *model) loadSegments() error {
	f := m.f
	for _, p := range f.Progs() {
		m.phdrs = append(m.phdrs, phdr{p})
	}
	if s := f.ELF().Section(".dynamic"); s != nil && s.Type == elf.SHT_NOBITS {
		return m.errf("a separate debug-info file (its .dynamic holds no bytes, SHT_NOBITS): nothing loads it; edit the binary it belongs to")
	}
	// A file whose segments the loader could not map is refused as it is:
	// an edit would keep the fault, and Verify would blame the edit.
	if i, err := segmentsProblem(f.Progs(), f.Size, f.Class); err != nil {
		return &elfx.FormatError{Path: m.path, Offset: int64(m.phoff) + int64(i)*int64(m.phent), What: fmt.Sprintf("program header %d", i), Err: err}
	}
	if i := slices.IndexFunc(f.Progs(), func(p elf.ProgHeader) bool { return p.Type == elf.PT_INTERP }); i >= 0 {
		name, err := f.Interp()
		if err != nil {
			return err
		}
		// What an edit may write over in place is the name and its NUL,
		// not all of PT_INTERP: linker scripts that make the notes
		// contiguous with .interp leave PT_INTERP over them (upstream's
		// contiguous-note-sections and phdr-corruption tests), and an
		// all-zero PT_INTERP is an empty name.
		m.interpRoom = min(uint64(len(name))+1, f.Progs()[i].Filesz)
		// A new name is written over the old one: never over the headers.
		ip, hdrEnd := f.Progs()[i], m.phoff+uint64(len(f.Progs()))*uint64(m.phent)
		if ip.Off < max(hdrEnd, uint64(len(m.ehdr))) {
			return &elfx.FormatError{Path: m.path, Offset: int64(ip.Off), What: "PT_INTERP", Err: fmt.Errorf("the interpreter name at 0x%x overlaps the ELF or program headers (which end at 0x%x)", ip.Off, max(hdrEnd, uint64(len(m.ehdr))))}
		}
	}
	if m.interpRoom > 0 {
		// Where PT_INTERP starts at another section than .interp (a
		// linker script that puts the notes before .interp in one
		// segment: upstream's contiguous-note-sections), its "name" is
		// that section's bytes: nothing is written there, a new name is
		// moved.
		ip := f.Progs()[slices.IndexFunc(f.Progs(), func(p elf.ProgHeader) bool { return p.Type == elf.PT_INTERP })]
		for _, sec := range f.ELF().Sections {
			if sec.Type != elf.SHT_NOBITS && sec.Size > 0 && sec.Name != ".interp" && sec.Offset < ip.Off+m.interpRoom && ip.Off < sec.Offset+sec.Size {
				m.interpRoom = 0
			}
		}
	}
	return nil
}

// loadSections checks that the section headers of what an edit moves or
// rewrites agree with what the loader sees.
func (m *model) loadSections() error {
	f := m.f
	// debug/elf gives a compressed section its uncompressed size; the
	// gABI allows compression only for sections that are not loaded. And
	// a dynamic table is found by its offset (to patch its header when it
	// moves) and by its address (to patch the dynamic entry): the two
	// must name the same bytes.
	if f.Type == elf.ET_REL {
		return m.errf("not a linked file (relocatable object); only executables and shared libraries can be patched")
	}
	dynsym := slices.IndexFunc(m.secs, func(s *elf.Section) bool { return s.Type == elf.SHT_DYNSYM })
	for i, s := range m.secs {
		want, typed := tableType[s.Name]
		_, table := dtForSection[s.Name]
		if (typed || table) && s.Flags&elf.SHF_ALLOC == 0 {
			return m.shdrErr(i, "a section the loader reads, not loaded (no SHF_ALLOC)")
		}
		if s.Flags&elf.SHF_ALLOC == 0 {
			continue
		}
		if s.Addralign&(s.Addralign-1) != 0 {
			return m.shdrErr(i, "alignment %d is not a power of two", s.Addralign)
		}
		if s.Flags&elf.SHF_COMPRESSED != 0 {
			return m.shdrErr(i, "a loaded section marked compressed (SHF_ALLOC and SHF_COMPRESSED): only sections that are not loaded may be")
		}
		if typed && s.Type != want {
			return m.shdrErr(i, "type %v, want %v: tools read it as the wrong kind of table", s.Type, want)
		}
		// Renaming renumbers the symbols the dynamic relocations name,
		// found through the link of their sections.
		if (s.Type == elf.SHT_RELA || s.Type == elf.SHT_REL) && s.Size > 0 && dynsym > 0 && int(s.Link) != dynsym {
			return m.shdrErr(i, "dynamic relocations linked to section %d, not to .dynsym (%d)", s.Link, dynsym)
		}
		// (Whether the dynamic entries point at these sections is checked
		// once they are read: headersDescribeTables.)
		if table && s.Type != elf.SHT_NOBITS && s.Size > 0 {
			if off, ok := f.OffsetOf(s.Addr); ok && uint64(off) != s.Offset {
				return m.shdrErr(i, "offset 0x%x, but its address 0x%x is loaded from offset 0x%x", s.Offset, s.Addr, off)
			}
		}
	}
	// Tools read a table's names and symbols through its link (checked
	// once every table has its type).
	for i, s := range m.secs {
		if want, ok := linkType[s.Type]; ok && (int(s.Link) >= len(m.secs) || m.secs[s.Link].Type != want) {
			return m.shdrErr(i, "linked to section %d, which is not of type %v", s.Link, want)
		}
	}
	return nil
}

// loadDynamic reads the dynamic section, its string table and its
// entries; done is set for a file without one (the interpreter, OS ABI
// and stack edits still work).
func (m *model) loadDynamic() (done bool, err error) {
	f := m.f
	d, err := f.Dynamic()
	if err != nil {
		if errors.Is(err, elfx.ErrNoDynamic) {
			m.standIn()
			return true, nil
		}
		return false, err
	}
	m.dyn = d
	if len(d.Entries) > 0 && len(d.Entries) >= d.Slots {
		// ld.so reads entries until DT_NULL: past the section, into
		// whatever follows (patchelf refuses it too; --add-debug-tag
		// appended after the garbage).
		return false, &elfx.FormatError{Path: m.path, Offset: d.Offset + int64(len(d.Entries))*int64(d.EntrySize), What: "dynamic section",
			Err: fmt.Errorf("no DT_NULL among its %d entries: the loader would read on past its end", len(d.Entries))}
	}
	if m.orig, err = d.StrTabBytes(); err != nil {
		return false, err
	}
	if n := len(m.orig); n > 0 && m.orig[n-1] != 0 {
		// Its last name runs on into whatever follows (the gABI ends a
		// string table with NUL), and grows when strings are appended.
		return false, &elfx.FormatError{Path: m.path, Offset: d.StrTab + int64(n) - 1, What: "dynamic string table", Err: errors.New("does not end in NUL")}
	}
	m.origLen = len(m.orig)
	// Copy on write: m.str shares the original until a string is
	// overwritten in place or appended.
	m.str = m.orig[:len(m.orig):len(m.orig)]
	for _, e := range d.Entries {
		x := ent{tag: e.Tag, val: e.Value}
		if isStrTag(e.Tag) {
			s, ok := d.String(e.Value)
			if !ok {
				return false, m.errf("%v string offset 0x%x outside the dynamic string table", e.Tag, e.Value)
			}
			x.str, x.ok = s, true
		}
		m.ents = append(m.ents, x)
	}
	return false, nil
}

// headersDescribeTables checks that each symbol, string, hash and version
// table the dynamic section points at is loaded from the file; for a file
// with section headers, that a loaded section of the table's type starts
// at it, read from the offset its address is loaded from (the headers say
// what lies where when the program header table grows over what follows
// it, and a table they do not describe would be overwritten); and that
// the tables do not overlap.
func (m *model) headersDescribeTables() error {
	for i, e := range m.ents {
		if _, ok := typeForDT[e.tag]; !ok {
			continue
		}
		at := m.dyn.Offset + int64(i)*int64(m.dyn.EntrySize)
		if e.val == 0 {
			return &elfx.FormatError{Path: m.path, Offset: at, What: "dynamic section", Err: fmt.Errorf("%v is 0: no table lies at the ELF header", e.tag)}
		}
		if _, ok := m.f.OffsetOf(e.val); !ok {
			return &elfx.FormatError{Path: m.path, Offset: at, What: "dynamic section",
				Err: fmt.Errorf("%v points at 0x%x, which no PT_LOAD loads from the file", e.tag, e.val)}
		}
	}
	size := func(tag elf.DynTag) uint64 { v, _ := m.dyn.Value(tag); return v }
	for i, e := range m.ents {
		if len(m.secs) == 0 {
			break
		}
		want, ok := typeForDT[e.tag]
		switch e.tag {
		case elf.DT_RELA:
			// (GNU ld's -z pack-relative-relocs leaves DT_RELA 0 with no
			// relocations in it.)
			want, ok = elf.SHT_RELA, size(elf.DT_RELASZ) > 0
		case elf.DT_REL:
			want, ok = elf.SHT_REL, size(elf.DT_RELSZ) > 0
		case elf.DT_JMPREL:
			// Renaming renumbers the symbols relocations name, in the
			// sections of these types.
			want, ok = elf.SHT_REL, size(elf.DT_PLTRELSZ) > 0
			if v, _ := m.dyn.Value(elf.DT_PLTREL); elf.DynTag(v) == elf.DT_RELA {
				want = elf.SHT_RELA
			}
		}
		if !ok {
			continue
		}
		j := slices.IndexFunc(m.secs, func(s *elf.Section) bool { return s.Flags&elf.SHF_ALLOC != 0 && s.Addr == e.val && s.Type == want })
		if j < 0 && (e.tag == elf.DT_GNU_HASH || e.tag == elf.DT_HASH) && !slices.ContainsFunc(m.secs, func(s *elf.Section) bool {
			return s.Flags&elf.SHF_ALLOC != 0 && s.Type != elf.SHT_NOBITS && e.val >= s.Addr && e.val-s.Addr < max(s.Size, 1)
		}) {
			// Its section header was stripped away (strip
			// --remove-section=.gnu.hash: upstream's no-gnu-hash test) and
			// no other section claims the bytes: the loader still reads the
			// table there. It is left where it is; an edit that would move
			// it or grow over it is refused (makeRoom, renameSymbols).
			off, _ := m.f.OffsetOf(e.val)
			m.undescribed = append(m.undescribed, undescribed{tag: e.tag, off: uint64(off)})
			continue
		}
		if j < 0 {
			return &elfx.FormatError{Path: m.path, Offset: m.dyn.Offset + int64(i)*int64(m.dyn.EntrySize), What: "dynamic section",
				Err: fmt.Errorf("%v points at 0x%x, where no section header describes a table of type %v", e.tag, e.val, want)}
		}
		// Its header is found by offset when the table moves, and names
		// are read through it.
		if off, ok := m.f.OffsetOf(e.val); ok && uint64(off) != m.secs[j].Offset {
			return m.shdrErr(j, "offset 0x%x, but %v 0x%x is loaded from offset 0x%x", m.secs[j].Offset, e.tag, e.val, off)
		}
		if n, ok := m.dyn.Value(elf.DT_STRSZ); ok && e.tag == elf.DT_STRTAB && n != m.secs[j].Size {
			return m.shdrErr(j, "size 0x%x, but DT_STRSZ is 0x%x: the loader reads another table than the section header names", m.secs[j].Size, n)
		}
	}
	// The tables may not overlap: an edit moves and rewrites each on its
	// own, and no loaded section (a note that moves with them) may overlap
	// one. Without section headers the loader's view stands in (standIn),
	// its extents derived (the symbol count from the hash table), and an
	// overlap means a count derived from garbage.
	secs := m.f.SymbolSections()
	if len(m.secs) > 0 {
		secs = nil
		for _, s := range m.secs {
			if s.Flags&elf.SHF_ALLOC != 0 {
				secs = append(secs, s)
			}
		}
	}
	// Nor lie over the ELF header and the program header table, which an
	// edit rewrites and grows.
	// (Two ranges: a table placed late in the file is not "headers"
	// from offset 0 on.)
	ehdr := &elf.Section{SectionHeader: elf.SectionHeader{Name: "the ELF header", Type: elf.SHT_PROGBITS, Size: uint64(len(m.ehdr))}}
	table := &elf.Section{SectionHeader: elf.SectionHeader{Name: "the program header table", Type: elf.SHT_PROGBITS,
		Offset: m.phoff, Size: uint64(len(m.phdrs)) * uint64(m.phent)}}
	secs = append([]*elf.Section{ehdr, table}, secs...)
	// And the interpreter name and the dynamic section (rewritten in
	// place) lie in their own sections, or in none.
	own := map[*elf.Section]elf.SectionType{}
	for _, seg := range []struct {
		t    elf.ProgType
		name string
		own  elf.SectionType
	}{{elf.PT_INTERP, "the interpreter name (PT_INTERP)", elf.SHT_PROGBITS}, {elf.PT_DYNAMIC, "the dynamic section (PT_DYNAMIC)", elf.SHT_DYNAMIC}} {
		if i := slices.IndexFunc(m.phdrs, func(p phdr) bool { return p.Type == seg.t }); i >= 0 {
			size := m.phdrs[i].Filesz
			if seg.t == elf.PT_INTERP {
				size = m.interpRoom
			}
			s := &elf.Section{SectionHeader: elf.SectionHeader{Name: seg.name, Type: elf.SHT_PROGBITS, Offset: m.phdrs[i].Off, Size: size}}
			own[s] = seg.own
			secs = append([]*elf.Section{s}, secs...)
		}
	}
	isOwn := func(a, b *elf.Section) bool {
		t, ok := own[a]
		// (.interp holds the name and may be longer: a shorter name, or
		// an empty one, written over it.)
		return ok && b.Type == t && b.Offset == a.Offset && (b.Size == a.Size || t == elf.SHT_PROGBITS && b.Size > a.Size)
	}
	for i, a := range secs {
		for _, b := range secs[i+1:] {
			if isOwn(a, b) || isOwn(b, a) {
				continue
			}
			if a.Type != elf.SHT_NOBITS && b.Type != elf.SHT_NOBITS && b.Size > 0 && a.Size > 0 && (within(a.Offset, b.Offset, b.Size) || within(b.Offset, a.Offset, a.Size)) {
				return &elfx.FormatError{Path: m.path, Offset: int64(b.Offset), What: "dynamic tables",
					Err: fmt.Errorf("%s at 0x%x (0x%x bytes) and %s at 0x%x (0x%x bytes) overlap", a.Name, a.Offset, a.Size, b.Name, b.Offset, b.Size)}
			}
		}
	}
	return nil
}

// within reports whether o lies in [start, start+n).
func within(o, start, n uint64) bool { return o >= start && o-start < n }

// shdrErr is a malformed-file error about section header i.
func (m *model) shdrErr(i int, format string, args ...any) error {
	var shoff, shent uint64
	if m.is64 {
		shoff, shent = m.bo.Uint64(m.ehdr[40:]), uint64(m.bo.Uint16(m.ehdr[58:]))
	} else {
		shoff, shent = uint64(m.bo.Uint32(m.ehdr[32:])), uint64(m.bo.Uint16(m.ehdr[46:]))
	}
	return &elfx.FormatError{Path: m.path, Offset: int64(shoff + uint64(i)*shent), What: fmt.Sprintf("section header %d (%s)", i, m.secs[i].Name),
		Err: fmt.Errorf(format, args...)}
}

// linkType is the type of the section each dynamic table links to.
var linkType = map[elf.SectionType]elf.SectionType{
	elf.SHT_DYNSYM: elf.SHT_STRTAB, elf.SHT_GNU_VERDEF: elf.SHT_STRTAB, elf.SHT_GNU_VERNEED: elf.SHT_STRTAB,
	elf.SHT_GNU_VERSYM: elf.SHT_DYNSYM, elf.SHT_GNU_HASH: elf.SHT_DYNSYM, elf.SHT_HASH: elf.SHT_DYNSYM,
}

// typeForDT is the section type of the table each of these dynamic
// entries points at.
var typeForDT = map[elf.DynTag]elf.SectionType{
	elf.DT_STRTAB: elf.SHT_STRTAB, elf.DT_SYMTAB: elf.SHT_DYNSYM, elf.DT_HASH: elf.SHT_HASH, elf.DT_GNU_HASH: elf.SHT_GNU_HASH,
	elf.DT_VERSYM: elf.SHT_GNU_VERSYM, elf.DT_VERDEF: elf.SHT_GNU_VERDEF, elf.DT_VERNEED: elf.SHT_GNU_VERNEED,
}

// countRefs records every reference into .dynstr: dynamic entries,
// .dynsym names and the version sections.
func (m *model) countRefs() error {
	// Every reference to a .dynstr offset, as a sorted multiset: a few
	// bytes per dynamic symbol instead of a map entry.
	m.refOff = m.refOff[:0]
	add := func(o uint64) { m.refOff = append(m.refOff, o) }
	for _, e := range m.ents {
		if e.ok {
			add(e.val)
		}
	}
	// The loader's view: for a file without section headers the tables
	// are found through the dynamic segment, and a string a symbol or a
	// version names must not be taken for a free one.
	read := func(s *elf.Section) ([]byte, error) {
		return saferio.ReadAt(m.f.ReaderAt(), m.f.Size, int64(s.Offset), int64(s.Size), 1<<30)
	}
	if s := m.f.SymbolSection(elf.SHT_DYNSYM); s != nil && s.Type != elf.SHT_NOBITS {
		// Streamed in chunks: .dynsym of a large library is megabytes.
		sz := uint64(16)
		if m.is64 {
			sz = 24
		}
		n := s.Size / sz
		m.refOff = slices.Grow(m.refOff, int(min(n, 1<<24)))
		const per = 4096
		var b []byte
		for i := uint64(0); i < n; i += per {
			k := min(per, n-i)
			var err error
			b, err = readInto(m.f, b, int64(s.Offset+i*sz), int(k*sz))
			if err != nil {
				return m.errf(".dynsym: %v", err)
			}
			for j := uint64(0); j < k; j++ {
				o := uint64(m.bo.Uint32(b[j*sz:]))
				if o >= uint64(m.origLen) && o > 0 { // (0 is no name, even in an empty table)
					return m.outside(int64(s.Offset+(i+j)*sz), fmt.Sprintf(".dynsym entry %d", i+j), o)
				}
				add(o)
			}
		}
	}
	walk := func(t elf.SectionType, entsz, auxsz int, nameAt func(e []byte) []uint64, auxName func(a []byte) uint64, cntAt, auxAt, nextAt, auxNextAt int) error {
		s := m.f.SymbolSection(t)
		if s == nil {
			return nil
		}
		b, err := read(s)
		if err != nil {
			return m.errf("%s: %v", s.Name, err)
		}
		off := 0
		for n := 0; n < len(b)/entsz+1 && off+entsz <= len(b); n++ {
			e := b[off:]
			for _, o := range nameAt(e) {
				if o >= uint64(m.origLen) {
					return m.outside(int64(s.Offset)+int64(off), s.Name, o)
				}
				add(o)
			}
			cnt := int(m.bo.Uint16(e[cntAt:]))
			a := off + int(m.bo.Uint32(e[auxAt:]))
			for i := 0; i < cnt && a >= 0 && a+auxsz <= len(b); i++ {
				if o := auxName(b[a:]); o >= uint64(m.origLen) {
					return m.outside(int64(s.Offset)+int64(a), s.Name, o)
				}
				add(auxName(b[a:]))
				an := int(m.bo.Uint32(b[a+auxNextAt:]))
				if an == 0 {
					break
				}
				a += an
			}
			next := int(m.bo.Uint32(e[nextAt:]))
			if next == 0 {
				break
			}
			off += next
		}
		return nil
	}
	if err := walk(elf.SHT_GNU_VERDEF, 20, 8, func([]byte) []uint64 { return nil },
		func(a []byte) uint64 { return uint64(m.bo.Uint32(a)) }, 6, 12, 16, 4); err != nil {
		return err
	}
	if err := walk(elf.SHT_GNU_VERNEED, 16, 16, func(e []byte) []uint64 { return []uint64{uint64(m.bo.Uint32(e[4:]))} },
		func(a []byte) uint64 { return uint64(m.bo.Uint32(a[8:])) }, 2, 8, 12, 12); err != nil {
		return err
	}
	sortUint64s(m.refOff)
	return nil
}

// tableType is the section type of the dynamic tables (and .interp) an
// edit reads, rewrites or moves, by name: strip and readelf find them by
// type, and a section of another type with the name would be taken for
// them.
var tableType = map[string]elf.SectionType{
	".dynstr": elf.SHT_STRTAB, ".dynsym": elf.SHT_DYNSYM, ".gnu.hash": elf.SHT_GNU_HASH, ".hash": elf.SHT_HASH,
	".gnu.version": elf.SHT_GNU_VERSYM, ".gnu.version_d": elf.SHT_GNU_VERDEF, ".gnu.version_r": elf.SHT_GNU_VERNEED,
	".dynamic": elf.SHT_DYNAMIC, ".interp": elf.SHT_PROGBITS,
}

// outside is the error for a name at offset o outside the dynamic string
// table, referred to by what at file offset at: the loader would read it
// from whatever follows the table, and a grown table would change it.
func (m *model) outside(at int64, what string, o uint64) error {
	return &elfx.FormatError{Path: m.path, Offset: at, What: what,
		Err: fmt.Errorf("name offset 0x%x outside the dynamic string table (0x%x bytes)", o, m.origLen)}
}

// refCount is the number of references to .dynstr offset o.
func (m *model) refCount(o uint64) int {
	i, found := slices.BinarySearch(m.refOff, o)
	if !found {
		return 0
	}
	j := i
	for j < len(m.refOff) && m.refOff[j] == o {
		j++
	}
	return j - i
}

// dropRef forgets one reference to o.
func (m *model) dropRef(o uint64) {
	if i, found := slices.BinarySearch(m.refOff, o); found {
		m.refOff = slices.Delete(m.refOff, i, i+1)
	}
}

// intern returns the dynstr offset of s, reusing an existing occurrence,
// overwriting the string at old (when only this reference uses it and s
// fits), or appending.
func (m *model) intern(s string, old uint64, hasOld bool) uint64 {
	needle := append([]byte(s), 0)
	if i := bytes.Index(m.str, needle); i >= 0 {
		return uint64(i)
	}
	if hasOld && old < uint64(m.origLen) {
		oldLen := uint64(bytes.IndexByte(m.str[old:], 0))
		// The bytes are the old string's alone: no other reference to it,
		// to a suffix of it, or to a string it is the suffix of (linkers
		// merge a name into the tail of a longer one).
		run := uint64(bytes.LastIndexByte(m.str[:old], 0) + 1)
		if uint64(len(s)) <= oldLen && m.refsIn(run, old+oldLen) == 1 && m.refCount(old) == 1 {
			if !m.strOwned {
				m.str, m.strOwned = bytes.Clone(m.str), true
			}
			copy(m.str[old:], needle)
			for i := old + uint64(len(s)); i <= old+oldLen; i++ {
				m.str[i] = 0
			}
			return old
		}
	}
	off := uint64(len(m.str))
	m.str = append(m.str, needle...) // reallocates while shared: cap == len
	m.strOwned = true
	// A grown table is written whole into a new segment, so the original
	// bytes (also held by the file's cache) are not needed again.
	m.orig = nil
	m.f.ForgetTables()
	return off
}

// refsIn counts the references to offsets in [lo, hi].
func (m *model) refsIn(lo, hi uint64) int {
	i, _ := slices.BinarySearch(m.refOff, lo)
	j := i
	for j < len(m.refOff) && m.refOff[j] <= hi {
		j++
	}
	return j - i
}

// undescribed is a table the dynamic section names at a file offset no
// section header describes.
type undescribed struct {
	tag elf.DynTag
	off uint64
}

// pie reports a position-independent executable (DF_1_PIE).
func (m *model) pie() bool {
	return slices.ContainsFunc(m.ents, func(e ent) bool {
		return e.tag == elf.DT_FLAGS_1 && elf.DynFlag1(e.val)&elf.DF_1_PIE != 0
	})
}

// staticPIE reports a static-pie executable: position independent (ET_DYN
// with DF_1_PIE) but with no PT_INTERP, so nothing reads its dynamic
// section but its own start-up code.
func (m *model) staticPIE() bool {
	if m.f.Type != elf.ET_DYN || m.dyn == nil {
		return false
	}
	for _, p := range m.phdrs {
		if p.Type == elf.PT_INTERP {
			return false
		}
	}
	for _, e := range m.ents {
		if e.tag == elf.DT_FLAGS_1 && elf.DynFlag1(e.val)&elf.DF_1_PIE != 0 {
			return true
		}
	}
	return false
}

func (m *model) needDynamic(what string) error {
	if m.dyn == nil {
		return &Error{Path: m.path, Msg: fmt.Sprintf("no dynamic section for --%s to edit: the file is statically linked", what),
			Patchelf: fmt.Sprintf("cannot find section '.dynamic'. The input file is most likely statically linked (%s)", what)}
	}
	return nil
}

// setStr sets entry i to string s.
func (m *model) setStr(i int, s string) {
	e := &m.ents[i]
	if e.ok && e.str == s {
		return
	}
	old, had := e.val, e.ok
	nv := m.intern(s, old, had)
	e.str, e.ok = s, true
	if had && nv == old {
		return // overwritten in place
	}
	if had {
		m.dropRef(old)
	}
	e.val = nv
	m.addRef(nv)
	// (After the new reference: the new value may be a suffix of the old.)
	if had && (e.tag == elf.DT_RPATH || e.tag == elf.DT_RUNPATH) && !m.opts.NoClobberOldSections {
		m.taint(old)
	}
}

// taint overwrites the string at old in the original table with 'X's
// when nothing references it, a suffix of it, or a string it ends
// (patchelf's "tainting old rpath with Xs": the old search path must not
// linger for Nix's reference scanner or a reader).
func (m *model) taint(old uint64) {
	if old >= uint64(m.origLen) || old >= uint64(len(m.str)) {
		return
	}
	n := uint64(bytes.IndexByte(m.str[old:], 0))
	run := uint64(bytes.LastIndexByte(m.str[:old], 0) + 1)
	if n == 0 || m.refsIn(run, old+n) > 0 {
		return
	}
	if !m.strOwned {
		m.str, m.strOwned = bytes.Clone(m.str), true
	}
	for i := old; i < old+n; i++ {
		m.str[i] = 'X'
	}
}

// addRef records a new reference so later in-place overwrites respect it.
func (m *model) addRef(o uint64) {
	i, _ := slices.BinarySearch(m.refOff, o)
	m.refOff = slices.Insert(m.refOff, i, o)
}

func (m *model) find(tag elf.DynTag) int {
	for i, e := range m.ents {
		if e.tag == tag {
			return i
		}
	}
	return -1
}

func (m *model) insert(at int, e ent) {
	m.ents = append(m.ents, ent{})
	copy(m.ents[at+1:], m.ents[at:])
	m.ents[at] = e
}

func (m *model) addStr(at int, tag elf.DynTag, s string) {
	off := m.intern(s, 0, false)
	m.addRef(off)
	m.insert(at, ent{tag: tag, val: off, str: s, ok: true})
}

func (m *model) remove(pred func(ent) bool) {
	out := m.ents[:0]
	for _, e := range m.ents {
		if pred(e) {
			if e.ok {
				m.dropRef(e.val)
			}
			continue
		}
		out = append(out, e)
	}
	m.ents = out
}

// rpath returns the current run path and its tag.
func (m *model) rpath() (string, elf.DynTag, int) {
	if i := m.find(elf.DT_RUNPATH); i >= 0 {
		return m.ents[i].str, elf.DT_RUNPATH, i
	}
	if i := m.find(elf.DT_RPATH); i >= 0 {
		return m.ents[i].str, elf.DT_RPATH, i
	}
	return "", 0, -1
}

func (m *model) setRPath(v string) {
	_, tag, i := m.rpath()
	want := elf.DT_RUNPATH
	if m.opts.ForceRPath {
		want = elf.DT_RPATH
		m.remove(func(e ent) bool { return e.tag == elf.DT_RUNPATH })
		_, tag, i = m.rpath()
	}
	if i < 0 {
		m.addStr(m.stringInsertPoint(), want, v)
		return
	}
	if tag != want {
		m.ents[i].tag = want
	}
	m.setStr(i, v)
	// A leftover DT_RPATH next to the new DT_RUNPATH would be ignored by the
	// loader but confuses readers; drop it.
	if want == elf.DT_RUNPATH {
		m.remove(func(e ent) bool { return e.tag == elf.DT_RPATH })
	}
}

// stringInsertPoint is where new string entries go: after the last
// DT_NEEDED/DT_SONAME/DT_RUNPATH group, like linkers order them.
func (m *model) stringInsertPoint() int {
	at := 0
	for i, e := range m.ents {
		if e.tag == elf.DT_NEEDED || e.tag == elf.DT_SONAME || e.tag == elf.DT_RPATH || e.tag == elf.DT_RUNPATH {
			at = i + 1
		}
	}
	return at
}

func (m *model) apply(e Edit) error {
	switch e.Kind {
	case KindSetOSABI:
		v, err := ParseOSABI(e.Arg)
		if err != nil {
			return m.errf("%v", err)
		}
		m.osabi = &v
		return nil
	case KindSetInterpreter:
		if e.Arg == "" {
			return nil // (patchelf: an empty name changes nothing)
		}
		has := false
		for _, p := range m.phdrs {
			has = has || p.Type == elf.PT_INTERP
		}
		if !has {
			return &Error{Path: m.path, Msg: "no program interpreter (no PT_INTERP) to replace: a shared library or a statically linked program has none, and --set-interpreter does not add one",
				Patchelf: "cannot find section '.interp'. The input file is most likely statically linked"}
		}
		v := e.Arg
		m.interp = &v
		return nil
	case KindBuildResolutionCache:
		// (Without a dynamic section there is nothing to resolve: a
		// warning when the plan is made, as patchelf gives.)
		if m.opts.ForceRPath {
			return &Error{Path: m.path, Msg: "--build-resolution-cache cannot be combined with --force-rpath", Patchelf: "--build-resolution-cache cannot be combined with --force-rpath"}
		}
		m.buildCache = true
		return nil
	case KindClearExecStack, KindSetExecStack:
		flags := uint32(elf.PF_R | elf.PF_W)
		if e.Kind == KindSetExecStack {
			flags |= uint32(elf.PF_X)
		}
		found := false
		for _, p := range m.phdrs {
			found = found || p.Type == elf.PT_GNU_STACK
		}
		m.stack = &flags
		m.addGNUStack = !found
		return nil
	}
	if err := m.needDynamic(string(e.Kind)); err != nil {
		return err
	}
	if m.staticPIE() {
		return m.errf("static-pie executable (DF_1_PIE, no interpreter): it relocates itself without the dynamic loader, "+
			"so --%s would have no effect and moving its dynamic section would break it; relink it instead", e.Kind)
	}
	// What makes a resolution cache note stale, as patchelf decides it: a
	// run path that changes (removing one, even none), NEEDED entries
	// added, removed or replaced.
	setRPath := func(v string) {
		if old, _, i := m.rpath(); i < 0 || old != v {
			m.cacheStale = true
		}
		m.setRPath(v)
	}
	switch e.Kind {
	case KindSetRPath:
		setRPath(e.Arg)
	case KindAddRPath:
		old, _, i := m.rpath()
		if i < 0 || old == "" {
			setRPath(e.Arg)
		} else {
			setRPath(old + ":" + e.Arg)
		}
	case KindRemoveRPath:
		m.cacheStale = true
		m.remove(func(x ent) bool { return x.tag == elf.DT_RPATH || x.tag == elf.DT_RUNPATH })
	case KindShrinkRPath:
		old, _, i := m.rpath()
		if i < 0 {
			m.cacheStale = true
			return nil
		}
		setRPath(m.shrink(old, e.Allowed))
	case KindAddNeeded:
		m.cacheStale = true
		for _, x := range m.ents {
			if x.tag == elf.DT_NEEDED && x.str == e.Arg {
				return nil
			}
		}
		m.addStr(0, elf.DT_NEEDED, e.Arg) // patchelf puts new NEEDED entries first
	case KindRemoveNeeded:
		m.remove(func(x ent) bool {
			if x.tag == elf.DT_NEEDED && x.str == e.Arg {
				m.cacheStale = true
				return true
			}
			return false
		})
	case KindReplaceNeeded:
		for i, x := range m.ents {
			if x.tag == elf.DT_NEEDED && x.str == e.Arg && e.Arg != e.Arg2 {
				m.setStr(i, e.Arg2)
				m.cacheStale = true
			}
		}
		if err := m.replaceVerneedFile(e.Arg, e.Arg2); err != nil {
			return err
		}
	case KindSetSoname:
		if i := m.find(elf.DT_SONAME); i >= 0 {
			m.setStr(i, e.Arg)
		} else {
			m.addStr(m.stringInsertPoint(), elf.DT_SONAME, e.Arg)
		}
	case KindNoDefaultLib:
		if i := m.find(elf.DT_FLAGS_1); i >= 0 {
			m.ents[i].val |= uint64(elf.DF_1_NODEFLIB)
		} else {
			m.insert(len(m.ents), ent{tag: elf.DT_FLAGS_1, val: uint64(elf.DF_1_NODEFLIB)})
		}
	case KindAddDebugTag:
		if m.find(elf.DT_DEBUG) < 0 {
			m.insert(len(m.ents), ent{tag: elf.DT_DEBUG})
		}

	case KindClearSymbolVersion:
		return m.clearSymbolVersion(e.Arg)
	case KindRenameDynamicSymbols:
		return m.renameSymbols(e.Renames)
	default:
		return m.errf("unknown edit %q", e.Kind)
	}
	return nil
}

// shrink keeps the run-path directories that hold a NEEDED library of the
// file's class and machine (and, when allowed is set, start with one of
// those prefixes). Relative and $ORIGIN entries are kept, as patchelf does.
func (m *model) shrink(rp string, allowed []string) string {
	var needed []string
	for _, e := range m.ents {
		if e.tag == elf.DT_NEEDED {
			needed = append(needed, e.str)
		}
	}
	var keep []string
	found := map[string]bool{}
	for _, dir := range strings.Split(rp, ":") {
		if dir == "" {
			continue
		}
		if !strings.HasPrefix(dir, "/") {
			keep = append(keep, dir)
			continue
		}
		if len(allowed) > 0 {
			ok := false
			for _, a := range allowed {
				ok = ok || strings.HasPrefix(dir, a)
			}
			if !ok {
				continue
			}
		}
		useful := false
		for _, n := range needed {
			if found[n] {
				continue
			}
			// Not filepath.Join: "dir/link/../lib" is opened as it is,
			// ".." taken from where the link leads, as ld.so and patchelf
			// take it.
			f, err := elfx.Open(rawpath.Join(dir, n))
			if err != nil {
				continue
			}
			if f.Class == m.f.Class && f.Machine == m.f.Machine && f.Data == m.f.Data {
				found[n] = true
				useful = true
			}
			f.Close()
		}
		if useful {
			keep = append(keep, dir)
		}
	}
	return strings.Join(keep, ":")
}

// standIn makes, for a file without section headers, the sections that
// stand in for them (loaderSections), with or without a dynamic section.
func (m *model) standIn() {
	if len(m.secs) == 0 {
		m.secs, m.pseudo = m.loaderSections(), true
	}
}

func (m *model) replaceVerneedFile(old, repl string) error {
	s := m.f.SymbolSection(elf.SHT_GNU_VERNEED)
	if s == nil {
		return nil
	}
	b, err := saferio.ReadAt(m.f.ReaderAt(), m.f.Size, int64(s.Offset), int64(s.Size), 1<<24)
	if err != nil {
		return m.errf(".gnu.version_r: %v", err)
	}
	off := 0
	for n := 0; n < len(b)/16+1 && off+16 <= len(b); n++ {
		fo := uint64(m.bo.Uint32(b[off+4:]))
		name, ok := m.dyn.String(fo)
		field := int64(s.Offset) + int64(off) + 4
		if cur, done := m.verneedFile[field]; done {
			name, ok = cur, true
		}
		if ok && name == old {
			m.verneedFile[field] = repl
		}
		next := int(m.bo.Uint32(b[off+12:]))
		if next == 0 {
			break
		}
		off += next
	}
	return nil
}

func (m *model) clearSymbolVersion(name string) error {
	ds, vs := m.f.SymbolSection(elf.SHT_DYNSYM), m.f.SymbolSection(elf.SHT_GNU_VERSYM)
	if ds == nil || vs == nil {
		return nil
	}
	t, err := m.f.DynamicSymbolTable()
	if err != nil {
		return err
	}
	for i := 1; i < t.Len(); i++ {
		if t.Symbol(i).Name == name {
			m.versym[int64(vs.Offset)+int64(2*i)] = 1 // VER_NDX_GLOBAL
		}
	}
	return nil
}

func (m *model) pageSize() uint64 {
	if m.opts.PageSize != 0 {
		return m.opts.PageSize
	}
	switch m.f.Machine {
	case elf.EM_AARCH64, elf.EM_PPC64, elf.EM_LOONGARCH:
		return 65536
	}
	return 4096
}

func align(v, a uint64) uint64 {
	if a <= 1 {
		return v
	}
	return (v + a - 1) / a * a
}
