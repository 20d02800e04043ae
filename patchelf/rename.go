package patchelf

import (
	"bytes"
	"debug/elf"
	"fmt"
	"sort"
	"strings"

	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/internal/saferio"
)

// Renaming dynamic symbols (patchelf's --rename-dynamic-symbols).
//
// A new name gets a new .dynstr string and the symbol's st_name points at
// it. The hash tables are then rebuilt: the GNU hash table requires the
// hashed symbols (index ≥ symoffset) to be sorted by bucket, and a renamed
// symbol usually lands in another bucket, so .dynsym is reordered within
// that range; .gnu.version is permuted alongside and every relocation
// against .dynsym gets its symbol index remapped. The SysV .hash table is
// rebuilt over the new order. All tables keep their sizes, so apart from
// .dynstr (which may move like for any other string edit) everything is
// rewritten in place.

// renameExpect is what verification checks after a rename: the final name
// of each renamed symbol (by original index) and the new order
// (order[new] = old).
type renameExpect struct {
	names map[int]string
	order []int
}

// dynsymIndex is the section index of .dynsym, or -1.
func (m *model) dynsymIndex() int {
	for i, s := range m.f.ELF().Sections {
		if s.Type == elf.SHT_DYNSYM {
			return i
		}
	}
	return -1
}

// renameSymbols applies one rename map to the current symbol names, all
// entries at once (so a map may swap two names).
func (m *model) renameSymbols(renames map[string]string) error {
	if len(renames) == 0 {
		return nil
	}
	for o, n := range renames {
		if o == "" || n == "" || strings.ContainsRune(n, 0) {
			return m.errf("bad rename %q → %q", o, n)
		}
	}
	if m.dynsymIndex() < 0 {
		return m.errf("cannot rename dynamic symbols: no .dynsym section (section headers are needed)")
	}
	if len(m.undescribed) > 0 {
		return m.errf("cannot rename dynamic symbols: the table %v names has no section header (stripped), and renaming rewrites it", m.undescribed[0].tag)
	}
	t, err := m.f.DynamicSymbolTable()
	if err != nil {
		return err
	}
	if m.symRename == nil {
		m.symRename, m.symNameOff = map[int]string{}, map[int]uint64{}
	}
	for i := 1; i < t.Len(); i++ {
		cur, renamed := m.symRename[i]
		var nw string
		var ok bool
		if renamed {
			nw, ok = renames[cur]
		} else {
			nw, ok = renames[string(t.NameBytes(i))]
		}
		if !ok {
			continue
		}
		if renamed {
			m.dropRef(m.symNameOff[i])
		}
		off := m.intern(nw, 0, false)
		m.addRef(off)
		m.symRename[i], m.symNameOff[i] = nw, off
	}
	// A map that matches nothing changes nothing, as with patchelf (a
	// script applies one map to every library of a package); the other
	// edits still apply.
	return nil
}

// renameTables rewrites .dynsym, .gnu.version, the hash tables and the
// relocations for the renamed symbols, as patches at the sections'
// original offsets (patches into moved sections are redirected later).
func (m *model) renameTables(patch func(int64, []byte, string)) (*renameExpect, error) {
	r, err := m.newRenaming(patch)
	if err != nil {
		return nil, err
	}
	for _, step := range []func() error{r.reorder, r.gnuHash, r.sysvHash, r.versym, r.relocations} {
		if err := step(); err != nil {
			return nil, err
		}
	}
	names := make(map[int]string, len(m.symRename))
	for i, s := range m.symRename {
		names[i] = s
	}
	return &renameExpect{names: names, order: r.order}, nil
}

// renaming is the state of renameTables: .dynsym with the new names
// (syms), the new order of its entries (order, and perm from old to new
// index), and the GNU hash table the order follows.
type renaming struct {
	m      *model
	patch  func(int64, []byte, string)
	di     int // .dynsym's section index
	ds     *elf.Section
	entsz  int
	n      int // symbols
	syms   []byte
	order  []int    // new → old
	perm   []uint32 // old → new
	hashes []uint32 // GNU hashes of the hashed symbols, by old index
	// The GNU hash table (nil without one), its header and word size.
	gs                    *elf.Section
	gnu                   []byte
	nb, so, bloomN, shift uint32
	word                  int
}

// newRenaming reads .dynsym and puts the new name offsets in it.
func (m *model) newRenaming(patch func(int64, []byte, string)) (*renaming, error) {
	r := &renaming{m: m, patch: patch, di: m.dynsymIndex(), entsz: 16, word: 4}
	if m.is64 {
		r.entsz, r.word = 24, 8
	}
	r.ds = m.f.ELF().Sections[r.di]
	r.n = int(r.ds.Size) / r.entsz
	var err error
	if r.syms, err = readAt(m.f, int64(r.ds.Offset), r.n*r.entsz); err != nil {
		return nil, m.errf(".dynsym: %v", err)
	}
	for i, off := range m.symNameOff {
		m.bo.PutUint32(r.syms[i*r.entsz:], uint32(off))
	}
	return r, nil
}

// name is the name of entry i of the symbol table b.
func (r *renaming) name(b []byte, i int) []byte {
	s, _ := saferio.CBytes(r.m.str, uint64(r.m.bo.Uint32(b[i*r.entsz:])))
	return s
}

// reorder sorts the GNU-hashed range of .dynsym by bucket of the new
// names, as a GNU hash table needs, and writes .dynsym in that order.
func (r *renaming) reorder() error {
	m := r.m
	r.order = make([]int, r.n)
	for i := range r.order {
		r.order[i] = i
	}
	r.hashes = make([]uint32, r.n)
	if r.gs = m.f.ELF().SectionByType(elf.SHT_GNU_HASH); r.gs != nil {
		gs := r.gs
		var err error
		if r.gnu, err = readAt(m.f, int64(gs.Offset), int(gs.Size)); err != nil {
			return m.errf(".gnu.hash: %v", err)
		}
		if len(r.gnu) < 16 {
			return m.errf(".gnu.hash at 0x%x: header truncated", gs.Offset)
		}
		r.nb, r.so, r.bloomN, r.shift = m.bo.Uint32(r.gnu), m.bo.Uint32(r.gnu[4:]), m.bo.Uint32(r.gnu[8:]), m.bo.Uint32(r.gnu[12:])
		need := 16 + uint64(r.bloomN)*uint64(r.word) + uint64(r.nb)*4 + uint64(max(r.n-int(r.so), 0))*4
		if r.nb == 0 || r.bloomN == 0 || int(r.so) > r.n || uint64(len(r.gnu)) < need {
			return m.errf(".gnu.hash at 0x%x: %d buckets, symbol offset %d, %d bloom words do not fit %d symbols in %d bytes", gs.Offset, r.nb, r.so, r.bloomN, r.n, len(r.gnu))
		}
		for i := int(r.so); i < r.n; i++ {
			r.hashes[i] = elfx.GNUHash(r.name(r.syms, i))
		}
		sub := r.order[r.so:]
		sort.SliceStable(sub, func(a, b int) bool { return r.hashes[sub[a]]%r.nb < r.hashes[sub[b]]%r.nb })
	}
	r.perm = make([]uint32, r.n)
	for nw, old := range r.order {
		r.perm[old] = uint32(nw)
	}
	newSyms := make([]byte, len(r.syms))
	for nw, old := range r.order {
		copy(newSyms[nw*r.entsz:(nw+1)*r.entsz], r.syms[old*r.entsz:(old+1)*r.entsz])
	}
	r.syms = newSyms
	r.patch(int64(r.ds.Offset), newSyms, ".dynsym")
	return nil
}

// gnuHash rebuilds the GNU hash table (bloom filter, buckets, chains)
// over the new order.
func (r *renaming) gnuHash() error {
	if r.gnu == nil {
		return nil
	}
	m, n, so, nb := r.m, r.n, int(r.so), r.nb
	out := make([]byte, len(r.gnu))
	copy(out, r.gnu[:16])
	bloom := out[16 : 16+int(r.bloomN)*r.word]
	buckets := out[16+int(r.bloomN)*r.word:]
	chain := buckets[nb*4:]
	bits := uint32(r.word * 8)
	hash := func(j int) uint32 { return r.hashes[r.order[j]] }
	for j := so; j < n; j++ {
		h := hash(j)
		w := int((h / bits) % r.bloomN)
		mask := uint64(1)<<(h%bits) | uint64(1)<<((h>>r.shift)%bits)
		if m.is64 {
			m.bo.PutUint64(bloom[w*8:], m.bo.Uint64(bloom[w*8:])|mask)
		} else {
			m.bo.PutUint32(bloom[w*4:], m.bo.Uint32(bloom[w*4:])|uint32(mask))
		}
		b := h % nb
		if j == so || hash(j-1)%nb != b {
			m.bo.PutUint32(buckets[b*4:], uint32(j))
		}
		v := h &^ 1
		if j == n-1 || hash(j+1)%nb != b {
			v |= 1
		}
		m.bo.PutUint32(chain[(j-so)*4:], v)
	}
	r.patch(int64(r.gs.Offset), out, ".gnu.hash")
	return nil
}

// sysvHash rebuilds the SysV hash table over the new order.
func (r *renaming) sysvHash() error {
	m, n := r.m, r.n
	hs := m.f.ELF().SectionByType(elf.SHT_HASH)
	if hs == nil {
		return nil
	}
	old, err := readAt(m.f, int64(hs.Offset), int(hs.Size))
	if err != nil {
		return m.errf(".hash: %v", err)
	}
	if len(old) < 8 {
		return m.errf(".hash at 0x%x: header truncated", hs.Offset)
	}
	hb, hc := m.bo.Uint32(old), m.bo.Uint32(old[4:])
	if hb == 0 || int(hc) != n || uint64(len(old)) < 8+4*(uint64(hb)+uint64(hc)) {
		return m.errf(".hash at 0x%x: %d buckets and %d chains for %d symbols", hs.Offset, hb, hc, n)
	}
	out := make([]byte, len(old))
	copy(out, old[:8])
	buckets, chain := out[8:8+4*hb], out[8+4*hb:]
	for j := 1; j < n; j++ {
		b := elfx.SysVHash(r.name(r.syms, j)) % hb
		m.bo.PutUint32(chain[j*4:], m.bo.Uint32(buckets[b*4:]))
		m.bo.PutUint32(buckets[b*4:], uint32(j))
	}
	r.patch(int64(hs.Offset), out, ".hash")
	return nil
}

// versym writes .gnu.version in the new order, with the
// clear-symbol-version edits folded in.
func (r *renaming) versym() error {
	m, n := r.m, r.n
	vs := m.f.ELF().SectionByType(elf.SHT_GNU_VERSYM)
	if vs == nil {
		return nil
	}
	if int(vs.Size) < 2*n {
		return m.errf(".gnu.version at 0x%x: %d bytes for %d symbols", vs.Offset, vs.Size, n)
	}
	v, err := readAt(m.f, int64(vs.Offset), 2*n)
	if err != nil {
		return m.errf(".gnu.version: %v", err)
	}
	for off, val := range m.versym {
		if i := off - int64(vs.Offset); i >= 0 && int(i)+2 <= len(v) {
			m.bo.PutUint16(v[i:], val)
			delete(m.versym, off)
		}
	}
	out := make([]byte, len(v))
	for nw, old := range r.order {
		copy(out[2*nw:2*nw+2], v[2*old:2*old+2])
	}
	r.patch(int64(vs.Offset), out, ".gnu.version")
	return nil
}

// relocations renumbers the symbol of every relocation against .dynsym.
func (r *renaming) relocations() error {
	m, n := r.m, r.n
	for _, s := range m.f.ELF().Sections {
		if (s.Type != elf.SHT_RELA && s.Type != elf.SHT_REL) || int(s.Link) != r.di || s.Size == 0 {
			continue
		}
		rsz, infoAt := relEntry(s.Type, m.is64)
		b, err := readAt(m.f, int64(s.Offset), int(s.Size))
		if err != nil {
			return m.errf("%s: %v", s.Name, err)
		}
		changed := false
		for off := 0; off+rsz <= len(b); off += rsz {
			var sym uint64
			if m.is64 {
				sym = m.bo.Uint64(b[off+infoAt:]) >> 32
			} else {
				sym = uint64(m.bo.Uint32(b[off+infoAt:]) >> 8)
			}
			if sym >= uint64(n) {
				return m.errf("%s at 0x%x: relocation against symbol %d of %d", s.Name, s.Offset+uint64(off), sym, n)
			}
			if p := uint64(r.perm[sym]); p != sym {
				changed = true
				if m.is64 {
					info := m.bo.Uint64(b[off+infoAt:])
					m.bo.PutUint64(b[off+infoAt:], p<<32|info&0xffffffff)
				} else {
					info := m.bo.Uint32(b[off+infoAt:])
					m.bo.PutUint32(b[off+infoAt:], uint32(p)<<8|info&0xff)
				}
			}
		}
		if changed {
			r.patch(int64(s.Offset), b, s.Name)
		}
	}
	return nil
}

// relEntry is the size of a relocation entry and the offset of r_info.
func relEntry(t elf.SectionType, is64 bool) (size, infoAt int) {
	switch {
	case is64 && t == elf.SHT_RELA:
		return 24, 8
	case is64:
		return 16, 8
	case t == elf.SHT_RELA:
		return 12, 4
	default:
		return 8, 4
	}
}

// verifyRename checks a renamed result against the original: symbol names
// in the new order, every hashed defined symbol found through the new hash
// tables (GNU and SysV), and every relocation pointing at the moved symbol.
func verifyRename(before, after *elfx.File, re *renameExpect, fail func(string, ...any) error) error {
	tb, err := before.DynamicSymbolTable()
	if err != nil {
		return err
	}
	ta, err := after.DynamicSymbolTable()
	if err != nil {
		return fail("dynamic symbols: %v", err)
	}
	n := tb.Len()
	if ta.Len() != n || len(re.order) != n {
		return fail("%d dynamic symbols, want %d", ta.Len(), n)
	}
	want := func(j int) []byte {
		old := re.order[j]
		if s, ok := re.names[old]; ok {
			return []byte(s)
		}
		return tb.NameBytes(old)
	}
	for j := 1; j < n; j++ {
		if w := want(j); !bytes.Equal(ta.NameBytes(j), w) {
			return fail("dynamic symbol %d is %q, want %q", j, ta.NameBytes(j), w)
		}
	}
	for j := 1; j < n; j++ {
		old := re.order[j]
		sb := tb.Symbol(old)
		if sb.Section == elf.SHN_UNDEF || !found(tb.Lookup(sb.Name), sb.Value) {
			continue // not reachable through the hash table before either
		}
		name := string(want(j))
		if !found(ta.Lookup(name), sb.Value) {
			return fail("%s is not found through the rebuilt hash table", name)
		}
	}
	if err := verifySysVHash(after, ta, fail); err != nil {
		return err
	}
	if err := verifyGNUHash(after, ta, fail); err != nil {
		return err
	}
	// Relocations: the same entries, pointing at the symbol's new index.
	perm := make([]uint64, n)
	for nw, old := range re.order {
		perm[old] = uint64(nw)
	}
	bs, as := before.ELF().Sections, after.ELF().Sections
	if len(bs) != len(as) {
		return fail("%d sections, want %d", len(as), len(bs))
	}
	is64 := before.Class == elf.ELFCLASS64
	bo := before.ByteOrder()
	for k, s := range bs {
		if s.Type != elf.SHT_RELA && s.Type != elf.SHT_REL || s.Size == 0 || int(s.Link) >= len(bs) || bs[s.Link].Type != elf.SHT_DYNSYM {
			continue
		}
		rb, err := readAt(before, int64(s.Offset), int(s.Size))
		if err != nil {
			return err
		}
		ra, err := readAt(after, int64(as[k].Offset), int(as[k].Size))
		if err != nil || len(ra) != len(rb) {
			return fail("%s unreadable after the edit", s.Name)
		}
		rsz, infoAt := relEntry(s.Type, is64)
		for off := 0; off+rsz <= len(rb); off += rsz {
			var symB, symA, typB, typA uint64
			if is64 {
				ib, ia := bo.Uint64(rb[off+infoAt:]), bo.Uint64(ra[off+infoAt:])
				symB, typB, symA, typA = ib>>32, ib&0xffffffff, ia>>32, ia&0xffffffff
			} else {
				ib, ia := uint64(bo.Uint32(rb[off+infoAt:])), uint64(bo.Uint32(ra[off+infoAt:]))
				symB, typB, symA, typA = ib>>8, ib&0xff, ia>>8, ia&0xff
			}
			if symB >= uint64(n) || symA != perm[symB] || typA != typB || !bytes.Equal(rb[off:off+infoAt], ra[off:off+infoAt]) {
				return fail("%s entry at +0x%x does not match the original", s.Name, off)
			}
		}
	}
	return nil
}

func found(syms []elfx.Symbol, value uint64) bool {
	for _, s := range syms {
		if s.Value == value {
			return true
		}
	}
	return false
}

// verifyGNUHash checks the GNU hash table's invariants for every hashed
// symbol: sorted by bucket, each bucket pointing at its first symbol, chain
// values equal to the hash with the end bit exactly at each bucket's last
// symbol, and both bloom bits set.
func verifyGNUHash(f *elfx.File, t *elfx.SymbolTable, fail func(string, ...any) error) error {
	gs := f.ELF().SectionByType(elf.SHT_GNU_HASH)
	if gs == nil {
		return nil
	}
	b, err := readAt(f, int64(gs.Offset), int(gs.Size))
	if err != nil || len(b) < 16 {
		return fail(".gnu.hash unreadable")
	}
	bo := f.ByteOrder()
	n := t.Len()
	nb, so, bloomN, shift := bo.Uint32(b), bo.Uint32(b[4:]), bo.Uint32(b[8:]), bo.Uint32(b[12:])
	word := uint32(4)
	if f.Class == elf.ELFCLASS64 {
		word = 8
	}
	base := 16 + uint64(bloomN)*uint64(word)
	if nb == 0 || bloomN == 0 || int(so) > n || uint64(len(b)) < base+4*uint64(nb)+4*uint64(n-int(so)) {
		return fail(".gnu.hash header does not fit")
	}
	bits := word * 8
	bucket := func(i uint32) uint32 { return bo.Uint32(b[base+4*uint64(i):]) }
	chain := func(j int) uint32 { return bo.Uint32(b[base+4*uint64(nb)+4*uint64(j-int(so)):]) }
	prev := uint32(0)
	for j := int(so); j < n; j++ {
		h := elfx.GNUHash(t.NameBytes(j))
		bk := h % nb
		if j > int(so) && bk < prev {
			return fail(".gnu.hash: symbol %d is out of bucket order", j)
		}
		if (j == int(so) || bk != prev) && bucket(bk) != uint32(j) {
			return fail(".gnu.hash: bucket %d points at %d, want %d", bk, bucket(bk), j)
		}
		last := j == n-1 || elfx.GNUHash(t.NameBytes(j+1))%nb != bk
		if c := chain(j); c&^1 != h&^1 || (c&1 != 0) != last {
			return fail(".gnu.hash: chain entry of symbol %d is 0x%x for hash 0x%x (last in bucket: %v)", j, c, h, last)
		}
		wi := uint64((h / bits) % bloomN)
		var word64 uint64
		if word == 8 {
			word64 = bo.Uint64(b[16+8*wi:])
		} else {
			word64 = uint64(bo.Uint32(b[16+4*wi:]))
		}
		if mask := uint64(1)<<(h%bits) | uint64(1)<<((h>>shift)%bits); word64&mask != mask {
			return fail(".gnu.hash: bloom filter misses symbol %d", j)
		}
		prev = bk
	}
	return nil
}

// verifySysVHash walks the SysV hash table for every symbol (elfx prefers
// the GNU table when both exist, so this one is checked separately).
func verifySysVHash(f *elfx.File, t *elfx.SymbolTable, fail func(string, ...any) error) error {
	hs := f.ELF().SectionByType(elf.SHT_HASH)
	if hs == nil {
		return nil
	}
	b, err := readAt(f, int64(hs.Offset), int(hs.Size))
	if err != nil || len(b) < 8 {
		return fail(".hash unreadable")
	}
	bo := f.ByteOrder()
	nb, nc := bo.Uint32(b), bo.Uint32(b[4:])
	if nb == 0 || uint64(len(b)) < 8+4*(uint64(nb)+uint64(nc)) {
		return fail(".hash truncated")
	}
	w := func(i uint32) uint32 { return bo.Uint32(b[8+4*i:]) }
	for j := 1; j < t.Len() && j < int(nc); j++ {
		name := t.NameBytes(j)
		ok := false
		for idx, steps := w(elfx.SysVHash(name)%nb), uint32(0); idx != 0 && idx < nc && steps <= nc; idx, steps = w(nb+idx), steps+1 {
			if int(idx) == j {
				ok = true
				break
			}
		}
		if !ok {
			return fail("%s is not in the rebuilt .hash chains", name)
		}
	}
	return nil
}

// ParseRenameMap reads patchelf's --rename-dynamic-symbols file: one
// "OLD NEW" pair per line.
func ParseRenameMap(text string) (map[string]string, error) {
	out := map[string]string{}
	for i, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
			continue
		case len(f) != 2:
			return nil, fmt.Errorf("line %d: want OLD NEW, got %q", i+1, line)
		}
		if prev, dup := out[f[0]]; dup && prev != f[1] {
			return nil, fmt.Errorf("line %d: %s renamed twice", i+1, f[0])
		}
		out[f[0]] = f[1]
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no names to rename")
	}
	return out, nil
}
