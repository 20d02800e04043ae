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
// Small files are not read whole: the reads a check needs of a small
// library (block 0, the dynamic section, the section headers at the end,
// the symbol tables) are about half of it, and copying the rest out of the
// page cache cost more than the three or four preads it saved.
type blockReader struct {
	r    io.ReaderAt
	size int64 // the file's size: no read asks past it (a short read would cost a second pread to find EOF)
	mu   sync.Mutex
	// The slots are reused round-robin; a scan of one file touches
	// fewer blocks than there are slots.
	slots    [blockSlots]*block
	next     int
	released bool
}

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
	if off < 0 || len(p) > 2*blockSize {
		return b.r.ReadAt(p, off)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.released {
		return b.r.ReadAt(p, off)
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
	b.slots, b.released = [blockSlots]*block{}, true
	b.mu.Unlock()
}

// uncached returns an archive member's reader reading around the
// archive's block cache (its kept first bytes still served): reading a
// member's tables, each read once, through the cache cost a pread per
// 4 KiB block and a copy of each block besides. Other readers are returned
// as they are.
func uncached(r io.ReaderAt) io.ReaderAt {
	sr, ok := r.(*io.SectionReader)
	if !ok {
		return r
	}
	outer, off, n := sr.Outer()
	switch o := outer.(type) {
	case *blockReader:
		return io.NewSectionReader(o.r, off, n)
	case *memberReader:
		if br, ok := o.r.(*blockReader); ok {
			return io.NewSectionReader(&memberReader{r: br.r, off: o.off, head: o.head}, off, n)
		}
	}
	return r
}
