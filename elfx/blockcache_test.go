package elfx

import (
	"bytes"
	"errors"
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
	// Whole-file sizes, then block-cached ones.
	for _, size := range []int{0, 1, 100, blockSize - 1, blockSize, blockSize + 1, 5*blockSize + 123,
		wholeMax, wholeMax + 1, wholeMax + 5*blockSize + 123} {
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

// TestBlockReaderSmallFileWhole: a file of up to wholeMax bytes reaches
// the file once, for all of it, whatever is read of it and in what sizes;
// releasing the reader returns the buffer and later reads go to the file.
func TestBlockReaderSmallFileWhole(t *testing.T) {
	for _, size := range []int{1, blockSize + 7, wholeMax} {
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(i * 7)
		}
		c := &countingReader{r: bytes.NewReader(data)}
		br := newBlockReader(c, int64(size))
		for _, r := range [][2]int{{0, 64}, {size - 1, 1}, {size / 2, size}, {0, size}, {size, 8}} {
			p := make([]byte, r[1])
			n, _ := br.ReadAt(p, int64(r[0]))
			if !bytes.Equal(p[:n], data[r[0]:min(r[0]+r[1], size)]) {
				t.Fatalf("size %d: wrong bytes at %d", size, r[0])
			}
		}
		if c.reads != 1 || c.maxEnd != int64(size) {
			t.Errorf("size %d: %d reads reaching to %d, want one of the whole file", size, c.reads, c.maxEnd)
		}
		br.release()
		if br.whole != nil {
			t.Errorf("size %d: the file's buffer is still held after release", size)
		}
		if n, err := br.ReadAt(make([]byte, 1), 0); n != 1 || err != nil || c.reads != 2 {
			t.Errorf("size %d: after release: %d, %v, %d reads", size, n, err, c.reads)
		}
	}
}

// TestBlockReaderSmallFileAfterProbe: when the first block was read to
// tell what the file is, reading the small file whole reads only the rest
// of it (nothing more when the file fits in that block).
func TestBlockReaderSmallFileAfterProbe(t *testing.T) {
	for _, size := range []int{10, blockSize, blockSize + 7, wholeMax} {
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(i * 11)
		}
		c := &countingReader{r: bytes.NewReader(data)}
		br := newBlockReader(c, int64(size))
		if _, err := br.block(0); err != nil {
			t.Fatal(err)
		}
		p := make([]byte, size)
		if n, _ := br.ReadAt(p, 0); n != size || !bytes.Equal(p, data) {
			t.Fatalf("size %d: read %d bytes, or wrong bytes", size, n)
		}
		want := 1
		if size > blockSize {
			want = 2
		}
		if c.reads != want || c.maxEnd != int64(size) || c.asked != int64(size) {
			t.Errorf("size %d: %d reads of %d bytes reaching to %d, want %d reads of the file once", size, c.reads, c.asked, c.maxEnd, want)
		}
	}
}

// TestBlockReaderStopsAtSize: the last, short block is one read of exactly
// what is left; the file is never asked for bytes past its size (each such
// ask is a pread that only says EOF).
func TestBlockReaderStopsAtSize(t *testing.T) {
	data := make([]byte, wholeMax+3*blockSize+123)
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
