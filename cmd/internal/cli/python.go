package cli

import (
	"fmt"
	goio "io"
	"os"
	"os/exec"
	"path/filepath"
)

// DefaultPython is python3 on PATH when it is an ELF program (a pyenv or
// asdf shim is a script: then none, with a warning to name one when io is
// not nil).
func DefaultPython(io *IOStreams) string {
	py, err := exec.LookPath("python3")
	if err != nil {
		return ""
	}
	real, err := filepath.EvalSymlinks(py)
	if err == nil {
		var magic [4]byte
		if f, oerr := os.Open(real); oerr == nil {
			_, err = goio.ReadFull(f, magic[:])
			f.Close()
			if err == nil && string(magic[:]) == "\x7fELF" {
				return real
			}
		}
	}
	if io == nil {
		return ""
	}
	io.Warn(fmt.Sprintf("python3 on PATH (%s) is not an ELF program (a version manager's shim?): extension modules are not bound against an interpreter; give --python PATH", py))
	return ""
}
