package elfx

import (
	"debug/elf"
	"errors"
	"fmt"
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
		return nil, nil
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
	if s := f.ef.SectionByType(t); s != nil {
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

// VersionDefs returns .gnu.version_d, or nil when absent.
func (f *File) VersionDefs() (out []VersionDef, err error) {
	if f.ef.SectionByType(elf.SHT_GNU_VERDEF) == nil {
		return nil, nil
	}
	var raw []elf.DynamicVersion
	func() {
		defer guard(f.Path, "version definitions", &err)
		raw, err = f.ef.DynamicVersions()
	}()
	if err != nil {
		return nil, f.wrapSectionErr(elf.SHT_GNU_VERDEF, "version definitions (.gnu.version_d)", err)
	}
	for _, v := range raw {
		out = append(out, VersionDef{
			Index: v.Index, Name: v.Name, Deps: v.Deps,
			Base: v.Flags&verFlgBase != 0, Weak: v.Flags&verFlgWeak != 0,
		})
	}
	return out, nil
}

// VersionNeeds returns .gnu.version_r, or nil when absent.
func (f *File) VersionNeeds() (out []VersionNeed, err error) {
	if f.ef.SectionByType(elf.SHT_GNU_VERNEED) == nil {
		return nil, nil
	}
	var raw []elf.DynamicVersionNeed
	func() {
		defer guard(f.Path, "version requirements", &err)
		raw, err = f.ef.DynamicVersionNeeds()
	}()
	if err != nil {
		return nil, f.wrapSectionErr(elf.SHT_GNU_VERNEED, "version requirements (.gnu.version_r)", err)
	}
	for _, n := range raw {
		vn := VersionNeed{File: n.Name}
		for _, a := range n.Needs {
			vn.Versions = append(vn.Versions, VersionAux{Name: a.Dep, Index: a.Index, Weak: a.Flags&verFlgWeak != 0})
		}
		out = append(out, vn)
	}
	return out, nil
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
