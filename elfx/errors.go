package elfx

import (
	"errors"
	"fmt"
)

// FormatError reports malformed input. Offset is the file offset of the
// offending structure, or -1 when no single offset applies.
type FormatError struct {
	Path   string // file name, or "" when reading from an io.ReaderAt without a name
	Offset int64
	What   string // the structure that is wrong, e.g. "dynamic section"
	Err    error  // underlying cause, may be nil
}

func (e *FormatError) Error() string {
	name := e.Path
	if name == "" {
		name = "<input>"
	}
	msg := e.What
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	if e.Offset >= 0 {
		return fmt.Sprintf("%s: malformed file at offset 0x%x: %s", name, e.Offset, msg)
	}
	return fmt.Sprintf("%s: malformed file: %s", name, msg)
}

func (e *FormatError) Unwrap() error { return e.Err }

// Sentinel errors for absent structures. They are returned wrapped; test with
// errors.Is.
var (
	// ErrNotELF means the input does not start with the ELF magic.
	ErrNotELF = errors.New("not an ELF file")
	// ErrNotArchive means the input does not start with "!<arch>\n" or "!<thin>\n".
	ErrNotArchive = errors.New("not an ar archive")
	// ErrNoDynamic means the file has no dynamic section (static executable,
	// relocatable object).
	ErrNoDynamic = errors.New("no dynamic section")
)

func (f *File) formatErr(off int64, what string, err error) error {
	return &FormatError{Path: f.Path, Offset: off, What: what, Err: err}
}
