//go:build !(linux && (amd64 || arm64 || ppc64le || ppc64 || s390x || riscv64 || loong64 || mips64 || mips64le))

package dcopy

import "os"

// openDirect: no direct I/O from a mapping here; ranges are copied the
// ordinary way.
func openDirect(src, dst *os.File) direct { return nil }
