package zstd

import (
	"encoding/binary"
	"sync"
)

const maxBlockSize = 128 << 10

// Literal length and match length codes: baseline and extra bits
// (RFC 8878 §3.1.1.3.2.1.1).
var llBase = [36]uint32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
	16, 18, 20, 22, 24, 28, 32, 40, 48, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536}
var llBits = [36]uint8{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	1, 1, 1, 1, 2, 2, 3, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
var mlBase = [53]uint32{3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34,
	35, 37, 39, 41, 43, 47, 51, 59, 67, 83, 99, 131, 259, 515, 1027, 2051, 4099, 8195, 16387, 32771, 65539}
var mlBits = [53]uint8{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}

// The predefined distributions (RFC 8878 §3.1.1.3.2.2).
var (
	llDefault = []int16{4, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 2, 1, 1, 1, 1, 1, -1, -1, -1, -1}
	mlDefault = []int16{1, 4, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
		1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1, -1, -1}
	ofDefault = []int16{1, 1, 1, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1}
)

// The predefined tables, built on first use (not at start-up, by every
// command).
var predefTables = sync.OnceValue(func() *[3]fseTable {
	return &[3]fseTable{mustFSE(llDefault, 6), mustFSE(mlDefault, 6), mustFSE(ofDefault, 5)}
})

func mustFSE(norm []int16, log uint) fseTable {
	t, err := buildFSE(norm, log)
	if err != nil {
		panic("zstd: bad predefined distribution") // a bug in the tables above, caught by every test
	}
	return t
}

// frameState is what blocks of one frame share.
type frameState struct {
	huff          *huffTable
	ll, of, ml    *fseTable
	llT, ofT, mlT fseTable // storage for tables read from the stream
	rep           [3]uint32
	window        int
	lits          []byte
	hist          []byte // decoded bytes: up to a window of history, then the current block
	frameDecoded  int64  // bytes of this frame decoded before the current block
}

// literals decodes the literals section of a compressed block, returning
// the rest of the block.
func (f *frameState) literals(b []byte) ([]byte, error) {
	if len(b) < 1 {
		return nil, errCorrupt
	}
	typ, sf := b[0]&3, (b[0]>>2)&3
	f.lits = f.lits[:0]
	switch typ {
	case 0, 1: // raw, RLE
		var size, hl int
		switch sf {
		case 0, 2:
			size, hl = int(b[0]>>3), 1
		case 1:
			if len(b) < 2 {
				return nil, errCorrupt
			}
			size, hl = int(b[0]>>4)|int(b[1])<<4, 2
		case 3:
			if len(b) < 3 {
				return nil, errCorrupt
			}
			size, hl = int(b[0]>>4)|int(b[1])<<4|int(b[2])<<12, 3
		}
		if size > maxBlockSize {
			return nil, errCorrupt
		}
		if typ == 0 {
			if len(b) < hl+size {
				return nil, errCorrupt
			}
			f.lits = append(f.lits, b[hl:hl+size]...)
			return b[hl+size:], nil
		}
		if len(b) < hl+1 {
			return nil, errCorrupt
		}
		for i := 0; i < size; i++ {
			f.lits = append(f.lits, b[hl])
		}
		return b[hl+1:], nil
	}
	// Compressed (2) or treeless (3).
	var regen, comp, hl int
	streams := 4
	switch sf {
	case 0, 1:
		if len(b) < 3 {
			return nil, errCorrupt
		}
		h := uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16
		regen, comp, hl = int(h>>4&0x3ff), int(h>>14&0x3ff), 3
		if sf == 0 {
			streams = 1
		}
	case 2:
		if len(b) < 4 {
			return nil, errCorrupt
		}
		h := binary.LittleEndian.Uint32(b)
		regen, comp, hl = int(h>>4&0x3fff), int(h>>18&0x3fff), 4
	case 3:
		if len(b) < 5 {
			return nil, errCorrupt
		}
		h := uint64(binary.LittleEndian.Uint32(b)) | uint64(b[4])<<32
		regen, comp, hl = int(h>>4&0x3ffff), int(h>>22&0x3ffff), 5
	}
	if regen > maxBlockSize || len(b) < hl+comp {
		return nil, errCorrupt
	}
	src := b[hl : hl+comp]
	if typ == 2 {
		t, n, err := readHuffTable(src)
		if err != nil {
			return nil, err
		}
		f.huff = t
		src = src[n:]
	} else if f.huff == nil {
		return nil, errCorrupt
	}
	var err error
	if streams == 1 {
		if f.lits, err = f.huff.decodeStream(f.lits, src, regen); err != nil {
			return nil, err
		}
		return b[hl+comp:], nil
	}
	if len(src) < 6 {
		return nil, errCorrupt
	}
	s1, s2, s3 := int(binary.LittleEndian.Uint16(src)), int(binary.LittleEndian.Uint16(src[2:])), int(binary.LittleEndian.Uint16(src[4:]))
	src = src[6:]
	if s1+s2+s3 > len(src) {
		return nil, errCorrupt
	}
	per := (regen + 3) / 4
	if 3*per > regen {
		return nil, errCorrupt
	}
	parts := [4][]byte{src[:s1], src[s1 : s1+s2], src[s1+s2 : s1+s2+s3], src[s1+s2+s3:]}
	for i, p := range parts {
		n := per
		if i == 3 {
			n = regen - 3*per
		}
		if f.lits, err = f.huff.decodeStream(f.lits, p, n); err != nil {
			return nil, err
		}
	}
	return b[hl+comp:], nil
}

// table reads one sequence-symbol table in the given mode.
func (f *frameState) table(mode byte, b []byte, cur **fseTable, store *fseTable, predef *fseTable, maxSym int, maxLog uint) ([]byte, error) {
	switch mode {
	case 0:
		*cur = predef
	case 1:
		if len(b) < 1 || int(b[0]) > maxSym {
			return nil, errCorrupt
		}
		*store = rleFSE(b[0])
		*cur = store
		return b[1:], nil
	case 2:
		norm, log, n, err := readNCount(b, maxSym, maxLog)
		if err != nil {
			return nil, err
		}
		if *store, err = buildFSE(norm, log); err != nil {
			return nil, err
		}
		*cur = store
		return b[n:], nil
	case 3:
		if *cur == nil {
			return nil, errCorrupt
		}
	}
	return b, nil
}

// block decodes a compressed block onto f.hist.
func (f *frameState) block(b []byte) error {
	rest, err := f.literals(b)
	if err != nil {
		return err
	}
	if len(rest) < 1 {
		return errCorrupt
	}
	var nseq int
	switch h := rest[0]; {
	case h == 0:
		f.hist = append(f.hist, f.lits...)
		return nil
	case h < 128:
		nseq, rest = int(h), rest[1:]
	case h < 255:
		if len(rest) < 2 {
			return errCorrupt
		}
		nseq, rest = int(h-128)<<8+int(rest[1]), rest[2:]
	default:
		if len(rest) < 3 {
			return errCorrupt
		}
		nseq, rest = int(rest[1])+int(rest[2])<<8+0x7f00, rest[3:]
	}
	if len(rest) < 1 || rest[0]&3 != 0 {
		return errCorrupt
	}
	modes := rest[0]
	rest = rest[1:]
	if rest, err = f.table(modes>>6, rest, &f.ll, &f.llT, &predefTables()[0], 35, 9); err != nil {
		return err
	}
	if rest, err = f.table(modes>>4&3, rest, &f.of, &f.ofT, &predefTables()[2], 31, 8); err != nil {
		return err
	}
	if rest, err = f.table(modes>>2&3, rest, &f.ml, &f.mlT, &predefTables()[1], 52, 9); err != nil {
		return err
	}
	r, err := newRevBits(rest)
	if err != nil {
		return err
	}
	var ll, of, ml fseState
	ll.init(f.ll, &r)
	of.init(f.of, &r)
	ml.init(f.ml, &r)
	lits := f.lits
	start := len(f.hist)
	for i := 0; i < nseq; i++ {
		ofCode, mlCode, llCode := of.symbol(), ml.symbol(), ll.symbol()
		if ofCode > 31 || mlCode > 52 || llCode > 35 {
			return errCorrupt
		}
		offVal := uint32(1)<<ofCode + uint32(r.read(uint(ofCode)))
		mlen := mlBase[mlCode] + uint32(r.read(uint(mlBits[mlCode])))
		llen := llBase[llCode] + uint32(r.read(uint(llBits[llCode])))
		if i < nseq-1 {
			ll.update(&r)
			ml.update(&r)
			of.update(&r)
		}
		if r.overflowed() {
			return errCorrupt
		}
		var off uint32
		if offVal > 3 {
			off = offVal - 3
			f.rep[2], f.rep[1], f.rep[0] = f.rep[1], f.rep[0], off
		} else {
			if llen == 0 {
				offVal++
			}
			switch offVal {
			case 1:
				off = f.rep[0]
			case 2:
				off = f.rep[1]
				f.rep[1], f.rep[0] = f.rep[0], off
			case 3:
				off = f.rep[2]
				f.rep[2], f.rep[1], f.rep[0] = f.rep[1], f.rep[0], off
			case 4:
				off = f.rep[0] - 1
				f.rep[2], f.rep[1], f.rep[0] = f.rep[1], f.rep[0], off
			}
		}
		if int(llen) > len(lits) {
			return errCorrupt
		}
		f.hist = append(f.hist, lits[:llen]...)
		lits = lits[llen:]
		avail := f.frameDecoded + int64(len(f.hist)-start)
		if off == 0 || int64(off) > avail || int(off) > f.window || int(off) > len(f.hist) || len(f.hist)-start+int(mlen) > maxBlockSize {
			return errCorrupt
		}
		from := len(f.hist) - int(off)
		if int(off) >= int(mlen) {
			f.hist = append(f.hist, f.hist[from:from+int(mlen)]...)
		} else {
			for j := 0; j < int(mlen); j++ { // byte by byte: the match overlaps its own output
				f.hist = append(f.hist, f.hist[from+j])
			}
		}
	}
	if r.pos != 0 {
		return errCorrupt
	}
	f.hist = append(f.hist, lits...)
	if len(f.hist)-start > maxBlockSize {
		return errCorrupt
	}
	return nil
}
