package zstd

import (
	"encoding/binary"
	"math/bits"
)

// xxh64 is XXH64 with seed 0, streamed (the frame content checksum is its
// low 32 bits).
type xxh64 struct {
	v     [4]uint64
	total uint64
	buf   [32]byte
	n     int
}

// The primes are variables so that sums wrap as the algorithm expects.
var (
	p1 uint64 = 11400714785074694791
	p2 uint64 = 14029467366897019727
	p3 uint64 = 1609587929392839161
	p4 uint64 = 9650029242287828579
	p5 uint64 = 2870177450012600261
)

func (h *xxh64) reset() {
	*h = xxh64{v: [4]uint64{p1 + p2, p2, 0, -p1}}
}

func round(acc, in uint64) uint64 {
	acc += in * p2
	return bits.RotateLeft64(acc, 31) * p1
}

func merge(acc, v uint64) uint64 {
	acc ^= round(0, v)
	return acc*p1 + p4
}

func (h *xxh64) stripe(b []byte) {
	for i := range h.v {
		h.v[i] = round(h.v[i], binary.LittleEndian.Uint64(b[8*i:]))
	}
}

func (h *xxh64) write(b []byte) {
	h.total += uint64(len(b))
	if h.n > 0 {
		k := copy(h.buf[h.n:], b)
		h.n += k
		b = b[k:]
		if h.n < 32 {
			return
		}
		h.stripe(h.buf[:])
		h.n = 0
	}
	for len(b) >= 32 {
		h.stripe(b)
		b = b[32:]
	}
	h.n = copy(h.buf[:], b)
}

func (h *xxh64) sum() uint64 {
	var acc uint64
	if h.total >= 32 {
		acc = bits.RotateLeft64(h.v[0], 1) + bits.RotateLeft64(h.v[1], 7) + bits.RotateLeft64(h.v[2], 12) + bits.RotateLeft64(h.v[3], 18)
		for _, v := range h.v {
			acc = merge(acc, v)
		}
	} else {
		acc = h.v[2] + p5
	}
	acc += h.total
	b := h.buf[:h.n]
	for len(b) >= 8 {
		acc ^= round(0, binary.LittleEndian.Uint64(b))
		acc = bits.RotateLeft64(acc, 27)*p1 + p4
		b = b[8:]
	}
	if len(b) >= 4 {
		acc ^= uint64(binary.LittleEndian.Uint32(b)) * p1
		acc = bits.RotateLeft64(acc, 23)*p2 + p3
		b = b[4:]
	}
	for _, c := range b {
		acc ^= uint64(c) * p5
		acc = bits.RotateLeft64(acc, 11) * p1
	}
	acc ^= acc >> 33
	acc *= p2
	acc ^= acc >> 29
	acc *= p3
	acc ^= acc >> 32
	return acc
}
