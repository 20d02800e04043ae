package safefile

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

func openUnnamed(dir string) (*os.File, error) {
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), dir), nil
}

// linkUnnamed gives an O_TMPFILE file a random name matching pattern in
// dir (through /proc/self/fd, which needs no privilege, unlike
// AT_EMPTY_PATH).
func linkUnnamed(f *os.File, dir, pattern string) (string, error) {
	src := "/proc/self/fd/" + strconv.Itoa(int(f.Fd()))
	for range 100 {
		name := filepath.Join(dir, strings.Replace(pattern, "*", strconv.FormatUint(rand.Uint64()%1e10, 10), 1))
		err := unix.Linkat(unix.AT_FDCWD, src, unix.AT_FDCWD, name, unix.AT_SYMLINK_FOLLOW)
		if err == nil {
			return name, nil
		}
		if !errors.Is(err, unix.EEXIST) {
			return "", &os.LinkError{Op: "link", Old: src, New: name, Err: err}
		}
	}
	return "", fmt.Errorf("linking a temporary in %s: no free name", dir)
}

// lockFile takes an exclusive flock on f, waiting for it when wait is set.
func lockFile(f *os.File, wait bool) error {
	how := unix.LOCK_EX
	if !wait {
		how |= unix.LOCK_NB
	}
	for {
		err := unix.Flock(int(f.Fd()), how)
		if err != unix.EINTR {
			return err
		}
	}
}

// lockShared takes a shared flock on f, waiting for it.
func lockShared(f *os.File) error {
	for {
		if err := unix.Flock(int(f.Fd()), unix.LOCK_SH); err != unix.EINTR {
			return err
		}
	}
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// CopyMeta gives the temporary the owner, group, extended attributes and
// mode (setuid, setgid and sticky bits included) of st, the file at src:
// owner first (chown clears the setuid bits), attributes (ACLs are
// system.posix_acl_* attributes), then the mode. It returns an error
// wrapping ErrNotPreserved when the owner or an attribute cannot be set.
func (t *Temp) CopyMeta(src string, st os.FileInfo) error {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return t.Chmod(st.Mode().Perm())
	}
	fd := int(t.Fd())
	if err := unix.Fchown(fd, int(sys.Uid), int(sys.Gid)); err != nil {
		return fmt.Errorf("%w: %s is owned by %d:%d (%v)", ErrNotPreserved, src, sys.Uid, sys.Gid, err)
	}
	if err := copyXattrs(src, fd); err != nil {
		return err
	}
	return unix.Fchmod(fd, sys.Mode&0o7777)
}

func copyXattrs(src string, fd int) error {
	names, err := listXattrs(src)
	if err != nil {
		if errors.Is(err, unix.ENOTSUP) {
			return nil
		}
		return fmt.Errorf("%w: extended attributes of %s: %v", ErrNotPreserved, src, err)
	}
	for _, name := range names {
		v, err := getXattr(src, name)
		if err == nil {
			err = unix.Fsetxattr(fd, name, v, 0)
		}
		if err != nil {
			return fmt.Errorf("%w: extended attribute %s of %s: %v", ErrNotPreserved, name, src, err)
		}
	}
	return nil
}

func listXattrs(path string) ([]string, error) {
	n, err := unix.Listxattr(path, nil)
	if err != nil || n == 0 {
		return nil, err
	}
	b := make([]byte, n)
	if n, err = unix.Listxattr(path, b); err != nil {
		return nil, err
	}
	var names []string
	for _, s := range strings.Split(string(b[:n]), "\x00") {
		if s != "" {
			names = append(names, s)
		}
	}
	return names, nil
}

func getXattr(path, name string) ([]byte, error) {
	n, err := unix.Getxattr(path, name, nil)
	if err != nil {
		return nil, err
	}
	b := make([]byte, n)
	n, err = unix.Getxattr(path, name, b)
	return b[:n], err
}

// reserve allocates [off, off+n) of f without changing its size, so a full
// file system is found before any byte is written. A file system that
// cannot reserve (EOPNOTSUPP) is not an error.
func reserve(f *os.File, off, n int64) error {
	if n <= 0 {
		return nil
	}
	for {
		err := unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_KEEP_SIZE, off, n)
		switch {
		case err == unix.EINTR:
			continue
		case err == nil, errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.ENOSYS):
			return nil
		}
		return &os.PathError{Op: "fallocate", Path: f.Name(), Err: err}
	}
}

// identity is what tells a file from another that later got its inode:
// device, inode, birth time and the inode's generation (a random number
// ext4, XFS and tmpfs give each new inode; birth times can be a clock tick
// apart). 0 where the file system has none.
type identity struct {
	Dev, Ino, Birth uint64
	Gen             uint32
}

// fsIocGetversion is FS_IOC_GETVERSION, _IOR('v', 1, long).
const fsIocGetversion = 0x80007601 | uint(unsafe.Sizeof(uintptr(0)))<<16

func identify(f *os.File) (identity, error) {
	var sx unix.Statx_t
	err := unix.Statx(int(f.Fd()), "", unix.AT_EMPTY_PATH, unix.STATX_INO|unix.STATX_BTIME, &sx)
	if err != nil {
		return identity{}, err
	}
	id := identity{Dev: unix.Mkdev(sx.Dev_major, sx.Dev_minor), Ino: sx.Ino}
	if sx.Mask&unix.STATX_BTIME != 0 {
		id.Birth = uint64(sx.Btime.Sec)*1e9 + uint64(sx.Btime.Nsec)
	}
	if g, err := unix.IoctlGetUint32(int(f.Fd()), fsIocGetversion); err == nil {
		id.Gen = g
	}
	return id, nil
}

// links is the number of names f has.
func links(st os.FileInfo) uint64 {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(sys.Nlink)
	}
	return 1
}

func ownedByMe(st os.FileInfo) bool {
	sys, ok := st.Sys().(*syscall.Stat_t)
	return ok && int(sys.Uid) == os.Geteuid()
}
