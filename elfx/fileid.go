package elfx

import "os"

// FileID identifies a file by device and inode, so that two paths to one
// file (hard links, symbolic links, bind mounts) are recognised; zero when
// the platform does not say.
type FileID struct{ Dev, Ino uint64 }

// IDOf is the FileID of a file described by fi (from os.Stat, os.Lstat,
// File.FileInfo or Probe.Info).
func IDOf(fi os.FileInfo) FileID { return idOf(fi) }
