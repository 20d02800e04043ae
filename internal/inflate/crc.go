package inflate

// CRC-32 of concatenated data from the CRCs of its parts (zlib's
// crc32_combine): the CRC of A then B is crc(A)·x^(8·len(B)) + crc(B)
// modulo the polynomial, in the reflected bit order of hash/crc32's IEEE
// table.

const crcPoly = 0xedb88320

// multModP is a·b modulo the polynomial.
func multModP(a, b uint32) uint32 {
	m := uint32(1) << 31
	var p uint32
	for {
		if a&m != 0 {
			p ^= b
			if a&(m-1) == 0 {
				return p
			}
		}
		m >>= 1
		if b&1 != 0 {
			b = b>>1 ^ crcPoly
		} else {
			b >>= 1
		}
	}
}

// x2n[k] is x^(2^k) modulo the polynomial.
var x2n = func() (t [32]uint32) {
	p := uint32(1) << 30 // x^1
	for k := range t {
		t[k] = p
		p = multModP(p, p)
	}
	return t
}()

// xPow8n is x^(8·n) modulo the polynomial.
func xPow8n(n int64) uint32 {
	p := uint32(1) << 31 // x^0
	for k := 3; n != 0; n, k = n>>1, k+1 {
		if n&1 != 0 {
			p = multModP(x2n[k&31], p)
		}
	}
	return p
}

// CombineCRC is the CRC-32 (IEEE) of A followed by B, from crc(A), crc(B)
// and the length of B.
func CombineCRC(crcA, crcB uint32, lenB int64) uint32 {
	return multModP(xPow8n(lenB), crcA) ^ crcB
}

// CRC is the CRC-32 (IEEE) of the whole output, combined from the blocks'.
func (idx *Index) CRC() uint32 {
	var c uint32
	for k, b := range idx.Blocks {
		c = CombineCRC(c, b.CRC, idx.end(k)-b.Out)
	}
	return c
}
