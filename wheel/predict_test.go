package wheel

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// tailFrom starts the speculative decode before the dynamic section and
// the section headers, by their share of the file, and declines headers it
// cannot trust and dynamic sections in the first half.
func TestTailFrom(t *testing.T) {
	const size, n = 100 << 20, 40 << 20
	elf64 := func(phentsize uint16, dynOff, shoff uint64) []byte {
		b := make([]byte, 64+2*56)
		copy(b, "\x7fELF\x02\x01\x01")
		le := binary.LittleEndian
		le.PutUint64(b[32:], 64)    // e_phoff
		le.PutUint64(b[40:], shoff) // e_shoff
		le.PutUint16(b[54:], phentsize)
		le.PutUint16(b[56:], 2)
		le.PutUint32(b[64:], 1) // PT_LOAD
		le.PutUint32(b[64+56:], 2)
		le.PutUint64(b[64+56+8:], dynOff) // PT_DYNAMIC's p_offset
		return b
	}
	for _, c := range []struct {
		name string
		hdr  []byte
		ok   bool
		from int64
	}{
		{"dynamic at 90%", elf64(56, 90<<20, 99<<20), true, n*90/100 - n/64 - 64<<10},
		{"section headers first", elf64(56, 95<<20, 80<<20), true, n*80/100 - n/64 - 64<<10},
		{"dynamic in the first half", elf64(56, 10<<20, 99<<20), false, 0},
		{"wrong program header size", elf64(64, 90<<20, 99<<20), false, 0},
		{"not ELF", bytes.Repeat([]byte{1}, 200), false, 0},
		{"short", []byte("\x7fELF"), false, 0},
	} {
		from, ok := tailFrom(bytes.NewReader(c.hdr), size, n)
		if ok != c.ok || (ok && (from < c.from-2 || from > c.from+2)) {
			t.Errorf("%s: %d, %v; want %d, %v", c.name, from, ok, c.from, c.ok)
		}
	}
}
