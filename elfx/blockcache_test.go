package elfx

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"testing"
)

// countingReader counts the reads that reach the file.
type countingReader struct {
	r      io.ReaderAt
	reads  int
	maxEnd int64 // the furthest byte any read asked for
	asked  int64 // bytes asked for by all reads
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	c.reads++
	c.maxEnd = max(c.maxEnd, off+int64(len(p)))
	c.asked += int64(len(p))
	return c.r.ReadAt(p, off)
}

// TestBlockReaderMatchesFile reads random ranges, including ones that
// straddle blocks and run past the end, through the cache and straight
// from the data: bytes, counts and io.EOF must agree.
func TestBlockReaderMatchesFile(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, size := range []int{0, 1, 100, blockSize - 1, blockSize, blockSize + 1, 5*blockSize + 123,
		16*blockSize + 1, 21*blockSize + 123} {
		data := make([]byte, size)
		rng.Read(data)
		want := bytes.NewReader(data)
		got := newBlockReader(bytes.NewReader(data), int64(size))
		for i := 0; i < 2000; i++ {
			off := rng.Int63n(int64(size) + blockSize)
			n := rng.Intn(3*blockSize) + 1
			if i%3 == 0 {
				n = rng.Intn(64) + 1
			}
			a, b := make([]byte, n), make([]byte, n)
			na, ea := want.ReadAt(a, off)
			nb, eb := got.ReadAt(b, off)
			if na != nb || (ea == nil) != (eb == nil) || !bytes.Equal(a[:na], b[:nb]) {
				t.Fatalf("size %d: ReadAt(%d bytes at %d) = %d, %v; the file gives %d, %v", size, n, off, nb, eb, na, ea)
			}
			if ea != nil && !errors.Is(eb, io.EOF) {
				t.Fatalf("size %d: short read at %d: error %v, want io.EOF", size, off, eb)
			}
		}
	}
}

// TestBlockReaderSavesReads: header parsing's small reads near one place
// reach the file once, and the cache recycles its slots.
func TestBlockReaderSavesReads(t *testing.T) {
	data := make([]byte, 64*blockSize)
	c := &countingReader{r: bytes.NewReader(data)}
	br := newBlockReader(c, int64(len(data)))
	var buf [64]byte
	for _, off := range []int64{0, 0, 16, 64, 120, 4090} {
		br.ReadAt(buf[:], off)
	}
	if c.reads != 2 { // block 0, then block 1 for the read straddling into it
		t.Errorf("%d reads reached the file, want 2", c.reads)
	}
	for i := int64(0); i < 2*blockSlots; i++ {
		br.ReadAt(buf[:8], (i+2)*blockSize)
	}
	before := c.reads
	br.ReadAt(buf[:8], (2*blockSlots+1)*blockSize) // the last block read is cached
	if c.reads != before {
		t.Errorf("a just-read block was read again")
	}
	br.ReadAt(make([]byte, 3*blockSize), 0) // large: straight through
	if c.reads != before+1 {
		t.Errorf("a large read took %d file reads, want 1", c.reads-before)
	}
}

// TestBlockReaderSmallFileInPieces: a small library is read in the
// blocks its headers, dynamic section and section headers lie in, not
// whole (copying the rest out of the page cache cost more than the reads
// it saved), and a block read to tell what the file is is not read again.
func TestBlockReaderSmallFileInPieces(t *testing.T) {
	size := 15*blockSize + 300
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(i * 11)
	}
	c := &countingReader{r: bytes.NewReader(data)}
	br := newBlockReader(c, int64(size))
	if _, err := br.block(0); err != nil { // the probe
		t.Fatal(err)
	}
	for _, r := range [][2]int{{0, 64}, {64, 56 * 9}, {size - 1000, 1000}, {size - 2000, 200}, {9*blockSize + 100, 400}, {blockSize - 10, 20}} {
		p := make([]byte, r[1])
		if n, _ := br.ReadAt(p, int64(r[0])); n != r[1] || !bytes.Equal(p, data[r[0]:r[0]+r[1]]) {
			t.Fatalf("wrong bytes at %d", r[0])
		}
	}
	// Blocks 0, 15 (the last, short one), 14, 9 and 1.
	if want := int64(4*blockSize + 300); c.reads != 5 || c.asked != want {
		t.Errorf("%d reads of %d bytes, want 5 of %d", c.reads, c.asked, want)
	}
}

// TestBlockReaderStopsAtSize: the last, short block is one read of exactly
// what is left; the file is never asked for bytes past its size (each such
// ask is a pread that only says EOF).
func TestBlockReaderStopsAtSize(t *testing.T) {
	data := make([]byte, 19*blockSize+123)
	c := &countingReader{r: bytes.NewReader(data)}
	br := newBlockReader(c, int64(len(data)))
	var buf [200]byte
	n, err := br.ReadAt(buf[:], int64(len(data))-100)
	if n != 100 || err != io.EOF {
		t.Errorf("read over the end: %d, %v", n, err)
	}
	if c.reads != 1 || c.maxEnd > int64(len(data)) {
		t.Errorf("%d reads reaching to %d for a file of %d bytes", c.reads, c.maxEnd, len(data))
	}
	if n, err := br.ReadAt(buf[:8], int64(len(data))+blockSize); n != 0 || err != io.EOF || c.reads != 1 {
		t.Errorf("past the end: %d, %v after %d reads", n, err, c.reads)
	}
}

type failingReader struct{}

func (failingReader) ReadAt([]byte, int64) (int, error) { return 0, errors.New("disk on fire") }

func TestBlockReaderError(t *testing.T) {
	var b [8]byte
	if _, err := newBlockReader(failingReader{}, 100).ReadAt(b[:], 0); err == nil || err.Error() != "disk on fire" {
		t.Fatalf("error %v, want the file's", err)
	}
}

func TestBlockReaderRelease(t *testing.T) {
	data := []byte("0123456789")
	br := newBlockReader(bytes.NewReader(data), int64(len(data)))
	var b [4]byte
	br.ReadAt(b[:], 0)
	br.release()
	for _, s := range br.slots {
		if s != nil {
			t.Fatal("a block is still held after release")
		}
	}
	if n, err := br.ReadAt(b[:], 2); n != 4 || err != nil || string(b[:]) != "2345" {
		t.Fatalf("after release: %d %v %q", n, err, b[:n])
	}
}

// TestArchiveHeadersAroundCache: an archive's member headers are read
// through the block cache while members are small (a block serves
// several) and by themselves after a member larger than a block (a block
// read for each 124-byte header copied 4 KiB: 20 MB over LLVM's archives).
func TestArchiveHeadersAroundCache(t *testing.T) {
	ar := func(sizes ...int) []byte {
		b := []byte(arMagic)
		for i, n := range sizes {
			b = fmt.Appendf(b, "%-16s%-12d%-6d%-6d%-8o%-10d`\n", fmt.Sprintf("m%d.o/", i), 0, 0, 0, 0o644, n)
			b = append(b, bytes.Repeat([]byte{byte('a' + i)}, n)...)
			if n%2 == 1 {
				b = append(b, '\n')
			}
		}
		return b
	}
	for _, tc := range []struct {
		sizes    []int
		maxReads int   // reads that reach the file
		maxBytes int64 // bytes they ask for
	}{
		// Eight large members: the first header's block (cached), then
		// one read of 124 bytes per header.
		{[]int{20000, 30001, 9000, 40000, 5000, 70000, 12345, 8000}, 8, blockSize + 7*(arHdrSize+memberHeadSize)},
		// Forty small members: one block read per 4 KiB of them.
		{[]int{300, 200, 500, 100, 250, 300, 200, 500, 100, 250, 300, 200, 500, 100, 250, 300, 200, 500, 100, 250,
			300, 200, 500, 100, 250, 300, 200, 500, 100, 250, 300, 200, 500, 100, 250, 300, 200, 500, 100, 250}, 4, 4 * blockSize},
	} {
		data := ar(tc.sizes...)
		c := &countingReader{r: bytes.NewReader(data)}
		a, err := newArchive(newBlockReader(c, int64(len(data))), int64(len(data)), "t.a", false)
		if err != nil {
			t.Fatal(err)
		}
		if len(a.Members) != len(tc.sizes) {
			t.Fatalf("%d members, want %d", len(a.Members), len(tc.sizes))
		}
		for i, m := range a.Members {
			if m.Size != int64(tc.sizes[i]) || a.heads[i].b[0] != byte('a'+i) {
				t.Fatalf("member %d: size %d, head %q", i, m.Size, a.heads[i].b[:a.heads[i].n])
			}
		}
		if c.reads > tc.maxReads || c.asked > tc.maxBytes {
			t.Errorf("members %v: %d reads of %d bytes in all, want at most %d reads and %d bytes", tc.sizes, c.reads, c.asked, tc.maxReads, tc.maxBytes)
		}
	}
}
