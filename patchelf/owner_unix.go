//go:build unix

package patchelf

import (
	"os"
	"syscall"
)

// sameOwner gives f the owner and group of the file st describes, when it
// can (a user who is not root cannot give files away).
func sameOwner(f *os.File, st os.FileInfo) {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		_ = f.Chown(int(sys.Uid), int(sys.Gid))
	}
}
