// Package inflate decodes raw DEFLATE streams (RFC 1951) and records where
// every block begins, in the compressed bits and in the output. With that
// index, Splice builds the stream of an edited copy of the data by reusing
// the original's blocks wherever the data and the 32 KiB before them are
// unchanged, and compressing only around the edits: a wheel relink changes
// a few hundred bytes of a 100 MB library, and compressing all of it again
// cost more than everything else the relink does.
package inflate

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"runtime"
	"sync/atomic"
)

// Block is one block of a decoded stream.
type Block struct {
	Bit   int64 // offset of the block header in the compressed stream, in bits
	Out   int64 // offset in the output where the block's data begins
	Type  uint8 // 0 stored, 1 fixed Huffman codes, 2 dynamic Huffman codes
	Final bool
	CRC   uint32 // CRC-32 (IEEE) of the block's output
}

// Index is what Decode learned about a stream.
type Index struct {
	Blocks []Block
	EndBit int64 // just after the final block's last code
	Size   int64 // uncompressed bytes
	// confirmed counts the parts of a parallel decode whose speculative
	// output was used (tests check that the parallel path did its work).
	confirmed int
}

// CorruptError reports malformed input at a compressed byte offset.
type CorruptError struct {
	Offset int64
	What   string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("deflate data corrupt at compressed byte %d: %s", e.Offset, e.What)
}

const (
	window   = 1 << 15
	maxMatch = 258
	outBuf   = 1 << 22 // output produced between writes
	chunk    = 1 << 20 // compressed bytes read at a time
)

// Decode inflates the raw deflate stream held in the first n bytes of r,
// writes the data to w and returns the stream's block index. Bytes after
// the final block are ignored. Large streams are decoded on several cores
// (see parallel.go); the output, the index and the errors are the same.
func Decode(w io.Writer, r io.ReaderAt, n int64) (*Index, error) {
	return decode(w, r, n, partsFor(n, runtime.GOMAXPROCS(0)))
}

// decode decodes the stream in k parts (sequentially when k is 1).
func decode(w io.Writer, r io.ReaderAt, n int64, k int) (*Index, error) {
	if k > 1 {
		return decodeParallel(w, r, n, k)
	}
	d := newDecoder(w, bufSize(n))
	if n >= asyncMin {
		d.async = newAsyncWriter(w)
		defer d.async.close()
	}
	d.br.init(r, n)
	if err := d.run(); err != nil {
		return nil, err
	}
	return &d.idx, nil
}

// bufSize is the output buffer for a stream of n compressed bytes: in
// proportion to the input (a wheel holds many small libraries), and as
// the buffer keeps 32 KiB of history, at least twice that.
func bufSize(n int64) int64 { return min(outBuf, max(2*window, 4*n)) }

func newDecoder(w io.Writer, size int64) *decoder {
	return &decoder{w: w, out: make([]byte, size+maxMatch+8)}
}

type decoder struct {
	br    bitReader
	w     io.Writer
	out   []byte
	start int   // first byte of out not written to w yet
	pos   int   // next byte of out to fill
	base  int64 // stream offset of out[0]
	crc   uint32
	crcAt int // first byte of out not in crc yet
	idx   Index
	// tab points at the fixed tables or at the dynamic ones, which are
	// rebuilt in place for every dynamic block.
	tab *tables
	dyn tables
	// limit, when positive, stops the decoder at the first block that
	// begins at or after that bit; stopped says it did.
	limit   int64
	stopped bool
	// m, when not nil, is the output of a decoder that started in the
	// middle of a stream without its history (parallel.go): the first
	// window entries stand for the unknown bytes before the start
	// (marker 256+i for history byte i), literals are their byte values,
	// and matches copy entries, markers included.
	m      []uint16
	prefix []uint16     // m after the first window entries, once the decoder left markers behind
	marked int          // blocks decoded into m
	abort  *atomic.Bool // set when the result of a speculative decoder is no longer wanted
	// async, when not nil, writes full output buffers on its own
	// goroutine while decoding goes on in a second buffer.
	async *asyncWriter
}

func (d *decoder) corrupt(what string) error {
	return &CorruptError{Offset: d.br.bitPos() / 8, What: what}
}

func (d *decoder) run() error {
	for {
		if d.limit > 0 && d.br.bitPos() >= d.limit {
			d.stopped = true
			return d.flush()
		}
		if d.abort != nil && d.abort.Load() {
			return errAbandoned
		}
		if err := d.br.need(3); err != nil {
			return err
		}
		b := Block{Bit: d.br.bitPos(), Out: d.outPos()}
		d.crc, d.crcAt = 0, d.pos
		hdr := d.br.take(3)
		b.Final = hdr&1 == 1
		b.Type = uint8(hdr >> 1)
		d.idx.Blocks = append(d.idx.Blocks, b)
		var err error
		switch b.Type {
		case 0:
			err = d.stored()
		case 1:
			d.tab = fixedTables()
			err = d.coded()
		case 2:
			if err = d.readTables(); err == nil {
				err = d.coded()
			}
		default:
			err = d.corrupt("reserved block type 3")
		}
		if err != nil {
			return err
		}
		if d.m != nil {
			d.marked++
		} else {
			d.sum()
			if d.async == nil { // else the writer sums it, and flushAsync sets it
				d.idx.Blocks[len(d.idx.Blocks)-1].CRC = d.crc
			}
		}
		if b.Final {
			d.idx.EndBit = d.br.bitPos()
			d.idx.Size = d.outPos()
			return d.flush()
		}
		if d.m != nil {
			d.leaveMarkers()
		}
	}
}

// outPos is the offset in the output of the next byte decoded.
func (d *decoder) outPos() int64 {
	if d.m != nil {
		return int64(len(d.m) - window)
	}
	return d.base + int64(d.pos)
}

// flush writes what out holds that w has not had yet.
func (d *decoder) flush() error {
	if d.m != nil {
		return nil
	}
	if d.async != nil {
		return d.flushAsync()
	}
	_, err := d.w.Write(d.out[d.start:d.pos])
	d.start = d.pos
	return err
}

func (d *decoder) stored() error {
	if d.m != nil {
		return d.storedMarked()
	}
	return d.storedBytes()
}

func (d *decoder) coded() error {
	if d.m != nil {
		return d.codesMarked()
	}
	return d.codes()
}

// room makes sure n more bytes fit in out: when the buffer is full its
// unwritten part goes to w and the last 32 KiB move to the front.
func (d *decoder) room(n int) error {
	if d.pos+n <= len(d.out) {
		return nil
	}
	if o, ok := d.w.(*partOutput); ok {
		return d.handOver(o)
	}
	if d.async != nil {
		return d.swap()
	}
	if _, err := d.w.Write(d.out[d.start:d.pos]); err != nil {
		return err
	}
	d.sum()
	d.continueIn(d.out)
	return nil
}

// continueIn goes on decoding in nb (d.out itself, or another buffer of
// its size), which starts with the last 32 KiB decoded: the history that
// matches may copy from.
func (d *decoder) continueIn(nb []byte) {
	h := min(window, d.pos)
	copy(nb, d.out[d.pos-h:d.pos])
	d.out = nb
	d.base += int64(d.pos - h)
	d.start, d.pos, d.crcAt = h, h, h
}

// sum adds the output since the last call to the block's CRC.
func (d *decoder) sum() {
	if d.async != nil {
		d.sumLater()
		return
	}
	d.crc = crc32.Update(d.crc, crc32.IEEETable, d.out[d.crcAt:d.pos])
	d.crcAt = d.pos
}

// storedLen reads a stored block's length and its complement.
func (d *decoder) storedLen() (int, error) {
	d.br.align()
	if err := d.br.need(32); err != nil {
		return 0, err
	}
	v := d.br.take(32)
	n, nn := int(v&0xffff), int(v>>16)
	if n != ^nn&0xffff {
		return 0, d.corrupt("stored block length does not match its complement")
	}
	return n, nil
}

func (d *decoder) storedBytes() error {
	n, err := d.storedLen()
	if err != nil {
		return err
	}
	for n > 0 {
		if err := d.room(1); err != nil {
			return err
		}
		m := min(n, len(d.out)-d.pos)
		got, err := d.br.bytes(d.out[d.pos : d.pos+m])
		d.pos += got
		n -= got
		if err != nil {
			return err
		}
	}
	return nil
}

// The length and distance bases and extra bits (RFC 1951 3.2.5).
var (
	lenBase  = [29]uint16{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258}
	lenExtra = [29]uint8{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
	distBase = [30]uint32{1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577}
	distExtr = [30]uint8{0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13}
)

// codes decodes one Huffman-coded block. It is the hot loop of a relink.
// fastCodes decodes most of the block; it stops at the end of an input
// chunk or of the output buffer, and before any symbol it leaves to the
// careful decoder (symbol): the end of the block, an invalid code, a
// distance reaching before the data.
func (d *decoder) codes() error {
	br := &d.br
	for {
		if d.pos+maxMatch+8 > len(d.out) {
			if err := d.room(maxMatch + 8); err != nil {
				return err
			}
		}
		br.bits, br.n, br.i, d.pos = fastCodes(d.tab, br.buf, d.out, br.bits, br.n, br.i, d.pos)
		if d.pos+maxMatch+8 > len(d.out) {
			continue
		}
		lit, length, dist, err := d.symbol()
		switch {
		case err != nil:
			return err
		case lit >= 0:
			d.out[d.pos] = byte(lit)
			d.pos++
			continue
		case length == 0:
			return nil
		}
		if int64(dist) > d.base+int64(d.pos) {
			return d.fail("distance reaches before the start of the data")
		}
		d.pos = copyMatch(d.out, d.pos, dist, length)
	}
}

// fastCodes decodes literals and matches while the input holds 16 more
// bytes and the output has room for a longest match, taking the bit
// buffer and the positions in and out and returning them. The bit buffer
// is refilled without branches (libdeflate's way: up to 63 bits held, so
// one refill covers a length and a distance with their extra bits, or two
// literals and the lookup of the next code) and each path ends with a
// refill and the lookup of the next code, which overlaps the match copy.
// It returns at the start of a symbol it does not decode.
func fastCodes(t *tables, buf, out []byte, bv uint64, n uint, bi, pos int) (uint64, uint, int, int) {
	if bi+16 > len(buf) {
		return bv, n, bi, pos
	}
	in := buf[bi:]
	bv |= binary.LittleEndian.Uint64(in) << (n & 63)
	in = in[(63-n)>>3:]
	n |= 56
	e := t.lit.prim[bv&(1<<litBits-1)]
	outEnd := len(out) - maxMatch - 8
	for len(in) >= 16 && pos <= outEnd {
		if e&litFlag != 0 {
			// n >= 56: two literals and the next lookup fit.
			o := (*[2]byte)(out[pos:])
			bv >>= e & 63
			n -= uint(e & 63)
			o[0] = byte(e >> 16)
			pos++
			e = t.lit.prim[bv&(1<<litBits-1)]
			if e&litFlag != 0 {
				bv >>= e & 63
				n -= uint(e & 63)
				o[1] = byte(e >> 16)
				pos++
				e = t.lit.prim[bv&(1<<litBits-1)]
			}
			bv |= binary.LittleEndian.Uint64(in) << (n & 63)
			in = in[(63-n)>>3:]
			n |= 56
			continue
		}
		if e&excFlag != 0 {
			if e&subFlag == 0 {
				break // end of block or an invalid code
			}
			e = t.lit.sub[int(e>>16&0x3fff)+int(bv>>litBits&(1<<(e&15)-1))]
			if e&excFlag != 0 {
				break
			}
			if e&litFlag != 0 {
				bv >>= e & 63
				n -= uint(e & 63)
				out[pos] = byte(e >> 16)
				pos++
				bv |= binary.LittleEndian.Uint64(in) << (n & 63)
				in = in[(63-n)>>3:]
				n |= 56
				e = t.lit.prim[bv&(1<<litBits-1)]
				continue
			}
		}
		// A length and a distance: at most 20 + 28 of the 56 bits.
		bv0, n0 := bv, n
		length := int(e>>16) + int(extraOf(e, bv))
		bv >>= e & 63
		n -= uint(e & 63)
		de := t.dist.prim[bv&(1<<distBits-1)]
		if de&distExc != 0 {
			if de&subFlag == 0 {
				bv, n = bv0, n0
				break
			}
			de = t.dist.sub[int(de>>16&0x3fff)+int(bv>>distBits&(1<<(de&15)-1))]
			if de&distExc != 0 {
				bv, n = bv0, n0
				break
			}
		}
		dist := int(de>>16) + int(extraOf(de, bv))
		if dist > pos {
			// Within the buffer's history every distance fits
			// (pos >= window once the buffer has moved), so this is the
			// start of the data: the careful decoder reports it.
			bv, n = bv0, n0
			break
		}
		bv >>= de & 63
		n -= uint(de & 63)
		bv |= binary.LittleEndian.Uint64(in) << (n & 63)
		in = in[(63-n)>>3:]
		n |= 56
		e = t.lit.prim[bv&(1<<litBits-1)]
		if dist >= 8 {
			copyWords(out, pos, dist, length)
			pos += length
		} else {
			pos = copyMatch(out, pos, dist, length)
		}
	}
	return bv, n, len(buf) - len(in), pos
}

// copyWords copies a match at a distance of 8 or more in 8-byte words,
// each read from bytes already written; out has maxMatch+8 bytes of room
// after pos, slack for the last word. Two words cover most matches; array
// views spare the bounds checks.
func copyWords(out []byte, pos, dist, length int) {
	d := (*[maxMatch + 8]byte)(out[pos:])
	s := (*[maxMatch + 8]byte)(out[pos-dist:])
	binary.LittleEndian.PutUint64(d[0:], binary.LittleEndian.Uint64(s[0:]))
	binary.LittleEndian.PutUint64(d[8:], binary.LittleEndian.Uint64(s[8:]))
	for i := 16; i < length && i <= maxMatch; i += 8 {
		binary.LittleEndian.PutUint64(d[i:], binary.LittleEndian.Uint64(s[i:]))
	}
}

// copyMatch copies length bytes from dist back to pos and returns the new
// position; out has maxMatch+8 bytes of room after pos.
func copyMatch(out []byte, pos, dist, length int) int {
	from := pos - dist
	switch {
	case dist >= 8:
		copyWords(out, pos, dist, length)
	case dist >= length:
		copy(out[pos:pos+length], out[from:from+length])
	case dist == 1:
		// A run of one byte, in words.
		v := uint64(out[from]) * 0x0101010101010101
		for i := 0; i < length; i += 8 {
			binary.LittleEndian.PutUint64(out[pos+i:], v)
		}
	default:
		// Overlapping: the pattern doubles with every copy.
		end := pos + length
		for p := pos; p < end; {
			p += copy(out[p:end], out[from:p])
		}
	}
	return pos + length
}

// symbol decodes one literal/length code and, for a length, its distance,
// with every check: lit >= 0 for a literal, else length 0 at the end of
// the block, or a match. The errors name the first thing wrong.
func (d *decoder) symbol() (lit, length, dist int, err error) {
	br := &d.br
	if br.n < 48 {
		if err := br.refill(); err != nil {
			return 0, 0, 0, err
		}
	}
	e := d.tab.lit.lookup(br.bits)
	l := codeLen(e)
	if l == 0 || l > br.n {
		return 0, 0, 0, d.fail("invalid literal/length code")
	}
	br.take(l)
	switch {
	case e&litFlag != 0:
		return int(e >> 16 & 0xff), 0, 0, nil
	case e&endFlag != 0:
		return -1, 0, 0, nil
	case e&badFlag != 0:
		return 0, 0, 0, d.fail("invalid length symbol")
	}
	x := uint(e&63) - l
	if br.n < x {
		return 0, 0, 0, d.fail("invalid length")
	}
	length = int(e>>16) + int(br.take(x))
	e = d.tab.dist.lookup(br.bits)
	l = codeLen(e)
	if l == 0 || l > br.n {
		return 0, 0, 0, d.fail("invalid distance code")
	}
	br.take(l)
	if e&badFlag != 0 {
		return 0, 0, 0, d.fail("invalid distance symbol")
	}
	x = uint(e&63) - l
	if br.n < x {
		return 0, 0, 0, d.fail("invalid distance")
	}
	return -1, length, int(e>>16) + int(br.take(x)), nil
}

// fail reports a decoding error in a block: the input's own error, a cut
// stream when the error is at its very end, or what.
func (d *decoder) fail(what string) error {
	br := &d.br
	if br.err != nil {
		return br.err
	}
	// Within the last 48 bits a code may have been read from the zeros
	// past the end. Decided from the position alone, not from how much
	// of the input the bit buffer happens to hold: a decoder that began
	// at a later block (parallel.go) must report the same error.
	if br.size*8-br.bitPos() < 48 {
		return d.corrupt("stream ends inside a block")
	}
	return d.corrupt(what)
}

// codeOrder is the order of the code length code lengths (RFC 1951 3.2.7).
var codeOrder = [19]uint8{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}

func (d *decoder) readTables() error {
	br := &d.br
	if err := br.need(14); err != nil {
		return err
	}
	nlit := int(br.take(5)) + 257
	ndist := int(br.take(5)) + 1
	nclen := int(br.take(4)) + 4
	if nlit > 286 || ndist > 30 {
		return d.corrupt("too many literal/length or distance codes")
	}
	var clen [19]uint8
	for i := 0; i < nclen; i++ {
		if err := br.need(3); err != nil {
			return err
		}
		clen[codeOrder[i]] = uint8(br.take(3))
	}
	var ch distTable // seven bits at most: one level
	if !buildTable(ch.prim[:], &ch.sub, distBits, distExc, clen[:], clenEntry) {
		return d.corrupt("invalid code length code")
	}
	var lens [286 + 30]uint8
	for i := 0; i < nlit+ndist; {
		if br.n < 14 {
			if err := br.refill(); err != nil {
				return err
			}
		}
		e := ch.prim[br.bits&(1<<distBits-1)]
		l := codeLen(e)
		if l == 0 || l > br.n {
			return d.corrupt("invalid code length")
		}
		br.take(l)
		sym := int(e >> 16)
		if sym < 16 {
			lens[i] = uint8(sym)
			i++
			continue
		}
		var rep int
		var val uint8
		switch sym {
		case 16:
			if i == 0 {
				return d.corrupt("repeat of a code length with none before it")
			}
			if br.n < 2 {
				return d.corrupt("stream ends inside the code lengths")
			}
			rep, val = 3+int(br.take(2)), lens[i-1]
		case 17:
			if br.n < 3 {
				return d.corrupt("stream ends inside the code lengths")
			}
			rep = 3 + int(br.take(3))
		default:
			if br.n < 7 {
				return d.corrupt("stream ends inside the code lengths")
			}
			rep = 11 + int(br.take(7))
		}
		if i+rep > nlit+ndist {
			return d.corrupt("code lengths repeat past their end")
		}
		for ; rep > 0; rep-- {
			lens[i] = val
			i++
		}
	}
	if lens[256] == 0 {
		return d.corrupt("no code for the end of the block")
	}
	if !d.dyn.lit.build(lens[:nlit]) {
		return d.corrupt("invalid literal/length code lengths")
	}
	if !d.dyn.dist.build(lens[nlit : nlit+ndist]) {
		return d.corrupt("invalid distance code lengths")
	}
	d.tab = &d.dyn
	return nil
}

// clenEntry is the entry of a code length symbol.
func clenEntry(sym int, l uint32) uint32 { return uint32(sym)<<16 | l<<8 | l }

// bitReader reads the stream least significant bit first, a chunk of the
// input at a time.
type bitReader struct {
	r    io.ReaderAt
	size int64
	buf  []byte
	off  int64 // input offset of buf[0]
	i    int   // next byte of buf to load into bits
	bits uint64
	n    uint // valid bits in bits
	eof  bool // every input byte has been loaded into buf
	err  error
}

func (br *bitReader) init(r io.ReaderAt, size int64) {
	buf := br.buf
	if c := min(chunk, max(size, 64)); int64(cap(buf)) < c {
		buf = make([]byte, 0, c)
	}
	*br = bitReader{r: r, size: size, buf: buf[:0]}
}

// bitPos is the position of the next unread bit in the input.
func (br *bitReader) bitPos() int64 { return (br.off+int64(br.i))*8 - int64(br.n) }

func (br *bitReader) load() bool {
	if br.eof {
		return false
	}
	br.off += int64(len(br.buf))
	br.i = 0
	m := min(int64(cap(br.buf)), br.size-br.off)
	if m <= 0 {
		br.eof, br.buf = true, br.buf[:0]
		return false
	}
	br.buf = br.buf[:m]
	if k, err := br.r.ReadAt(br.buf, br.off); int64(k) < m {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		br.err = err
		br.eof, br.buf = true, br.buf[:k]
		return k > 0
	}
	if br.off+m >= br.size {
		br.eof = true
	}
	return true
}

// refill loads bytes until at least 56 bits are held or the input ends.
func (br *bitReader) refill() error {
	if br.i+8 <= len(br.buf) {
		br.bits |= binary.LittleEndian.Uint64(br.buf[br.i:]) << br.n
		k := (63 - br.n) >> 3
		br.i += int(k)
		br.n += k * 8
		return nil
	}
	for br.n <= 56 {
		if br.i >= len(br.buf) {
			if br.eof || !br.load() {
				break
			}
			continue
		}
		br.bits |= uint64(br.buf[br.i]) << br.n
		br.i++
		br.n += 8
	}
	if br.n == 0 && br.err != nil {
		return br.err
	}
	return nil
}

// need makes sure k bits are held, or fails at the end of the input.
func (br *bitReader) need(k uint) error {
	if br.n >= k {
		return nil
	}
	if err := br.refill(); err != nil {
		return err
	}
	if br.n < k {
		if br.err != nil {
			return br.err
		}
		return &CorruptError{Offset: br.bitPos() / 8, What: "stream ends before its final block"}
	}
	return nil
}

func (br *bitReader) take(k uint) uint64 {
	v := br.bits & (1<<k - 1)
	br.bits >>= k
	br.n -= k
	return v
}

// align drops the bits up to the next byte boundary.
func (br *bitReader) align() { br.take(br.n % 8) }

// bytes copies whole bytes (after align) into p and returns how many.
func (br *bitReader) bytes(p []byte) (int, error) {
	n := 0
	for n < len(p) && br.n >= 8 {
		p[n] = byte(br.take(8))
		n++
	}
	if n == len(p) {
		return n, nil
	}
	// refill may have loaded bytes past n into bits (the same bytes it
	// would load next); they are copied from buf now, so bits restarts.
	br.bits = 0
	for n < len(p) {
		if br.i >= len(br.buf) {
			if !br.load() {
				if br.err != nil {
					return n, br.err
				}
				return n, &CorruptError{Offset: br.bitPos() / 8, What: "stream ends inside a stored block"}
			}
		}
		k := copy(p[n:], br.buf[br.i:])
		br.i += k
		n += k
	}
	return n, nil
}
