// Package zstd decompresses Zstandard streams (RFC 8878): frames of raw,
// RLE and compressed blocks, Huffman-coded literals and FSE-coded
// sequences, skippable frames, the optional content checksum. Dictionaries
// are not supported. It is written for reading the payload of compressed
// clang offload bundles: memory is bounded by the frame's window, and
// every size read from the input is checked before it is used.
package zstd

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

const (
	frameMagic    = 0xFD2FB528
	skippableMask = 0xFFFFFFF0
	skippableBase = 0x184D2A50

	// MaxWindow is the largest window accepted, zstd's own default decoder
	// limit (--memory=128MB); history never exceeds twice the window.
	MaxWindow = 1 << 27
)

// ErrDictionary reports a frame that needs a dictionary.
var ErrDictionary = errors.New("zstd: frame needs a dictionary")

// Reader decompresses a stream of zstd frames.
type Reader struct {
	r       *bufio.Reader
	f       frameState
	out     []byte // decoded bytes not yet returned
	inFrame bool
	last    bool // the current frame's last block was read
	check   bool
	sum     xxh64
	err     error
}

// NewReader returns a Reader decompressing r.
func NewReader(r io.Reader) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, 1<<16)}
}

// Read implements io.Reader.
func (z *Reader) Read(p []byte) (int, error) {
	for len(z.out) == 0 {
		if z.err != nil {
			return 0, z.err
		}
		z.err = z.step()
	}
	n := copy(p, z.out)
	z.out = z.out[n:]
	return n, nil
}

// step decodes the next block (or frame header), leaving output in z.out.
func (z *Reader) step() error {
	if !z.inFrame {
		return z.frameHeader()
	}
	if z.last {
		if z.check {
			var b [4]byte
			if _, err := io.ReadFull(z.r, b[:]); err != nil {
				return unexpected(err)
			}
			if binary.LittleEndian.Uint32(b[:]) != uint32(z.sum.sum()) {
				return fmt.Errorf("zstd: content checksum mismatch")
			}
		}
		z.inFrame = false
		return nil
	}
	var h [3]byte
	if _, err := io.ReadFull(z.r, h[:]); err != nil {
		return unexpected(err)
	}
	bh := uint32(h[0]) | uint32(h[1])<<8 | uint32(h[2])<<16
	z.last = bh&1 != 0
	size := int(bh >> 3)
	f := &z.f
	// Keep one window of history before the block.
	if keep := f.window; len(f.hist) > 2*keep+maxBlockSize {
		n := copy(f.hist, f.hist[len(f.hist)-keep:])
		f.hist = f.hist[:n]
	}
	start := len(f.hist)
	switch bh >> 1 & 3 {
	case 0: // raw
		if size > maxBlockSize {
			return errCorrupt
		}
		f.hist = append(f.hist, make([]byte, size)...)
		if _, err := io.ReadFull(z.r, f.hist[start:]); err != nil {
			return unexpected(err)
		}
	case 1: // RLE
		if size > maxBlockSize {
			return errCorrupt
		}
		c, err := z.r.ReadByte()
		if err != nil {
			return unexpected(err)
		}
		for i := 0; i < size; i++ {
			f.hist = append(f.hist, c)
		}
	case 2: // compressed
		if size > maxBlockSize {
			return errCorrupt
		}
		b := make([]byte, size)
		if _, err := io.ReadFull(z.r, b); err != nil {
			return unexpected(err)
		}
		if err := f.block(b); err != nil {
			return err
		}
	default:
		return errCorrupt
	}
	z.out = f.hist[start:]
	f.frameDecoded += int64(len(z.out))
	if z.check {
		z.sum.write(z.out)
	}
	return nil
}

func (z *Reader) frameHeader() error {
	var m [4]byte
	if _, err := io.ReadFull(z.r, m[:]); err != nil {
		if err == io.EOF {
			return io.EOF // a clean end between frames
		}
		return unexpected(err)
	}
	magic := binary.LittleEndian.Uint32(m[:])
	if magic&skippableMask == skippableBase {
		if _, err := io.ReadFull(z.r, m[:]); err != nil {
			return unexpected(err)
		}
		_, err := z.r.Discard(int(binary.LittleEndian.Uint32(m[:])))
		return unexpected(err)
	}
	if magic != frameMagic {
		return fmt.Errorf("zstd: bad frame magic %#08x", magic)
	}
	fhd, err := z.r.ReadByte()
	if err != nil {
		return unexpected(err)
	}
	single := fhd&0x20 != 0
	if fhd&0x08 != 0 {
		return errCorrupt // reserved bit
	}
	window := uint64(0)
	if !single {
		wd, err := z.r.ReadByte()
		if err != nil {
			return unexpected(err)
		}
		base := uint64(1) << (10 + wd>>3)
		window = base + base/8*uint64(wd&7)
	}
	if didSize := [4]int{0, 1, 2, 4}[fhd&3]; didSize > 0 {
		b := make([]byte, didSize)
		if _, err := io.ReadFull(z.r, b); err != nil {
			return unexpected(err)
		}
		var id uint32
		for i := didSize - 1; i >= 0; i-- {
			id = id<<8 | uint32(b[i])
		}
		if id != 0 {
			return ErrDictionary
		}
	}
	fcsSize := [4]int{0, 2, 4, 8}[fhd>>6]
	if fcsSize == 0 && single {
		fcsSize = 1
	}
	if fcsSize > 0 {
		b := make([]byte, 8)
		if _, err := io.ReadFull(z.r, b[:fcsSize]); err != nil {
			return unexpected(err)
		}
		fcs := binary.LittleEndian.Uint64(b)
		if fcsSize == 2 {
			fcs += 256
		}
		if single {
			window = fcs
		}
	}
	if window > MaxWindow {
		return fmt.Errorf("zstd: window of %d bytes exceeds %d", window, MaxWindow)
	}
	z.f = frameState{window: int(window), rep: [3]uint32{1, 4, 8}, hist: z.f.hist[:0], lits: z.f.lits}
	z.inFrame, z.last, z.check = true, false, fhd&0x04 != 0
	z.sum.reset()
	return nil
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
