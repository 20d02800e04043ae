//go:build unix

package regfile

import (
	"io/fs"
	"os"
	"syscall"
)

// Open opens path for reading as os.Open does, without registering the
// descriptor with the runtime's poller: a regular file never blocks, and
// os.Open spends three extra system calls per file finding that out
// (epoll_ctl, two fcntl), which a scan of a few thousand libraries feels.
// Anything but a regular file is refused.
func Open(path string) (*os.File, error) {
	fd, err := OpenFD(path)
	if err != nil {
		return nil, err
	}
	var st syscall.Stat_t
	if err := Fstat(fd, &st, path); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	if mode := Mode(uint32(st.Mode)); !mode.IsRegular() {
		syscall.Close(fd)
		return nil, NotRegular(path, mode)
	}
	// Back to blocking, so that os.NewFile treats the descriptor as
	// os.Open's own (O_RDONLY was the only other status flag).
	if _, _, e := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_SETFL, 0); e != 0 {
		syscall.Close(fd)
		return nil, &os.PathError{Op: "fcntl", Path: path, Err: e}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// OpenFD opens path read-only with O_NONBLOCK, which lets the open of a
// named pipe return at once instead of waiting for a writer (reads of a
// regular file ignore the flag). The caller checks what it opened; a
// socket, which cannot be opened at all, is refused here.
func OpenFD(path string) (int, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
		switch err {
		case nil:
			return fd, nil
		case syscall.EINTR:
			continue
		case syscall.ENXIO:
			// What open refuses this way is a socket (or a device without
			// its driver): say what the file is, as for a pipe or directory.
			var st syscall.Stat_t
			if syscall.Stat(path, &st) == nil {
				if mode := Mode(uint32(st.Mode)); !mode.IsRegular() {
					return -1, NotRegular(path, mode)
				}
			}
		}
		return -1, &os.PathError{Op: "open", Path: path, Err: err}
	}
}

// Fstat is syscall.Fstat, retried on EINTR, with path in its error.
func Fstat(fd int, st *syscall.Stat_t, path string) error {
	for {
		err := syscall.Fstat(fd, st)
		switch err {
		case nil:
			return nil
		case syscall.EINTR:
			continue
		}
		return &os.PathError{Op: "stat", Path: path, Err: err}
	}
}

// Mode converts st_mode as os does (os/stat_linux.go).
func Mode(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	switch m & syscall.S_IFMT {
	case syscall.S_IFBLK:
		mode |= fs.ModeDevice
	case syscall.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFDIR:
		mode |= fs.ModeDir
	case syscall.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case syscall.S_IFLNK:
		mode |= fs.ModeSymlink
	case syscall.S_IFSOCK:
		mode |= fs.ModeSocket
	}
	if m&syscall.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if m&syscall.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if m&syscall.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}
