// Package walk walks a directory tree the way a user naming it expects:
// like filepath.WalkDir, except that a root that is a symbolic link to a
// directory is followed (as find -H does). ROCm installs /opt/rocm as a
// link to /opt/rocm-6.x; filepath.WalkDir visits such a root as a link and
// lists nothing under it.
package walk

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Dir is filepath.WalkDir(root, fn) with root followed when it is a
// symbolic link to a directory. Paths handed to fn start with root as
// given; links below root are not followed.
func Dir(root string, fn fs.WalkDirFunc) error {
	real := followedRoot(root)
	if real == "" {
		return filepath.WalkDir(root, fn)
	}
	return filepath.WalkDir(real, func(p string, d fs.DirEntry, err error) error {
		if rest, ok := strings.CutPrefix(p, real); ok {
			p = root + rest
		}
		return fn(p, d, err)
	})
}

// followedRoot is where root leads when it is a symbolic link to a
// directory, "" otherwise.
func followedRoot(root string) string {
	fi, err := os.Lstat(root)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return ""
	}
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return ""
	}
	if st, err := os.Stat(real); err != nil || !st.IsDir() {
		return ""
	}
	return real
}
