// Package saferio reads byte ranges whose offsets and sizes come from
// untrusted files. Every read is checked against the size of the underlying
// data and a caller-supplied cap before anything is allocated.
package saferio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// ErrRange reports a range that lies outside the data or exceeds a cap.
var ErrRange = errors.New("range outside the file")

// ReadAt returns n bytes at off from r, where size is the total size of the
// data behind r. It refuses (with an error wrapping ErrRange) ranges that
// overflow, fall outside [0,size) or are larger than max.
func ReadAt(r io.ReaderAt, size, off, n, max int64) ([]byte, error) {
	if err := CheckRead(size, off, n, max); err != nil {
		return nil, err
	}
	buf := make([]byte, n)
	if err := ReadFull(r, buf, off); err != nil {
		return nil, err
	}
	return buf, nil
}

// CheckRead is ReadAt's check, for a caller that reads the range in
// pieces: [off, off+n) must lie inside [0, size) and n must not exceed
// max (when max > 0).
func CheckRead(size, off, n, max int64) error {
	if err := Check(size, off, n); err != nil {
		return err
	}
	if max > 0 && n > max {
		return fmt.Errorf("%w: %d bytes requested, limit %d", ErrRange, n, max)
	}
	return nil
}

// ReadFull fills p from off; a short read is io.ErrUnexpectedEOF.
func ReadFull(r io.ReaderAt, p []byte, off int64) error {
	if len(p) == 0 {
		return nil
	}
	got, err := r.ReadAt(p, off)
	if got == len(p) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("read %d bytes at 0x%x: %w", len(p), off, err)
}

// Check reports whether [off, off+n) lies inside [0, size).
func Check(size, off, n int64) error {
	if off < 0 || n < 0 || off > size || n > size-off {
		return fmt.Errorf("%w: [0x%x, +0x%x) of %d bytes", ErrRange, off, n, size)
	}
	return nil
}

// Size returns the size of r when it can be learned without reading it:
// from a Size method (io.SectionReader, bytes.Reader, strings.Reader) or a
// Stat method (os.File).
func Size(r io.ReaderAt) (int64, bool) {
	type sizer interface{ Size() int64 }
	if s, ok := r.(sizer); ok {
		return s.Size(), true
	}
	if f, ok := r.(interface {
		Seek(int64, int) (int64, error)
	}); ok {
		cur, err := f.Seek(0, io.SeekCurrent)
		if err != nil {
			return 0, false
		}
		end, err := f.Seek(0, io.SeekEnd)
		if err != nil {
			return 0, false
		}
		if _, err := f.Seek(cur, io.SeekStart); err != nil {
			return 0, false
		}
		return end, true
	}
	return 0, false
}

// CString returns the NUL-terminated string starting at off in b, or ok=false
// when off is out of range or no terminator follows.
func CString(b []byte, off uint64) (string, bool) {
	c, ok := CBytes(b, off)
	return string(c), ok
}

// CBytes is CString without the copy: the NUL-terminated bytes at off as a
// slice of b.
func CBytes(b []byte, off uint64) ([]byte, bool) {
	if off >= uint64(len(b)) {
		return nil, false
	}
	if i := bytes.IndexByte(b[off:], 0); i >= 0 {
		return b[off : off+uint64(i)], true
	}
	return nil, false
}
