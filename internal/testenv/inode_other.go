//go:build !unix

package testenv

import "os"

func inode(os.FileInfo) ([2]uint64, bool) { return [2]uint64{}, false }
