package inflate

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// A deflate stream has no index: where a block begins is known only by
// decoding everything before it. Large streams are still decoded on
// several cores, the way rapidgzip does it: the stream is cut into parts
// at byte offsets; for every part but the first, a goroutine looks for the
// first bit after the cut where a block plausibly begins (a dynamic block
// header whose code tables are all valid) and decodes from there without
// the 32 KiB of history before it, writing markers for the bytes it does
// not know. Meanwhile the first part is decoded as usual up to the first
// block that begins at or after the next cut. If that block begins exactly
// where the next part's decoder started, that decoder began at a real
// block and decoded the same symbols a sequential decoder would, so its
// markers are replaced by the history now known and its output follows.
// If not (the guess was wrong, or the part began with a stored or fixed
// block that is not searched for, or its decoding failed), the part is
// decoded sequentially instead. Whatever the guesses, the output, the
// index and any error are those of a sequential decode: every byte
// written is confirmed, and errors come from a sequential decoder.

// partsFor says into how many parts a stream of n compressed bytes is cut
// on a machine with procs cores. Not below three: decoding in parts costs
// more in all (the search, the markers, the memory of parts held until
// they are merged), so it pays only with a core to spare, and the one
// caller, wheel relink, keeps a second core busy copying the rest of the
// wheel meanwhile (measured on two cores: no faster, three times the
// memory).
func partsFor(n int64, procs int) int {
	if n < parallelMin || procs < 3 {
		return 1
	}
	return int(min(maxParts, (n+partBytes-1)/partBytes))
}

const (
	// parallelMin is the compressed size from which a stream is split.
	parallelMin = 8 << 20
	// partBytes is the compressed size of a part: small enough that the
	// cores stay busy to the end, large enough that the search for a
	// block and the decoding with markers are a small share of a part.
	partBytes = 4 << 20
	maxParts  = 1 << 12
	// maxScan bounds the compressed bytes searched after a cut: zlib and
	// compress/flate end a block every 16 Ki symbols at most (their
	// compressed blocks are tens of KB).
	maxScan = 128 << 10
	// maxMarked bounds the entries a part decodes before the last 32 KiB
	// it produced are free of markers (from then on it writes bytes).
	maxMarked = 32 << 20
)

// maxSpecOut bounds the output a part holds until it is confirmed.
const maxSpecOut = 64 << 20

// specError is a reason to stop decoding ahead, which wraps a more general
// one. (Not fmt.Errorf: formatting at start-up would cost every command.)
type specError struct {
	msg    string
	parent error
}

func (e *specError) Error() string { return e.msg }
func (e *specError) Unwrap() error { return e.parent }

var (
	errAbandoned = errors.New("speculative decoding abandoned")
	// errStopAhead: a part shows that decoding ahead does not pay for
	// this stream, and no more parts are decoded ahead.
	errStopAhead = &specError{errAbandoned.Error() + ": the stream does not suit decoding in parts", errAbandoned}
	// errTooLarge: a part's output outgrew maxSpecOut, the stream is too
	// compressible for its parts' output to be held.
	errTooLarge = &specError{errStopAhead.Error() + " (too much output)", errStopAhead}
	// errNoBlock: no dynamic block begins within maxScan of a cut: the
	// stream is made of stored blocks (incompressible data, decoded at
	// copying speed anyway) or fixed ones, and searching the other parts
	// would cost more than decoding them.
	errNoBlock = &specError{errStopAhead.Error() + " (no dynamic block after a cut)", errStopAhead}
)

// spec is one part decoded without its history.
type spec struct {
	start int64 // bit where the decoder began
	d     *decoder
	err   error
}

// Who decodes a part: the workers take parts in order, as far ahead of
// the part being merged as there are tokens; the merging goroutine
// decodes a part itself when no worker has taken it yet.
const (
	unclaimed int32 = iota
	byWorker
	byMerger
)

func decodeParallel(w io.Writer, r io.ReaderAt, n int64, k int) (*Index, error) {
	return decodeParallelMax(w, r, n, k, maxSpecOut)
}

// decodeParallelMax is decodeParallel with parts holding up to maxOut
// bytes of output until they are confirmed.
func decodeParallelMax(w io.Writer, r io.ReaderAt, n int64, k, maxOut int) (*Index, error) {
	cut := func(i int) int64 { // the bit where part i's decoder stops
		if i >= k {
			return 0
		}
		return n * int64(i) / int64(k) * 8
	}
	size := bufSize(n)
	var abort atomic.Bool
	specs := make([]*spec, k)
	done := make([]chan struct{}, k)
	claim := make([]atomic.Int32, k)
	for i := range done {
		done[i] = make(chan struct{})
	}
	workers := max(1, min(runtime.GOMAXPROCS(0)-1, k-1))
	// A token for every part decoded ahead of the merge: they bound the
	// memory held by parts not yet merged.
	tokens := make(chan struct{}, workers+2)
	for range cap(tokens) {
		tokens <- struct{}{}
	}
	quit := make(chan struct{})
	var next atomic.Int64
	// take claims the next part nobody has, with a token; wait says
	// whether to wait for a token.
	take := func(wait bool) (int, bool) {
		for {
			if wait {
				select {
				case <-tokens:
				case <-quit:
					return 0, false
				}
			} else {
				select {
				case <-tokens:
				default:
					return 0, false
				}
			}
			j := int(next.Add(1))
			if j >= k {
				tokens <- struct{}{}
				return 0, false
			}
			if claim[j].CompareAndSwap(unclaimed, byWorker) {
				return j, true
			}
			tokens <- struct{}{}
		}
	}
	work := func(j int) {
		specs[j] = speculate(r, n, cut(j)/8, cut(j+1), size, maxOut, &abort)
		if errors.Is(specs[j].err, errStopAhead) {
			abort.Store(true)
		}
		close(done[j])
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				j, ok := take(true)
				if !ok {
					return
				}
				work(j)
			}
		}()
	}
	defer func() {
		abort.Store(true)
		close(quit)
		wg.Wait()
	}()
	idx := &Index{}
	var bit, out int64 // where part i begins, in the input and the output
	var hist []byte    // the last (up to) 32 KiB of output before it
	for i := 0; i < k; i++ {
		if i > 0 && !claim[i].CompareAndSwap(unclaimed, byMerger) {
			// Part i is being decoded ahead: decode a later one
			// meanwhile rather than wait.
		wait:
			for {
				select {
				case <-done[i]:
					break wait
				default:
				}
				j, ok := take(false)
				if !ok {
					<-done[i]
					break
				}
				work(j)
			}
			tokens <- struct{}{}
			if s := specs[i]; s.err == nil && s.start == bit {
				data, ok := s.resolve(hist)
				if ok {
					idx.confirmed++
					final, err := s.merge(w, idx, out, data)
					if err != nil {
						return nil, err
					}
					if final {
						return idx, nil
					}
					out += int64(len(data) + s.output().size)
					bit = s.d.br.bitPos()
					hist = tail(append([][]byte{hist, data}, s.output().chunks...)...)
					s.release()
					continue
				}
			}
			if s := specs[i]; s.d != nil {
				s.release()
			}
		}
		d := &decoder{w: w, out: getOutBuf(size)}
		d.limit = cut(i + 1)
		d.br.initAt(r, n, bit)
		d.pos = copy(d.out, hist)
		d.start, d.crcAt = d.pos, d.pos
		d.base = out - int64(len(hist))
		if err := d.run(); err != nil {
			return nil, err
		}
		idx.Blocks = append(idx.Blocks, d.idx.Blocks...)
		if !d.stopped {
			idx.EndBit, idx.Size = d.idx.EndBit, d.idx.Size
			return idx, nil
		}
		bit, out = d.br.bitPos(), d.outPos()
		hist = tail(d.out[:d.pos])
		putOutBuf(d.out)
	}
	// The last part has no limit: its decoder ends with the final block
	// or an error.
	return nil, errors.New("inflate: internal error: no part decoded the final block")
}

// tail is the last window bytes of the concatenation of parts, copied.
func tail(parts ...[]byte) []byte {
	var t []byte
	for i := len(parts) - 1; i >= 0 && len(t) < window; i-- {
		p := parts[i]
		p = p[max(0, len(p)-(window-len(t))):]
		t = append(append([]byte(nil), p...), t...)
	}
	return t
}

// speculate finds the first plausible block at or after byte from and
// decodes from it, without history, up to the first block at or after
// bit limit (0: to the end), holding up to maxOut bytes of output.
func speculate(r io.ReaderAt, n, from, limit, size int64, maxOut int, abort *atomic.Bool) *spec {
	scan := make([]byte, min(maxScan, n-from))
	k, _ := r.ReadAt(scan, from)
	scan = scan[:k]
	var probe decoder
	var d *decoder // reused from one false start to the next
	for rel := int64(0); rel < int64(len(scan))*8; rel++ {
		if rel&0xfff == 0 && abort.Load() {
			return &spec{err: errAbandoned}
		}
		if !quickHeader(scan, rel) {
			continue
		}
		// The whole header, code tables included, read from scan.
		probe.br = bitReader{buf: scan, off: from, i: int(rel / 8), eof: true, size: from + int64(len(scan))}
		if probe.br.need(uint(rel%8)+3) != nil {
			continue
		}
		probe.br.take(uint(rel%8) + 3)
		if probe.readTables() != nil {
			continue
		}
		start := from*8 + rel
		if d == nil {
			d = &decoder{w: &partOutput{max: maxOut}, out: getOutBuf(size), limit: limit, abort: abort}
		}
		d.startMarked(n)
		d.br.initAt(r, n, start)
		err := d.run()
		// A false start shows within a block or two; a real one that
		// fails later fails for the sequential decoder too.
		if err != nil && !errors.Is(err, errAbandoned) && len(d.idx.Blocks) <= 2 {
			continue
		}
		return &spec{start: start, d: d, err: err}
	}
	if d != nil {
		(&spec{d: d}).release()
	}
	return &spec{err: errNoBlock}
}

// bitsAt returns the (at least 57) bits of b from bit on, zeros past its end.
func bitsAt(b []byte, bit int64) uint64 {
	i := int(bit / 8)
	var v uint64
	if i+8 <= len(b) {
		v = binary.LittleEndian.Uint64(b[i:])
	} else {
		var w [8]byte
		copy(w[:], b[min(i, len(b)):])
		v = binary.LittleEndian.Uint64(w[:])
	}
	return v >> (bit % 8)
}

// quickHeader: bit rel of scan could begin a dynamic block — its counts
// are in range and its code length code is complete (or zlib's single
// one-bit code).
func quickHeader(scan []byte, rel int64) bool {
	v := bitsAt(scan, rel)
	if v>>1&3 != 2 || v>>3&31 > 29 || v>>8&31 > 29 {
		return false
	}
	hclen := v>>13&15 + 4
	c := bitsAt(scan, rel+17) & (1<<(3*hclen) - 1)
	// Two code lengths at a time: kraftPairs holds, for six bits (two
	// 3-bit lengths), the Kraft sum of the two lengths (in 128ths) and,
	// from bit 16, how many of them are codes (a literal: TestTables
	// computes it).
	sum := 0
	for range 10 {
		sum += int(kraftPairs[c&63])
		c >>= 6
	}
	kraft, codes := sum&0xffff, sum>>16
	return kraft == 128 || (codes == 1 && kraft == 64)
}

var kraftPairs = [64]uint32{
	0x00000, 0x10040, 0x10020, 0x10010, 0x10008, 0x10004, 0x10002, 0x10001,
	0x10040, 0x20080, 0x20060, 0x20050, 0x20048, 0x20044, 0x20042, 0x20041,
	0x10020, 0x20060, 0x20040, 0x20030, 0x20028, 0x20024, 0x20022, 0x20021,
	0x10010, 0x20050, 0x20030, 0x20020, 0x20018, 0x20014, 0x20012, 0x20011,
	0x10008, 0x20048, 0x20028, 0x20018, 0x20010, 0x2000c, 0x2000a, 0x20009,
	0x10004, 0x20044, 0x20024, 0x20014, 0x2000c, 0x20008, 0x20006, 0x20005,
	0x10002, 0x20042, 0x20022, 0x20012, 0x2000a, 0x20006, 0x20004, 0x20003,
	0x10001, 0x20041, 0x20021, 0x20011, 0x20009, 0x20005, 0x20003, 0x20002,
}

// initAt starts reading r at a bit offset.
func (br *bitReader) initAt(r io.ReaderAt, size, bit int64) {
	br.init(r, size)
	br.off = bit / 8
	if br.need(uint(bit%8)) == nil {
		br.take(uint(bit % 8))
	}
}

// codesMarked decodes a Huffman-coded block into m: fastCodesMarked
// while it can, the careful decoder for the symbol it stops at.
func (d *decoder) codesMarked() error {
	br := &d.br
	for {
		if cap(d.m)-len(d.m) < maxMatch+8 {
			d.m = slices.Grow(d.m, max(len(d.m), 1<<16))
		}
		m := d.m[:cap(d.m)]
		var pos int
		br.bits, br.n, br.i, pos = fastCodesMarked(d.tab, br.buf, m, br.bits, br.n, br.i, len(d.m))
		d.m = m[:pos]
		if len(d.m) > maxMarked {
			return errAbandoned
		}
		if cap(d.m)-len(d.m) < maxMatch+8 {
			continue
		}
		lit, length, dist, err := d.symbol()
		switch {
		case err != nil:
			return err
		case lit >= 0:
			d.m = append(d.m, uint16(lit))
			continue
		case length == 0:
			return d.checkMarked()
		}
		if dist > len(d.m) {
			return d.fail("distance reaches before the start of the data")
		}
		n := len(d.m)
		d.m = d.m[:n+length] // room checked above
		copyMarked(d.m, n, dist, length)
	}
}

func (d *decoder) checkMarked() error {
	if len(d.m) > maxMarked {
		return errAbandoned
	}
	return nil
}

// storedMarked copies a stored block into m.
func (d *decoder) storedMarked() error {
	n, err := d.storedLen()
	if err != nil {
		return err
	}
	var b [4096]byte
	for n > 0 {
		got, err := d.br.bytes(b[:min(n, len(b))])
		for _, c := range b[:got] {
			d.m = append(d.m, uint16(c))
		}
		n -= got
		if err != nil {
			return err
		}
	}
	return d.checkMarked()
}

// startMarked (re)starts a speculative decoder on a stream of n bytes:
// output into markers, nothing decoded.
func (d *decoder) startMarked(n int64) {
	d.w.(*partOutput).release()
	if d.m == nil {
		d.m = make([]uint16, window, window+min(1<<20, 4*n))
		for i := range window {
			d.m[i] = uint16(256 + i)
		}
	}
	d.m, d.prefix = d.m[:window], nil
	d.marked, d.stopped = 0, false
	d.idx = Index{}
	d.pos, d.start, d.crcAt, d.base = 0, 0, 0, 0
}

// leaveMarkers switches to decoding bytes once the last 32 KiB decoded
// hold no marker: no later match can reach a byte before them.
func (d *decoder) leaveMarkers() {
	n := len(d.m)
	if lastMarker(d.m) >= 0 {
		return
	}
	for i, v := range d.m[n-window:] {
		d.out[i] = byte(v)
	}
	d.pos, d.start, d.crcAt = window, window, window
	d.base = int64(n - 2*window) // output offset of d.m[n-window]
	d.prefix, d.m = d.m[window:], nil
}

func (s *spec) output() *partOutput { return s.d.w.(*partOutput) }

// resolve is the part's output up to where it began writing bytes, its
// markers replaced by hist, the output before the part; false when a
// marker reaches before the start of the stream.
// release returns the part's buffers.
func (s *spec) release() {
	s.output().release()
	putOutBuf(s.d.out)
	s.d = nil
}

func (s *spec) resolve(hist []byte) ([]byte, bool) {
	m := s.d.prefix
	if s.d.m != nil {
		m = s.d.m[window:]
	}
	out := make([]byte, len(m))
	skip := window - len(hist)
	for i, v := range m {
		if v < 256 {
			out[i] = byte(v)
			continue
		}
		j := int(v) - 256 - skip
		if j < 0 {
			return nil, false
		}
		out[i] = hist[j]
	}
	return out, true
}

// merge writes a confirmed part's output (data, then what it wrote as
// bytes) and adds its blocks to idx; true when it holds the final block.
func (s *spec) merge(w io.Writer, idx *Index, out int64, data []byte) (bool, error) {
	if _, err := w.Write(data); err != nil {
		return false, err
	}
	for _, c := range s.output().chunks {
		if _, err := w.Write(c); err != nil {
			return false, err
		}
	}
	d := s.d
	size := int64(len(data) + s.output().size)
	for i := range d.idx.Blocks {
		b := &d.idx.Blocks[i]
		if i < d.marked {
			end := int64(len(data))
			if i+1 < len(d.idx.Blocks) {
				end = d.idx.Blocks[i+1].Out
			}
			b.CRC = crc32.ChecksumIEEE(data[b.Out:end])
		}
		b.Out += out
		idx.Blocks = append(idx.Blocks, *b)
	}
	if !d.stopped {
		idx.EndBit, idx.Size = d.idx.EndBit, out+size
		return true, nil
	}
	return false, nil
}

// partOutput holds a part's output until it is confirmed: the decoder
// hands over its output buffers instead of copying them (room), and
// takes fresh ones from outBufs.
type partOutput struct {
	chunks [][]byte // the output, in order
	bufs   [][]byte // the buffers the chunks lie in, for outBufs
	size   int
	max    int // the most it holds (errTooLarge past it)
}

// Write keeps p: only a decoder that is done writes here (flush).
func (o *partOutput) Write(p []byte) (int, error) {
	if o.size+len(p) > o.max {
		return 0, errTooLarge
	}
	o.chunks = append(o.chunks, p)
	o.size += len(p)
	return len(p), nil
}

// release returns the part's buffers for other decoders.
func (o *partOutput) release() {
	for _, b := range o.bufs {
		putOutBuf(b)
	}
	o.chunks, o.bufs = nil, nil
}

// outBufs recycles decoders' output buffers within parallel decodes.
var outBufs = sync.Pool{New: func() any {
	b := make([]byte, outBuf+maxMatch+8)
	return &b
}}

// getOutBuf is an output buffer for size bytes of output (outBuf or less
// for a smaller stream) plus the room a match needs.
func getOutBuf(size int64) []byte {
	if size == outBuf {
		return *outBufs.Get().(*[]byte)
	}
	return make([]byte, size+maxMatch+8)
}

func putOutBuf(b []byte) {
	if len(b) == outBuf+maxMatch+8 {
		outBufs.Put(&b)
	}
}

// handOver is room for a decoder writing a part's output: the full
// buffer goes to the part as it is, and decoding goes on in a fresh one
// that starts with the last 32 KiB.
func (d *decoder) handOver(o *partOutput) error {
	d.sum()
	if _, err := o.Write(d.out[d.start:d.pos]); err != nil {
		return err
	}
	o.bufs = append(o.bufs, d.out)
	d.continueIn(getOutBuf(int64(len(d.out) - maxMatch - 8)))
	return nil
}

// fastCodesMarked is fastCodes for a speculative part's output, where
// the bytes before the part are not known: out holds a byte (< 256) or a
// marker for an unknown one (>= 256), and matches copy either. It leaves
// finding the last marker to whoever needs it (lastMarker). It repeats
// fastCodes line for line but for the element type and the match copy:
// one generic loop would need an indirect call for every match in the
// main decoder, whose loop is the relink's critical path.
func fastCodesMarked(t *tables, buf []byte, out []uint16, bv uint64, n uint, bi, pos int) (uint64, uint, int, int) {
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
			o := (*[2]uint16)(out[pos:])
			bv >>= e & 63
			n -= uint(e & 63)
			o[0] = uint16(uint8(e >> 16))
			pos++
			e = t.lit.prim[bv&(1<<litBits-1)]
			if e&litFlag != 0 {
				bv >>= e & 63
				n -= uint(e & 63)
				o[1] = uint16(uint8(e >> 16))
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
				out[pos] = uint16(uint8(e >> 16))
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
		pos = copyMarked(out, pos, dist, length)
	}
	return bv, n, len(buf) - len(in), pos
}

// copyMarked copies length entries from dist back to pos (out has room
// for them) and returns the new position.
func copyMarked(out []uint16, pos, dist, length int) int {
	from, end := pos-dist, pos+length
	if dist >= length {
		copy(out[pos:end], out[from:from+length])
		return end
	}
	// Overlapping: the pattern doubles with every copy.
	for p := pos; p < end; {
		p += copy(out[p:end], out[from:p])
	}
	return end
}

// lastMarker is the index of the last marker in m's final window
// entries, or -1 when they hold none.
func lastMarker(m []uint16) int {
	for i := len(m) - 1; i >= max(0, len(m)-window); i-- {
		if m[i] >= 256 {
			return i
		}
	}
	return -1
}
