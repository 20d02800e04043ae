//go:build linux

package writeback

import (
	"os"
	"syscall"
)

// Reserve allocates the first n bytes of the new file f on disk and sets
// its size to n (fallocate), best effort: a file written after that costs
// the file system less than one that grows page by page (ext4 takes its
// blocks in one go instead of reserving them for every page written:
// docs/performance.md). A writer that ends
// short of n truncates the file to what it wrote.
func Reserve(f *os.File, n int64) {
	if n > 0 {
		_ = syscall.Fallocate(int(f.Fd()), 0, 0, n)
	}
}

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
