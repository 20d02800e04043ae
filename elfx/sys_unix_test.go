//go:build unix

package elfx_test

import (
	"os"
	"syscall"
)

// sameSys: a's Sys is a *syscall.Stat_t of the same inode as b's.
func sameSys(a, b os.FileInfo) bool {
	sa, ok := a.Sys().(*syscall.Stat_t)
	sb, ok2 := b.Sys().(*syscall.Stat_t)
	return ok && ok2 && sa.Ino == sb.Ino && sa.Dev == sb.Dev
}
