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

// x2n[k] is x^(2^k) modulo the polynomial: x^1, then each the square
// of the one before (multModP; TestTables computes them). A literal, so
// that no command pays for computing it when it starts.
var x2n = [32]uint32{
	0x40000000, 0x20000000, 0x08000000, 0x00800000, 0x00008000, 0xedb88320, 0xb1e6b092, 0xa06a2517,
	0xed627dae, 0x88d14467, 0xd7bbfe6a, 0xec447f11, 0x8e7ea170, 0x6427800e, 0x4d47bae0, 0x09fe548f,
	0x83852d0f, 0x30362f1a, 0x7b5a9cc3, 0x31fec169, 0x9fec022a, 0x6c8dedc4, 0x15d6874d, 0x5fde7a4e,
	0xbad90e37, 0x2e4e5eef, 0x4eaba214, 0xa8a472c0, 0x429a969e, 0x148d302a, 0xc40ba6d0, 0xc4e22c3c,
}

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
