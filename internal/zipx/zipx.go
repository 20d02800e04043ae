// Package zipx holds what the wheel readers share about zip members.
package zipx

import (
	"archive/zip"
	"fmt"
)

// CheckMethod refuses a member compressed with anything but deflate or
// store, naming the method: wheels use only those, and archive/zip's
// "unsupported compression algorithm" says neither which nor why.
func CheckMethod(zf *zip.File) error {
	if zf.Method == zip.Store || zf.Method == zip.Deflate {
		return nil
	}
	return fmt.Errorf("compressed with %s; a wheel's members are stored or deflated (the zip format wheels use)", methodName(zf.Method))
}

func methodName(m uint16) string {
	switch m {
	case 12:
		return "bzip2 (method 12)"
	case 14:
		return "LZMA (method 14)"
	case 93:
		return "Zstandard (method 93)"
	case 95:
		return "XZ (method 95)"
	}
	return fmt.Sprintf("compression method %d", m)
}
