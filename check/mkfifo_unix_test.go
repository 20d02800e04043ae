//go:build unix

package check_test

import "syscall"

// havePipes: named pipes exist here, and making one must work.
const havePipes = true

func mkfifo(p string) error { return syscall.Mkfifo(p, 0o644) }
