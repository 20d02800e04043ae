package elfx

import (
	"io"
	"sync"
)

// blockReader serves the small reads of header parsing from a few cached
// 4 KiB blocks of the file. Opening an ELF file reads the identification
// and header twice (ours and debug/elf's), the program headers, the section
// headers and their names, the dynamic section and one string per NEEDED
// entry: two dozen preads of a few bytes to a few KB, from a handful of
// places. Through the cache that is a handful of block reads. Reads larger
// than two blocks go straight to the file.
//
// A file of up to wholeMax bytes is read whole by its first read instead:
// most files of a library directory are that small (1,800 of the 2,250
// under /usr/lib/x86_64-linux-gnu), and their headers, dynamic section and
// symbol tables then cost one pread instead of five.
type blockReader struct {
	r    io.ReaderAt
	size int64 // the file's size: no read asks past it (a short read would cost a second pread to find EOF)
	mu   sync.Mutex
	// The slots are reused round-robin; a scan of one file touches
	// fewer blocks than there are slots.
	slots    [blockSlots]*block
	next     int
	whole    *wholeFile // a small file, once read
	released bool
}

// wholeMax is the size up to which a file is read in one piece.
const wholeMax = 64 << 10

type wholeFile struct {
	n   int // bytes read (fewer than the size if the file shrank)
	buf [wholeMax]byte
}

var wholePool = sync.Pool{New: func() any { return new(wholeFile) }}

const (
	blockShift = 12
	blockSize  = 1 << blockShift
	blockSlots = 8
)

type block struct {
	idx int64 // block number + 1; 0 = empty
	n   int   // valid bytes (short at the end of the file)
	buf [blockSize]byte
}

func newBlockReader(r io.ReaderAt, size int64) *blockReader { return &blockReader{r: r, size: size} }

func (b *blockReader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || (len(p) > 2*blockSize && b.size > wholeMax) {
		return b.r.ReadAt(p, off)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.released {
		return b.r.ReadAt(p, off)
	}
	if b.size <= wholeMax {
		return b.readWhole(p, off)
	}
	n := 0
	for n < len(p) {
		pos := off + int64(n)
		blk, err := b.block(pos >> blockShift)
		if err != nil {
			return n, err
		}
		in := int(pos & (blockSize - 1))
		if in >= blk.n {
			return n, io.EOF
		}
		n += copy(p[n:], blk.buf[in:blk.n])
		if blk.n < blockSize && n < len(p) {
			return n, io.EOF
		}
	}
	return n, nil
}

// readWhole serves a read of a small file from all of it, read on the
// first call. A first block already read (the probe that told what the
// file is) is not read again.
func (b *blockReader) readWhole(p []byte, off int64) (int, error) {
	if b.whole == nil {
		w := wholePool.Get().(*wholeFile)
		have := 0
		for _, s := range b.slots {
			if s != nil && s.idx == 1 && int64(s.n) == min(b.size, blockSize) {
				have = copy(w.buf[:], s.buf[:s.n])
			}
		}
		m := have
		if int64(have) < b.size {
			k, err := b.r.ReadAt(w.buf[have:b.size], int64(have))
			if err != nil && err != io.EOF {
				wholePool.Put(w)
				return 0, err
			}
			m += k
		}
		w.n, b.whole = m, w
	}
	if off >= int64(b.whole.n) {
		return 0, io.EOF
	}
	n := copy(p, b.whole.buf[off:b.whole.n])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// block returns block i, reading it on a miss.
func (b *blockReader) block(i int64) (*block, error) {
	for _, s := range b.slots {
		if s != nil && s.idx == i+1 {
			return s, nil
		}
	}
	if b.slots[b.next] == nil {
		b.slots[b.next] = blockPool.Get().(*block)
	}
	s := b.slots[b.next]
	b.next = (b.next + 1) % blockSlots
	s.idx = 0
	want := int64(blockSize)
	if rest := b.size - i<<blockShift; rest < want {
		want = max(rest, 0)
	}
	if want == 0 {
		s.idx, s.n = i+1, 0
		return s, nil
	}
	m, err := b.r.ReadAt(s.buf[:want], i<<blockShift)
	if err != nil && (err != io.EOF || m == 0) {
		if err == io.EOF {
			s.idx, s.n = i+1, 0
			return s, nil
		}
		return nil, err
	}
	s.idx, s.n = i+1, m
	return s, nil
}

// blockPool recycles the blocks of closed files: a scan over a prefix opens
// thousands of files, and 32 KB of fresh buffers for each was a third of
// everything `check` allocated.
var blockPool = sync.Pool{New: func() any { return new(block) }}

// release drops the cached blocks: tables that outlive the open file keep
// a reference to it, and 32 KB per file adds up over a prefix. The blocks go
// back to the pool; every use of one is under b.mu, so none is still in use.
func (b *blockReader) release() {
	b.mu.Lock()
	for _, s := range b.slots {
		if s != nil {
			s.idx, s.n = 0, 0
			blockPool.Put(s)
		}
	}
	if b.whole != nil {
		wholePool.Put(b.whole)
	}
	b.slots, b.whole, b.released = [blockSlots]*block{}, nil, true
	b.mu.Unlock()
}
