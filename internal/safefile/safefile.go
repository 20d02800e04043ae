// Package safefile is the one place rocmdoctor writes a user's files
// (patchelf's edits, wheel relink's outputs and installed files).
//
// What it guarantees:
//   - A destination that is a symbolic link is written through to its
//     target; a character device or FIFO is written into, never replaced;
//     a directory or block device is refused.
//   - Replacing a file goes through a temporary in the same directory,
//     unnamed where the file system allows it (O_TMPFILE), so a killed
//     process leaves nothing behind; it is made durable, given the
//     original's owner, group, extended attributes (ACLs included) and mode
//     (setuid and setgid included, set after the owner), and renamed over
//     the destination. Where one of these cannot be reproduced (a caller
//     who is not root cannot give a file away), ErrNotPreserved says so
//     and the caller writes in place instead.
//   - Writing in place keeps the inode (and so every hard link): space is
//     reserved first, what the new headers point to is written and synced
//     before the headers, and an undo journal is kept until the edit is
//     durable. An error (ENOSPC included) restores the original bytes at
//     once; a killed edit is rolled back by the next run (Recover).
//   - Lock serialises edits of one file across processes.
package safefile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrNotPreserved is returned by Temp.CopyMeta when the temporary cannot
// be given the original's owner, group or extended attributes.
var ErrNotPreserved = errors.New("cannot preserve the file's owner or attributes in a new file")

// Kind is what a destination names once symbolic links are followed.
type Kind int

const (
	// Missing: nothing is there; a new regular file is created.
	Missing Kind = iota
	// Regular: an existing regular file.
	Regular
	// Stream: a character device or FIFO, written into in order.
	Stream
)

// Target is a destination path resolved.
type Target struct {
	Path string      // as the caller named it
	Real string      // with symbolic links followed
	Kind Kind        //
	Info os.FileInfo // nil when Kind is Missing
}

// maxLinks bounds the symbolic links followed, as the kernel does (40).
const maxLinks = 40

// Resolve follows path's symbolic links (a dangling one names the file it
// would create) and says what is there.
func Resolve(path string) (*Target, error) {
	real, err := follow(path)
	if err != nil {
		return nil, err
	}
	t := &Target{Path: path, Real: real}
	st, err := os.Stat(real)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return t, nil
	case err != nil:
		return nil, err
	}
	t.Info = st
	m := st.Mode()
	switch {
	case m.IsRegular():
		t.Kind = Regular
	case m&fs.ModeCharDevice != 0 || m&fs.ModeNamedPipe != 0:
		t.Kind = Stream
	case m.IsDir():
		return nil, &fs.PathError{Op: "write", Path: path, Err: errors.New("is a directory")}
	default:
		return nil, &fs.PathError{Op: "write", Path: path, Err: fmt.Errorf("not a regular file, character device or FIFO (%v): not written", m.Type())}
	}
	return t, nil
}

func follow(path string) (string, error) {
	p := path
	for range maxLinks {
		st, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return p, nil
		}
		if err != nil {
			return "", err
		}
		if st.Mode()&fs.ModeSymlink == 0 {
			return p, nil
		}
		link, err := os.Readlink(p)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(filepath.Dir(p), link)
		}
		p = link
	}
	return "", &fs.PathError{Op: "open", Path: path, Err: errors.New("too many levels of symbolic links")}
}

// WriteStream writes all of r into the device or FIFO t names, in order,
// without creating, truncating or replacing it.
func (t *Target) WriteStream(r io.Reader) error {
	f, err := os.OpenFile(t.Real, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", t.Path, err)
	}
	return f.Close()
}

// Temp is a temporary file that becomes a destination on Commit.
type Temp struct {
	*os.File
	dir   string
	base  string
	named string // its name, when it has one (no O_TMPFILE here)
}

// CreateTemp makes a temporary file in dir for a destination named base:
// unnamed where the file system supports O_TMPFILE; otherwise named
// ".base.rocmdoctor-*" and locked, so that Sweep tells a live one from one
// a killed process left.
func CreateTemp(dir, base string) (*Temp, error) {
	if f, err := openUnnamed(dir); err == nil {
		// Locked too: once Commit links it, Sweep must leave it be.
		if err := lockFile(f, true); err != nil {
			f.Close()
			return nil, err
		}
		return &Temp{File: f, dir: dir, base: base}, nil
	}
	f, err := os.CreateTemp(dir, tempPattern(base))
	if err != nil {
		return nil, err
	}
	if err := lockFile(f, true); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return &Temp{File: f, dir: dir, base: base, named: f.Name()}, nil
}

// tempPattern is the temporary's name pattern for base, short enough that
// the name (with os.CreateTemp's random digits) fits NAME_MAX (255).
func tempPattern(base string) string {
	const suffix, random = ".rocmdoctor-*", 10
	if n := 255 - len(suffix) - random - 1; len(base) > n {
		base = base[:n]
	}
	return "." + base + ".rocmdoctor-*"
}

// Name is the temporary's path where it has one, else its directory.
func (t *Temp) Name() string {
	if t.named != "" {
		return t.named
	}
	return t.dir
}

// Commit makes the temporary durable and puts it at dst (in the same
// directory) in one rename; the temporary is closed.
func (t *Temp) Commit(dst string) error {
	if err := t.Sync(); err != nil {
		t.Discard()
		return err
	}
	name := t.named
	if name == "" {
		// An unnamed file gets a name only now; the window in which a
		// killed process leaves it behind is this link and the rename.
		var err error
		if name, err = linkUnnamed(t.File, t.dir, tempPattern(t.base)); err != nil {
			t.Discard()
			return err
		}
	}
	if err := os.Rename(name, dst); err != nil {
		os.Remove(name)
		t.File.Close()
		return err
	}
	t.named = ""
	err := t.File.Close()
	syncDir(filepath.Dir(dst))
	return err
}

// Discard closes and removes the temporary.
func (t *Temp) Discard() {
	t.File.Close()
	if t.named != "" {
		os.Remove(t.named)
		t.named = ""
	}
}

// Sweep removes the named temporaries of base in dir that killed processes
// left (none that a live one holds locked) and calls notice for each.
func Sweep(dir, base string, notice func(string)) {
	pattern := ".*.rocmdoctor-*"
	if base != "" {
		pattern = globQuote(tempPattern(base))
	}
	matches, _ := filepath.Glob(filepath.Join(dir, pattern))
	for _, m := range matches {
		f, err := os.Open(m)
		if err != nil {
			continue
		}
		if lockFile(f, false) == nil {
			if os.Remove(m) == nil && notice != nil {
				notice(fmt.Sprintf("removed %s, left by an edit that was killed", m))
			}
		}
		f.Close()
	}
}

// globQuote quotes the glob metacharacters of a pattern's literal part.
func globQuote(p string) string {
	lit, star := p[:len(p)-1], p[len(p)-1:]
	out := make([]byte, 0, len(lit)+8)
	for i := 0; i < len(lit); i++ {
		switch lit[i] {
		case '*', '?', '[', '\\':
			out = append(out, '\\')
		}
		out = append(out, lit[i])
	}
	return string(out) + star
}

// Reserve allocates [off, off+n) of f on disk without changing its size,
// so that a full file system is found before the bytes are written. A file
// system that cannot (EOPNOTSUPP) is no error.
func Reserve(f *os.File, off, n int64) error { return reserve(f, off, n) }

// MkdirTemp makes a work directory in dir (os.TempDir() when "") named
// prefix followed by random digits, locked while it is in use so that
// SweepDirs can tell it from one a killed process left. release unlocks
// and removes it.
func MkdirTemp(dir, prefix string) (path string, release func(), err error) {
	if dir == "" {
		dir = os.TempDir()
	}
	// Made and locked under a shared lock of dir itself, which SweepDirs
	// takes exclusively: a sweep in another process never sees the new
	// directory before it is locked (the fuzzer's parallel relinks did).
	parent, err := os.Open(dir)
	if err != nil {
		return "", nil, err
	}
	defer parent.Close()
	if err := lockShared(parent); err != nil {
		return "", nil, err
	}
	path, err = os.MkdirTemp(dir, prefix+"*")
	if err != nil {
		return "", nil, err
	}
	d, err := os.Open(path)
	if err == nil {
		err = lockFile(d, true)
	}
	if err != nil {
		if d != nil {
			d.Close()
		}
		os.RemoveAll(path)
		return "", nil, err
	}
	return path, func() {
		os.RemoveAll(path)
		d.Close()
	}, nil
}

// SweepDirs removes the work directories MkdirTemp made in dir (os.TempDir()
// when "") with prefix that no live process holds, and calls notice for
// each.
func SweepDirs(dir, prefix string, notice func(string)) {
	if dir == "" {
		dir = os.TempDir()
	}
	parent, err := os.Open(dir)
	if err != nil {
		return
	}
	defer parent.Close() // (and the lock with it)
	if lockFile(parent, true) != nil {
		return
	}
	matches, _ := filepath.Glob(filepath.Join(dir, globQuote(prefix+"*")))
	for _, m := range matches {
		st, err := os.Lstat(m)
		if err != nil || !st.IsDir() || !ownedByMe(st) {
			continue
		}
		d, err := os.Open(m)
		if err != nil {
			continue
		}
		if lockFile(d, false) == nil && os.RemoveAll(m) == nil && notice != nil {
			notice(fmt.Sprintf("removed %s, left by a run that was killed", m))
		}
		d.Close()
	}
}

// ScratchFile is an unnamed temporary file in dir (os.TempDir() when ""),
// gone when it is closed or the process ends however it ends; where the
// file system has no O_TMPFILE, a named one removed at once.
func ScratchFile(dir string) (*os.File, error) {
	if dir == "" {
		dir = os.TempDir()
	}
	if f, err := openUnnamed(dir); err == nil {
		return f, nil
	}
	f, err := os.CreateTemp(dir, "rocmdoctor-scratch-*")
	if err != nil {
		return nil, err
	}
	os.Remove(f.Name()) // open files outlive their name
	return f, nil
}

// WriteFile puts data at path as the rest of this package writes: a new
// file gets perm; an existing regular file is replaced atomically keeping
// its owner, group, attributes and mode; a symbolic link is written
// through; a device or FIFO is written into.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	tg, err := Resolve(path)
	if err != nil {
		return err
	}
	if tg.Kind == Stream {
		return tg.WriteStream(bytes.NewReader(data))
	}
	tmp, err := CreateTemp(filepath.Dir(tg.Real), filepath.Base(tg.Real))
	if err != nil {
		return err
	}
	if _, err = tmp.Write(data); err == nil {
		if tg.Kind == Regular {
			err = tmp.CopyMeta(tg.Real, tg.Info)
		} else {
			err = tmp.Chmod(perm)
		}
	}
	if err != nil {
		tmp.Discard()
		return err
	}
	return tmp.Commit(tg.Real)
}
