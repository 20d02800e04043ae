package zstd

// fseEntry is one state of an FSE decoding table.
type fseEntry struct {
	symbol uint8
	nbBits uint8
	base   uint16 // next state = base + nbBits bits
}

type fseTable struct {
	log     uint
	entries []fseEntry
}

// readNCount decodes an FSE table description (normalized counts) from b,
// returning the counts, the accuracy log and the bytes used.
func readNCount(b []byte, maxSymbol int, maxLog uint) ([]int16, uint, int, error) {
	if len(b) < 1 {
		return nil, 0, 0, errCorrupt
	}
	r := fwdBits{b: b}
	log := uint(r.peek(4)) + 5
	r.skip(4)
	if log > maxLog {
		return nil, 0, 0, errCorrupt
	}
	remaining := int32(1<<log) + 1
	threshold := int32(1 << log)
	nbBits := log + 1
	var norm []int16
	for remaining > 1 && len(norm) <= maxSymbol {
		if r.pos > 8*len(b) {
			return nil, 0, 0, errCorrupt
		}
		max := 2*threshold - 1 - remaining
		v := int32(r.peek(nbBits))
		var val int32
		if v&(threshold-1) < max {
			val = v & (threshold - 1)
			r.skip(nbBits - 1)
		} else {
			val = v & (2*threshold - 1)
			if val >= threshold {
				val -= max
			}
			r.skip(nbBits)
		}
		count := val - 1
		if count < 0 {
			remaining -= -count
		} else {
			remaining -= count
		}
		norm = append(norm, int16(count))
		if count == 0 {
			for {
				rep := int(r.peek(2))
				r.skip(2)
				for i := 0; i < rep; i++ {
					norm = append(norm, 0)
				}
				if rep != 3 {
					break
				}
				if len(norm) > maxSymbol+1 || r.pos > 8*len(b) {
					return nil, 0, 0, errCorrupt
				}
			}
		}
		for remaining < threshold && nbBits > 1 {
			nbBits--
			threshold >>= 1
		}
	}
	if remaining != 1 || len(norm) > maxSymbol+1 || r.pos > 8*len(b) {
		return nil, 0, 0, errCorrupt
	}
	return norm, log, (r.pos + 7) / 8, nil
}

// buildFSE spreads normalized counts into a decoding table of 1<<log
// states (RFC 8878 §4.1.1).
func buildFSE(norm []int16, log uint) (fseTable, error) {
	size := 1 << log
	t := fseTable{log: log, entries: make([]fseEntry, size)}
	next := make([]uint32, len(norm))
	high := size - 1
	for s, c := range norm {
		if c == -1 {
			if high < 0 {
				return t, errCorrupt
			}
			t.entries[high].symbol = uint8(s)
			high--
			next[s] = 1
		} else {
			next[s] = uint32(c)
		}
	}
	step := size>>1 + size>>3 + 3
	mask := size - 1
	pos := 0
	for s, c := range norm {
		for i := 0; i < int(c); i++ {
			t.entries[pos].symbol = uint8(s)
			pos = (pos + step) & mask
			for pos > high {
				pos = (pos + step) & mask
			}
		}
	}
	if pos != 0 {
		return t, errCorrupt // counts do not add up to the table size
	}
	for u := range t.entries {
		s := t.entries[u].symbol
		ns := next[s]
		next[s]++
		if ns == 0 {
			return t, errCorrupt
		}
		nb := log - highBit(ns)
		t.entries[u].nbBits = uint8(nb)
		t.entries[u].base = uint16((ns << nb) - uint32(size))
	}
	return t, nil
}

// rleFSE is the table of RLE mode: one symbol, no bits.
func rleFSE(sym uint8) fseTable {
	return fseTable{log: 0, entries: []fseEntry{{symbol: sym}}}
}

type fseState struct {
	t     *fseTable
	state uint32
}

func (s *fseState) init(t *fseTable, r *revBits) {
	s.t = t
	s.state = uint32(r.read(t.log))
}

func (s *fseState) symbol() uint8 { return s.t.entries[s.state].symbol }

func (s *fseState) update(r *revBits) {
	e := s.t.entries[s.state]
	s.state = uint32(e.base) + uint32(r.read(uint(e.nbBits)))
}
