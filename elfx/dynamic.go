package elfx

import (
	"debug/elf"
	"fmt"
	"strings"

	"github.com/rocmdoctor/rocmdoctor/internal/saferio"
)

// DynEntry is one entry of the dynamic section.
type DynEntry struct {
	Tag   elf.DynTag
	Value uint64
}

// Dynamic is the dynamic section as the loader sees it.
type Dynamic struct {
	// Offset is the file offset of the first entry.
	Offset int64
	// EntrySize is 8 (ELF32) or 16 (ELF64).
	EntrySize int
	// Entries are all entries before the first DT_NULL.
	Entries []DynEntry
	// Slots is how many entries fit in the segment including DT_NULL and
	// any spare DT_NULL padding.
	Slots int

	Needed     []string // DT_NEEDED in order
	Soname     string
	HasSoname  bool
	RPath      string // DT_RPATH, raw (colon-separated)
	HasRPath   bool
	RunPath    string // DT_RUNPATH, raw
	HasRunPath bool
	Flags      elf.DynFlag  // DT_FLAGS
	Flags1     elf.DynFlag1 // DT_FLAGS_1
	TextRel    bool         // DT_TEXTREL present or DF_TEXTREL set

	// StrTab is the file offset of the dynamic string table, StrSize its size.
	StrTab  int64
	StrSize uint64
	f       *File
}

// Value returns the first value of tag.
func (d *Dynamic) Value(tag elf.DynTag) (uint64, bool) {
	for _, e := range d.Entries {
		if e.Tag == tag {
			return e.Value, true
		}
	}
	return 0, false
}

// String returns the string at offset off of the dynamic string table. It
// reads only that string, so a few NEEDED names of libLLVM do not pull in
// its 3 MB string table.
func (d *Dynamic) String(off uint64) (string, bool) {
	if d.f == nil {
		return "", false
	}
	return d.f.strTab(d.StrTab, d.StrSize).at(off)
}

// StrTabBytes reads the whole dynamic string table. The slice must not be
// modified.
func (d *Dynamic) StrTabBytes() ([]byte, error) {
	if d.f == nil {
		return nil, nil
	}
	return d.f.readStrings(d.StrTab, d.StrSize, "dynamic string table")
}

// Detached returns a copy of d without its entries that keeps no
// reference to the File it was read from (the parsed headers and
// sections, the open file's buffers): for callers that keep the decoded
// values (NEEDED, SONAME, RPATH, RUNPATH, flags) after the file is closed.
// String and StrTabBytes return nothing on it.
func (d *Dynamic) Detached() *Dynamic {
	c := *d
	c.Entries, c.f = nil, nil
	return &c
}

// RPathList splits DT_RPATH at colons (empty elements kept, as the loader
// treats them as the current directory).
func (d *Dynamic) RPathList() []string { return splitPath(d.RPath, d.HasRPath) }

// RunPathList splits DT_RUNPATH at colons.
func (d *Dynamic) RunPathList() []string { return splitPath(d.RunPath, d.HasRunPath) }

func splitPath(s string, has bool) []string {
	if !has {
		return nil
	}
	return strings.Split(s, ":")
}

// Dynamic returns the dynamic section, or an error wrapping ErrNoDynamic.
// The result is cached.
func (f *File) Dynamic() (*Dynamic, error) {
	if f.dyn == nil && f.dynErr == nil {
		f.dyn, f.dynErr = f.readDynamic()
	}
	return f.dyn, f.dynErr
}

func (f *File) readDynamic() (*Dynamic, error) {
	var off, size uint64
	found := false
	for _, p := range f.ef.Progs {
		if p.Type == elf.PT_DYNAMIC {
			// ld.so reads the entries at the segment's address: where a
			// PT_LOAD loads that address from another offset, the entries
			// read here would not be the loader's.
			if at, _, ok := f.vaddrToOffset(p.Vaddr); ok && p.Filesz > 0 && uint64(at) != p.Off {
				return nil, f.formatErr(int64(p.Off), "dynamic section", fmt.Errorf("PT_DYNAMIC at offset 0x%x, but its address 0x%x is loaded from offset 0x%x, where the loader reads the entries", p.Off, p.Vaddr, at))
			}
			off, size, found = p.Off, p.Filesz, true
			break
		}
	}
	var dynSec *elf.Section
	if s := f.ef.SectionByType(elf.SHT_DYNAMIC); s != nil {
		dynSec = s
		if !found {
			off, size, found = s.Offset, s.Size, true
		}
	}
	if !found {
		return nil, fmt.Errorf("%s: %w", nameOr(f.Path), ErrNoDynamic)
	}
	if size == 0 && dynSec == nil {
		// A PT_DYNAMIC without bytes in the file, and no SHT_DYNAMIC
		// section: a separate debug file (objcopy --only-keep-debug keeps
		// the program headers; .dynamic is NOBITS). readelf says "There is
		// no dynamic section in this file", and its offset may lie past
		// the end of the smaller file.
		return nil, fmt.Errorf("%s: %w (the dynamic segment has no bytes in the file: a separate debug file?)", nameOr(f.Path), ErrNoDynamic)
	}
	d := &Dynamic{Offset: int64(off), EntrySize: 16}
	if f.Class == elf.ELFCLASS32 {
		d.EntrySize = 8
	}
	raw, err := f.readRange(int64(off), size, "dynamic section")
	if err != nil {
		return nil, err
	}
	d.Slots = len(raw) / d.EntrySize
	// The entries are counted first, so that the lists are made once at
	// their size (check reads the dynamic sections of ~1,800 files).
	nEntries, nNeeded := 0, 0
	for i := 0; i+d.EntrySize <= len(raw); i += d.EntrySize {
		tag := elf.DynTag(f.bo.Uint64(raw[i:]))
		if d.EntrySize == 8 {
			tag = elf.DynTag(int32(f.bo.Uint32(raw[i:])))
		}
		if tag == elf.DT_NULL {
			break
		}
		nEntries++
		if tag == elf.DT_NEEDED {
			nNeeded++
		}
	}
	if nEntries > 0 {
		d.Entries = make([]DynEntry, 0, nEntries)
	}
	if nNeeded > 0 {
		d.Needed = make([]string, 0, nNeeded)
	}
	for i := 0; i+d.EntrySize <= len(raw); i += d.EntrySize {
		var e DynEntry
		if d.EntrySize == 16 {
			e = DynEntry{elf.DynTag(f.bo.Uint64(raw[i:])), f.bo.Uint64(raw[i+8:])}
		} else {
			e = DynEntry{elf.DynTag(int32(f.bo.Uint32(raw[i:]))), uint64(f.bo.Uint32(raw[i+4:]))}
		}
		if e.Tag == elf.DT_NULL {
			break
		}
		d.Entries = append(d.Entries, e)
	}
	if err := f.loadDynStr(d, dynSec); err != nil {
		return nil, err
	}
	str := func(tag elf.DynTag, v uint64) (string, error) {
		s, ok := d.String(v)
		if !ok {
			return "", f.formatErr(d.StrTab, "dynamic string table", fmt.Errorf("%s string offset 0x%x outside table of %d bytes", tag, v, d.StrSize))
		}
		return s, nil
	}
	for _, e := range d.Entries {
		var s string
		switch e.Tag {
		case elf.DT_NEEDED, elf.DT_SONAME, elf.DT_RPATH, elf.DT_RUNPATH:
			if s, err = str(e.Tag, e.Value); err != nil {
				return nil, err
			}
		}
		switch e.Tag {
		case elf.DT_NEEDED:
			d.Needed = append(d.Needed, s)
		case elf.DT_SONAME:
			if !d.HasSoname {
				d.Soname, d.HasSoname = s, true
			}
		case elf.DT_RPATH:
			if !d.HasRPath {
				d.RPath, d.HasRPath = s, true
			}
		case elf.DT_RUNPATH:
			if !d.HasRunPath {
				d.RunPath, d.HasRunPath = s, true
			}
		case elf.DT_FLAGS:
			d.Flags = elf.DynFlag(e.Value)
			if d.Flags&elf.DF_TEXTREL != 0 {
				d.TextRel = true
			}
		case elf.DT_FLAGS_1:
			d.Flags1 = elf.DynFlag1(e.Value)
		case elf.DT_TEXTREL:
			d.TextRel = true
		}
	}
	return d, nil
}

// loadDynStr locates the dynamic string table the way the loader does
// (DT_STRTAB through PT_LOAD, sized by DT_STRSZ), falling back to the string
// table linked from the .dynamic section header.
func (f *File) loadDynStr(d *Dynamic, dynSec *elf.Section) error {
	addr, hasAddr := d.Value(elf.DT_STRTAB)
	sz, hasSz := d.Value(elf.DT_STRSZ)
	if hasAddr && hasSz {
		if off, avail, ok := f.vaddrToOffset(addr); ok && sz <= avail {
			if err := saferio.Check(f.Size, off, int64(sz)); err != nil || sz > maxTableBytes {
				return f.formatErr(off, "dynamic string table (DT_STRTAB)", fmt.Errorf("%d bytes do not fit in the file", sz))
			}
			d.StrTab, d.StrSize, d.f = off, sz, f
			return nil
		}
	}
	if dynSec != nil && int(dynSec.Link) > 0 && int(dynSec.Link) < len(f.ef.Sections) {
		s := f.ef.Sections[dynSec.Link]
		if s.Type == elf.SHT_STRTAB {
			if err := saferio.Check(f.Size, int64(s.Offset), int64(s.Size)); err != nil || s.Size > maxTableBytes {
				return f.formatErr(int64(s.Offset), "dynamic string table ("+s.Name+")", fmt.Errorf("%d bytes do not fit in the file", s.Size))
			}
			d.StrTab, d.StrSize, d.f = int64(s.Offset), s.Size, f
			return nil
		}
	}
	needs := false
	for _, e := range d.Entries {
		switch e.Tag {
		case elf.DT_NEEDED, elf.DT_SONAME, elf.DT_RPATH, elf.DT_RUNPATH:
			needs = true
		}
	}
	if needs {
		return f.formatErr(d.Offset, "dynamic section", fmt.Errorf("DT_STRTAB 0x%x (size %d) is not inside a loaded segment", addr, sz))
	}
	return nil
}
