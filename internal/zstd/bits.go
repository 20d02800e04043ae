package zstd

import (
	"encoding/binary"
	"errors"
)

var errCorrupt = errors.New("zstd: corrupt input")

// fwdBits reads a bitstream least-significant bit first (FSE table
// descriptions).
type fwdBits struct {
	b   []byte
	pos int // bit position
}

func (r *fwdBits) peek(n uint) uint32 {
	return uint32(le64At(r.b, r.pos>>3)>>(uint(r.pos)&7)) & (1<<n - 1)
}

// le64At loads up to 8 bytes of b at i little-endian, zeros past the end.
func le64At(b []byte, i int) uint64 {
	if i+8 <= len(b) {
		return binary.LittleEndian.Uint64(b[i:])
	}
	var v uint64
	for k := 0; i+k < len(b); k++ {
		v |= uint64(b[i+k]) << (8 * k)
	}
	return v
}

func (r *fwdBits) skip(n uint) { r.pos += int(n) }

// revBits reads a backward bitstream (Huffman and FSE streams): the stream
// is read from its last byte towards its first, starting below the
// highest set bit of the last byte. Bits below the start read as zeros and
// make the reader overflowed.
type revBits struct {
	b   []byte
	pos int // bits left; the next read takes the n bits below pos
}

func newRevBits(b []byte) (revBits, error) {
	if len(b) == 0 || b[len(b)-1] == 0 {
		return revBits{}, errCorrupt
	}
	last := b[len(b)-1]
	hb := 7
	for last>>uint(hb) == 0 {
		hb--
	}
	return revBits{b: b, pos: 8*(len(b)-1) + hb}, nil
}

// bitsAt returns the n bits (n ≤ 56) starting at bit position start (which
// may be negative: positions below zero read as zeros).
func (r *revBits) bitsAt(start int, n uint) uint64 {
	if n == 0 {
		return 0
	}
	shiftUp := uint(0)
	if start < 0 {
		if -start >= int(n) {
			return 0
		}
		shiftUp = uint(-start)
		n -= shiftUp
		start = 0
	}
	v := (le64At(r.b, start>>3) >> (uint(start) & 7)) & (1<<n - 1)
	return v << shiftUp
}

func (r *revBits) read(n uint) uint64 {
	r.pos -= int(n)
	return r.bitsAt(r.pos, n)
}

func (r *revBits) peek(n uint) uint64 { return r.bitsAt(r.pos-int(n), n) }

func (r *revBits) overflowed() bool { return r.pos < 0 }

func highBit(v uint32) uint {
	n := uint(0)
	for v > 1 {
		v >>= 1
		n++
	}
	return n
}
