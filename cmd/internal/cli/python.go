package cli

import (
	"os"

	"github.com/rocmdoctor/rocmdoctor/wheel"
)

// DefaultPython is the interpreter extension modules are bound against
// when --python is not given (wheel.DefaultPython, over $PATH); what it
// passed over is a warning when io is not nil.
func DefaultPython(io *IOStreams, wheelFile string) string {
	py, note := wheel.DefaultPython(wheelFile, os.Getenv("PATH"))
	if note != "" && io != nil {
		io.Warn(note)
	}
	return py
}
