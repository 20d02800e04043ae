// Package zipx holds what the wheel readers share about zip members.
package zipx

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"io/fs"
)

// CheckMethod refuses a member compressed with anything but deflate or
// store, naming the method: wheels use only those, and archive/zip's
// "unsupported compression algorithm" says neither which nor why.
func CheckMethod(zf *zip.File) error {
	if zf.Method == zip.Store || zf.Method == zip.Deflate {
		return nil
	}
	return fmt.Errorf("compressed with %s; a wheel's members are stored or deflated (the zip format wheels use)", methodName(zf.Method))
}

func methodName(m uint16) string {
	switch m {
	case 12:
		return "bzip2 (method 12)"
	case 14:
		return "LZMA (method 14)"
	case 93:
		return "Zstandard (method 93)"
	case 95:
		return "XZ (method 95)"
	}
	return fmt.Sprintf("compression method %d", m)
}

// DataOffset is zf.DataOffset with an error that says what is wrong when
// the central directory points outside the file (archive/zip passes on the
// reader's "readat PATH: negative offset", "invalid argument" or EOF) or
// where there is no local header ("zip: not a valid zip file").
func DataOffset(zf *zip.File) (int64, error) {
	off, err := zf.DataOffset()
	if err == nil {
		return off, nil
	}
	var pe *fs.PathError
	switch {
	case errors.As(err, &pe) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return 0, fmt.Errorf("%w: the central directory puts its local header outside the file", zip.ErrFormat)
	case errors.Is(err, zip.ErrFormat):
		return 0, fmt.Errorf("%w: no local header where the central directory puts it", zip.ErrFormat)
	}
	return 0, err
}

// Open opens a wheel's member for reading as zf.Open does, after
// CheckMethod; when the local header cannot be read, DataOffset says what
// is wrong in words.
func Open(zf *zip.File) (io.ReadCloser, error) {
	if err := CheckMethod(zf); err != nil {
		return nil, err
	}
	rc, err := zf.Open()
	if err != nil {
		if _, derr := DataOffset(zf); derr != nil {
			return nil, derr
		}
	}
	return rc, err
}
