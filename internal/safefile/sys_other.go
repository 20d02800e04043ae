//go:build !linux

package safefile

import (
	"errors"
	"os"
)

var errUnsupported = errors.New("not supported here")

func openUnnamed(string) (*os.File, error) { return nil, errUnsupported }

func linkUnnamed(*os.File, string, string) (string, error) { return "", errUnsupported }

func lockFile(*os.File, bool) error { return nil }

func lockShared(*os.File) error { return nil }

func syncDir(string) {}

// CopyMeta gives the temporary the mode of st (owners and attributes are
// not reproduced on this system).
func (t *Temp) CopyMeta(_ string, st os.FileInfo) error { return t.Chmod(st.Mode()) }

func reserve(*os.File, int64, int64) error { return nil }

type identity struct {
	Dev, Ino, Birth uint64
	Gen             uint32
}

func identify(*os.File) (identity, error) { return identity{}, errUnsupported }

func links(os.FileInfo) uint64 { return 1 }

func ownedByMe(os.FileInfo) bool { return true }
