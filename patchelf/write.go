package patchelf

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/internal/safefile"
)

// overlay presents the file as it will be after a plan is applied, without
// writing: reads merge the base, the patches and the appended segment.
type overlay struct {
	base io.ReaderAt
	size int64
	p    *Plan
}

func (p *Plan) overlay(base io.ReaderAt, size int64) *overlay {
	return &overlay{base: base, size: p.SizeAfter(size), p: p}
}

func (o *overlay) Size() int64 { return o.size }

func (o *overlay) ReadAt(b []byte, off int64) (int, error) {
	if off >= o.size {
		return 0, io.EOF
	}
	n := len(b)
	if int64(n) > o.size-off {
		n = int(o.size - off)
	}
	// Base bytes, then zeros (the gap between the old end and the new
	// segment).
	m := 0
	if off < p0(o) {
		m = n
		if int64(m) > p0(o)-off {
			m = int(p0(o) - off)
		}
		k, err := o.base.ReadAt(b[:m], off)
		if err != nil && err != io.EOF {
			return 0, err
		}
		m = k
	}
	clear(b[m:n])
	o.p.Overlay(b[:n], off)
	if n < len(b) {
		return n, io.EOF
	}
	return n, nil
}

// p0 is the size of the original data.
func p0(o *overlay) int64 {
	type sizer interface{ Size() int64 }
	if s, ok := o.base.(sizer); ok {
		return s.Size()
	}
	return o.size
}

// maxSegAlign is the largest PT_LOAD alignment accepted: x86-64's 1 GiB
// pages.
const maxSegAlign = 1 << 30

// inMemory are the segments other than PT_LOAD that describe loaded
// bytes (others, such as PT_RISCV_ATTRIBUTES, are read from the file
// only, and may have no size in memory).
var inMemory = map[elf.ProgType]bool{
	elf.PT_PHDR: true, elf.PT_INTERP: true, elf.PT_DYNAMIC: true, elf.PT_NOTE: true, elf.PT_TLS: true,
	elf.PT_GNU_EH_FRAME: true, elf.PT_GNU_RELRO: true, elf.PT_GNU_PROPERTY: true,
}

// mustLoad are the segments read at their addresses once loaded (the
// program headers and the interpreter name by ld.so, RELRO made
// read-only by it, the TLS image copied, the unwinder's frame index).
var mustLoad = map[elf.ProgType]bool{
	elf.PT_PHDR: true, elf.PT_INTERP: true, elf.PT_GNU_RELRO: true, elf.PT_TLS: true, elf.PT_GNU_EH_FRAME: true,
}

// segmentsProblem checks the segments of progs, a file of size bytes, as
// the kernel and the loader need them: at most one PT_INTERP, PT_PHDR and
// PT_DYNAMIC, each segment inside the file, the loaded
// ones no larger there than in memory and read from where their addresses
// are loaded from, an interpreter name of 2 to 4096 bytes, and the
// PT_LOADs aligned to powers of two (at most maxSegAlign), congruent
// modulo their alignment (offset and address), and in ascending, disjoint
// address ranges that do not wrap around the class's address space. It
// returns the index in progs of the first bad one.
func segmentsProblem(progs []elf.ProgHeader, size int64, class elf.Class) (int, error) {
	top := uint64(math.MaxUint64)
	if class == elf.ELFCLASS32 {
		top = math.MaxUint32
	}
	prev := -1
	seen := map[elf.ProgType]bool{}
	for i, ph := range progs {
		if once := ph.Type == elf.PT_INTERP || ph.Type == elf.PT_PHDR || ph.Type == elf.PT_DYNAMIC; once && seen[ph.Type] {
			// (The gABI allows one PT_INTERP and one PT_PHDR; the kernel
			// and ld.so read only the first of each.)
			return i, fmt.Errorf("a second %v", ph.Type)
		}
		seen[ph.Type] = true
		if ph.Filesz > 0 && (ph.Off > uint64(size) || ph.Filesz > uint64(size)-ph.Off) {
			return i, fmt.Errorf("%v at 0x%x (0x%x bytes) extends past the end of the file (0x%x bytes)", ph.Type, ph.Off, ph.Filesz, size)
		}
		if ph.Type == elf.PT_INTERP && (ph.Filesz < 2 || ph.Filesz > 4096) {
			// The kernel's limits (PATH_MAX, a name and its NUL).
			return i, fmt.Errorf("PT_INTERP of 0x%x bytes: the kernel runs no program whose interpreter name is not 2 to 4096 bytes", ph.Filesz)
		}
		// (The kernel reads the interpreter's name from the file,
		// p_filesz bytes; its size in memory does not matter, and linkers
		// scripts leave it smaller: upstream's phdr-corruption test.)
		if ph.Filesz > ph.Memsz && (ph.Type == elf.PT_LOAD || inMemory[ph.Type] && ph.Type != elf.PT_INTERP) {
			return i, fmt.Errorf("%v at 0x%x: 0x%x bytes in the file but 0x%x in memory", ph.Type, ph.Off, ph.Filesz, ph.Memsz)
		}
		if ph.Type != elf.PT_LOAD {
			continue
		}
		if ph.Filesz == 0 && ph.Memsz == 0 {
			// The kernel and ld.so map nothing for an empty PT_LOAD:
			// its offset and address do not matter (upstream's
			// empty-note test has one at address 0 after another).
			continue
		}
		if ph.Vaddr > top || ph.Memsz > top-ph.Vaddr {
			return i, fmt.Errorf("PT_LOAD at 0x%x: address 0x%x and 0x%x bytes in memory wrap around", ph.Off, ph.Vaddr, ph.Memsz)
		}
		if ph.Align&(ph.Align-1) != 0 || ph.Align > maxSegAlign {
			// The ELF spec asks for powers of two; a new segment is
			// aligned to the largest PT_LOAD alignment, so an absurd one
			// would grow the file by as much.
			return i, fmt.Errorf("PT_LOAD at 0x%x: alignment 0x%x is not a power of two up to 1 GiB (the largest page size)", ph.Off, ph.Align)
		}
		if ph.Align > 1 && ph.Off%ph.Align != ph.Vaddr%ph.Align {
			return i, fmt.Errorf("PT_LOAD at 0x%x: offset and address (0x%x) not congruent modulo 0x%x", ph.Off, ph.Vaddr, ph.Align)
		}
		if prev >= 0 && (ph.Vaddr < progs[prev].Vaddr || ph.Vaddr-progs[prev].Vaddr < progs[prev].Memsz) {
			return i, fmt.Errorf("PT_LOAD segments overlap or are out of order at address 0x%x", ph.Vaddr)
		}
		prev = i
	}
	if i, ld, ok := dynamicLoad(progs); ok && ld == nil {
		return i, errors.New("PT_DYNAMIC is not inside any PT_LOAD: the loader would read the dynamic section from unmapped memory")
	}
	// What lies inside a loaded range (the program header table, the
	// interpreter name, the dynamic section, notes, ...) is read at its
	// address by the loader and at its offset by the kernel and by this
	// reader: the two must name the same bytes. What ld.so or the
	// unwinder reads at its address must be loaded at all: an edit's new
	// segment could otherwise come to hold the address.
	for i, ph := range progs {
		if !inMemory[ph.Type] || ph.Memsz == 0 && ph.Type != elf.PT_PHDR {
			continue // (an edit gives PT_PHDR the table's size)
		}
		j := slices.IndexFunc(progs, func(l elf.ProgHeader) bool {
			return l.Type == elf.PT_LOAD && ph.Vaddr >= l.Vaddr && ph.Vaddr-l.Vaddr < max(l.Memsz, 1)
		})
		if j < 0 {
			if mustLoad[ph.Type] && (ph.Type != elf.PT_TLS || ph.Filesz > 0) { // (.tbss alone takes no address space)
				return i, fmt.Errorf("%v at address 0x%x is not inside any PT_LOAD: the loader reads it from unmapped memory", ph.Type, ph.Vaddr)
			}
			continue
		}
		if l := progs[j]; (ph.Filesz > 0 || ph.Type == elf.PT_PHDR) && ph.Vaddr-l.Vaddr < l.Filesz && ph.Off != l.Off+(ph.Vaddr-l.Vaddr) {
			return i, fmt.Errorf("%v at offset 0x%x, but its address 0x%x is loaded from offset 0x%x", ph.Type, ph.Off, ph.Vaddr, l.Off+(ph.Vaddr-l.Vaddr))
		}
	}
	return -1, nil
}

// dynamicLoad returns the index in progs of the PT_DYNAMIC segment and
// the PT_LOAD that holds it (nil when none does); ok is false when there
// is no PT_DYNAMIC.
func dynamicLoad(progs []elf.ProgHeader) (i int, load *elf.ProgHeader, ok bool) {
	i = slices.IndexFunc(progs, func(p elf.ProgHeader) bool { return p.Type == elf.PT_DYNAMIC })
	if i < 0 {
		return -1, nil, false
	}
	d := progs[i]
	for j := range progs {
		l := &progs[j]
		if l.Type == elf.PT_LOAD && d.Vaddr >= l.Vaddr && d.Vaddr-l.Vaddr <= l.Memsz && d.Memsz <= l.Memsz-(d.Vaddr-l.Vaddr) {
			return i, l, true
		}
	}
	return i, nil, true
}

// Verify re-reads the planned result through an overlay and checks that
// every edit is visible and the structures are consistent.
func (p *Plan) Verify(before *elfx.File) error {
	ov := p.overlay(io.NewSectionReader(before.ReaderAt(), 0, before.Size), before.Size)
	after, err := elfx.NewFileSize(ov, ov.Size(), before.Path+" (after edit)")
	if err != nil {
		return fmt.Errorf("verification: the result does not parse: %w", err)
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("verification of %s failed: %s", before.Path, fmt.Sprintf(format, args...))
	}
	if _, err := segmentsProblem(after.Progs(), ov.Size(), after.Class); err != nil {
		return fail("%v", err)
	}
	if p.expect.osabi != nil && byte(after.OSABI) != *p.expect.osabi {
		return fail("OS ABI is %d, want %d", after.OSABI, *p.expect.osabi)
	}
	if p.expect.interp != nil {
		got, err := after.Interp()
		if err != nil || got != *p.expect.interp {
			return fail("interpreter is %q (%v), want %q", got, err, *p.expect.interp)
		}
	}
	if p.expect.stack != nil {
		found := false
		for _, ph := range after.Progs() {
			if ph.Type == elf.PT_GNU_STACK {
				found = true
				if uint32(ph.Flags) != *p.expect.stack {
					return fail("PT_GNU_STACK flags %v, want %v", ph.Flags, elf.ProgFlag(*p.expect.stack))
				}
			}
		}
		if !found {
			return fail("no PT_GNU_STACK")
		}
	}
	if p.expect.dyn == nil {
		return nil
	}
	d, err := after.Dynamic()
	if err != nil {
		return fail("dynamic section: %v", err)
	}
	if len(d.Entries) != len(p.expect.dyn) {
		return fail("%d dynamic entries, want %d", len(d.Entries), len(p.expect.dyn))
	}
	for i, e := range p.expect.dyn {
		g := d.Entries[i]
		if g.Tag != e.tag {
			return fail("dynamic entry %d is %v, want %v", i, g.Tag, e.tag)
		}
		if e.ok {
			s, ok := d.String(g.Value)
			if !ok || s != e.str {
				return fail("%v is %q, want %q", e.tag, s, e.str)
			}
		} else if g.Value != e.val {
			return fail("%v is 0x%x, want 0x%x", e.tag, g.Value, e.val)
		}
	}
	// .dynamic must stay in a PT_LOAD, as writable and as little
	// executable as it was (a moved .dynamic gets a writable segment;
	// lld's -z rodynamic, MIPS and AMDGPU code objects keep it read-only).
	if _, ld, ok := dynamicLoad(after.Progs()); ok {
		if ld == nil {
			return fail("PT_DYNAMIC is not inside any PT_LOAD")
		}
		if _, was, _ := dynamicLoad(before.Progs()); was != nil {
			if was.Flags&elf.PF_W != 0 && ld.Flags&elf.PF_W == 0 || was.Flags&elf.PF_X == 0 && ld.Flags&elf.PF_X != 0 {
				return fail("PT_DYNAMIC lies in a PT_LOAD with flags %v (was %v)", ld.Flags, was.Flags)
			}
		}
	}
	// Symbol names (renamed as asked) and version requirements.
	if p.expect.rename != nil {
		if err := verifyRename(before, after, p.expect.rename, fail); err != nil {
			return err
		}
	} else {
		// The two digests of a large library are computed side by side.
		var bn int
		var bh uint64
		var berr error
		done := make(chan struct{})
		go func() {
			defer close(done)
			bn, bh, berr = symbolDigest(before)
		}()
		an, ah, err := symbolDigest(after)
		<-done
		if berr != nil {
			return berr
		}
		if err != nil {
			return fail("dynamic symbols: %v", err)
		}
		if bn != an || bh != ah {
			return fail("dynamic symbol names changed")
		}
	}
	needs, err := after.VersionNeeds()
	if err != nil {
		return fail("version requirements: %v", err)
	}
	files := map[string]bool{}
	for _, n := range needs {
		files[n.File] = true
	}
	for name := range p.expect.needs {
		if !files[name] {
			return fail(".gnu.version_r does not name %s", name)
		}
	}
	return nil
}

// symbolDigest summarises the dynamic symbol names by index without
// keeping them (libLLVM has 46k): .dynsym is read in chunks keeping only
// st_name, the names are then read in string-table order through a forward
// window, and each (index, name) pair is hashed into an order-independent
// sum, so verifying an edit of a large library never holds either table.
func symbolDigest(f *elfx.File) (int, uint64, error) {
	// Through the loader's view, so that a file without section headers
	// is verified too.
	secs, ds := f.SymbolSections(), f.SymbolSection(elf.SHT_DYNSYM)
	if ds == nil {
		return 0, 0, nil
	}
	if int(ds.Link) <= 0 || int(ds.Link) >= len(secs) {
		return 0, 0, fmt.Errorf("%s: .dynsym string table link %d out of range", f.Path, ds.Link)
	}
	ss := secs[ds.Link]
	entsz := 16
	if f.Class == elf.ELFCLASS64 {
		entsz = 24
	}
	n := int(ds.Size) / entsz
	bo := f.ByteOrder()
	// Each reference is st_name<<32 | index, so sorting the integers puts
	// them in string-table order.
	refs := make([]uint64, 0, max(n-1, 0))
	const per = 4096
	var b []byte
	for i := 0; i < n; i += per {
		k := min(per, n-i)
		var err error
		b, err = readInto(f, b, int64(ds.Offset)+int64(i*entsz), k*entsz)
		if err != nil {
			return 0, 0, fmt.Errorf("%s: .dynsym: %w", f.Path, err)
		}
		for j := 0; j < k; j++ {
			if i+j > 0 { // skip the null symbol
				refs = append(refs, uint64(bo.Uint32(b[j*entsz:]))<<32|uint64(i+j))
			}
		}
	}
	sortByHigh32(refs)
	win := strWindow{f: f, base: int64(ss.Offset), size: ss.Size}
	var sum uint64
	for _, r := range refs {
		name, err := win.get(r >> 32)
		if err != nil {
			return 0, 0, fmt.Errorf("%s: .dynstr: %w", f.Path, err)
		}
		sum += nameDigest(uint32(r), name)
	}
	return n, sum, nil
}

// digestSeed keys nameDigest; digests are only compared within a process
// (the file before and after an edit).
var digestSeed = maphash.MakeSeed()

// nameDigest mixes a symbol's index and name into 64 bits.
func nameDigest(idx uint32, name []byte) uint64 {
	h := maphash.Bytes(digestSeed, name) ^ uint64(idx)*0x9e3779b97f4a7c15
	h ^= h >> 31
	h *= 0xbf58476d1ce4e5b9
	return h ^ h>>29
}

// sortByHigh32 sorts v by its upper 32 bits, stably: 46k .dynsym
// references of libLLVM in well under a millisecond.
func sortByHigh32(v []uint64) { radixSort(v, 32) }

// sortUint64s sorts v.
func sortUint64s(v []uint64) { radixSort(v, 0) }

// radixSort sorts v by the bits of its values from bit lo up, stably (LSD
// radix sort in 11-bit passes, as many as the largest key needs, with one
// scratch slice): .dynstr offsets and symbol references are sorted several
// times faster than by comparison.
func radixSort(v []uint64, lo uint) {
	const bits = 11
	var top uint64
	for _, x := range v {
		top |= x >> lo
	}
	if len(v) < 2 || top == 0 {
		return
	}
	tmp := make([]uint64, len(v))
	src, dst := v, tmp
	for shift := lo; shift < 64 && top>>(shift-lo) != 0; shift += bits {
		var count [1 << bits]int
		for _, x := range src {
			count[(x>>shift)&(1<<bits-1)]++
		}
		pos := 0
		for i, c := range count {
			count[i] = pos
			pos += c
		}
		for _, x := range src {
			k := (x >> shift) & (1<<bits - 1)
			dst[count[k]] = x
			count[k]++
		}
		src, dst = dst, src
	}
	if &src[0] != &v[0] {
		copy(v, src) // after an odd number of passes the result is in tmp
	}
}

// strWindow reads NUL-terminated strings from a string table through a
// window of at least 64 KiB; symbolDigest asks in increasing offset order,
// so each byte is read about once.
type strWindow struct {
	f    *elfx.File
	base int64
	size uint64
	lo   uint64
	buf  []byte
}

func (w *strWindow) get(off uint64) ([]byte, error) {
	if off >= w.size {
		return nil, nil
	}
	want := uint64(64 << 10)
	for {
		if off >= w.lo && off < w.lo+uint64(len(w.buf)) {
			rel := w.buf[off-w.lo:]
			if i := bytes.IndexByte(rel, 0); i >= 0 {
				return rel[:i], nil
			}
			if w.lo+uint64(len(w.buf)) >= w.size {
				return nil, nil // unterminated at the end of the table
			}
			if w.lo == off {
				want = 2 * uint64(len(w.buf)) // a string longer than the window
			}
		}
		n := min(want, w.size-off)
		b, err := readInto(w.f, w.buf, w.base+int64(off), int(n))
		if err != nil {
			return nil, err
		}
		w.lo, w.buf = off, b
	}
}

// WriteOptions say where the result goes.
//
// The zero value replaces the file atomically with the verified edit,
// synced, keeping its owner, mode and extended attributes.
type WriteOptions struct {
	// Output writes to another path instead of editing the input: a
	// symbolic link is written through, a character device or FIFO is
	// written into (never replaced), a regular file is replaced atomically.
	Output string
	// InPlace writes the patches into the file itself (keeping its inode and
	// hard links) instead of replacing it with a new file. A file with
	// several names, or whose owner or extended attributes a new file could
	// not be given, is edited in place whatever InPlace says.
	InPlace bool
	// DryRun plans and verifies but writes nothing.
	DryRun bool
	// NoSync skips the fsyncs and the undo journal of an in-place edit: for
	// scratch copies nobody needs after a crash (wheel relink's staged
	// libraries).
	NoSync bool
	// Notice receives what the write did besides the edit (an interrupted
	// edit rolled back, a temporary a killed run left removed, an edit
	// written in place to keep the file's owner); nil drops them.
	Notice func(string)
	// JournalDir is where in-place edits keep their undo journals; "" is
	// safefile.JournalDir().
	JournalDir string
}

// EditFile plans, verifies and writes edits to path (symbolic links
// followed). The file is locked from planning to the last write, so that
// concurrent edits apply one after the other; one made meanwhile by a
// program that takes no lock fails the edit. On any error the file is
// unchanged.
func EditFile(path string, edits []Edit, opts Options, wo WriteOptions) (*Plan, error) {
	src, err := safefile.Resolve(path)
	if err != nil {
		return nil, err
	}
	switch src.Kind {
	case safefile.Missing:
		return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
	case safefile.Stream:
		return nil, &fs.PathError{Op: "open", Path: path, Err: errors.New("not a regular file")}
	}
	out := src
	if wo.Output != "" {
		if out, err = safefile.Resolve(wo.Output); err != nil {
			return nil, err
		}
	}
	self := out.Kind == safefile.Regular && os.SameFile(out.Info, src.Info)
	var lk *safefile.Lock
	if !wo.DryRun {
		if self && !wo.NoSync {
			// (Scratch copies, edited without a journal, need none:
			// wheel relink edits dozens.)
			safefile.Recover(wo.JournalDir, wo.Notice)
		}
		// Editing the file itself needs write permission, as patchelf's
		// open for writing does; --output only reading.
		if lk, err = safefile.LockFile(src.Real, self); err != nil {
			return nil, err
		}
		defer lk.Close()
		if out.Kind != safefile.Stream {
			safefile.Sweep(filepath.Dir(out.Real), filepath.Base(out.Real), wo.Notice)
		}
	}
	f, err := elfx.Open(src.Real)
	if err != nil {
		return nil, err
	}
	f.Path = path
	defer f.Close()
	inPlace := self && (wo.InPlace || lk != nil && lk.Links() > 1)
	var repl *replacement
	if !wo.DryRun && !inPlace && out.Kind != safefile.Stream {
		repl = startReplacement(src.Real, out.Real)
		defer repl.discard()
	}
	p, err := PlanFile(f, edits, opts)
	if err != nil {
		return nil, err
	}
	if err := p.Verify(f); err != nil {
		return nil, err
	}
	if wo.DryRun || (!p.Changed && wo.Output == "") {
		return p, nil
	}
	if lk.Changed() {
		return nil, fmt.Errorf("%s: changed by another program while it was being edited; not written", path)
	}
	switch {
	case out.Kind == safefile.Stream:
		ov := p.overlay(io.NewSectionReader(f.ReaderAt(), 0, f.Size), f.Size)
		return p, out.WriteStream(io.NewSectionReader(ov, 0, ov.Size()))
	case inPlace:
		return p, p.writeInPlace(lk.F, f.Size, wo)
	}
	err = repl.commit(p, self)
	if self && errors.Is(err, safefile.ErrNotPreserved) {
		if err := p.writeInPlace(lk.F, f.Size, wo); err != nil {
			return nil, err
		}
		if wo.Notice != nil {
			wo.Notice(fmt.Sprintf("%s: edited in place (%v)", path, err))
		}
		return p, nil
	}
	return p, err
}

// writeInPlace writes p into f, a file of size bytes, keeping its inode.
func (p *Plan) writeInPlace(f *os.File, size int64, wo WriteOptions) error {
	return safefile.WriteInPlace(f, size, p.SizeAfter(size), p.inPlaceWrites(), safefile.InPlace{NoSync: wo.NoSync, JournalDir: wo.JournalDir})
}

// inPlaceWrites is p as writes for safefile.WriteInPlace.
func (p *Plan) inPlaceWrites() []safefile.Write {
	var ws []safefile.Write
	for _, pt := range p.Patches {
		// Clobbering fills only overwrite what the new headers no
		// longer point to.
		ws = append(ws, safefile.Write{Off: pt.Offset, Data: pt.bytes(), Late: pt.Data == nil})
	}
	if len(p.Append) > 0 {
		ws = append(ws, safefile.Write{Off: p.AppendOffset, Data: p.Append})
	}
	if len(p.AppendTail) > 0 {
		ws = append(ws, safefile.Write{Off: p.AppendOffset + int64(len(p.Append)), Data: p.AppendTail})
	}
	return ws
}

// WrittenRanges lists the byte ranges [from, to) that Apply writes: every
// patch and the appended segment. Everything else keeps the original's
// bytes (a caller holding a compressed copy can reuse those parts).
func (p *Plan) WrittenRanges() [][2]int64 {
	var out [][2]int64
	for _, pt := range p.Patches {
		out = append(out, [2]int64{pt.Offset, pt.Offset + int64(pt.n())})
	}
	if n := len(p.Append) + len(p.AppendTail); n > 0 {
		out = append(out, [2]int64{p.AppendOffset, p.AppendOffset + int64(n)})
	}
	return out
}

// Apply writes the plan's patches and appended segment to w, which holds
// the original bytes.
func (p *Plan) Apply(w io.WriterAt) error {
	for _, pt := range sortedPatches(p.Patches) {
		if pt.Data == nil && pt.Size > 0 {
			if err := fill(w, pt); err != nil {
				return err
			}
			continue
		}
		if _, err := w.WriteAt(pt.Data, pt.Offset); err != nil {
			return fmt.Errorf("writing %s at 0x%x: %w", pt.What, pt.Offset, err)
		}
	}
	if len(p.Append) > 0 {
		if _, err := w.WriteAt(p.Append, p.AppendOffset); err != nil {
			return fmt.Errorf("writing the new segment at 0x%x: %w", p.AppendOffset, err)
		}
	}
	if len(p.AppendTail) > 0 {
		at := p.AppendOffset + int64(len(p.Append))
		if _, err := w.WriteAt(p.AppendTail, at); err != nil {
			return fmt.Errorf("writing the new segment's .dynstr at 0x%x: %w", at, err)
		}
	}
	return nil
}

// fill writes pt's Size bytes of pt.Fill to w, a chunk at a time.
func fill(w io.WriterAt, pt Patch) error {
	chunk := bytes.Repeat([]byte{pt.Fill}, min(pt.Size, 64<<10))
	for done := 0; done < pt.Size; done += len(chunk) {
		n := min(len(chunk), pt.Size-done)
		if _, err := w.WriteAt(chunk[:n], pt.Offset+int64(done)); err != nil {
			return fmt.Errorf("writing %s at 0x%x: %w", pt.What, pt.Offset+int64(done), err)
		}
	}
	return nil
}

// Writes reports whether p writes any byte in [from, to).
func (p *Plan) Writes(from, to int64) bool {
	hit := func(at, n int64) bool { return n > 0 && at < to && from < at+n }
	for _, pt := range p.Patches {
		if hit(pt.Offset, int64(pt.n())) {
			return true
		}
	}
	return hit(p.AppendOffset, int64(p.AppendSize))
}

// SameWrites reports whether p and q write the same bytes at the same
// offsets (patches in any order, and the appended segment): applied to
// the same file, they make the same file.
func (p *Plan) SameWrites(q *Plan) bool {
	if p.AppendOffset != q.AppendOffset || p.AppendSize != q.AppendSize ||
		!bytes.Equal(p.Append, q.Append) || !bytes.Equal(p.AppendTail, q.AppendTail) ||
		len(p.Patches) != len(q.Patches) {
		return false
	}
	a, b := sortedPatches(p.Patches), sortedPatches(q.Patches)
	for i := range a {
		if a[i].Offset != b[i].Offset || a[i].Size != b[i].Size || a[i].Fill != b[i].Fill || !bytes.Equal(a[i].Data, b[i].Data) {
			return false
		}
	}
	return true
}

func sortedPatches(ps []Patch) []Patch {
	s := append([]Patch(nil), ps...)
	sort.SliceStable(s, func(i, j int) bool { return s[i].Offset < s[j].Offset })
	return s
}

// Overlay writes p's bytes that fall in [off, off+len(b)) into b.
func (p *Plan) Overlay(b []byte, off int64) {
	apply := func(at int64, data []byte) {
		lo, hi := max(at, off), min(at+int64(len(data)), off+int64(len(b)))
		if lo < hi {
			copy(b[lo-off:hi-off], data[lo-at:hi-at])
		}
	}
	for _, pt := range p.Patches {
		if pt.Data == nil && pt.Size > 0 {
			lo, hi := max(pt.Offset, off), min(pt.Offset+int64(pt.Size), off+int64(len(b)))
			for i := lo; i < hi; i++ {
				b[i-off] = pt.Fill
			}
			continue
		}
		apply(pt.Offset, pt.Data)
	}
	if len(p.Append) > 0 {
		apply(p.AppendOffset, p.Append)
	}
	if len(p.AppendTail) > 0 {
		apply(p.AppendOffset+int64(len(p.Append)), p.AppendTail)
	}
}

// SizeAfter is the size of a file of size bytes once p is applied to it.
func (p *Plan) SizeAfter(size int64) int64 {
	if p.AppendSize > 0 {
		size = max(size, p.AppendOffset+int64(p.AppendSize))
	}
	for _, pt := range p.Patches {
		size = max(size, pt.Offset+int64(pt.n())) // the section header table moved past the end
	}
	return size
}
