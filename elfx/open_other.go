//go:build !unix

package elfx

import "os"

// OpenRead is os.Open here.
func OpenRead(path string) (*os.File, error) { return os.Open(path) }
