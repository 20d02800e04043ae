package wheel

import "os"

// SetSync replaces the fsync of the output wheel and the size from which
// the copied entries are fsynced early, until the returned func is called.
func SetSync(sync func(*os.File) error, early int64) (restore func()) {
	oldSync, oldMin := syncFile, earlyFlushMin
	syncFile, earlyFlushMin = sync, early
	return func() { syncFile, earlyFlushMin = oldSync, oldMin }
}

// SetOutputBase makes relinked wheels begin n bytes into their file (a
// hole before them), until the returned func is called.
func SetOutputBase(n int64) (restore func()) {
	old := outputBase
	outputBase = n
	return func() { outputBase = old }
}

// SetFreeSpace replaces how the free space where libraries are staged is
// read, until the returned func is called.
func SetFreeSpace(free func(dir string) (uint64, bool)) (restore func()) {
	old := freeSpace
	freeSpace = free
	return func() { freeSpace = old }
}
