package elfx

import (
	"debug/elf"
	"errors"
	"fmt"

	"github.com/rocmdoctor/rocmdoctor/internal/saferio"
)

// Symbol is a symbol table entry with its GNU version.
type Symbol struct {
	Name       string
	Value      uint64
	Size       uint64
	Bind       elf.SymBind
	Type       elf.SymType
	Visibility elf.SymVis
	Section    elf.SectionIndex

	// Version is the version name: for a defined symbol the .gnu.version_d
	// node, for an undefined one the .gnu.version_r requirement. Empty for
	// unversioned symbols (index 0 and 1).
	Version string
	// Library is the file a versioned undefined symbol's requirement names
	// (vn_file), e.g. "libc.so.6".
	Library string
	// VersionIndex is the raw .gnu.version index without the hidden bit.
	VersionIndex uint16
	// HiddenVersion is true when the hidden bit is set: a defined symbol is
	// then "name@VER" (not the default) rather than "name@@VER".
	HiddenVersion bool
}

// Defined reports whether the symbol is defined in this file (not SHN_UNDEF).
func (s Symbol) Defined() bool { return s.Section != elf.SHN_UNDEF }

// Common reports whether the symbol is a common block.
func (s Symbol) Common() bool { return s.Section == elf.SHN_COMMON }

// Absolute reports whether the symbol has an absolute value (SHN_ABS).
func (s Symbol) Absolute() bool { return s.Section == elf.SHN_ABS }

// Weak reports STB_WEAK binding.
func (s Symbol) Weak() bool { return s.Bind == elf.STB_WEAK }

// DefaultVersion reports whether a defined versioned symbol is the default
// ("@@") version of a node this file defines. A definition whose version
// comes from .gnu.version_r (a copy-relocated object in an executable) is
// not a default definition.
func (s Symbol) DefaultVersion() bool {
	return s.Defined() && s.Version != "" && s.Library == "" && !s.HiddenVersion
}

// VersionedName renders the symbol as nm does: "name@@VER" for a default
// definition, "name@VER" for a hidden one or a reference, "name" otherwise
// (including the absolute symbol that names a version node itself, e.g.
// GLIBC_2.2.5 in libc.so.6).
func (s Symbol) VersionedName() string {
	if s.Version == "" || (s.Absolute() && s.Name == s.Version) {
		return s.Name
	}
	if s.DefaultVersion() {
		return s.Name + "@@" + s.Version
	}
	return s.Name + "@" + s.Version
}

// Kind is one word for the definition state: "undefined", "common",
// "absolute" or "defined".
func (s Symbol) Kind() string {
	switch {
	case !s.Defined():
		return "undefined"
	case s.Common():
		return "common"
	case s.Absolute():
		return "absolute"
	}
	return "defined"
}

// DynamicSymbols returns the dynamic symbol table (.dynsym) without the null
// symbol at index 0. A file without .dynsym returns nil, nil.
func (f *File) DynamicSymbols() (syms []Symbol, err error) {
	if f.ef.SectionByType(elf.SHT_DYNSYM) == nil {
		if f.SymbolSection(elf.SHT_DYNSYM) == nil {
			return nil, nil
		}
		return f.dynamicSymbolsFromTable()
	}
	var raw []elf.Symbol
	func() {
		defer guard(f.Path, "dynamic symbol table", &err)
		raw, err = f.ef.DynamicSymbols()
	}()
	if err != nil {
		return nil, f.wrapSectionErr(elf.SHT_DYNSYM, "dynamic symbol table", err)
	}
	return convertSymbols(raw), nil
}

// dynamicSymbolsFromTable is DynamicSymbols for a file whose dynamic
// symbols are found through the dynamic segment (no .dynsym header).
func (f *File) dynamicSymbolsFromTable() ([]Symbol, error) {
	t, err := f.symbolTable(nil)
	if err != nil {
		return nil, err
	}
	syms := make([]Symbol, 0, max(t.Len()-1, 0))
	for i := 1; i < t.Len(); i++ {
		syms = append(syms, t.Symbol(i))
	}
	return syms, nil
}

// Symbols returns the static symbol table (.symtab) without the null symbol.
// A file without .symtab returns nil, nil.
func (f *File) Symbols() (syms []Symbol, err error) {
	if f.ef.SectionByType(elf.SHT_SYMTAB) == nil {
		return nil, nil
	}
	var raw []elf.Symbol
	func() {
		defer guard(f.Path, "symbol table", &err)
		raw, err = f.ef.Symbols()
	}()
	if err != nil {
		return nil, f.wrapSectionErr(elf.SHT_SYMTAB, "symbol table", err)
	}
	return convertSymbols(raw), nil
}

func (f *File) wrapSectionErr(t elf.SectionType, what string, err error) error {
	var fe *FormatError
	if errors.As(err, &fe) {
		return err
	}
	off := int64(-1)
	if s := f.SymbolSection(t); s != nil {
		off = int64(s.Offset)
	}
	return f.formatErr(off, what, err)
}

func convertSymbols(raw []elf.Symbol) []Symbol {
	out := make([]Symbol, len(raw))
	for i, r := range raw {
		s := Symbol{
			Name:       r.Name,
			Value:      r.Value,
			Size:       r.Size,
			Bind:       elf.ST_BIND(r.Info),
			Type:       elf.ST_TYPE(r.Info),
			Visibility: elf.ST_VISIBILITY(r.Other),
			Section:    r.Section,
		}
		if r.HasVersion {
			s.VersionIndex = r.VersionIndex.Index()
			s.HiddenVersion = r.VersionIndex.IsHidden()
			if s.VersionIndex > 1 {
				s.Version = r.Version
				s.Library = r.Library
			}
		}
		out[i] = s
	}
	return out
}

// VersionDef is an entry of .gnu.version_d.
type VersionDef struct {
	Index uint16
	Name  string
	Base  bool     // VER_FLG_BASE: the node naming the file itself
	Weak  bool     // VER_FLG_WEAK
	Deps  []string // parents (vda entries after the first)
}

// VersionNeed is an entry of .gnu.version_r: the versions needed from one file.
type VersionNeed struct {
	File     string
	Versions []VersionAux
}

// VersionAux is one required version.
type VersionAux struct {
	Name  string
	Index uint16
	Weak  bool
}

const (
	verFlgBase = 0x1
	verFlgWeak = 0x2
)

// versionSection reads a version section and finds its linked string
// table, whose names are then read one at a time: version names are few,
// and the table is .dynstr (3 MB in libLLVM).
func (f *File) versionSection(t elf.SectionType, what string) (*elf.Section, []byte, strTab, error) {
	sec := f.SymbolSection(t)
	if sec == nil {
		return nil, nil, strTab{}, nil
	}
	b, err := f.readRange(int64(sec.Offset), sec.Size, what)
	if err != nil {
		return nil, nil, strTab{}, err
	}
	if int(sec.Link) <= 0 || int(sec.Link) >= len(f.SymbolSections()) {
		return nil, nil, strTab{}, f.formatErr(int64(sec.Offset), what, fmt.Errorf("string table link %d out of range", sec.Link))
	}
	ss := f.SymbolSections()[sec.Link]
	if err := saferio.Check(f.Size, int64(ss.Offset), int64(ss.Size)); err != nil && ss.Type != elf.SHT_NOBITS {
		return nil, nil, strTab{}, f.formatErr(int64(ss.Offset), what+" strings", err)
	}
	return sec, b, f.strTab(int64(ss.Offset), ss.Size), nil
}

// VersionDefs returns .gnu.version_d (Elf_Verdef/Elf_Verdaux chains), or
// nil when absent.
func (f *File) VersionDefs() ([]VersionDef, error) {
	sec, b, strs, err := f.versionSection(elf.SHT_GNU_VERDEF, verdefWhat)
	if sec == nil || err != nil {
		return nil, err
	}
	defs, _, err := f.parseVersionDefs(int64(sec.Offset), b, strs)
	return defs, err
}

const (
	verdefWhat  = "version definitions (.gnu.version_d)"
	verneedWhat = "version requirements (.gnu.version_r)"
)

// parseVersionDefs decodes .gnu.version_d bytes b found at file offset
// secOff, with names in strs; end is where the last entry it read ends
// (the table's extent, for a file without section headers).
func (f *File) parseVersionDefs(secOff int64, b []byte, strs strTab) (out []VersionDef, end uint64, err error) {
	const what = verdefWhat
	bo := f.bo
	off := uint64(0)
	for n := 0; n < len(b)/20+1; n++ {
		if off+20 > uint64(len(b)) {
			return nil, 0, f.formatErr(secOff+int64(off), what, fmt.Errorf("entry truncated"))
		}
		end = max(end, off+20)
		e := b[off:]
		flags, ndx, cnt := bo.Uint16(e[2:]), bo.Uint16(e[4:]), bo.Uint16(e[6:])
		aux, next := uint64(bo.Uint32(e[12:])), uint64(bo.Uint32(e[16:]))
		d := VersionDef{Index: ndx, Base: flags&verFlgBase != 0, Weak: flags&verFlgWeak != 0}
		a := off + aux
		for i := 0; i < int(cnt); i++ {
			if a+8 > uint64(len(b)) {
				return nil, 0, f.formatErr(secOff+int64(a), what, fmt.Errorf("auxiliary entry truncated"))
			}
			end = max(end, a+8)
			name, ok := strs.at(uint64(bo.Uint32(b[a:])))
			if !ok {
				return nil, 0, f.formatErr(secOff+int64(a), what, fmt.Errorf("name outside the string table"))
			}
			if i == 0 {
				d.Name = name
			} else {
				d.Deps = append(d.Deps, name)
			}
			an := uint64(bo.Uint32(b[a+4:]))
			if an == 0 {
				break
			}
			a += an
		}
		out = append(out, d)
		if next == 0 {
			return out, end, nil
		}
		off += next
	}
	return nil, 0, f.formatErr(secOff, what, fmt.Errorf("chain does not end"))
}

// VersionNeeds returns .gnu.version_r (Elf_Verneed/Elf_Vernaux chains), or
// nil when absent.
func (f *File) VersionNeeds() ([]VersionNeed, error) {
	sec, b, strs, err := f.versionSection(elf.SHT_GNU_VERNEED, verneedWhat)
	if sec == nil || err != nil {
		return nil, err
	}
	needs, _, err := f.parseVersionNeeds(int64(sec.Offset), b, strs)
	return needs, err
}

// parseVersionNeeds decodes .gnu.version_r bytes b found at file offset
// secOff, with names in strs; end is as for parseVersionDefs.
func (f *File) parseVersionNeeds(secOff int64, b []byte, strs strTab) (out []VersionNeed, end uint64, err error) {
	const what = verneedWhat
	bo := f.bo
	str := func(at, v uint64) (string, error) {
		s, ok := strs.at(v)
		if !ok {
			return "", f.formatErr(secOff+int64(at), what, fmt.Errorf("name outside the string table"))
		}
		return s, nil
	}
	off := uint64(0)
	for n := 0; n < len(b)/16+1; n++ {
		if off+16 > uint64(len(b)) {
			return nil, 0, f.formatErr(secOff+int64(off), what, fmt.Errorf("entry truncated"))
		}
		end = max(end, off+16)
		e := b[off:]
		cnt := bo.Uint16(e[2:])
		file, err := str(off, uint64(bo.Uint32(e[4:])))
		if err != nil {
			return nil, 0, err
		}
		aux, next := uint64(bo.Uint32(e[8:])), uint64(bo.Uint32(e[12:]))
		vn := VersionNeed{File: file}
		if cnt > 0 {
			vn.Versions = make([]VersionAux, 0, min(int(cnt), len(b)/16))
		}
		a := off + aux
		for i := 0; i < int(cnt); i++ {
			if a+16 > uint64(len(b)) {
				return nil, 0, f.formatErr(secOff+int64(a), what, fmt.Errorf("auxiliary entry truncated"))
			}
			end = max(end, a+16)
			x := b[a:]
			name, err := str(a, uint64(bo.Uint32(x[8:])))
			if err != nil {
				return nil, 0, err
			}
			vn.Versions = append(vn.Versions, VersionAux{Name: name, Index: bo.Uint16(x[6:]) & 0x7fff, Weak: bo.Uint16(x[4:])&verFlgWeak != 0})
			an := uint64(bo.Uint32(x[12:]))
			if an == 0 {
				break
			}
			a += an
		}
		out = append(out, vn)
		if next == 0 {
			return out, end, nil
		}
		off += next
	}
	return nil, 0, f.formatErr(secOff, what, fmt.Errorf("chain does not end"))
}

// Summary counts the dynamic symbols by state.
type Summary struct {
	Defined, Undefined, Weak int
}

// CountSymbols counts defined and undefined symbols in syms. Weak undefined
// symbols are counted in both Undefined and Weak.
func CountSymbols(syms []Symbol) Summary {
	var s Summary
	for _, x := range syms {
		if x.Defined() {
			s.Defined++
		} else {
			s.Undefined++
			if x.Weak() {
				s.Weak++
			}
		}
	}
	return s
}

func (s Summary) String() string {
	return fmt.Sprintf("%d defined, %d undefined (%d weak)", s.Defined, s.Undefined, s.Weak)
}
