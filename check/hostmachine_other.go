//go:build !linux

package check

// kernelMachine is "" where uname is not read: the GOARCH of the build
// stands for the machine.
func kernelMachine() string { return "" }
