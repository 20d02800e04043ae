//go:build unix

package elfx

import (
	"os"
	"syscall"
)

func idOf(fi os.FileInfo) FileID {
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		return FileID{uint64(sys.Dev), uint64(sys.Ino)}
	}
	return FileID{}
}
