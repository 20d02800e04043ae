//go:build linux

package elfx

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/rocmdoctor/rocmdoctor/internal/regfile"
)

// handle is a read-only descriptor used without an os.File: os.NewFile
// asks the kernel whether the descriptor is non-blocking (an fcntl per
// file), and a scan of a few thousand libraries feels every system call.
type handle struct {
	fd   int
	name string
}

// openHandle opens path without blocking (a named pipe is refused by the
// caller once it has looked at what it opened).
func openHandle(path string) (*handle, error) {
	fd, err := regfile.OpenFD(path)
	if err != nil {
		return nil, err
	}
	return &handle{fd: fd, name: path}, nil
}

// ReadAt reads len(p) bytes at off, as os.File.ReadAt does: a short read
// ends with io.EOF.
func (h *handle) ReadAt(p []byte, off int64) (int, error) {
	if h.fd < 0 {
		return 0, os.ErrClosed
	}
	if off < 0 {
		return 0, &os.PathError{Op: "readat", Path: h.name, Err: syscall.EINVAL}
	}
	n := 0
	for n < len(p) {
		m, err := syscall.Pread(h.fd, p[n:], off+int64(n))
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return n, &os.PathError{Op: "read", Path: h.name, Err: err}
		}
		if m == 0 {
			return n, io.EOF
		}
		n += m
	}
	return n, nil
}

func (h *handle) Close() error {
	if h.fd < 0 {
		return os.ErrClosed
	}
	err := syscall.Close(h.fd)
	h.fd = -1
	if err != nil {
		return &os.PathError{Op: "close", Path: h.name, Err: err}
	}
	return nil
}

func (h *handle) descriptor() uintptr { return uintptr(h.fd) }

func (h *handle) stat() (os.FileInfo, error) {
	fi := &fileStat{name: filepath.Base(h.name)}
	if err := regfile.Fstat(h.fd, &fi.sys, h.name); err != nil {
		return nil, err
	}
	return fi, nil
}

// fileStat is the os.FileInfo of an fstat, with the same Sys value as
// os.File.Stat's (*syscall.Stat_t).
type fileStat struct {
	name string
	sys  syscall.Stat_t
}

func (fs *fileStat) Name() string       { return fs.name }
func (fs *fileStat) Size() int64        { return fs.sys.Size }
func (fs *fileStat) ModTime() time.Time { return time.Unix(fs.sys.Mtim.Unix()) }
func (fs *fileStat) IsDir() bool        { return fs.Mode().IsDir() }
func (fs *fileStat) Sys() any           { return &fs.sys }

func (fs *fileStat) Mode() fs.FileMode { return regfile.Mode(fs.sys.Mode) }
