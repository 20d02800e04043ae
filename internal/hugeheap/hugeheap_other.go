//go:build !linux

package hugeheap

func prepare(int) bool { return false }
