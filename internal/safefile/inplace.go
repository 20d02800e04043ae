package safefile

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// Write is bytes to put at an offset of a file.
type Write struct {
	Off  int64
	Data []byte
	// Late writes only overwrite what the others leave unreferenced
	// (patchelf's clobbering of moved tables): they go last, so that a
	// process killed before them leaves a file that works.
	Late bool
}

// InPlace says how WriteInPlace works.
type InPlace struct {
	// NoSync skips the syncs and the undo journal: for scratch copies
	// nobody needs after a crash.
	NoSync bool
	// JournalDir holds undo journals; "" is JournalDir().
	JournalDir string
	// file stands in for the target in tests (faults); nil is f itself.
	file file
}

// file is what WriteInPlace does to the target.
type file interface {
	io.ReaderAt
	io.WriterAt
	Truncate(int64) error
	Sync() error
}

// JournalDir is where undo journals are kept: $XDG_STATE_HOME/rocmdoctor,
// else ~/.local/state/rocmdoctor, else the temporary directory's
// rocmdoctor-state-UID.
func JournalDir() string {
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "rocmdoctor")
	}
	if h, err := os.UserHomeDir(); err == nil && filepath.IsAbs(h) {
		return filepath.Join(h, ".local", "state", "rocmdoctor")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("rocmdoctor-state-%d", os.Getuid()))
}

// journal is an undo record: the target's size and the bytes of every
// region about to be written, as they were.
type journal struct {
	Path    string   `json:"path"`
	ID      identity `json:"id"`
	Size    int64    `json:"size"`
	NewSize int64    `json:"new_size"`
	Regions []region `json:"regions"`
}

type region struct {
	Off  int64  `json:"off"`
	Data []byte `json:"data"`
}

// WriteInPlace writes ws into f, a file of size bytes that grows to
// newSize, keeping its inode: space is reserved first; writes at or past
// the old end (what new headers point to) go first and are synced before
// the others; the original bytes are kept in an undo journal until the
// result is durable. On an error the original is restored before
// returning; a process killed in between leaves the journal for Recover.
func WriteInPlace(f *os.File, size, newSize int64, ws []Write, o InPlace) (err error) {
	var tf file = f
	if o.file != nil {
		tf = o.file
	}
	undo := journal{Path: f.Name(), Size: size, NewSize: newSize}
	before, _ := f.Stat()
	for _, w := range ws {
		if w.Off >= size || len(w.Data) == 0 {
			continue
		}
		b := make([]byte, min(int64(len(w.Data)), size-w.Off))
		if _, err := tf.ReadAt(b, w.Off); err != nil {
			return fmt.Errorf("reading %s at 0x%x: %w", f.Name(), w.Off, err)
		}
		undo.Regions = append(undo.Regions, region{Off: w.Off, Data: b})
	}
	jpath := ""
	if !o.NoSync {
		if jpath, err = writeJournal(f, &undo, o.JournalDir); err != nil {
			return fmt.Errorf("%s: not edited: writing the undo journal: %w", f.Name(), err)
		}
	}
	if err := reserve(f, size, newSize-size); err != nil {
		os.Remove(jpath)
		return fmt.Errorf("%s: not edited: %w", f.Name(), err)
	}
	defer func() {
		if err == nil {
			return
		}
		if rerr := restore(tf, &undo); rerr != nil {
			err = fmt.Errorf("%w; restoring the original failed too (%v): the undo journal %s is kept", err, rerr, jpath)
			return
		}
		os.Remove(jpath)
		err = fmt.Errorf("%w (%s restored as it was)", err, f.Name())
	}()
	// Each group is synced before the next starts: what the headers will
	// point to is durable before they do, and what they pointed to before
	// is overwritten only once they no longer do.
	order := Order(ws, size)
	for i, w := range order {
		if i > 0 && group(order[i-1], size) != group(w, size) && !o.NoSync {
			if err := tf.Sync(); err != nil {
				return err
			}
		}
		if _, err := tf.WriteAt(w.Data, w.Off); err != nil {
			return fmt.Errorf("writing %s at 0x%x: %w", f.Name(), w.Off, err)
		}
	}
	if newSize < size {
		if err := tf.Truncate(newSize); err != nil {
			return err
		}
	}
	// The kernel clears setuid and setgid on a write by a caller without
	// CAP_FSETID; the owner may set them again.
	if st, err := f.Stat(); err == nil && before != nil && st.Mode() != before.Mode() {
		f.Chmod(before.Mode())
	}
	if !o.NoSync {
		if err := tf.Sync(); err != nil {
			return err
		}
	}
	if jpath != "" {
		os.Remove(jpath)
	}
	return nil
}

// Order is the order in which WriteInPlace writes ws to a file of size
// bytes: writes at or past the old end (what new headers point to) first,
// then the other non-late writes, then the late ones, each group in file
// order.
func Order(ws []Write, size int64) []Write {
	order := slices.Clone(ws)
	slices.SortStableFunc(order, func(a, b Write) int {
		if ga, gb := group(a, size), group(b, size); ga != gb {
			return ga - gb
		}
		return int(min(max(a.Off-b.Off, -1), 1))
	})
	return order
}

// group is w's place in Order: 0 past the old end, 1 inside, 2 late.
func group(w Write, size int64) int {
	switch {
	case w.Late:
		return 2
	case w.Off >= size:
		return 0
	}
	return 1
}

// restore puts the journal's bytes back and the size as it was.
func restore(f file, j *journal) error {
	for _, r := range j.Regions {
		if _, err := f.WriteAt(r.Data, r.Off); err != nil {
			return err
		}
	}
	if err := f.Truncate(j.Size); err != nil {
		return err
	}
	return f.Sync()
}

// privateDir checks that dir is a directory of this user's that no one
// else may write to: a journal says which bytes to write into which file,
// so one planted by another user would be obeyed.
func privateDir(dir string) error {
	st, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !st.IsDir() || st.Mode().Perm()&0o022 != 0 || !ownedByMe(st) {
		return fmt.Errorf("the journal directory %s is not a private directory of this user's (mode %v): not used", dir, st.Mode())
	}
	return nil
}

func journalName(id identity) string {
	return fmt.Sprintf("undo-%x-%x.json", id.Dev, id.Ino)
}

// writeJournal writes j for f, durably, and returns its path; "" when the
// file system gives no identity to key it by.
func writeJournal(f *os.File, j *journal, dir string) (string, error) {
	id, err := identify(f)
	if err != nil {
		return "", nil
	}
	j.ID = id
	if dir == "" {
		dir = JournalDir()
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	if err := privateDir(dir); err != nil {
		return "", err
	}
	body, err := json.Marshal(j)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(body)
	body = append(body, fmt.Sprintf("\n%x\n", sum)...)
	path := filepath.Join(dir, journalName(id))
	t, err := CreateTemp(dir, filepath.Base(path))
	if err != nil {
		return "", err
	}
	if _, err := t.Write(body); err != nil {
		t.Discard()
		return "", err
	}
	if err := t.Commit(path); err != nil {
		return "", err
	}
	return path, nil
}

// readJournal reads and checks a journal; a torn or foreign one is an error.
func readJournal(path string) (*journal, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	body, tail, ok := bytes.Cut(b, []byte("\n"))
	if !ok || string(bytes.TrimSpace(tail)) != fmt.Sprintf("%x", sha256.Sum256(body)) {
		return nil, errors.New("checksum does not match")
	}
	var j journal
	if err := json.Unmarshal(body, &j); err != nil {
		return nil, err
	}
	return &j, nil
}

// Recover rolls back the in-place edits that were killed before they were
// durable, for every journal in dir ("" is JournalDir()) whose file is
// still the one it was made for, and calls notice for each file restored
// and each journal dropped.
func Recover(dir string, notice func(string)) {
	if dir == "" {
		dir = JournalDir()
	}
	if err := privateDir(dir); err != nil {
		if !errors.Is(err, fs.ErrNotExist) && notice != nil {
			notice(err.Error())
		}
		return
	}
	paths, _ := filepath.Glob(filepath.Join(dir, "undo-*.json"))
	for _, jp := range paths {
		if msg := recoverOne(jp); msg != "" && notice != nil {
			notice(msg)
		}
	}
	Sweep(dir, "", nil)
}

func recoverOne(jp string) string {
	j, err := readJournal(jp)
	if errors.Is(err, fs.ErrNotExist) {
		return "" // (an edit finished meanwhile)
	}
	if err != nil {
		os.Remove(jp)
		return fmt.Sprintf("dropped the unreadable undo journal %s (%v)", jp, err)
	}
	f, err := os.OpenFile(j.Path, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		os.Remove(jp)
		return fmt.Sprintf("dropped the undo journal of %s, which no longer exists", j.Path)
	}
	if err != nil {
		return fmt.Sprintf("%s: an in-place edit was interrupted and cannot be rolled back now (%v); journal %s kept", j.Path, err, jp)
	}
	defer f.Close()
	if err := lockFile(f, true); err != nil {
		return fmt.Sprintf("%s: cannot lock it to roll back an interrupted edit (%v)", j.Path, err)
	}
	// Read again under the lock: an edit that was under way held it, and
	// removed its journal before letting go.
	if j, err = readJournal(jp); errors.Is(err, fs.ErrNotExist) {
		return ""
	} else if err != nil {
		os.Remove(jp)
		return fmt.Sprintf("dropped the unreadable undo journal %s (%v)", jp, err)
	}
	// Between the two sizes: the tail may be written in part.
	st, err := f.Stat()
	if id, ierr := identify(f); err != nil || ierr != nil || id != j.ID || st.Size() < min(j.Size, j.NewSize) || st.Size() > max(j.Size, j.NewSize) {
		os.Remove(jp)
		return fmt.Sprintf("dropped the undo journal of %s: the path now names another file", j.Path)
	}
	if err := restore(f, j); err != nil {
		return fmt.Sprintf("%s: rolling back an interrupted in-place edit failed (%v); journal %s kept", j.Path, err, jp)
	}
	os.Remove(jp)
	return fmt.Sprintf("%s: restored as it was before an in-place edit that was interrupted", j.Path)
}

// Lock is an exclusive lock on a file, held from planning an edit to its
// last write, so that two edits of one file run one after the other.
type Lock struct {
	F    *os.File
	Info os.FileInfo
}

// LockFile opens path (for writing when write is set, as an edit of the
// file itself needs) and locks it. When another process replaced the file
// while this one waited, the new file is locked instead.
func LockFile(path string, write bool) (*Lock, error) {
	flag := os.O_RDONLY
	if write {
		flag = os.O_RDWR
	}
	for range 100 {
		f, err := os.OpenFile(path, flag, 0)
		if err != nil {
			return nil, err
		}
		if err := lockFile(f, true); err != nil {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		held, err1 := f.Stat()
		now, err2 := os.Stat(path)
		if err1 == nil && err2 == nil && os.SameFile(held, now) {
			return &Lock{F: f, Info: held}, nil
		}
		f.Close()
		if err1 != nil {
			return nil, err1
		}
		if err2 != nil {
			return nil, err2
		}
	}
	return nil, fmt.Errorf("locking %s: it keeps being replaced", path)
}

// Changed reports whether the locked file was modified since it was
// locked (by a program that does not take the lock).
func (l *Lock) Changed() bool {
	st, err := l.F.Stat()
	return err != nil || st.Size() != l.Info.Size() || !st.ModTime().Equal(l.Info.ModTime())
}

// Links is the number of names the locked file has.
func (l *Lock) Links() uint64 { return links(l.Info) }

// Close releases the lock.
func (l *Lock) Close() error { return l.F.Close() }
