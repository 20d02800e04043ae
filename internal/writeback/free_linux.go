//go:build linux

package writeback

import "syscall"

// Free reports the bytes an unprivileged writer may still use on the file
// system holding dir (statfs: available blocks times the block size), and
// whether it could tell.
func Free(dir string) (uint64, bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil || st.Bsize <= 0 {
		return 0, false
	}
	return st.Bavail * uint64(st.Bsize), true
}
