//go:build linux && (amd64 || arm64 || ppc64le || ppc64 || s390x || riscv64 || loong64 || mips64 || mips64le)

package dcopy

import (
	"os"
	"strconv"
	"syscall"

	"github.com/rocmdoctor/rocmdoctor/internal/mapfile"
)

type linuxDirect struct {
	src  uintptr // the source's descriptor
	size int64   // and size
	fd   int     // the destination, opened again with O_DIRECT
}

// chunk is how much of the source is mapped and written at a time: the
// pages the kernel takes from the mapping count in the process's RSS
// while it is mapped, so the source is not mapped whole.
const chunk = 16 << 20

func openDirect(src, dst *os.File) direct {
	st, err := src.Stat()
	if err != nil || st.Size() < 2*Align || inMemory(dst) {
		return nil
	}
	// Mapping must work here (not on 32-bit hosts).
	probe, err := mapfile.MapRange(src.Fd(), 0, Align)
	if err != nil {
		return nil
	}
	mapfile.Unmap(probe)
	// Through /proc/self/fd: an unnamed (O_TMPFILE) file has no name.
	fd, err := syscall.Open("/proc/self/fd/"+strconv.Itoa(int(dst.Fd())), syscall.O_WRONLY|syscall.O_DIRECT|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	// The same file as dst, not one renamed over it since.
	var a, b syscall.Stat_t
	if syscall.Fstat(fd, &a) != nil || syscall.Fstat(int(dst.Fd()), &b) != nil || a.Dev != b.Dev || a.Ino != b.Ino {
		syscall.Close(fd)
		return nil
	}
	return &linuxDirect{src: src.Fd(), size: st.Size(), fd: fd}
}

func (d *linuxDirect) write(dstOff, srcOff, n int64) (int64, error) {
	if srcOff < 0 || n < 0 || srcOff+n > d.size {
		return 0, syscall.EINVAL
	}
	page := int64(os.Getpagesize())
	var done int64
	for done < n {
		k := min(n-done, chunk)
		// The mapping begins on a page; the data within it is aligned
		// (srcOff+done agrees with an aligned dstOff+done).
		from := srcOff + done
		base := from / page * page
		m, err := mapfile.MapRange(d.src, base, from-base+k)
		if err != nil {
			return done, err
		}
		w, err := syscall.Pwrite(d.fd, m[from-base:from-base+k], dstOff+done)
		mapfile.Unmap(m)
		if w > 0 {
			done += int64(w) / Align * Align // a partial block is written again
		}
		if err != nil {
			return done, err
		}
		if int64(w) < k {
			return done, syscall.EIO // short: the rest the ordinary way
		}
	}
	return done, nil
}

func (d *linuxDirect) close() { syscall.Close(d.fd) }

// The file systems whose files live in memory: tmpfs and ramfs (statfs
// f_type values, linux/magic.h).
const (
	tmpfsMagic = 0x01021994
	ramfsMagic = 0x858458f6
)

// inMemory reports whether f is on a file system kept in memory. Such
// file systems accept O_DIRECT (tmpfs since Linux 6.6) but write through
// the page cache all the same, so a direct write from the source's
// mapping only adds page faults to the copy: copy_file_range, which
// copies page cache to page cache, is cheaper there.
func inMemory(f *os.File) bool {
	var st syscall.Statfs_t
	if syscall.Fstatfs(int(f.Fd()), &st) != nil {
		return false
	}
	return uint32(st.Type) == tmpfsMagic || uint32(st.Type) == ramfsMagic
}
