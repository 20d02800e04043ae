//go:build !amd64

package rpath

// readHostCPU: the hwcaps subdirectories are x86-64's; elsewhere there are
// none to choose.
func readHostCPU() (cpuID, bool) { return cpuID{}, false }
