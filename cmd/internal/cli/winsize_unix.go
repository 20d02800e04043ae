//go:build linux || darwin || freebsd || netbsd || openbsd

package cli

import (
	"syscall"
	"unsafe"
)

// terminalWidth is the number of columns of the terminal on fd, 0 when
// it cannot be told.
func terminalWidth(fd uintptr) int {
	var ws struct{ Row, Col, X, Y uint16 }
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, fd, uintptr(syscall.TIOCGWINSZ), uintptr(unsafe.Pointer(&ws))); e != 0 {
		return 0
	}
	return int(ws.Col)
}
