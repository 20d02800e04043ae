// Package zipx holds what the wheel readers share about zip members.
package zipx

import (
	"archive/zip"
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

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
			if name, err := Check(raw, st.Size(), zr); err != nil {
				raw.Close()
				return nil, nil, fmt.Errorf("%s: %w", MemberPath(path, name), err)
			}
			return raw, zr, nil
		}
	}
	raw.Close()
	return nil, nil, fmt.Errorf("%s: %w", path, err)
}

// Check verifies that every member's local header and data lie inside the
// archive, before its central directory, and that no two members share
// bytes (unzip -t's "overlapped components"): archive/zip reads the
// central directory only, and a damaged local header (an extra-field
// length of 0xffff) reads as a member that ends early. It returns the
// name of the first bad member.
func Check(raw io.ReaderAt, size int64, zr *zip.Reader) (string, error) {
	cd := centralDirOffset(raw, size)
	type span struct {
		from, to int64
		name     string
	}
	spans := make([]span, 0, len(zr.File))
	for _, zf := range zr.File {
		off, err := DataOffset(zf)
		if err != nil {
			return zf.Name, err
		}
		head := off - 30 - int64(len(zf.Name)) // the header's fixed part and name, at least
		if zf.CompressedSize64 > uint64(cd) || off > cd-int64(zf.CompressedSize64) || head < 0 {
			return zf.Name, fmt.Errorf("%w: its data (0x%x bytes at 0x%x, after its local header) runs past the central directory at 0x%x: the local header is damaged",
				zip.ErrFormat, zf.CompressedSize64, off, cd)
		}
		spans = append(spans, span{head, off + int64(zf.CompressedSize64), zf.Name})
	}
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.from, b.from) })
	for i := 1; i < len(spans); i++ {
		if a, b := spans[i-1], spans[i]; b.from < a.to {
			return b.name, fmt.Errorf("%w: it overlaps member %s (0x%x-0x%x and 0x%x-0x%x)", zip.ErrFormat, a.name, a.from, a.to, b.from, b.to)
		}
	}
	return "", nil
}

// centralDirOffset reads where the central directory starts from the end
// of central directory record (or its zip64 form); the file's size where
// it cannot (archive/zip has read the directory already).
func centralDirOffset(raw io.ReaderAt, size int64) int64 {
	n := min(size, 22+65535)
	b := make([]byte, n)
	if _, err := raw.ReadAt(b, size-n); err != nil && err != io.EOF {
		return size
	}
	i := bytes.LastIndex(b, []byte("PK\x05\x06"))
	if i < 0 || len(b)-i < 22 {
		return size
	}
	off := int64(binary.LittleEndian.Uint32(b[i+16:]))
	if off == 0xffffffff && i >= 20 && string(b[i-20:i-16]) == "PK\x06\x07" {
		var z [56]byte
		at := int64(binary.LittleEndian.Uint64(b[i-12:]))
		if at < 0 || at > size-56 {
			return size
		}
		if _, err := raw.ReadAt(z[:], at); err != nil || string(z[:4]) != "PK\x06\x06" {
			return size
		}
		off = int64(binary.LittleEndian.Uint64(z[48:]))
	}
	if off < 0 || off > size {
		return size
	}
	return off
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

// NameProblem says what is wrong with a member's name or kind for pip,
// "" when nothing is; refused tells whether pip refuses to install the
// wheel because of it (a name that is absolute or climbs out of the
// install directory: "trying to install outside the target directory")
// rather than installing something other than what the name says (a
// backslash is part of a file name on Linux; a symbolic-link entry is
// installed as a regular file holding the link's text).
func NameProblem(zf *zip.File) (problem string, refused bool) {
	name := zf.Name
	switch {
	case strings.HasPrefix(name, "/"):
		return "an absolute name: pip refuses to install the wheel (a file outside the target directory)", true
	case escapes(name):
		return "a name whose '..' leads out of the install directory: pip refuses to install the wheel", true
	case strings.Contains(name, `\`):
		return `a backslash in the name: on Linux it is part of the file name, so pip installs one file named with it, not a file in a subdirectory`, false
	case zf.CreatorVersion>>8 == 3 && zf.ExternalAttrs>>16&0o170000 == 0o120000:
		return "a symbolic-link entry: pip installs it as a regular file holding the link's target name, so loading it fails", false
	}
	return "", false
}

// escapes reports whether a relative slash-separated name climbs above
// its root.
func escapes(name string) bool {
	depth := 0
	for _, el := range strings.Split(name, "/") {
		switch el {
		case "", ".":
		case "..":
			if depth--; depth < 0 {
				return true
			}
		default:
			depth++
		}
	}
	return false
}
