package zstd

const maxHuffBits = 11

type huffEntry struct {
	symbol uint8
	nbBits uint8
}

// huffTable decodes literals: indexed by the next maxBits bits.
type huffTable struct {
	maxBits uint
	entries []huffEntry
}

// readHuffTable decodes a Huffman tree description from b and returns the
// table and the bytes used (RFC 8878 §4.2.1).
func readHuffTable(b []byte) (*huffTable, int, error) {
	if len(b) < 1 {
		return nil, 0, errCorrupt
	}
	hdr := int(b[0])
	var weights []uint8
	used := 0
	if hdr >= 128 {
		n := hdr - 127
		used = 1 + (n+1)/2
		if used > len(b) {
			return nil, 0, errCorrupt
		}
		for i := 0; i < n; i++ {
			v := b[1+i/2]
			if i%2 == 0 {
				weights = append(weights, v>>4)
			} else {
				weights = append(weights, v&15)
			}
		}
	} else {
		used = 1 + hdr
		if used > len(b) || hdr == 0 {
			return nil, 0, errCorrupt
		}
		var err error
		if weights, err = fseWeights(b[1:used]); err != nil {
			return nil, 0, err
		}
	}
	// The last weight is implied: it completes the total to a power of two.
	var total uint32
	for _, w := range weights {
		if w > maxHuffBits {
			return nil, 0, errCorrupt
		}
		if w > 0 {
			total += 1 << (w - 1)
		}
	}
	if total == 0 || len(weights) > 255 {
		return nil, 0, errCorrupt
	}
	maxBits := highBit(total) + 1
	rest := uint32(1)<<maxBits - total
	if rest&(rest-1) != 0 || maxBits > maxHuffBits {
		return nil, 0, errCorrupt
	}
	weights = append(weights, uint8(highBit(rest)+1))

	t := &huffTable{maxBits: maxBits, entries: make([]huffEntry, 1<<maxBits)}
	var rankCount [maxHuffBits + 2]uint32
	for _, w := range weights {
		rankCount[w]++
	}
	var rankStart [maxHuffBits + 2]uint32
	next := uint32(0)
	for w := 1; w <= int(maxBits); w++ {
		rankStart[w] = next
		next += rankCount[w] << (w - 1)
	}
	if next != 1<<maxBits {
		return nil, 0, errCorrupt
	}
	for s, w := range weights {
		if w == 0 {
			continue
		}
		n := uint32(1) << (w - 1)
		e := huffEntry{symbol: uint8(s), nbBits: uint8(maxBits + 1 - uint(w))}
		for i := rankStart[w]; i < rankStart[w]+n; i++ {
			t.entries[i] = e
		}
		rankStart[w] += n
	}
	return t, used, nil
}

// fseWeights decodes FSE-compressed Huffman weights: two interleaved
// states over one backward stream.
func fseWeights(b []byte) ([]uint8, error) {
	norm, log, n, err := readNCount(b, 255, 6)
	if err != nil {
		return nil, err
	}
	t, err := buildFSE(norm, log)
	if err != nil {
		return nil, err
	}
	r, err := newRevBits(b[n:])
	if err != nil {
		return nil, err
	}
	var s1, s2 fseState
	s1.init(&t, &r)
	s2.init(&t, &r)
	if r.overflowed() {
		return nil, errCorrupt
	}
	var out []uint8
	for len(out) < 255 {
		out = append(out, s1.symbol())
		s1.update(&r)
		if r.overflowed() {
			out = append(out, s2.symbol())
			return out, nil
		}
		out = append(out, s2.symbol())
		s2.update(&r)
		if r.overflowed() {
			out = append(out, s1.symbol())
			return out, nil
		}
	}
	return nil, errCorrupt
}

// decodeStream decodes n literals from one backward Huffman stream.
func (t *huffTable) decodeStream(dst []byte, src []byte, n int) ([]byte, error) {
	r, err := newRevBits(src)
	if err != nil {
		return nil, err
	}
	for i := 0; i < n; i++ {
		e := t.entries[r.peek(t.maxBits)]
		r.pos -= int(e.nbBits)
		if r.pos < 0 {
			return nil, errCorrupt
		}
		dst = append(dst, e.symbol)
	}
	if r.pos != 0 {
		return nil, errCorrupt
	}
	return dst, nil
}
