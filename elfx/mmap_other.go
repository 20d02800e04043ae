//go:build !(unix && (amd64 || arm64 || ppc64le || ppc64 || s390x || riscv64 || loong64 || mips64 || mips64le))

package elfx

import "errors"

// mapFile is unavailable here; tables are read with pread instead.
func mapFile(uintptr, int64) ([]byte, error) { return nil, errors.ErrUnsupported }

func unmapFile([]byte) {}
