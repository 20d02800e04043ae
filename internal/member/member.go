// Package member extracts a wheel's members for reading: small ones into
// memory, large ones through an unnamed temporary file, with the size
// bounded and the CRC-32 checked (zipx.Extract), and what is extracted
// optionally handed to a hash on another core on the way.
package member

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/rocmdoctor/rocmdoctor/internal/safefile"
	"github.com/rocmdoctor/rocmdoctor/internal/writeback"
	"github.com/rocmdoctor/rocmdoctor/internal/zipx"
)

// Max is the largest member extracted (ROCm's largest libraries are
// under 2 GiB).
const Max = 8 << 30

// InMemory is the default size up to which a member is read into memory
// rather than a temporary file: a worker holds one at a time, so memory
// stays bounded (workers times InMemory).
const InMemory = 32 << 20

// Open extracts member zf (raw is the wheel) for reading: into memory up
// to inMemory bytes, through a temporary file above that. Deflated
// members (nearly all) go through our decoder, about twice archive/zip's
// speed (docs/performance.md); the size and CRC-32 are checked. done
// releases what it took. The declared size bounds what the extraction
// lets through, and it is bounded here (Max), so a wheel cannot make a
// scan fill the memory or the temporary directory. What is extracted is
// written to tee as well, when it is not nil.
func Open(zf *zip.File, raw io.ReaderAt, tee io.Writer, inMemory uint64) (r io.ReaderAt, done func(), err error) {
	if size := zf.UncompressedSize64; size > Max {
		return nil, nil, fmt.Errorf("declares %d bytes, more than rocmdoctor extracts (%d)", size, uint64(Max))
	}
	if size := zf.UncompressedSize64; size <= inMemory {
		buf := bytes.NewBuffer(make([]byte, 0, size)) // Extract writes no more than size
		if _, err := zipx.Extract(buf, raw, zf); err != nil {
			return nil, nil, err
		}
		done = func() {}
		if tee != nil {
			// Hashed on another core while the rules read it.
			hashed := make(chan struct{})
			go func() {
				tee.Write(buf.Bytes())
				close(hashed)
			}()
			done = func() { <-hashed }
		}
		return bytes.NewReader(buf.Bytes()), done, nil
	}
	// Unnamed: nothing is left behind however the process ends.
	tmp, err := safefile.ScratchFile("")
	if err != nil {
		return nil, nil, err
	}
	if free, ok := writeback.Free(os.TempDir()); ok && zf.UncompressedSize64 > free {
		tmp.Close()
		return nil, nil, fmt.Errorf("extracting it takes %d bytes under %s, which has %d free (set TMPDIR to a directory with more room)", zf.UncompressedSize64, os.TempDir(), free)
	}
	if err := safefile.Reserve(tmp, 0, int64(zf.UncompressedSize64)); err != nil {
		tmp.Close()
		return nil, nil, err
	}
	done = func() { tmp.Close() }
	var w io.Writer = tmp
	if tee != nil {
		bg := newbgWriter(tee) // hashed on another core while it is inflated
		w = io.MultiWriter(tmp, bg)
		remove := done
		done = func() {
			bg.Close()
			remove()
		}
	}
	if _, err := zipx.Extract(w, raw, zf); err != nil {
		done()
		return nil, nil, err
	}
	return tmp, done, nil
}

// bgWriter writes to w on a goroutine of its own: Write copies what it is
// given (into one of a few reused buffers) and returns, so that the
// writer's work (hashing) overlaps the caller's (inflating). At most
// bgBuffers copies are held. Close waits until w has everything.
type bgWriter struct {
	w    io.Writer
	full chan []byte
	free chan []byte
	done chan struct{}
}

const bgBuffers = 3

// newbgWriter starts a bgWriter to w.
func newbgWriter(w io.Writer) *bgWriter {
	b := &bgWriter{w: w, full: make(chan []byte, bgBuffers), free: make(chan []byte, bgBuffers), done: make(chan struct{})}
	for range bgBuffers {
		b.free <- nil
	}
	go func() {
		defer close(b.done)
		for p := range b.full {
			b.w.Write(p)
			b.free <- p[:0]
		}
	}()
	return b
}

// Write never fails: w (a hash) does not.
func (b *bgWriter) Write(p []byte) (int, error) {
	buf := append(<-b.free, p...)
	b.full <- buf
	return len(p), nil
}

// Close flushes and waits; it may be called once.
func (b *bgWriter) Close() {
	close(b.full)
	<-b.done
}
