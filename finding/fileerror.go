package finding

import (
	"fmt"
	"io/fs"
	"strings"
)

// FileError is an input that could not be checked.
type FileError struct {
	Path  string `json:"path"`
	Error string `json:"error"` // begins with the path (or PATH!/member)
}

// FileErrorOf is the FileError for path: err's text beginning with the
// path once ("stat PATH: no such file or directory" becomes "PATH: no
// such file or directory").
func FileErrorOf(path string, err error) FileError {
	return FileError{Path: path, Error: PathErr(path, err).Error()}
}

// memberSep is zipx.MemberSep, the separator of WHEEL!/MEMBER (a test
// holds them equal; this package imports none of ours).
const memberSep = "!/"

// PathErr is err beginning with path once: an *fs.PathError about path
// itself loses its operation ("stat PATH: x" becomes "PATH: x"); an error
// that names the path, or a member of it (PATH!/member), already is kept.
func PathErr(path string, err error) error {
	if pe, ok := err.(*fs.PathError); ok && pe.Path == path {
		return fmt.Errorf("%s: %w", path, pe.Err)
	}
	if msg := err.Error(); strings.HasPrefix(msg, path+": ") || strings.HasPrefix(msg, path+memberSep) {
		return err
	}
	return fmt.Errorf("%s: %w", path, err)
}
