package patchelf

import (
	"bytes"
	"debug/elf"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/internal/saferio"
)

// dtForSection maps the sections that may move to the dynamic tag that
// holds their address.
var dtForSection = map[string]elf.DynTag{
	".gnu.hash": elf.DT_GNU_HASH, ".hash": elf.DT_HASH, ".dynsym": elf.DT_SYMTAB, ".dynstr": elf.DT_STRTAB,
	".gnu.version": elf.DT_VERSYM, ".gnu.version_d": elf.DT_VERDEF, ".gnu.version_r": elf.DT_VERNEED,
	".rela.dyn": elf.DT_RELA, ".rel.dyn": elf.DT_REL, ".rela.plt": elf.DT_JMPREL, ".rel.plt": elf.DT_JMPREL,
	".relr.dyn": dtRELR,
}

// moved is a section relocated into the new segment.
type moved struct {
	name            string
	index           int
	oldOff, size    uint64
	oldAddr, newOff uint64
	data            []byte
}

// layout turns the edited model into byte patches and, when needed, an
// appended segment: what moves is decided, the new segment placed, the
// moved and rewritten tables written into it or patched in place, the
// program and section headers brought in line, and what moved away
// clobbered.
func (m *model) layout() (*Plan, error) {
	l := &layouter{m: m, p: &Plan{Path: m.path, OldSize: m.f.Size, NewSize: m.f.Size}, interpIdx: -1, extend: -1, newLoad: -1, noteIdx: -1}
	l.reportOutputs()
	for _, step := range []func() error{l.decide, l.placeSegment, l.moveSections, l.dynstr, l.interpreter, l.dynamic,
		l.programHeaders, l.movedSectionHeaders, l.versions, l.finish} {
		if err := step(); err != nil {
			return nil, err
		}
	}
	return l.p, nil
}

// layouter is one layout in progress: what moves, where the new segment
// is, and where each rewritten table went.
type layouter struct {
	m       *model
	p       *Plan
	patches []Patch // in-place writes, before those into moved sections go there
	interp  string  // the interpreter after the edits
	entsz   int     // a dynamic entry's size

	strMoves, dynMoves, interpMoves bool
	interpIdx                       int // of PT_INTERP in m.phdrs, -1
	extend                          int // the PT_LOAD .dynstr grows at the end of, -1
	needSegment                     bool
	lc                              ldcache

	phdrs                      []phdr // the new program headers
	app                        appender
	segOff, segVaddr, segAlign uint64
	tableMoves                 bool // the program header table moves into the segment
	tableOff                   uint64
	movedSecs                  []moved
	newLoad, noteIdx           int // of the new PT_LOAD and PT_NOTE in phdrs, -1
	noteOff, strOff, interpOff uint64
	dynOff                     uint64
	dynSlots                   int
	rename                     *renameExpect
}

func (l *layouter) patch(off int64, data []byte, what string) {
	l.patches = append(l.patches, Patch{Offset: off, Size: len(data), What: what, Data: data})
}

func (l *layouter) vaddrOf(off uint64) uint64 { return off - l.segOff + l.segVaddr }

func (l *layouter) isMoved(name string) *moved {
	for i := range l.movedSecs {
		if l.movedSecs[i].name == name {
			return &l.movedSecs[i]
		}
	}
	return nil
}

// reportOutputs records what --print-* report (after the edits, as
// patchelf prints them).
func (l *layouter) reportOutputs() {
	m := l.m
	if m.dyn != nil {
		rp, _, _ := m.rpath()
		m.output["rpath"] = rp
		var needed []string
		for _, e := range m.ents {
			if e.tag == elf.DT_NEEDED {
				needed = append(needed, e.str)
			}
			if e.tag == elf.DT_SONAME {
				m.output["soname"] = e.str
			}
		}
		m.output["needed"] = joinLines(needed)
	}
	l.interp, _ = m.f.Interp()
	if m.interp != nil {
		l.interp = *m.interp
	}
	m.output["interpreter"] = l.interp
}

// decide says what moves (.dynstr, .dynamic, the interpreter), whether
// .dynstr grows where it is, what happens to a resolution cache note, and
// whether a new segment is needed; and starts the new program headers.
func (l *layouter) decide() error {
	m := l.m
	l.entsz = 16
	if !m.is64 {
		l.entsz = 8
	}
	if m.dyn != nil {
		l.strMoves = len(m.str) > m.origLen
		l.dynMoves = len(m.ents)+1 > m.dyn.Slots
		if l.strMoves || slices.ContainsFunc(m.ents, func(e ent) bool { return e.ok }) {
			// Names (NEEDED, SONAME, search paths) are read from the dynamic
			// string table, which the loader finds through these two
			// entries; every linker writes them, even for an empty table.
			for _, tag := range []elf.DynTag{elf.DT_STRTAB, elf.DT_STRSZ} {
				if !slices.ContainsFunc(m.ents, func(e ent) bool { return e.tag == tag }) {
					return &elfx.FormatError{Path: m.path, Offset: m.dyn.Offset, What: "dynamic section",
						Err: fmt.Errorf("no %v entry: the loader finds no dynamic string table for the names", tag)}
				}
			}
		}
	}
	var err error
	if l.lc, err = m.planLDCache(l.p); err != nil {
		return err
	}
	for i := range m.phdrs {
		if m.phdrs[i].Type == elf.PT_INTERP {
			l.interpIdx = i
		}
	}
	if m.interp != nil && l.interpIdx >= 0 && uint64(len(*m.interp)+1) > m.interpRoom {
		l.interpMoves = true
	}
	// A grown .dynstr that already ends the file and the last PT_LOAD
	// (where patchelf, or an earlier growing edit of ours, put it) grows
	// where it is: the file grows by the new strings instead of by a whole
	// new copy of the table on every edit.
	if l.strMoves && !l.dynMoves && !l.interpMoves && !m.addGNUStack {
		if l.extend = m.tailLoad(); l.extend >= 0 {
			l.strMoves = false
		}
	}
	l.needSegment = m.addGNUStack || l.dynMoves || l.strMoves || l.interpMoves || l.lc.note != nil

	l.phdrs = append([]phdr(nil), m.phdrs...)
	if l.lc.remove {
		// The note's own segments go (a PT_NOTE, and patchelf's PT_LOAD
		// of it alone).
		s := m.secs[l.lc.old]
		l.phdrs = slices.DeleteFunc(l.phdrs, func(ph phdr) bool {
			return (ph.Type == elf.PT_NOTE || ph.Type == elf.PT_LOAD) && ph.Off == s.Offset && ph.Filesz == s.Size
		})
	}
	if l.lc.note != nil {
		// Last; it stays last when the new PT_LOAD goes in below.
		l.phdrs = append(l.phdrs, phdr{elf.ProgHeader{Type: elf.PT_NOTE, Flags: elf.PF_R, Align: 4}})
	}
	if m.stack != nil {
		for i := range l.phdrs {
			if l.phdrs[i].Type == elf.PT_GNU_STACK {
				l.phdrs[i].Flags = elf.ProgFlag(*m.stack)
			}
		}
		if m.addGNUStack {
			l.phdrs = append(l.phdrs, phdr{elf.ProgHeader{Type: elf.PT_GNU_STACK, Flags: elf.ProgFlag(*m.stack), Align: 16}})
		}
	}
	return nil
}

// placeSegment places the new segment after the file's end and the memory
// image's end, adds its PT_LOAD, and makes room for the grown program
// header table (moving the sections after it into the segment, or the
// table itself).
func (l *layouter) placeSegment() error {
	m := l.m
	if !l.needSegment {
		return nil
	}
	// Aligned to the page size and every PT_LOAD's alignment.
	var first *phdr
	var vEnd uint64
	l.segAlign = m.pageSize()
	for i := range m.phdrs {
		ph := &m.phdrs[i]
		if ph.Type != elf.PT_LOAD {
			continue
		}
		if first == nil {
			first = ph
		}
		if ph.Align > l.segAlign {
			l.segAlign = ph.Align
		}
		if e := ph.Vaddr + ph.Memsz; e > vEnd {
			vEnd = e
		}
	}
	if first == nil {
		return m.errf("no PT_LOAD segment; cannot add one")
	}
	// The file offset and the address are chosen apart, as patchelf
	// does: both aligned, hence congruent. Keeping the first PT_LOAD's
	// distance between them put the segment's data at the end of the
	// memory image: a library with 100 MB of .bss grew by 100 MB, and
	// one with a PT_LOAD at a far address by terabytes.
	l.segOff = align(uint64(m.f.Size), l.segAlign)
	l.segVaddr = align(vEnd, l.segAlign)
	if l.segOff < uint64(m.f.Size) || l.segVaddr < vEnd || !m.is64 && (l.segVaddr >= math.MaxUint32 || l.segOff >= math.MaxUint32) {
		return m.errf("no address or offset left for a new segment after 0x%x", vEnd)
	}
	l.app.base = l.segOff

	// One more PT_LOAD after the last one.
	last := -1
	for i := range l.phdrs {
		if l.phdrs[i].Type == elf.PT_LOAD {
			last = i
		}
	}
	l.phdrs = append(l.phdrs, phdr{})
	copy(l.phdrs[last+2:], l.phdrs[last+1:])
	l.phdrs[last+1] = phdr{elf.ProgHeader{Type: elf.PT_LOAD, Flags: elf.PF_R, Align: l.segAlign}}
	l.newLoad = last + 1

	// The program header table grows in place; the sections that
	// follow it move into the new segment (as patchelf does).
	var err error
	if l.movedSecs, err = m.makeRoom(uint64(len(l.phdrs)*m.phent), first); err != nil {
		// Where what follows the table cannot move (a linker script
		// put .eh_frame there: upstream's phdr-corruption), a shared
		// library's table moves into the new segment instead: ld.so
		// reads it at e_phoff and finds it in memory through
		// PT_PHDR. A program's stays where the kernel expects it.
		if m.f.Type != elf.ET_DYN || m.pie() || m.pseudo {
			return err
		}
		l.tableMoves, l.movedSecs = true, nil
	}
	// Size the new segment once: moved sections, .dynamic with spare
	// slots, the interpreter, and alignment padding (.dynstr is its
	// tail, written from m.str).
	est := (len(m.ents)+8)*l.entsz + len(l.interp) + 1 + 64
	for _, ms := range l.movedSecs {
		est += int(ms.size) + 64
	}
	l.app.buf = make([]byte, 0, est)
	if l.tableMoves {
		l.tableOff = l.app.reserve(len(l.phdrs)*m.phent, 8)
		l.p.Moved = append(l.p.Moved, "program headers")
	}
	return nil
}

// moveSections copies the sections that move into the segment (keeping
// their alignment), and the new resolution cache note.
func (l *layouter) moveSections() error {
	m := l.m
	if l.lc.note != nil {
		l.noteIdx = len(l.phdrs) - 1
	}
	if m.dyn != nil && l.isMoved(".dynstr") != nil {
		l.strMoves = true
	}
	if l.interpIdx >= 0 && l.isMoved(".interp") != nil {
		l.interpMoves = true
	}
	for i := range l.movedSecs {
		ms := &l.movedSecs[i]
		if ms.name == ".dynstr" && l.strMoves || ms.name == ".interp" && l.interpMoves {
			continue // written below with their new contents
		}
		// (Up to the segment's: the new segment's address is aligned to
		// nothing larger.)
		s := m.secs[ms.index]
		al := int(min(max(s.Addralign, 1), l.segAlign))
		ms.newOff = l.app.add(ms.data, al)
		if tag, ok := dtForSection[ms.name]; ok {
			m.setValIf(tag, ms.oldAddr, l.vaddrOf(ms.newOff))
		}
		l.p.Moved = append(l.p.Moved, ms.name)
	}
	if l.lc.note != nil {
		l.noteOff = l.app.add(l.lc.note, 4)
	}
	return nil
}

// dynstr writes the dynamic string table: a grown table goes last in the
// new segment, written from m.str itself (the segment's tail) rather than
// copied, or grows where it is (extend); otherwise what changed in it is
// patched.
func (l *layouter) dynstr() error {
	m, p := l.m, l.p
	if m.dyn == nil {
		return nil
	}
	switch {
	case l.strMoves:
		p.Moved = append(p.Moved, ".dynstr")
	case l.extend >= 0:
		// m.orig was let go when the table grew; the old part is read
		// again to patch only what changed in it.
		orig, err := readAt(m.f, m.dyn.StrTab, m.origLen)
		if err != nil {
			return m.errf("reading .dynstr: %v", err)
		}
		for _, r := range diffRanges(orig, m.str[:m.origLen]) {
			l.patch(m.dyn.StrTab+int64(r[0]), append([]byte(nil), m.str[r[0]:r[1]]...), ".dynstr")
		}
		p.Extended = ".dynstr"
		p.AppendOffset = m.dyn.StrTab + int64(m.origLen)
		p.AppendTail = m.str[m.origLen:]
		p.AppendSize = len(p.AppendTail)
		p.NewSize = max(p.NewSize, p.AppendOffset+int64(p.AppendSize))
		m.setVal(elf.DT_STRSZ, uint64(len(m.str)))
		ld := &l.phdrs[l.extend]
		end := uint64(m.dyn.StrTab) + uint64(len(m.str)) - ld.Off
		ld.Filesz, ld.Memsz = max(ld.Filesz, end), max(ld.Memsz, end)
		for i, s := range m.f.ELF().Sections {
			if s.Type == elf.SHT_STRTAB && int64(s.Offset) == m.dyn.StrTab {
				m.patchSections(l.patch, map[int][2]uint64{i: {s.Offset, uint64(len(m.str))}},
					func(off uint64) uint64 { return off - ld.Off + ld.Vaddr })
			}
		}
	default:
		for _, r := range diffRanges(m.orig, m.str) {
			l.patch(m.dyn.StrTab+int64(r[0]), append([]byte(nil), m.str[r[0]:r[1]]...), ".dynstr")
		}
	}
	return nil
}

// interpreter writes the program interpreter's name, in place or moved.
func (l *layouter) interpreter() error {
	m := l.m
	if l.interpIdx < 0 || m.interp == nil && !l.interpMoves {
		return nil
	}
	b := append([]byte(l.interp), 0)
	ip := m.phdrs[l.interpIdx]
	if l.interpMoves {
		l.interpOff = l.app.add(b, 1)
		l.p.Moved = append(l.p.Moved, ".interp")
	} else if old, _ := m.f.Interp(); old != l.interp {
		buf := make([]byte, m.interpRoom)
		copy(buf, b)
		l.patch(int64(ip.Off), buf, "PT_INTERP")
	}
	return nil
}

// dynamic writes the dynamic section, in place or moved (with spare
// DT_NULL slots for later edits).
func (l *layouter) dynamic() error {
	m := l.m
	if m.dyn == nil {
		return nil
	}
	if l.dynMoves {
		l.dynSlots = len(m.ents) + 1 + 4
		l.dynOff = l.app.reserve(l.dynSlots*l.entsz, 8)
		l.p.Moved = append(l.p.Moved, ".dynamic")
		l.phdrs[l.newLoad].Flags |= elf.PF_W
	} else {
		l.dynSlots = m.dyn.Slots
	}
	if l.strMoves {
		l.strOff = l.app.setTail(m.str)
		m.setVal(elf.DT_STRTAB, l.vaddrOf(l.strOff))
		m.setVal(elf.DT_STRSZ, uint64(len(m.str)))
	}
	enc := m.encodeDynamic(l.dynSlots)
	if l.dynMoves {
		l.app.set(l.dynOff, enc)
	} else if old, err := readAt(m.f, m.dyn.Offset, len(enc)); err != nil {
		return m.errf("reading .dynamic: %v", err)
	} else if !bytes.Equal(old, enc) {
		l.patch(m.dyn.Offset, enc, ".dynamic")
	}
	return nil
}

// programHeaders points the program headers at what moved and writes the
// table (in place, or into the segment) and the ELF header.
func (l *layouter) programHeaders() error {
	m := l.m
	phSize := uint64(len(l.phdrs) * m.phent)
	for i := range l.phdrs {
		ph := &l.phdrs[i]
		switch {
		case i == l.newLoad:
			ph.Off, ph.Vaddr, ph.Paddr = l.segOff, l.segVaddr, l.segVaddr
			ph.Filesz = l.app.size()
			ph.Memsz = ph.Filesz
		case i == l.noteIdx:
			sz := uint64(len(l.lc.note))
			ph.Off, ph.Vaddr, ph.Paddr, ph.Filesz, ph.Memsz = l.noteOff, l.vaddrOf(l.noteOff), l.vaddrOf(l.noteOff), sz, sz
		case ph.Type == elf.PT_PHDR:
			ph.Filesz, ph.Memsz = phSize, phSize
			if l.tableMoves {
				ph.Off, ph.Vaddr, ph.Paddr = l.tableOff, l.vaddrOf(l.tableOff), l.vaddrOf(l.tableOff)
			}
		case ph.Type == elf.PT_DYNAMIC && l.dynMoves:
			sz := uint64(l.dynSlots * l.entsz)
			ph.Off, ph.Vaddr, ph.Paddr, ph.Filesz, ph.Memsz = l.dynOff, l.vaddrOf(l.dynOff), l.vaddrOf(l.dynOff), sz, sz
		case ph.Type == elf.PT_INTERP && l.interpMoves:
			sz := uint64(len(l.interp) + 1)
			ph.Off, ph.Vaddr, ph.Paddr, ph.Filesz, ph.Memsz = l.interpOff, l.vaddrOf(l.interpOff), l.vaddrOf(l.interpOff), sz, sz
		case (ph.Type == elf.PT_NOTE || ph.Type == elf.PT_GNU_PROPERTY) && len(l.movedSecs) > 0:
			// A note segment whose sections all moved follows them.
			lo, hi, all := ^uint64(0), uint64(0), true
			for _, s := range m.secs {
				if s.Type != elf.SHT_NOTE || s.Offset < ph.Off || s.Offset+s.Size > ph.Off+ph.Filesz {
					continue
				}
				ms := l.isMoved(s.Name)
				if ms == nil {
					all = false
					continue
				}
				lo, hi = min(lo, ms.newOff), max(hi, ms.newOff+ms.size)
			}
			if lo != ^uint64(0) {
				if !all {
					return m.errf("a note segment would be split by the move; not supported")
				}
				ph.Off, ph.Vaddr, ph.Paddr, ph.Filesz, ph.Memsz = lo, l.vaddrOf(lo), l.vaddrOf(lo), hi-lo, hi-lo
			}
		}
	}
	table := m.encodePhdrs(l.phdrs)
	old := m.encodePhdrs(m.phdrs)
	switch {
	case l.tableMoves:
		l.app.set(l.tableOff, table)
	case !bytes.Equal(old, table):
		l.patch(int64(m.phoff), table, "program headers")
		if len(table) < len(old) { // (a removed note's entries)
			l.patch(int64(m.phoff)+int64(len(table)), make([]byte, len(old)-len(table)), "program headers")
		}
	}
	eh := append([]byte(nil), m.ehdr...)
	if m.is64 {
		m.bo.PutUint16(eh[56:], uint16(len(l.phdrs)))
		if l.tableMoves {
			m.bo.PutUint64(eh[32:], l.tableOff) // e_phoff
		}
	} else {
		m.bo.PutUint16(eh[44:], uint16(len(l.phdrs)))
		if l.tableMoves {
			m.bo.PutUint32(eh[28:], uint32(l.tableOff))
		}
	}
	if m.osabi != nil {
		eh[elf.EI_OSABI] = *m.osabi
	}
	if !bytes.Equal(eh, m.ehdr) {
		l.patch(0, eh, "ELF header")
	}
	return nil
}

// movedSectionHeaders points the section headers of moved sections at
// their new place, so strip and objcopy still work.
func (l *layouter) movedSectionHeaders() error {
	m := l.m
	if !l.needSegment {
		return nil
	}
	upd := map[int][2]uint64{} // index → new offset, size
	for _, ms := range l.movedSecs {
		if ms.newOff != 0 {
			upd[ms.index] = [2]uint64{ms.newOff, ms.size}
		}
	}
	for i, s := range m.f.ELF().Sections {
		switch {
		case l.strMoves && s.Type == elf.SHT_STRTAB && m.dyn != nil && int64(s.Offset) == m.dyn.StrTab:
			upd[i] = [2]uint64{l.strOff, uint64(len(m.str))}
		case l.dynMoves && s.Type == elf.SHT_DYNAMIC:
			upd[i] = [2]uint64{l.dynOff, uint64(l.dynSlots * l.entsz)}
		case l.interpMoves && s.Name == ".interp":
			upd[i] = [2]uint64{l.interpOff, uint64(len(l.interp) + 1)}
		}
	}
	m.patchSections(l.patch, upd, l.vaddrOf)
	return nil
}

// versions writes the .gnu.version_r file names, the renamed symbols'
// tables and the .gnu.version entries.
func (l *layouter) versions() error {
	m := l.m
	for field, name := range m.verneedFile {
		off := m.intern(name, 0, false)
		if !l.strMoves && l.extend < 0 && off >= uint64(m.origLen) {
			return m.errf("internal error: version requirement name %q not in the string table", name)
		}
		b := make([]byte, 4)
		m.bo.PutUint32(b, uint32(off))
		l.patch(field, b, ".gnu.version_r")
	}
	if len(m.symRename) > 0 {
		var err error
		if l.rename, err = m.renameTables(l.patch); err != nil {
			return err
		}
	}
	for off, v := range m.versym {
		b := make([]byte, 2)
		m.bo.PutUint16(b, v)
		l.patch(off, b, ".gnu.version")
	}
	return nil
}

// finish sends the patches that fall into a moved section to its new
// copy, sizes the new segment, clobbers what moved away, rewrites the
// section header table where it must, and fills in the plan.
func (l *layouter) finish() error {
	m, p := l.m, l.p
	for _, pt := range l.patches {
		redirected := false
		for _, ms := range l.movedSecs {
			if ms.newOff != 0 && uint64(pt.Offset) >= ms.oldOff && uint64(pt.Offset)+uint64(len(pt.Data)) <= ms.oldOff+ms.size {
				l.app.set(ms.newOff+uint64(pt.Offset)-ms.oldOff, pt.Data)
				redirected = true
			}
		}
		if !redirected {
			p.Patches = append(p.Patches, pt)
		}
	}
	if l.needSegment {
		// The new PT_LOAD's size is final only now.
		l.phdrs[l.newLoad].Filesz = l.app.size()
		l.phdrs[l.newLoad].Memsz = l.phdrs[l.newLoad].Filesz
		table := m.encodePhdrs(l.phdrs)
		for i := range p.Patches {
			if p.Patches[i].What == "program headers" {
				p.Patches[i].Data = table
			}
		}
		if l.tableMoves {
			l.app.set(l.tableOff, table)
		}
	}
	if !m.opts.NoClobberOldSections {
		// What moved is overwritten where it was, as patchelf does
		// ('Z'), except where a patch writes.
		var vacated []Patch
		for _, ms := range l.movedSecs {
			if ms.newOff != 0 && m.secs[ms.index].Type != elf.SHT_NOBITS {
				vacated = append(vacated, Patch{Offset: int64(ms.oldOff), Size: int(ms.size), What: "vacated " + ms.name})
			}
		}
		if l.strMoves && m.dyn != nil {
			vacated = append(vacated, Patch{Offset: m.dyn.StrTab, Size: m.origLen, What: "vacated .dynstr"})
		}
		if l.interpMoves && l.interpIdx >= 0 && m.interpRoom > 0 {
			vacated = append(vacated, Patch{Offset: int64(m.phdrs[l.interpIdx].Off), Size: int(m.interpRoom), What: "vacated .interp"})
		}
		p.Patches = append(p.Patches, clobber(vacated, p.Patches)...)
	}
	if l.needSegment {
		p.AppendOffset = int64(l.segOff)
		p.Append, p.AppendTail = l.app.buf, l.app.tail
		p.AppendSize = int(l.app.size())
		p.NewSize = int64(l.segOff) + int64(l.app.size())
	}
	if grows := l.needSegment || l.extend >= 0; grows || l.lc.remove || l.lc.note != nil {
		var note *elf.Section
		if l.lc.note != nil {
			note = &elf.Section{SectionHeader: elf.SectionHeader{Name: ldCacheSection, Type: elf.SHT_NOTE, Flags: elf.SHF_ALLOC,
				Addr: l.vaddrOf(l.noteOff), Offset: l.noteOff, Size: uint64(len(l.lc.note)), Addralign: 4}}
		}
		if err := m.rewriteSectionHeaders(p, grows, l.lc, note); err != nil {
			return err
		}
	}
	sort.SliceStable(p.Patches, func(i, j int) bool { return p.Patches[i].Offset < p.Patches[j].Offset })
	p.Changed = len(p.Patches) > 0 || p.AppendSize > 0
	p.expect = expectation{dyn: m.ents, interp: m.interp, osabi: m.osabi, stack: m.stack, needs: map[string]bool{}, rename: l.rename}
	for _, name := range m.verneedFile {
		p.expect.needs[name] = true
	}
	return nil
}

// tailLoad returns the index of the PT_LOAD that .dynstr can grow in
// place at the end of, or -1. The table must end the file (nothing after
// it but zero padding; no section header table) and its segment, which
// must be the last in memory with no zero-filled tail, so that the bytes
// appended to the file extend the table and nothing else.
func (m *model) tailLoad() int {
	strEnd := uint64(m.dyn.StrTab) + uint64(m.origLen)
	end := strEnd // of what the grown table may overwrite
	if shoff, shentsize := m.sectionHeaders(); shoff >= strEnd && !m.pseudo {
		// The section header table a growing edit left after it (as
		// patchelf 0.19 does) moves past the grown table.
		if !m.zeros(strEnd, shoff) {
			return -1
		}
		end = shoff + uint64(len(m.f.ELF().Sections)*shentsize)
	}
	if uint64(m.f.Size) > end && !m.onlyPaddingAfter(end) {
		return -1
	}
	found := -1
	var top uint64
	for i, ph := range m.phdrs {
		if ph.Type != elf.PT_LOAD {
			continue
		}
		top = max(top, ph.Vaddr)
		if ph.Off <= uint64(m.dyn.StrTab) && strEnd <= ph.Off+ph.Filesz {
			found = i
		}
	}
	if found < 0 {
		return -1
	}
	ld := m.phdrs[found]
	if ld.Vaddr != top || ld.Filesz != ld.Memsz || ld.Off+ld.Filesz < strEnd {
		return -1
	}
	for _, s := range m.f.ELF().Sections {
		if s.Type != elf.SHT_NOBITS && s.Size > 0 && s.Offset+s.Size > strEnd && int64(s.Offset) != m.dyn.StrTab {
			return -1
		}
	}
	// A 32-bit file must still fit its address space.
	if !m.is64 && ld.Vaddr+ld.Memsz+uint64(len(m.str)-m.origLen) > 1<<32-1 {
		return -1
	}
	return found
}

// onlyPaddingAfter reports whether the file holds only zero bytes from off
// to its end (alignment padding after a table, at most a page).
func (m *model) onlyPaddingAfter(off uint64) bool { return m.zeros(off, uint64(m.f.Size)) }

// zeros reports whether the file holds only zero bytes from off to end,
// at most a page of them.
func (m *model) zeros(off, end uint64) bool {
	if end < off || end-off > m.pageSize() {
		return false
	}
	b, err := readAt(m.f, int64(off), int(end-off))
	if err != nil {
		return false
	}
	return bytes.Count(b, []byte{0}) == len(b)
}

// makeRoom returns the sections that must move so that a program header
// table of size bytes fits at e_phoff inside the first PT_LOAD.
func (m *model) makeRoom(size uint64, first *phdr) ([]moved, error) {
	need := m.phoff + size
	for _, u := range m.undescribed {
		if u.off >= m.phoff && u.off < need {
			return nil, m.errf("no room for another program header: the table %v names (its section header was stripped) follows the program header table and cannot be moved", u.tag)
		}
	}
	secs := m.secs
	move := map[int]bool{}
	for i, s := range secs {
		if s.Type != elf.SHT_NULL && s.Flags&elf.SHF_ALLOC != 0 && s.Offset >= m.phoff && s.Offset < need {
			move[i] = true
		}
	}
	// A note segment moves whole: its notes must stay contiguous.
	for _, ph := range m.phdrs {
		if ph.Type != elf.PT_NOTE && ph.Type != elf.PT_GNU_PROPERTY {
			continue
		}
		in := func(s *elf.Section) bool {
			return s.Type == elf.SHT_NOTE && s.Offset >= ph.Off && s.Offset+s.Size <= ph.Off+ph.Filesz
		}
		hit := false
		for i, s := range secs {
			hit = hit || move[i] && in(s)
		}
		if hit {
			for i, s := range secs {
				if in(s) {
					move[i] = true
				}
			}
		}
	}
	var out []moved
	for i, s := range secs {
		if !move[i] {
			continue
		}
		if s.Offset+s.Size > first.Off+first.Filesz {
			return nil, m.errf("no room for another program header: %s follows the table and is not in the first segment", s.Name)
		}
		_, known := dtForSection[s.Name]
		if !known && s.Type != elf.SHT_NOTE && s.Name != ".interp" {
			return nil, m.errf("no room for another program header: %s follows the table and cannot be moved", s.Name)
		}
		data, err := readAt(m.f, int64(s.Offset), int(s.Size))
		if err != nil {
			return nil, m.errf("reading %s: %v", s.Name, err)
		}
		out = append(out, moved{name: s.Name, index: i, oldOff: s.Offset, size: s.Size, oldAddr: s.Addr, data: data})
	}
	if m.pseudo {
		if err := m.onlyMovedAfterTable(need, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// onlyMovedAfterTable checks, for a file without section headers, that
// what the grown program header table takes is moved out of its way or
// is nothing: the sections standing in for the headers (loaderSections)
// are all rocmdoctor knows to be there, so any other segment or table the
// loader can name, or any byte that is not zero, makes the edit refused
// rather than overwritten.
func (m *model) onlyMovedAfterTable(need uint64, mv []moved) error {
	from := m.phoff + uint64(len(m.phdrs)*m.phent)
	if from >= need {
		return nil
	}
	refuse := func(what string, at uint64) error {
		return m.errf("no room for another program header: the file has no section headers, and %s at 0x%x follows the program header table, which a longer string table, a new NEEDED or a new interpreter would grow over (edits that fit in place still work)", what, at)
	}
	covered := func(off, end uint64) bool {
		for _, ms := range mv {
			if ms.oldOff <= off && end <= ms.oldOff+ms.size {
				return true
			}
		}
		return false
	}
	movedAddr := func(a uint64) bool {
		for _, ms := range mv {
			if ms.oldAddr == a {
				return true
			}
		}
		return false
	}
	clip := func(off, size uint64) (uint64, uint64, bool) {
		lo, hi := max(off, from), min(off+max(size, 1), need)
		return lo, hi, lo < hi
	}
	for _, ph := range m.phdrs {
		switch ph.Type {
		case elf.PT_LOAD, elf.PT_PHDR, elf.PT_GNU_STACK, elf.PT_GNU_RELRO, elf.PT_NULL:
			continue
		}
		if lo, hi, ok := clip(ph.Off, ph.Filesz); ok && ph.Filesz > 0 && !covered(lo, hi) {
			return refuse(progName(ph.Type), ph.Off)
		}
	}
	for _, e := range m.ents {
		if !addressTag(e.tag) || movedAddr(e.val) {
			continue
		}
		if off, ok := m.f.OffsetOf(e.val); ok {
			if _, _, in := clip(uint64(off), 1); in {
				return refuse(e.tag.String(), uint64(off))
			}
		}
	}
	b, err := readAt(m.f, int64(from), int(need-from))
	if err != nil {
		return m.errf("reading after the program headers: %v", err)
	}
	for i, c := range b {
		if at := from + uint64(i); c != 0 && !covered(at, at+1) {
			return refuse("data", at)
		}
	}
	return nil
}

// loaderSections stands in for the section headers of a file that has
// none: the dynamic symbol sections the loader finds through the dynamic
// segment (elfx.File.SymbolSections), the relocation tables, the
// interpreter and the note segments (split where a PT_GNU_PROPERTY lies
// inside one), with the addresses the dynamic tags and program headers
// give. makeRoom moves those that follow the program header table; the
// section header table itself is not written (there is none).
func (m *model) loaderSections() []*elf.Section {
	secs := append([]*elf.Section(nil), m.f.SymbolSections()...)
	if len(secs) == 0 {
		secs = []*elf.Section{{}}
	}
	word := uint64(4)
	if m.is64 {
		word = 8
	}
	add := func(name string, t elf.SectionType, addr, off, size, align uint64) {
		secs = append(secs, &elf.Section{SectionHeader: elf.SectionHeader{Name: name, Type: t, Flags: elf.SHF_ALLOC,
			Addr: addr, Offset: off, Size: size, FileSize: size, Addralign: max(align, 1)}})
	}
	table := func(name string, t elf.SectionType, at, size elf.DynTag) {
		a, ok1 := m.dynValue(at)
		n, ok2 := m.dynValue(size)
		if !ok1 || !ok2 || n == 0 {
			return
		}
		if off, ok := m.f.OffsetOf(a); ok {
			add(name, t, a, uint64(off), n, word)
		}
	}
	table(".rela.dyn", elf.SHT_RELA, elf.DT_RELA, elf.DT_RELASZ)
	table(".rel.dyn", elf.SHT_REL, elf.DT_REL, elf.DT_RELSZ)
	table(".relr.dyn", elf.SectionType(19), dtRELR, elf.DynTag(35)) // SHT_RELR, DT_RELRSZ
	if pt, ok := m.dynValue(elf.DT_PLTREL); ok {
		if elf.DynTag(pt) == elf.DT_RELA {
			table(".rela.plt", elf.SHT_RELA, elf.DT_JMPREL, elf.DT_PLTRELSZ)
		} else {
			table(".rel.plt", elf.SHT_REL, elf.DT_JMPREL, elf.DT_PLTRELSZ)
		}
	}
	for _, ph := range m.phdrs {
		switch ph.Type {
		case elf.PT_INTERP:
			add(".interp", elf.SHT_PROGBITS, ph.Vaddr, ph.Off, ph.Filesz, 1)
		case elf.PT_NOTE:
			// Pieces: the property notes a PT_GNU_PROPERTY names inside
			// this segment, and what is before and after them.
			cuts := []uint64{ph.Off, ph.Off + ph.Filesz}
			for _, pp := range m.phdrs {
				if pp.Type == elf.PT_GNU_PROPERTY && pp.Off > ph.Off && pp.Off < ph.Off+ph.Filesz {
					cuts = append(cuts, pp.Off)
				}
				if pp.Type == elf.PT_GNU_PROPERTY && pp.Off+pp.Filesz > ph.Off && pp.Off+pp.Filesz < ph.Off+ph.Filesz {
					cuts = append(cuts, pp.Off+pp.Filesz)
				}
			}
			slices.Sort(cuts)
			cuts = slices.Compact(cuts)
			for k := 0; k+1 < len(cuts); k++ {
				add(fmt.Sprintf(".note@0x%x", cuts[k]), elf.SHT_NOTE, ph.Vaddr+cuts[k]-ph.Off, cuts[k], cuts[k+1]-cuts[k], ph.Align)
			}
		}
	}
	return secs
}

// progName names a segment type as readelf does.
func progName(t elf.ProgType) string {
	if n := t.String(); !strings.HasPrefix(n, "PT_") {
		return fmt.Sprintf("segment type 0x%x", uint32(t))
	}
	return strings.TrimPrefix(t.String(), "PT_") + " segment"
}

// dynValue is the original dynamic section's value of tag (none when the
// file has no dynamic section).
func (m *model) dynValue(tag elf.DynTag) (uint64, bool) {
	if m.dyn == nil {
		return 0, false
	}
	return m.dyn.Value(tag)
}

// dtRELR is DT_RELR (glibc 2.36's relative relocations; debug/elf does
// not name it).
const dtRELR elf.DynTag = 36

// addressTag says whether a dynamic tag's value is an address in the
// file's image.
func addressTag(t elf.DynTag) bool {
	switch t {
	case elf.DT_PLTGOT, elf.DT_HASH, elf.DT_STRTAB, elf.DT_SYMTAB, elf.DT_RELA, elf.DT_INIT, elf.DT_FINI,
		elf.DT_REL, elf.DT_JMPREL, elf.DT_INIT_ARRAY, elf.DT_FINI_ARRAY, elf.DT_PREINIT_ARRAY,
		elf.DT_GNU_HASH, elf.DT_VERSYM, elf.DT_VERDEF, elf.DT_VERNEED, dtRELR:
		return true
	}
	return false
}

func (m *model) setValIf(tag elf.DynTag, old, v uint64) {
	for i := range m.ents {
		if m.ents[i].tag == tag && m.ents[i].val == old {
			m.ents[i].val = v
		}
	}
}

func joinLines(xs []string) string {
	var b bytes.Buffer
	for _, x := range xs {
		b.WriteString(x)
		b.WriteByte('\n')
	}
	return b.String()
}

func (m *model) setVal(tag elf.DynTag, v uint64) {
	for i := range m.ents {
		if m.ents[i].tag == tag {
			m.ents[i].val = v
		}
	}
}

// diffRanges returns [start,end) ranges where a and b differ (len(b) ≥ len(a) prefix compared).
func diffRanges(a, b []byte) [][2]int {
	var out [][2]int
	n := min(len(a), len(b))
	const stretch = 256 // equal stretches are skipped this many bytes at a time
	for i := 0; i < n; {
		if k := min(n, i+stretch); bytes.Equal(a[i:k], b[i:k]) {
			i = k
			continue
		}
		if a[i] == b[i] {
			i++
			continue
		}
		j := i
		for j < n && a[j] != b[j] {
			j++
		}
		out = append(out, [2]int{i, j})
		i = j
	}
	return out
}

func readAt(f *elfx.File, off int64, n int) ([]byte, error) {
	return saferio.ReadAt(f.ReaderAt(), f.Size, off, int64(n), 0)
}

// readInto reads n bytes at off into buf's backing array (growing it only
// when too small), for loops that stream a table chunk by chunk.
func readInto(f *elfx.File, buf []byte, off int64, n int) ([]byte, error) {
	if off < 0 || n < 0 || off > f.Size || int64(n) > f.Size-off {
		return nil, fmt.Errorf("%d bytes at 0x%x are beyond the end of the file (%d bytes)", n, off, f.Size)
	}
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := f.ReaderAt().ReadAt(buf, off); err != nil {
		return nil, err
	}
	return buf, nil
}

func (m *model) encodeDynamic(slots int) []byte {
	entsz := 16
	if !m.is64 {
		entsz = 8
	}
	b := make([]byte, slots*entsz)
	for i, e := range m.ents {
		o := i * entsz
		if m.is64 {
			m.bo.PutUint64(b[o:], uint64(e.tag))
			m.bo.PutUint64(b[o+8:], e.val)
		} else {
			m.bo.PutUint32(b[o:], uint32(e.tag))
			m.bo.PutUint32(b[o+4:], uint32(e.val))
		}
	}
	return b // the rest stays DT_NULL
}

func (m *model) encodePhdrs(ps []phdr) []byte {
	b := make([]byte, len(ps)*m.phent)
	for i, p := range ps {
		o := b[i*m.phent:]
		if m.is64 {
			m.bo.PutUint32(o[0:], uint32(p.Type))
			m.bo.PutUint32(o[4:], uint32(p.Flags))
			m.bo.PutUint64(o[8:], p.Off)
			m.bo.PutUint64(o[16:], p.Vaddr)
			m.bo.PutUint64(o[24:], p.Paddr)
			m.bo.PutUint64(o[32:], p.Filesz)
			m.bo.PutUint64(o[40:], p.Memsz)
			m.bo.PutUint64(o[48:], p.Align)
		} else {
			m.bo.PutUint32(o[0:], uint32(p.Type))
			m.bo.PutUint32(o[4:], uint32(p.Off))
			m.bo.PutUint32(o[8:], uint32(p.Vaddr))
			m.bo.PutUint32(o[12:], uint32(p.Paddr))
			m.bo.PutUint32(o[16:], uint32(p.Filesz))
			m.bo.PutUint32(o[20:], uint32(p.Memsz))
			m.bo.PutUint32(o[24:], uint32(p.Flags))
			m.bo.PutUint32(o[28:], uint32(p.Align))
		}
	}
	return b
}

// rewriteSectionHeaders writes the section header table anew. After a
// growing edit (move) it ends the file, as patchelf 0.19 leaves it: the
// patches to its entries go to the new copy, e_shoff points there, and
// the old table is clobbered with the vacated sections (unless
// NoClobberOldSections) where neither the appended bytes nor the new
// table write. A removed resolution cache note loses its entry (and its
// bytes, zeroed: they name paths); a new one, note, gets one, with its
// name added to the section name table when that lacks it.
func (m *model) rewriteSectionHeaders(p *Plan, move bool, lc ldcache, note *elf.Section) error {
	shoff, shentsize := m.sectionHeaders()
	secs := m.f.ELF().Sections
	n := len(secs)
	if shoff == 0 || m.pseudo || n == 0 {
		if note != nil {
			return m.errf("no section headers to list the resolution cache note in")
		}
		return nil
	}
	size := uint64(n) * uint64(shentsize)
	table, err := readAt(m.f, int64(shoff), int(size))
	if err != nil {
		return m.errf("reading the section header table: %v", err)
	}
	kept := p.Patches[:0]
	var eh *Patch
	for _, pt := range p.Patches {
		switch {
		case pt.Data != nil && uint64(pt.Offset) >= shoff && uint64(pt.Offset)+uint64(len(pt.Data)) <= shoff+size:
			copy(table[uint64(pt.Offset)-shoff:], pt.Data)
			continue
		case pt.What == "ELF header":
			eh = &pt
		}
		kept = append(kept, pt)
	}
	p.Patches = kept
	hdr := append([]byte(nil), m.ehdr...)
	if eh != nil {
		hdr = eh.Data
	}
	shstrndx := int(m.bo.Uint16(hdr[len(hdr)-2:]))
	if lc.remove {
		s := secs[lc.old]
		p.Patches = append(p.Patches, Patch{Offset: int64(s.Offset), Size: int(s.Size), What: "removed " + ldCacheSection, Fill: 0})
		table = m.dropSection(table, shentsize, lc.old)
		if shstrndx > lc.old {
			shstrndx--
		}
	}
	// Where new bytes go: after the appended ones (a new segment at the
	// end of the file, or the grown .dynstr, after which only padding and
	// this table were), else where the table is.
	at := uint64(p.NewSize)
	if p.AppendSize > 0 {
		at = uint64(p.AppendOffset) + uint64(p.AppendSize)
	}
	if note != nil {
		if shstrndx <= 0 || shstrndx >= n {
			return m.errf("no section name table for the resolution cache note's name")
		}
		names := secs[shstrndx]
		data, err := readAt(m.f, int64(names.Offset), int(names.Size))
		if err != nil {
			return m.errf("reading %s: %v", names.Name, err)
		}
		idx := nameIndex(data, ldCacheSection)
		if idx < 0 {
			// A longer copy of the name table, after the appended bytes.
			idx = len(data)
			data = append(append(data, ldCacheSection...), 0)
			p.Patches = append(p.Patches, Patch{Offset: int64(at), Size: len(data), What: names.Name, Data: data})
			m.putSection(table[shstrndx*shentsize:], &elf.SectionHeader{Name: "", Type: names.Type, Flags: names.Flags, Addr: 0, Offset: at,
				Size: uint64(len(data)), Link: names.Link, Info: names.Info, Addralign: names.Addralign, Entsize: names.Entsize}, m.bo.Uint32(table[shstrndx*shentsize:]))
			at += uint64(len(data))
			move = true
		}
		entry := make([]byte, shentsize)
		m.putSection(entry, &note.SectionHeader, uint32(idx))
		table = append(table, entry...)
	}
	newN := len(table) / shentsize
	if move {
		at = align(at, 8)
	} else {
		at = shoff
	}
	newSize := uint64(len(table))
	if m.is64 {
		m.bo.PutUint64(hdr[40:], at)
		m.bo.PutUint16(hdr[60:], uint16(newN))
		m.bo.PutUint16(hdr[62:], uint16(shstrndx))
	} else {
		if at > math.MaxUint32 {
			return m.errf("no offset left for the section header table after 0x%x", at)
		}
		m.bo.PutUint32(hdr[32:], uint32(at))
		m.bo.PutUint16(hdr[48:], uint16(newN))
		m.bo.PutUint16(hdr[50:], uint16(shstrndx))
	}
	if eh == nil && !bytes.Equal(hdr, m.ehdr) {
		p.Patches = append(p.Patches, Patch{Offset: 0, Size: len(hdr), What: "ELF header", Data: hdr})
	}
	p.Patches = append(p.Patches, Patch{Offset: int64(at), Size: len(table), What: "section headers", Data: table})
	p.NewSize = max(p.NewSize, int64(at+newSize))
	if !move {
		if newSize < size { // (a removed entry)
			p.Patches = append(p.Patches, Patch{Offset: int64(shoff + newSize), Size: int(size - newSize), What: "section headers", Fill: 0})
		}
		return nil
	}
	p.Moved = append(p.Moved, "section headers")
	if !m.opts.NoClobberOldSections {
		// What the old table held, but for what the appended bytes and the
		// new table cover.
		lo, hi := shoff, shoff+size
		newLo := at
		if p.AppendSize > 0 {
			newLo = uint64(p.AppendOffset)
		}
		var vacated []Patch
		if lo < newLo {
			vacated = append(vacated, Patch{Offset: int64(lo), Size: int(min(hi, newLo) - lo), What: "vacated section headers"})
		}
		if hi > at+newSize {
			from := max(lo, at+newSize)
			vacated = append(vacated, Patch{Offset: int64(from), Size: int(hi - from), What: "vacated section headers"})
		}
		p.Patches = append(p.Patches, clobber(vacated, p.Patches)...)
	}
	return nil
}

// nameIndex is where name starts in a string table as a whole string, -1
// when it does not.
func nameIndex(table []byte, name string) int {
	for i := 0; i < len(table); {
		j := bytes.IndexByte(table[i:], 0)
		if j < 0 {
			return -1
		}
		if string(table[i:i+j]) == name {
			return i
		}
		i += j + 1
	}
	return -1
}

// putSection encodes a section header into b (name is its index in the
// section name table).
func (m *model) putSection(b []byte, h *elf.SectionHeader, name uint32) {
	bo := m.bo
	bo.PutUint32(b, name)
	bo.PutUint32(b[4:], uint32(h.Type))
	if m.is64 {
		bo.PutUint64(b[8:], uint64(h.Flags))
		bo.PutUint64(b[16:], h.Addr)
		bo.PutUint64(b[24:], h.Offset)
		bo.PutUint64(b[32:], h.Size)
		bo.PutUint32(b[40:], h.Link)
		bo.PutUint32(b[44:], h.Info)
		bo.PutUint64(b[48:], h.Addralign)
		bo.PutUint64(b[56:], h.Entsize)
		return
	}
	bo.PutUint32(b[8:], uint32(h.Flags))
	bo.PutUint32(b[12:], uint32(h.Addr))
	bo.PutUint32(b[16:], uint32(h.Offset))
	bo.PutUint32(b[20:], uint32(h.Size))
	bo.PutUint32(b[24:], h.Link)
	bo.PutUint32(b[28:], h.Info)
	bo.PutUint32(b[32:], uint32(h.Addralign))
	bo.PutUint32(b[36:], uint32(h.Entsize))
}

// dropSection removes entry i from a section header table and renumbers
// the links to the entries after it (sh_link, and sh_info where it names
// a section: relocation tables), as patchelf's removeResolutionCache.
func (m *model) dropSection(table []byte, shentsize, i int) []byte {
	out := append(append([]byte(nil), table[:i*shentsize]...), table[(i+1)*shentsize:]...)
	linkAt, infoAt := 40, 44
	if !m.is64 {
		linkAt, infoAt = 24, 28
	}
	fix := func(b []byte) {
		switch v := int(m.bo.Uint32(b)); {
		case v == i:
			m.bo.PutUint32(b, 0)
		case v > i:
			m.bo.PutUint32(b, uint32(v-1))
		}
	}
	for e := 0; e+shentsize <= len(out); e += shentsize {
		fix(out[e+linkAt:])
		if t := elf.SectionType(m.bo.Uint32(out[e+4:])); t == elf.SHT_REL || t == elf.SHT_RELA {
			fix(out[e+infoAt:])
		}
	}
	return out
}

// sectionHeaders is where the section header table starts (e_shoff) and
// the size of an entry (e_shentsize).
func (m *model) sectionHeaders() (shoff uint64, shentsize int) {
	if m.is64 {
		return m.bo.Uint64(m.ehdr[40:]), int(m.bo.Uint16(m.ehdr[58:]))
	}
	return uint64(m.bo.Uint32(m.ehdr[32:])), int(m.bo.Uint16(m.ehdr[46:]))
}

// patchSections points the section headers of moved sections at their new
// place (sh_addr, sh_offset, sh_size).
func (m *model) patchSections(patch func(int64, []byte, string), upd map[int][2]uint64, vaddrOf func(uint64) uint64) {
	shoff, shentsize := m.sectionHeaders()
	if shoff == 0 {
		return // no section headers: nothing to keep in sync
	}
	for i, s := range m.f.ELF().Sections {
		u, ok := upd[i]
		if !ok {
			continue
		}
		pos := int64(shoff) + int64(i*shentsize)
		if m.is64 {
			b := make([]byte, 24)
			m.bo.PutUint64(b[0:], vaddrOf(u[0]))
			m.bo.PutUint64(b[8:], u[0])
			m.bo.PutUint64(b[16:], u[1])
			patch(pos+16, b, "section header "+s.Name)
		} else {
			b := make([]byte, 12)
			m.bo.PutUint32(b[0:], uint32(vaddrOf(u[0])))
			m.bo.PutUint32(b[4:], uint32(u[0]))
			m.bo.PutUint32(b[8:], uint32(u[1]))
			patch(pos+12, b, "section header "+s.Name)
		}
	}
}

// appender builds the new segment's bytes.
type appender struct {
	base uint64
	buf  []byte
	tail []byte // last in the segment, kept apart: the grown .dynstr
}

// size is the segment's length including its tail.
func (a *appender) size() uint64 { return uint64(len(a.buf) + len(a.tail)) }

// setTail places b after everything added so far and returns its offset;
// nothing may be added after it.
func (a *appender) setTail(b []byte) uint64 {
	a.tail = b
	return a.base + uint64(len(a.buf))
}

// reserve returns the absolute offset of n zero bytes aligned to a.
func (a *appender) reserve(n int, al int) uint64 {
	for len(a.buf)%al != 0 {
		a.buf = append(a.buf, 0)
	}
	off := a.base + uint64(len(a.buf))
	a.buf = append(a.buf, make([]byte, n)...)
	return off
}

func (a *appender) add(b []byte, al int) uint64 {
	off := a.reserve(len(b), al)
	a.set(off, b)
	return off
}

func (a *appender) set(off uint64, b []byte) {
	copy(a.buf[off-a.base:], b)
}

// clobber is the 'Z' patches over the vacated ranges, less every byte
// another patch writes (and each byte once).
func clobber(vacated, patches []Patch) []Patch {
	var taken [][2]int64
	for _, pt := range patches {
		taken = append(taken, [2]int64{pt.Offset, pt.Offset + int64(pt.n())})
	}
	var out []Patch
	for _, v := range vacated {
		free := [][2]int64{{v.Offset, v.Offset + int64(v.Size)}}
		for _, t := range taken {
			var next [][2]int64
			for _, f := range free {
				if t[1] <= f[0] || f[1] <= t[0] {
					next = append(next, f)
					continue
				}
				if f[0] < t[0] {
					next = append(next, [2]int64{f[0], t[0]})
				}
				if t[1] < f[1] {
					next = append(next, [2]int64{t[1], f[1]})
				}
			}
			free = next
		}
		for _, f := range free {
			if f[1] > f[0] {
				out = append(out, Patch{Offset: f[0], Size: int(f[1] - f[0]), What: v.What, Fill: 'Z'})
				taken = append(taken, f)
			}
		}
	}
	return out
}
