//go:build linux

package elfx

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// handle is a read-only descriptor used without an os.File: os.NewFile
// asks the kernel whether the descriptor is non-blocking (an fcntl per
// file), and a scan of a few thousand libraries feels every system call.
type handle struct {
	fd   int
	name string
}

func openHandle(path string) (*handle, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		switch err {
		case nil:
			return &handle{fd: fd, name: path}, nil
		case syscall.EINTR:
			continue
		}
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
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
	for {
		err := syscall.Fstat(h.fd, &fi.sys)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "stat", Path: h.name, Err: err}
		}
		return fi, nil
	}
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

// Mode converts st_mode as os does (os/stat_linux.go).
func (fs *fileStat) Mode() fs.FileMode {
	m := fs.sys.Mode
	mode := os.FileMode(m & 0o777)
	switch m & syscall.S_IFMT {
	case syscall.S_IFBLK:
		mode |= os.ModeDevice
	case syscall.S_IFCHR:
		mode |= os.ModeDevice | os.ModeCharDevice
	case syscall.S_IFDIR:
		mode |= os.ModeDir
	case syscall.S_IFIFO:
		mode |= os.ModeNamedPipe
	case syscall.S_IFLNK:
		mode |= os.ModeSymlink
	case syscall.S_IFSOCK:
		mode |= os.ModeSocket
	}
	if m&syscall.S_ISGID != 0 {
		mode |= os.ModeSetgid
	}
	if m&syscall.S_ISUID != 0 {
		mode |= os.ModeSetuid
	}
	if m&syscall.S_ISVTX != 0 {
		mode |= os.ModeSticky
	}
	return mode
}
