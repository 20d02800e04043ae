// Package regfile opens the files rocmdoctor reads as regular files only,
// without ever blocking: a named pipe, a socket or a device given where a
// library, a wheel or a CMake file is expected is refused with an error
// that says what it is, instead of an open that waits for a writer for
// ever.
package regfile

import (
	"fmt"
	"io"
	"io/fs"
)

// NotRegular is the error for a path that names something other than a
// regular file: what it is, in words.
func NotRegular(path string, mode fs.FileMode) error {
	what := "not a regular file"
	switch {
	case mode.IsDir():
		what = "a directory, not a regular file"
	case mode&fs.ModeNamedPipe != 0:
		what = "a named pipe, not a regular file"
	case mode&fs.ModeSocket != 0:
		what = "a socket, not a regular file"
	case mode&fs.ModeDevice != 0:
		what = "a device, not a regular file"
	}
	return fmt.Errorf("%s: %s", path, what)
}

// ReadFile is os.ReadFile for a regular file.
func ReadFile(path string) ([]byte, error) { return ReadFileMax(path, -1) }

// ReadFileMax is ReadFile for a file of at most max bytes (no limit when
// max is negative): a larger one is refused before it is read, so that a
// multi-gigabyte file given where a text file belongs costs nothing.
func ReadFileMax(path string, max int64) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if max >= 0 && st.Size() > max {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d expected of it", path, st.Size(), max)
	}
	var r io.Reader = f
	if max >= 0 {
		r = io.LimitReader(f, max+1) // a file that grew since the stat
	}
	b, err := readAll(r, st.Size())
	if err == nil && max >= 0 && int64(len(b)) > max {
		err = fmt.Errorf("%s: more than the %d bytes expected of it", path, max)
	}
	if err != nil {
		return nil, err
	}
	return b, nil
}

// readAll is io.ReadAll into a buffer of the size the file had when it was
// stat'ed (one byte more, to see the end), as os.ReadFile does, instead of
// growing one from 512 bytes; a file that reports no size (in /proc) or
// grew is read on as io.ReadAll would.
func readAll(r io.Reader, size int64) ([]byte, error) {
	n := 512
	if size > 0 && size < 1<<30 {
		n = int(size) + 1
	}
	b := make([]byte, 0, n)
	for {
		m, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+m]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
}
