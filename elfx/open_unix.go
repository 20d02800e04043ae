//go:build unix

package elfx

import (
	"os"
	"syscall"
)

// OpenRead opens path for reading as os.Open does, without registering
// the descriptor with the runtime's poller: a regular file never blocks,
// and os.Open spends three extra system calls per file finding that out
// (epoll_ctl, two fcntl), which a scan of a few thousand libraries feels.
func OpenRead(path string) (*os.File, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		switch err {
		case nil:
			return os.NewFile(uintptr(fd), path), nil
		case syscall.EINTR:
			continue
		}
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
}
