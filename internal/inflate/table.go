package inflate

import (
	"math/bits"
	"sync"
)

// The literal/length and distance decoding tables hold, for each code,
// everything decoding it takes (libdeflate's layout): the value or the
// base of the length or distance, the code's length, and the code's
// length plus its extra bits, so that a length or a distance is one
// lookup, one mask and one shift. An entry (uint32):
//
//	bits 0-7   bits the entry consumes: the code and its extra bits
//	bits 8-11  the code's length (0: no code; an invalid bit sequence)
//	bits 16-   the literal byte, the length base or the distance base
//	           (for a link: the second-level offset, 14 bits; at most
//	           286 links of 16 entries for literals/lengths, 30 of 128
//	           for distances)
//
// Flags: litFlag (a literal), excFlag / distExc (anything the fast loop
// leaves to the careful one) with endFlag (end of block), subFlag (a link
// to a second-level table: offset in bits 16-, its index bits in 0-3) or
// badFlag (a symbol the format leaves unused, 286, 287, 30, 31). An
// exceptional entry with neither is an invalid bit sequence.
const (
	litFlag  = 1 << 31
	excFlag  = 1 << 30 // literal/length table
	distExc  = 1 << 31 // distance table: bases use bits 16-30
	endFlag  = 1 << 14
	subFlag  = 1 << 13
	badFlag  = 1 << 12
	litBits  = 11 // literal/length first-level index bits
	distBits = 8  // distance first-level index bits
)

// codeLen is the length of the code an entry stands for.
func codeLen(e uint32) uint { return uint(e>>8) & 15 }

// extraOf is the value of an entry's extra bits, read from the bits that
// begin with its code.
func extraOf(e uint32, bv uint64) uint32 {
	return uint32(bv&(1<<(e&63)-1)) >> (codeLen(e) & 63)
}

// litTable decodes literal/length codes; distTable distance codes. The
// first level is an array indexed by masked bits, so the fast loop's
// lookups need no bounds checks.
type litTable struct {
	prim [1 << litBits]uint32
	sub  []uint32
}

type distTable struct {
	prim [1 << distBits]uint32
	sub  []uint32
}

// litEntry and distEntry make the final-level entry of a symbol with a
// code of l bits.
func litEntry(sym int, l uint32) uint32 {
	switch {
	case sym < 256:
		return litFlag | uint32(sym)<<16 | l<<8 | l
	case sym == 256:
		return excFlag | endFlag | l<<8 | l
	case sym < 286:
		s := sym - 257
		return uint32(lenBase[s])<<16 | l<<8 | (l + uint32(lenExtra[s]))
	}
	return excFlag | badFlag | l<<8 | l
}

func distEntry(sym int, l uint32) uint32 {
	if sym < 30 {
		return distBase[sym]<<16 | l<<8 | (l + uint32(distExtr[sym]))
	}
	return distExc | badFlag | l<<8 | l
}

func (t *litTable) build(lengths []uint8) bool {
	return buildTable(t.prim[:], &t.sub, litBits, excFlag, lengths, litEntry)
}

func (t *distTable) build(lengths []uint8) bool {
	return buildTable(t.prim[:], &t.sub, distBits, distExc, lengths, distEntry)
}

// lookup is the final-level entry for the code at the bottom of bv.
func (t *litTable) lookup(bv uint64) uint32 {
	e := t.prim[bv&(1<<litBits-1)]
	if e&subFlag != 0 {
		e = t.sub[int(e>>16&0x3fff)+int(bv>>litBits&(1<<(e&15)-1))]
	}
	return e
}

func (t *distTable) lookup(bv uint64) uint32 {
	e := t.prim[bv&(1<<distBits-1)]
	if e&subFlag != 0 {
		e = t.sub[int(e>>16&0x3fff)+int(bv>>distBits&(1<<(e&15)-1))]
	}
	return e
}

// codeCheck says whether lengths (RFC 1951 3.2.2) make a usable code:
// complete, or zlib's single one-bit code. It returns the number of codes
// of each length and the longest.
func codeCheck(lengths []uint8) (count [16]int, longest uint8, ok bool) {
	for _, l := range lengths {
		count[l]++
		longest = max(longest, l)
	}
	if longest == 0 {
		return count, 0, true
	}
	left := 1
	for l := 1; l <= 15; l++ {
		left = left<<1 - count[l]
		if left < 0 {
			return count, longest, false // over-subscribed
		}
	}
	if left > 0 {
		// Incomplete: allowed only for a single code of length 1.
		n := 0
		for _, c := range count[1:] {
			n += c
		}
		return count, longest, n == 1 && longest == 1
	}
	return count, longest, true
}

// buildTable fills a two-level table: prim is indexed by the first pbits
// bits; a longer code links to a second-level table in sub, indexed by
// the bits after those (as many as the longest code needs). Bit sequences
// without a code get exc with length 0.
func buildTable(prim []uint32, sub *[]uint32, pbits uint, exc uint32, lengths []uint8, entry func(sym int, l uint32) uint32) bool {
	count, longest, ok := codeCheck(lengths)
	for i := range prim {
		prim[i] = exc
	}
	*sub = (*sub)[:0]
	if !ok || longest == 0 {
		return ok
	}
	subBits := uint(0)
	if uint(longest) > pbits {
		subBits = uint(longest) - pbits
	}
	// The codes (RFC 1951 3.2.2), bit-reversed as they are read.
	count[0] = 0
	var next [16]int
	code := 0
	for l := 1; l <= 15; l++ {
		code = (code + count[l-1]) << 1
		next[l] = code
	}
	for sym, l := range lengths {
		if l == 0 {
			continue
		}
		rev := int(bits.Reverse16(uint16(next[l])) >> (16 - l))
		next[l]++
		e := entry(sym, uint32(l))
		if uint(l) <= pbits {
			for j := rev; j < len(prim); j += 1 << l {
				prim[j] = e
			}
			continue
		}
		p := rev & (1<<pbits - 1)
		link := prim[p]
		if link&subFlag == 0 {
			off := len(*sub)
			for range 1 << subBits {
				*sub = append(*sub, exc)
			}
			link = exc | subFlag | uint32(off)<<16 | uint32(subBits)
			prim[p] = link
		}
		s := (*sub)[link>>16&0x3fff:]
		for j := rev >> pbits; j < 1<<subBits; j += 1 << (uint(l) - pbits) {
			s[j] = e
		}
	}
	return true
}

// tables are a block's two tables, side by side (one pointer reaches
// both in the fast loop).
type tables struct {
	lit  litTable
	dist distTable
}

// fixedTables are the tables of the fixed codes, built on first use
// (not at start-up, by every command).
var fixedTables = sync.OnceValue(func() *tables {
	fixed := new(tables)
	var l [288]uint8
	for i := range l {
		switch {
		case i < 144:
			l[i] = 8
		case i < 256:
			l[i] = 9
		case i < 280:
			l[i] = 7
		default:
			l[i] = 8
		}
	}
	fixed.lit.build(l[:])
	// 30 codes of five bits leave two unused: build them as 32 so the
	// table is complete (symbols 30 and 31 are rejected when decoded).
	var d [32]uint8
	for i := range d {
		d[i] = 5
	}
	fixed.dist.build(d[:])
	return fixed
})
