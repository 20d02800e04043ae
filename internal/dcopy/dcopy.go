// Package dcopy copies large ranges of one file into another without the
// kernel copying them through the page cache: the source is mapped (16 MiB
// at a time), and the destination is written with O_DIRECT from the
// mapping, so the pages the source already has in the page cache go to
// the disk as they are.
// copy_file_range on a file system without reflinks copies every byte
// into new page-cache pages, then writes those back, several times the
// kernel time of this way (docs/performance.md), and the write-back is
// done when the call returns.
//
// O_DIRECT needs the file offset, the length and the memory address
// aligned to the device's block size, so a range is written directly only
// where its destination offset and its source offset agree modulo Align
// (a relinked wheel's entries before the first one that changes); the
// unaligned head and tail of a range,
// and everything where direct I/O is not available or gains nothing
// (tmpfs and ramfs, which accept O_DIRECT but buffer it; other systems;
// 32-bit hosts), are copied the ordinary way.
package dcopy

import (
	"io"
	"os"
)

// Align is the alignment direct writes use: a page, which is also the
// largest logical block size of common disks.
const Align = 4096

// Copier copies from one source file into one destination file.
type Copier struct {
	src, dst *os.File
	d        direct // nil where direct I/O is not available
}

// New returns a Copier from src to dst (both open; dst for writing).
func New(src, dst *os.File) *Copier {
	return &Copier{src: src, dst: dst, d: openDirect(src, dst)}
}

// Direct reports whether ranges with agreeing offsets are written
// directly.
func (c *Copier) Direct() bool { return c.d != nil }

// Copy copies n bytes of the source at srcOff to the destination at
// dstOff and returns how many of them were written directly. The
// destination's ordinary file offset is left alone.
func (c *Copier) Copy(dstOff, srcOff, n int64) (direct int64, err error) {
	if c.d != nil && n >= 2*Align && (dstOff-srcOff)%Align == 0 {
		head := (Align - dstOff%Align) % Align
		mid := (n - head) / Align * Align
		if err := c.plain(dstOff, srcOff, head); err != nil {
			return 0, err
		}
		k, err := c.d.write(dstOff+head, srcOff+head, mid)
		direct = k
		if err != nil {
			// Direct I/O refused (alignment, file system): the rest the
			// ordinary way, and no more direct writes.
			c.d.close()
			c.d = nil
		}
		return direct, c.plain(dstOff+head+k, srcOff+head+k, n-head-k)
	}
	return 0, c.plain(dstOff, srcOff, n)
}

// plain copies with copy_file_range where the kernel has it (io.Copy
// between files), through a buffer otherwise.
func (c *Copier) plain(dstOff, srcOff, n int64) error {
	if n <= 0 {
		return nil
	}
	w := io.NewOffsetWriter(c.dst, dstOff)
	m, err := io.Copy(w, io.NewSectionReader(c.src, srcOff, n))
	if err == nil && m < n {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// Close releases the descriptor opened for direct writes.
func (c *Copier) Close() {
	if c.d != nil {
		c.d.close()
		c.d = nil
	}
}

type direct interface {
	// write writes n bytes (a multiple of Align, at aligned offsets)
	// directly and returns how many it wrote; an error means the rest is
	// to be copied otherwise.
	write(dstOff, srcOff, n int64) (int64, error)
	close()
}
