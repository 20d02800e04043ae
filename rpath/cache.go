package rpath

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"unsafe"

	"github.com/rocmdoctor/rocmdoctor/internal/regfile"
	"github.com/rocmdoctor/rocmdoctor/internal/saferio"
)

/*
The ld.so.cache formats (glibc sysdeps/generic/dl-cache.h).

Old format ("ld.so-1.7.0", 11 bytes + 1 pad, uint32 nlibs), then nlibs
entries of {int32 flags, uint32 key, uint32 value} where key (the SONAME)
and value (the path) are offsets into the string table that follows the
entries. glibc ≤ 2.31 wrote the old format followed by the new one.

New format: a 48-byte header

	char magic[17] "glibc-ld.so.cache"; char version[3] "1.1";
	uint32 nlibs; uint32 len_strings; uint8 flags (endianness: 2 little, 3 big);
	uint8 pad[3]; uint32 extension_offset; uint32 unused[3]

then nlibs × 24-byte entries {int32 flags; uint32 key, value; uint32
osversion_unused; uint64 hwcap}, then the strings. Offsets are relative to
the start of the new header. Entries are sorted with glibc's _dl_cache_libcmp;
for one name, entries for glibc-hwcaps subdirectories come first.

An entry whose hwcap has, in its upper 32 bits ignoring the low 10 ISA-level
bits, exactly DL_CACHE_HWCAP_EXTENSION (1<<62) names a glibc-hwcaps
subdirectory: its low 32 bits index the string-offset array of the
extension section tagged 1 (cache_extension_tag_glibc_hwcaps). The extension
directory at extension_offset is {uint32 magic 0xEAA42174, uint32 count,
count × {uint32 tag, flags, offset, size}}.
*/

const (
	oldCacheMagic        = "ld.so-1.7.0"
	newCacheMagic        = "glibc-ld.so.cache1.1"
	cacheExtensionMagic  = 0xEAA42174
	tagGlibcHWCaps       = 1
	hwcapExtension       = uint64(1) << 62
	hwcapISALevelMask    = (1 << 10) - 1
	flagTypeMask         = 0x00ff
	flagELFLibc6         = 0x0003
	flagArchMask         = 0xff00
	maxCacheSize         = 256 << 20
	newCacheHeaderSize   = 48
	newCacheEntrySize    = 24
	oldCacheHeaderSize   = 16
	oldCacheEntrySize    = 12
	cacheFormatNew       = "new"
	cacheFormatOld       = "old"
	cacheFormatOldAndNew = "old+new"
)

// CacheEntry is one library of ld.so.cache.
type CacheEntry struct {
	Name  string // SONAME (key)
	Path  string // value
	Flags uint32
	// HWCaps is the glibc-hwcaps subdirectory ("x86-64-v3") for entries
	// found there, "" otherwise.
	HWCaps string
	// ISALevel is the x86 ISA level bitmask of hwcaps entries.
	ISALevel uint32
	// Legacy is the legacy hwcap bitmask of an entry that ldconfig found
	// in a legacy hwcaps subdirectory (tls, haswell, x86_64, …): hwcap
	// bits, platform bits from bit 48, 1<<63 for tls. Only loaders of
	// glibc before 2.37 use such entries.
	Legacy uint64
}

// Cache is a parsed ld.so.cache.
type Cache struct {
	Format  string // "new", "old", "old+new"
	Entries []CacheEntry
	// byName holds the first and last entry of each name, and next the
	// entry after each one with its name (-1 at the end): the entries of a
	// name in cache order, without a slice per name (~900 allocations on
	// every command that resolves).
	byName map[string][2]int32
	next   []int32
}

// ReadCache reads and parses the cache file at path.
func ReadCache(path string) (*Cache, error) {
	b, err := regfile.ReadFile(path)
	if err != nil {
		return nil, err
	}
	// The image read is this function's alone and never written again:
	// the names and paths can be views of it instead of a copy.
	c, err := parseCache(b, true)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// ParseCache parses an ld.so.cache image in either format. The Cache
// keeps nothing of b.
func ParseCache(b []byte) (*Cache, error) { return parseCache(b, false) }

// parseCache is ParseCache; with owned, the strings view b (which must
// then never change) instead of a copy of it.
func parseCache(b []byte, owned bool) (*Cache, error) {
	if len(b) > maxCacheSize {
		return nil, fmt.Errorf("cache of %d bytes exceeds %d", len(b), maxCacheSize)
	}
	c := &Cache{}
	switch {
	case bytes.HasPrefix(b, []byte(newCacheMagic)):
		c.Format = cacheFormatNew
		if err := c.parseNew(b, owned); err != nil {
			return nil, err
		}
	case bytes.HasPrefix(b, []byte(oldCacheMagic)):
		if len(b) < oldCacheHeaderSize {
			return nil, errors.New("old-format cache header truncated at offset 0")
		}
		n := binary.LittleEndian.Uint32(b[12:])
		if uint64(n) > uint64(len(b)-oldCacheHeaderSize)/oldCacheEntrySize {
			return nil, fmt.Errorf("old-format cache: %d entries do not fit at offset 12", n)
		}
		end := oldCacheHeaderSize + int(n)*oldCacheEntrySize
		// glibc ≤ 2.31 appends the new format after the old one, aligned.
		newOff := (end + 7) &^ 7
		if newOff+len(newCacheMagic) <= len(b) && bytes.HasPrefix(b[newOff:], []byte(newCacheMagic)) {
			c.Format = cacheFormatOldAndNew
			if err := c.parseNew(b[newOff:], owned); err != nil {
				return nil, err
			}
			break
		}
		c.Format = cacheFormatOld
		c.reserve(int(n))
		strs := newStrings(b[end:], owned)
		for i := 0; i < int(n); i++ {
			e := b[oldCacheHeaderSize+i*oldCacheEntrySize:]
			flags := binary.LittleEndian.Uint32(e)
			name, ok1 := strs.at(uint64(binary.LittleEndian.Uint32(e[4:])))
			path, ok2 := strs.at(uint64(binary.LittleEndian.Uint32(e[8:])))
			if !ok1 || !ok2 {
				return nil, fmt.Errorf("old-format cache entry %d at offset 0x%x: string outside table", i, oldCacheHeaderSize+i*oldCacheEntrySize)
			}
			c.add(CacheEntry{Name: name, Path: path, Flags: flags})
		}
	default:
		return nil, errors.New("not an ld.so.cache (bad magic at offset 0)")
	}
	return c, nil
}

// reserve makes room for n more entries; add needs it first.
func (c *Cache) reserve(n int) {
	if c.byName == nil {
		c.byName = make(map[string][2]int32, n)
	}
	c.Entries = slices.Grow(c.Entries, n)
	c.next = slices.Grow(c.next, n)
}

func (c *Cache) add(e CacheEntry) {
	i := int32(len(c.Entries))
	c.Entries = append(c.Entries, e)
	c.next = append(c.next, -1)
	if fl, ok := c.byName[e.Name]; ok {
		c.next[fl[1]] = i
		c.byName[e.Name] = [2]int32{fl[0], i}
	} else {
		c.byName[e.Name] = [2]int32{i, i}
	}
}

// cacheStrings reads the NUL-terminated strings of a cache image as
// slices of one copy of it (a copy per name and path was ~1,800
// allocations).
type cacheStrings struct {
	b []byte
	s string
}

func newStrings(b []byte, owned bool) cacheStrings {
	if owned {
		return cacheStrings{b, unsafe.String(unsafe.SliceData(b), len(b))}
	}
	return cacheStrings{b, string(b)}
}

func (t cacheStrings) at(off uint64) (string, bool) {
	c, ok := saferio.CBytes(t.b, off)
	if !ok {
		return "", false
	}
	return t.s[off : off+uint64(len(c))], true
}

func (c *Cache) parseNew(b []byte, owned bool) error {
	if len(b) < newCacheHeaderSize {
		return errors.New("cache header truncated at offset 0")
	}
	var bo binary.ByteOrder = binary.LittleEndian
	if b[28] == 3 {
		bo = binary.BigEndian
	}
	n := bo.Uint32(b[20:])
	extOff := bo.Uint32(b[32:])
	if uint64(n) > uint64(len(b)-newCacheHeaderSize)/newCacheEntrySize {
		return fmt.Errorf("cache: %d entries do not fit (offset 20)", n)
	}
	hwcaps, err := parseHWCapsExtension(b, extOff, bo)
	if err != nil {
		return err
	}
	c.reserve(int(n))
	strs := newStrings(b, owned)
	for i := 0; i < int(n); i++ {
		off := newCacheHeaderSize + i*newCacheEntrySize
		e := b[off:]
		flags := bo.Uint32(e)
		name, ok1 := strs.at(uint64(bo.Uint32(e[4:])))
		path, ok2 := strs.at(uint64(bo.Uint32(e[8:])))
		if !ok1 || !ok2 {
			return fmt.Errorf("cache entry %d at offset 0x%x: string outside the file", i, off)
		}
		ce := CacheEntry{Name: name, Path: path, Flags: flags}
		hw := bo.Uint64(e[16:])
		if (hw>>32)&^hwcapISALevelMask == hwcapExtension>>32 {
			idx := uint32(hw)
			if int(idx) >= len(hwcaps) {
				return fmt.Errorf("cache entry %d at offset 0x%x: glibc-hwcaps index %d outside %d names", i, off, idx, len(hwcaps))
			}
			ce.HWCaps = hwcaps[idx]
			ce.ISALevel = uint32(hw>>32) & hwcapISALevelMask
		} else {
			ce.Legacy = hw
		}
		c.add(ce)
	}
	return nil
}

func parseHWCapsExtension(b []byte, off uint32, bo binary.ByteOrder) ([]string, error) {
	if off == 0 || uint64(off)+8 > uint64(len(b)) || bo.Uint32(b[off:]) != cacheExtensionMagic {
		return nil, nil
	}
	count := bo.Uint32(b[off+4:])
	if uint64(count) > uint64(len(b)-int(off)-8)/16 {
		return nil, fmt.Errorf("cache extension directory at offset 0x%x: %d sections do not fit", off, count)
	}
	var names []string
	for i := uint32(0); i < count; i++ {
		s := b[off+8+16*i:]
		tag, soff, size := bo.Uint32(s), bo.Uint32(s[8:]), bo.Uint32(s[12:])
		if tag != tagGlibcHWCaps {
			continue
		}
		if err := saferio.Check(int64(len(b)), int64(soff), int64(size)); err != nil || size%4 != 0 {
			return nil, fmt.Errorf("glibc-hwcaps extension at offset 0x%x: bad range", soff)
		}
		for j := uint32(0); j < size/4; j++ {
			name, ok := saferio.CString(b, uint64(bo.Uint32(b[soff+4*j:])))
			if !ok {
				return nil, fmt.Errorf("glibc-hwcaps extension at offset 0x%x: name %d outside the file", soff, j)
			}
			names = append(names, name)
		}
	}
	return names, nil
}

// Lookup returns the entry ld.so would use for name: among entries whose
// flags match wantFlags, the one in the highest-priority glibc-hwcaps
// subdirectory of active (and ISA level within isaLevel), else the first
// other entry in cache order that legacy accepts (ldconfig puts the legacy
// hwcaps entries of a name before its plain one).
func (c *Cache) Lookup(name string, wantFlags uint32, active []string, isaLevel uint32, legacy LegacyCaps) (CacheEntry, bool) {
	best, bestPrio := int32(-1), len(active)
	plain := int32(-1)
	fl, ok := c.byName[name]
	for i := fl[0]; ok && i >= 0; i = c.next[i] {
		e := c.Entries[i]
		if !flagsMatch(e.Flags, wantFlags) {
			continue
		}
		if e.HWCaps == "" {
			if plain < 0 && legacy.accepts(e.Legacy) {
				plain = i
			}
			continue
		}
		if e.ISALevel&^isaLevel != 0 {
			continue
		}
		for p, a := range active {
			if a == e.HWCaps && p < bestPrio {
				best, bestPrio = i, p
			}
		}
	}
	switch {
	case best >= 0:
		return c.Entries[best], true
	case plain >= 0:
		return c.Entries[plain], true
	}
	return CacheEntry{}, false
}

// LegacyCaps says which legacy hwcap entries of the cache a loader uses.
// The zero value is a loader of glibc 2.37 or later, which uses none.
type LegacyCaps struct {
	// Enabled: the loader is older than glibc 2.37.
	Enabled bool
	// HWCap holds the CPU's hwcap bits (x86-64: 1<<1 x86_64, 1<<2
	// avx512_1) and Platform its platform bit (1<<50 haswell, 1<<51
	// xeon_phi), 0 for none.
	HWCap, Platform uint64
}

const (
	legacyTLSBit       = uint64(1) << 63
	legacyPlatformBits = uint64(0xf) << 48 // i586, i686, haswell, xeon_phi
)

// accepts mirrors the legacy part of search_cache in glibc 2.33–2.36: no
// hwcap bit the CPU lacks (tls and platform bits aside), and platform bits,
// if any, exactly the CPU's platform.
func (l LegacyCaps) accepts(hw uint64) bool {
	if hw == 0 {
		return true
	}
	if !l.Enabled || hw&^(l.HWCap|legacyPlatformBits|legacyTLSBit) != 0 {
		return false
	}
	p := hw & legacyPlatformBits
	return p == 0 || p == l.Platform
}

// flagsMatch mirrors _dl_cache_check_flags: an ELF libc6 entry for the same
// architecture bits.
func flagsMatch(have, want uint32) bool {
	if have&flagTypeMask != flagELFLibc6 {
		return false
	}
	return have&flagArchMask == want&flagArchMask
}
