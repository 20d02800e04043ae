package inflate

import (
	"errors"
	"io"
	"sync/atomic"
)

// ErrNoTail: Tail found no block to begin at, or decoded nothing it knew
// for certain.
var ErrNoTail = errors.New("inflate: the end of the stream cannot be decoded on its own")

// End is the end of a stream's data as Tail decoded it, held in the
// decoder's own buffers (no copy: on a machine where fresh memory is
// dear, a copy of a 10 MB end costs as much as decoding it).
type End struct {
	chunks [][]byte
	size   int64
	s      *spec
}

// Len is how many bytes of the end are known.
func (e *End) Len() int64 { return e.size }

// ReadAt reads the end; off 0 is its first known byte.
func (e *End) ReadAt(b []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("inflate: negative offset")
	}
	n := 0
	for _, c := range e.chunks {
		if off >= int64(len(c)) {
			off -= int64(len(c))
			continue
		}
		k := copy(b[n:], c[off:])
		n, off = n+k, 0
		if n == len(b) {
			return n, nil
		}
	}
	return n, io.EOF
}

// Release gives the buffers back; the End is empty afterwards.
func (e *End) Release() {
	if e.s != nil {
		e.s.release()
	}
	e.chunks, e.size, e.s = nil, 0, nil
}

// Tail decodes the end of the deflate stream held in the first n bytes of
// r on its own, as a part of a parallel decode does: from the first
// dynamic block that plausibly begins at or after byte from, without the
// 32 KiB of history before it. It returns the output from the point where
// the decoder no longer needed that history to the end of the stream (at
// most maxSpecOut bytes): the last Len() bytes of the data if the block
// it began with is a real one. Nothing here can tell that it is: a caller
// takes the bytes as a guess and checks whatever it derives from them
// against the sequential decode. Setting abort stops it early.
//
// wheel relink uses it to read a large library's dynamic section and
// string table, which lie at its end, while the library is still being
// inflated.
func Tail(r io.ReaderAt, n, from int64, abort *atomic.Bool) (*End, error) {
	if from < 0 || from >= n {
		return nil, ErrNoTail
	}
	s := speculate(r, n, from, 0, bufSize(n-from), maxSpecOut, abort)
	if s.d == nil {
		return nil, s.err
	}
	out := s.output()
	if s.err != nil || s.d.stopped || out.size == 0 {
		s.release()
		if s.err != nil {
			return nil, s.err
		}
		return nil, ErrNoTail
	}
	// The marked output before it is not wanted.
	s.d.m, s.d.prefix = nil, nil
	return &End{chunks: out.chunks, size: int64(out.size), s: s}, nil
}
