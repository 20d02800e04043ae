package inflate

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
)

// Changes finds the blocks of an indexed stream whose data a new version
// leaves intact: the new data is written to it from its first byte, and
// each block's range is compared with the CRC-32 recorded when the
// original was decoded. Ranges the caller knows were edited can be marked
// as well; a block is reused only when both say it is unchanged.
type Changes struct {
	idx     *Index
	changed []bool
	k       int   // block being summed
	off     int64 // new bytes seen
	crc     uint32
	// whole is the CRC-32 of the new data in the blocks before k, tail
	// that of the new data past the original's end: with crc they make
	// the new data's CRC without summing it twice.
	whole, tail uint32
}

// NewChanges starts a comparison against idx.
func (idx *Index) NewChanges() *Changes {
	return &Changes{idx: idx, changed: make([]bool, len(idx.Blocks))}
}

// end is where block k's output ends.
func (idx *Index) end(k int) int64 {
	if k+1 < len(idx.Blocks) {
		return idx.Blocks[k+1].Out
	}
	return idx.Size
}

// Write takes the next bytes of the new data.
func (c *Changes) Write(p []byte) (int, error) {
	n := len(p)
	for c.k < len(c.idx.Blocks) {
		end := c.idx.end(c.k)
		if c.off == end {
			if c.crc != c.idx.Blocks[c.k].CRC {
				c.changed[c.k] = true
			}
			c.whole = CombineCRC(c.whole, c.crc, end-c.idx.Blocks[c.k].Out)
			c.k++
			c.crc = 0
			continue
		}
		if len(p) == 0 {
			break
		}
		take := int(min(int64(len(p)), end-c.off))
		c.crc = crc32.Update(c.crc, crc32.IEEETable, p[:take])
		c.off += int64(take)
		p = p[take:]
	}
	c.tail = crc32.Update(c.tail, crc32.IEEETable, p)
	c.off += int64(len(p))
	return n, nil
}

// CRC is the CRC-32 (IEEE) of the new data written so far.
func (c *Changes) CRC() uint32 {
	c.Write(nil)
	if c.k < len(c.idx.Blocks) {
		return CombineCRC(c.whole, c.crc, c.off-c.idx.Blocks[c.k].Out)
	}
	return CombineCRC(c.whole, c.tail, c.off-c.idx.Size)
}

// Mark records that [off, end) of the new data was edited.
func (c *Changes) Mark(off, end int64) {
	for k, b := range c.idx.Blocks {
		if b.Out < end && c.idx.end(k) > off {
			c.changed[k] = true
		}
	}
}

// Changed reports, per block, whether the new data differs in its range
// (blocks the new data does not reach count as changed). Call it after
// the whole new data was written.
func (c *Changes) Changed() []bool {
	c.Write(nil)
	out := append([]bool(nil), c.changed...)
	for k := c.k; k < len(out); k++ {
		out[k] = true
	}
	return out
}

// ErrNotWorthSplicing: so much changed that compressing the whole file
// is the better way.
var ErrNotWorthSplicing = errors.New("deflate splice: most of the data changed")

// Spliced is a planned deflate stream for new data: blocks of the original
// stream copied bit for bit, and the changed stretches compressed anew.
type Spliced struct {
	orig   io.ReaderAt
	idx    *Index
	pieces []piece
	size   int64
	// Reused and Compressed count uncompressed bytes taken from the
	// original stream and compressed again.
	Reused, Compressed int64
}

type piece struct {
	a, b int    // reuse: original blocks [a, b)
	data []byte // else: compressed, byte-aligned, non-final blocks
}

// PlanSplice plans the deflate stream of newData (newSize bytes) from the
// original stream orig with index idx and the per-block changes. Changed
// stretches are compressed at level; when they add up to more than limit
// bytes the answer is ErrNotWorthSplicing.
//
// A block of the original is reused when neither it nor anything in the
// 32 KiB before it changed (a block's back-references reach that far), so
// that it decodes to the same bytes in the new stream. Every other
// stretch is compressed on its own into blocks that end on a byte boundary
// (a sync flush); the stream is byte-aligned before each such stretch with
// an empty stored block, stored blocks of the original are written again
// at their new alignment, and the original's final block loses its final
// flag when something follows it.
func PlanSplice(orig io.ReaderAt, idx *Index, newData io.ReaderAt, newSize int64, changed []bool, level int, limit int64) (*Spliced, error) {
	nb := len(idx.Blocks)
	if len(changed) != nb {
		return nil, errors.New("deflate splice: changes do not match the index")
	}
	reuse := make([]bool, nb)
	for k := range idx.Blocks {
		if changed[k] || idx.end(k) > newSize {
			continue
		}
		ok := true
		for j := k - 1; j >= 0 && idx.end(j) > idx.Blocks[k].Out-window; j-- {
			if changed[j] {
				ok = false
				break
			}
		}
		reuse[k] = ok
	}
	s := &Spliced{orig: orig, idx: idx}
	var fresh []int64 // pairs of [from, to) to compress
	for k := 0; k < nb; {
		j := k
		for j < nb && reuse[j] == reuse[k] {
			j++
		}
		if reuse[k] {
			s.pieces = append(s.pieces, piece{a: k, b: j})
			s.Reused += idx.end(j-1) - idx.Blocks[k].Out
		} else {
			s.pieces = append(s.pieces, piece{a: -1})
			fresh = append(fresh, idx.Blocks[k].Out, min(idx.end(j-1), newSize))
		}
		k = j
	}
	// New data past the original's end (or everything, for an empty index).
	if newSize > idx.Size || nb == 0 {
		if n := len(s.pieces); n > 0 && s.pieces[n-1].a < 0 {
			fresh[len(fresh)-1] = newSize
		} else {
			s.pieces = append(s.pieces, piece{a: -1})
			fresh = append(fresh, min(idx.Size, newSize), newSize)
		}
	}
	var total int64
	for i := 0; i < len(fresh); i += 2 {
		total += max(0, fresh[i+1]-fresh[i])
	}
	if total > limit {
		return nil, ErrNotWorthSplicing
	}
	s.Compressed = total
	f := 0
	for i := range s.pieces {
		if s.pieces[i].a >= 0 {
			continue
		}
		data, err := compress(newData, fresh[f], fresh[f+1], level)
		if err != nil {
			return nil, err
		}
		s.pieces[i].data = data
		f += 2
	}
	cw := &bitWriter{dry: true}
	if err := s.emit(cw); err != nil {
		return nil, err
	}
	s.size = cw.bytes
	return s, nil
}

// compress deflates r[from:to) into non-final blocks ending byte-aligned.
func compress(r io.ReaderAt, from, to int64, level int) ([]byte, error) {
	var out bytes.Buffer
	zw, err := flate.NewWriter(&out, level)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, min(1<<20, max(to-from, 1)))
	for off := from; off < to; {
		n := int(min(int64(len(buf)), to-off))
		if _, err := r.ReadAt(buf[:n], off); err != nil && !(err == io.EOF && n > 0) {
			return nil, err
		}
		zw.Write(buf[:n])
		off += int64(n)
	}
	if err := zw.Flush(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// Size is the length of the stream in bytes.
func (s *Spliced) Size() int64 { return s.size }

// WriteTo writes the stream to w.
func (s *Spliced) WriteTo(w io.Writer) (int64, error) {
	bw := &bitWriter{w: w, buf: make([]byte, 0, 1<<16)}
	if err := s.emit(bw); err != nil {
		return bw.bytes, err
	}
	return bw.bytes, nil
}

func (s *Spliced) emit(w *bitWriter) error {
	idx := s.idx
	nb := len(idx.Blocks)
	final := false
	for i, p := range s.pieces {
		last := i == len(s.pieces)-1
		if p.a < 0 {
			if w.n != 0 {
				// An empty stored block: three header bits, padding to
				// the byte, LEN 0 and NLEN 0xffff.
				w.bits(0, 3)
				w.align()
				w.write([]byte{0, 0, 0xff, 0xff})
			}
			w.write(p.data)
			continue
		}
		for k := p.a; k < p.b; {
			if idx.Blocks[k].Type == 0 {
				isFinal := k == nb-1 && last
				if err := s.stored(w, k, isFinal); err != nil {
					return err
				}
				final = isFinal
				k++
				continue
			}
			j := k
			for j < p.b && idx.Blocks[j].Type != 0 {
				j++
			}
			to := idx.EndBit
			if j < nb {
				to = idx.Blocks[j].Bit
			}
			from := idx.Blocks[k].Bit
			if j == nb {
				// The original's final block is in this run.
				fb := idx.Blocks[nb-1].Bit
				if err := w.copyBits(s.orig, from, fb); err != nil {
					return err
				}
				if last {
					w.bits(1, 1)
					final = true
				} else {
					w.bits(0, 1)
				}
				from = fb + 1
			}
			if err := w.copyBits(s.orig, from, to); err != nil {
				return err
			}
			k = j
		}
	}
	if !final {
		// An empty final block with fixed codes: BFINAL, BTYPE 01, and
		// the seven zero bits of the end-of-block code.
		w.bits(1, 1)
		w.bits(1, 2)
		w.bits(0, 7)
	}
	w.align()
	return w.flush()
}

// stored writes original stored block k at the current position.
func (s *Spliced) stored(w *bitWriter, k int, final bool) error {
	at := (s.idx.Blocks[k].Bit + 3 + 7) / 8
	var hdr [4]byte
	if _, err := s.orig.ReadAt(hdr[:], at); err != nil {
		return err
	}
	n := int64(binary.LittleEndian.Uint16(hdr[:]))
	f := uint64(0)
	if final {
		f = 1
	}
	w.bits(f, 1)
	w.bits(0, 2)
	w.align()
	return w.copyBits(s.orig, at*8, (at+4+n)*8)
}

// bitWriter writes a deflate bit stream, least significant bit first. A
// dry writer only counts.
type bitWriter struct {
	w     io.Writer
	dry   bool
	buf   []byte
	acc   uint64
	n     uint  // bits in acc (< 8 between calls)
	bytes int64 // bytes produced
	err   error
	in    []byte // copyBits' read buffer, made once: a stream can have thousands of stored blocks
}

func (w *bitWriter) bits(v uint64, k uint) {
	w.acc |= v << w.n
	w.n += k
	if w.n >= 8 {
		m := w.n / 8
		if !w.dry {
			var t [8]byte
			binary.LittleEndian.PutUint64(t[:], w.acc)
			w.buf = append(w.buf, t[:m]...)
			if len(w.buf) >= 1<<16 {
				w.flush()
			}
		}
		w.bytes += int64(m)
		w.acc >>= m * 8
		w.n -= m * 8
	}
}

func (w *bitWriter) align() {
	if w.n > 0 {
		w.bits(0, 8-w.n)
	}
}

// write appends whole bytes; the writer must be aligned.
func (w *bitWriter) write(p []byte) {
	w.bytes += int64(len(p))
	if w.dry {
		return
	}
	if len(w.buf)+len(p) > cap(w.buf) {
		w.flush()
		if len(p) >= cap(w.buf) {
			if w.err == nil {
				_, w.err = w.w.Write(p)
			}
			return
		}
	}
	w.buf = append(w.buf, p...)
}

func (w *bitWriter) flush() error {
	if !w.dry && len(w.buf) > 0 && w.err == nil {
		_, w.err = w.w.Write(w.buf)
	}
	w.buf = w.buf[:0]
	return w.err
}

// copyBits appends bits [from, to) of r.
func (w *bitWriter) copyBits(r io.ReaderAt, from, to int64) error {
	if to <= from {
		return nil
	}
	if w.dry {
		w.bytes += (int64(w.n) + to - from) / 8
		w.n = uint((int64(w.n) + to - from) % 8)
		return nil
	}
	if w.in == nil {
		w.in = make([]byte, 1<<20+8)
	}
	buf := w.in
	for from < to {
		// Whole bytes from..chunk, plus eight of slack for 64-bit loads.
		first := from / 8
		nbits := min(to-from, int64(1<<20)*8-8)
		last := (from + nbits + 7) / 8
		k, err := r.ReadAt(buf[:last-first], first)
		if int64(k) < last-first {
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
		clear(buf[k : k+8])
		pos := uint64(from % 8)
		end := pos + uint64(nbits)
		if pos == 0 && w.n == 0 {
			// Aligned on both sides: whole bytes as they are.
			whole := end / 8
			w.write(buf[:whole])
			pos = whole * 8
		}
		pos = w.shifted(buf, pos, end)
		if pos < end {
			v := binary.LittleEndian.Uint64(buf[pos/8:]) >> (pos % 8)
			k := uint(end - pos)
			w.bits(v&(1<<k-1), k)
		}
		from += nbits
	}
	return w.err
}

// shifted appends bits [pos, end) of buf (which has eight bytes of slack
// past end) 56 at a time while 56 remain, and returns where it
// stopped: with fewer than 8 bits pending, the accumulator takes 56 more
// and gives seven whole bytes, written straight into the buffer.
func (w *bitWriter) shifted(buf []byte, pos, end uint64) uint64 {
	for pos+56 <= end {
		if w.dry || len(w.buf)+8 > cap(w.buf) {
			v := binary.LittleEndian.Uint64(buf[pos/8:]) >> (pos % 8)
			w.bits(v&(1<<56-1), 56)
			pos += 56
			continue
		}
		v := binary.LittleEndian.Uint64(buf[pos/8:]) >> (pos % 8)
		acc := w.acc | (v&(1<<56-1))<<w.n
		b := len(w.buf)
		w.buf = binary.LittleEndian.AppendUint64(w.buf, acc)[:b+7]
		w.acc = acc >> 56
		w.bytes += 7
		pos += 56
		if len(w.buf) >= 1<<16 {
			w.flush()
		}
	}
	return pos
}

// Touched reports, per block, whether one of ranges ([from, to) of the
// data) meets it: the blocks an edit that wrote only those ranges changed.
func (idx *Index) Touched(ranges [][2]int64) []bool {
	c := idx.NewChanges()
	for _, r := range ranges {
		c.Mark(r[0], r[1])
	}
	return c.changed
}

// CRCWith is the CRC-32 of new data of size bytes that equals the indexed
// stream's data wherever changed is false: those blocks' CRCs come from
// the index, the changed blocks and anything past the original's end are
// read from r. Only those parts of r are read.
func (idx *Index) CRCWith(changed []bool, r io.ReaderAt, size int64) (uint32, error) {
	if len(changed) != len(idx.Blocks) || size < idx.Size {
		return 0, errors.New("deflate splice: changes do not match the index")
	}
	var crc uint32
	buf := make([]byte, 1<<16)
	sum := func(from, to int64) error {
		for from < to {
			k, err := r.ReadAt(buf[:min(int64(len(buf)), to-from)], from)
			if k == 0 && err != nil {
				return err
			}
			crc = crc32.Update(crc, crc32.IEEETable, buf[:k])
			from += int64(k)
		}
		return nil
	}
	for k, b := range idx.Blocks {
		end := idx.end(k)
		if !changed[k] {
			crc = CombineCRC(crc, b.CRC, end-b.Out)
			continue
		}
		if err := sum(b.Out, end); err != nil {
			return 0, err
		}
	}
	if err := sum(idx.Size, size); err != nil {
		return 0, err
	}
	return crc, nil
}
