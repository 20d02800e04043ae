// Package zipx holds what the wheel readers share about zip members.
package zipx

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/rocmdoctor/rocmdoctor/internal/inflate"
	"github.com/rocmdoctor/rocmdoctor/internal/regfile"
)

// MemberSep separates a wheel's path from a member's name where the
// commands name a member: WHEEL!/MEMBER, the form of Java's jar: URLs.
const MemberSep = "!/"

// MemberPath names member name of the zip file at path (see MemberSep).
func MemberPath(path, name string) string { return path + MemberSep + name }

// OpenFile opens the zip file (a wheel) at path once for both its
// directory and its members' raw data; errors name the path.
func OpenFile(path string) (*os.File, *zip.Reader, error) {
	raw, err := regfile.Open(path)
	if err != nil {
		return nil, nil, err
	}
	st, err := raw.Stat()
	if err == nil {
		var zr *zip.Reader
		if zr, err = zip.NewReader(raw, st.Size()); err == nil {
			return raw, zr, nil
		}
	}
	raw.Close()
	return nil, nil, fmt.Errorf("%s: %w", path, err)
}

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

// Head reads the first n bytes of member zf (fewer when it is shorter):
// enough to tell what it is without extracting it. Data that does not
// decode, or a short member whose CRC-32 does not match, is an error.
func Head(zf *zip.File, n int) ([]byte, error) {
	rc, err := Open(zf)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b := make([]byte, n)
	k, err := io.ReadFull(rc, b)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return nil, err
	}
	return b[:k], nil
}

// Extract writes member zf of the archive raw to w: a deflated one through
// Inflate (its block index is returned), a stored one as archive/zip
// reads it (it checks the size and CRC-32 at the end; the index is nil).
func Extract(w io.Writer, raw io.ReaderAt, zf *zip.File) (*inflate.Index, error) {
	if zf.Method == zip.Deflate {
		return Inflate(w, raw, zf)
	}
	rc, err := Open(zf)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	_, err = io.Copy(w, rc)
	return nil, err
}

// Inflate writes deflated member zf of the archive raw to w through our
// decoder (internal/inflate: about twice archive/zip's speed, and the
// index of the stream's blocks, which a relink splices) and checks the
// size and CRC-32 the member declares, as archive/zip does; more bytes
// than declared are refused before they are written, so a member cannot
// fill the disk or the memory by lying about its size.
func Inflate(w io.Writer, raw io.ReaderAt, zf *zip.File) (*inflate.Index, error) {
	off, err := DataOffset(zf)
	if err != nil {
		return nil, err
	}
	// The decoder writes its output buffer a few MB at a time: no
	// buffering is needed on top.
	lw := &limitWriter{w: w, left: int64(zf.UncompressedSize64)}
	n := int64(zf.CompressedSize64)
	idx, err := inflate.Decode(lw, io.NewSectionReader(raw, off, n), n)
	if err != nil {
		return nil, err
	}
	// The CRC is combined from the blocks' own, which the decoder keeps
	// for splicing: the data is not summed a second time.
	if uint64(idx.Size) != zf.UncompressedSize64 || idx.CRC() != zf.CRC32 {
		return nil, fmt.Errorf("the data does not match the size and CRC-32 recorded for it (%w)", zip.ErrChecksum)
	}
	return idx, nil
}

// limitWriter fails once more than left bytes arrive.
type limitWriter struct {
	w    io.Writer
	left int64
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if int64(len(p)) > l.left {
		return 0, errTooLarge
	}
	l.left -= int64(len(p))
	return l.w.Write(p)
}

var errTooLarge = errors.New("inflates to more than the size its header declares")
