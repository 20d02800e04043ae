//go:build !(unix && (amd64 || arm64 || ppc64le || ppc64 || s390x || riscv64 || loong64 || mips64 || mips64le))

package mapfile

import "errors"

// Map is unavailable here: callers read instead.
func Map(uintptr, int64) ([]byte, error) { return nil, errors.ErrUnsupported }

// MapRange is unavailable here: callers read instead.
func MapRange(uintptr, int64, int64) ([]byte, error) { return nil, errors.ErrUnsupported }

// Unmap does nothing here.
func Unmap([]byte) {}
