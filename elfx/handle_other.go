//go:build !linux

package elfx

import (
	"os"

	"github.com/rocmdoctor/rocmdoctor/internal/regfile"
)

// handle is an os.File here (see handle_linux.go).
type handle struct{ *os.File }

func openHandle(path string) (*handle, error) {
	fh, err := regfile.Open(path)
	if err != nil {
		return nil, err
	}
	return &handle{fh}, nil
}

func (h *handle) descriptor() uintptr        { return h.Fd() }
func (h *handle) stat() (os.FileInfo, error) { return h.Stat() }
