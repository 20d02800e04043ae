package safefile

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
)

// A child process (see TestMain) that dies in the middle of the k-th
// write of an in-place edit, as kill -9 would leave it.
const childEnv = "SAFEFILE_TEST_DIE_AT"

func TestMain(m *testing.M) {
	if k := os.Getenv(childEnv); k != "" {
		n, _ := strconv.Atoi(k)
		f, err := os.OpenFile(os.Getenv("SAFEFILE_TEST_FILE"), os.O_RDWR, 0)
		if err != nil {
			panic(err)
		}
		ws, size, newSize := edit(f)
		WriteInPlace(f, size, newSize, ws, InPlace{JournalDir: os.Getenv("SAFEFILE_TEST_JOURNALS"), file: &dying{File: f, at: n}})
		os.Exit(0) // (not reached when the k-th write exists)
	}
	os.Exit(m.Run())
}

// edit is the test edit: three patches in separate pages and a tail.
func edit(f *os.File) ([]Write, int64, int64) {
	st, _ := f.Stat()
	size := st.Size()
	ws := []Write{
		{Off: 0, Data: bytes.Repeat([]byte{'H'}, 64)},
		{Off: 5000, Data: bytes.Repeat([]byte{'D'}, 9000)},
		{Off: size - 100, Data: bytes.Repeat([]byte{'S'}, 100)},
		{Off: size, Data: bytes.Repeat([]byte{'T'}, 20000)},
	}
	return ws, size, size + 20000
}

// dying writes half of its k-th write and exits.
type dying struct {
	*os.File
	at, n int
}

func (d *dying) WriteAt(b []byte, off int64) (int, error) {
	d.n++
	if d.n == d.at {
		d.File.WriteAt(b[:len(b)/2], off)
		os.Exit(7)
	}
	return d.File.WriteAt(b, off)
}

// faulty fails its k-th write with ENOSPC after writing part of it.
type faulty struct {
	*os.File
	at, n int
}

func (f *faulty) WriteAt(b []byte, off int64) (int, error) {
	f.n++
	if f.n == f.at {
		k, _ := f.File.WriteAt(b[:len(b)/3], off)
		return k, syscall.ENOSPC
	}
	return f.File.WriteAt(b, off)
}

func original(t *testing.T, dir string) (string, []byte) {
	t.Helper()
	b := make([]byte, 40000)
	for i := range b {
		b[i] = byte(i * 7)
	}
	p := filepath.Join(dir, "lib.so")
	if err := os.WriteFile(p, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return p, b
}

func want(t *testing.T, p string) []byte {
	t.Helper()
	b, _ := os.ReadFile(p)
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ws, _, newSize := edit(f)
	out := append([]byte(nil), b...)
	out = append(out, make([]byte, newSize-int64(len(b)))...)
	for _, w := range ws {
		copy(out[w.Off:], w.Data)
	}
	return out
}

func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, _ := os.ReadDir(dir)
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// An error at any write (ENOSPC after a partial write) leaves the file as
// it was and no journal.
func TestWriteInPlaceErrorRestores(t *testing.T) {
	for k := 1; k <= 4; k++ {
		t.Run(fmt.Sprintf("write%d", k), func(t *testing.T) {
			dir, journals := t.TempDir(), t.TempDir()
			p, orig := original(t, dir)
			f, err := os.OpenFile(p, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			ws, size, newSize := edit(f)
			err = WriteInPlace(f, size, newSize, ws, InPlace{JournalDir: journals, file: &faulty{File: f, at: k}})
			if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "restored") {
				t.Fatalf("error %v, want ENOSPC and the file restored", err)
			}
			if got, _ := os.ReadFile(p); !bytes.Equal(got, orig) {
				t.Errorf("after the failed write %d the file is not the original (%d bytes)", k, len(got))
			}
			if left := entries(t, journals); len(left) != 0 {
				t.Errorf("journals left: %v", left)
			}
		})
	}
}

// A process that dies in the middle of any write leaves a journal, and
// Recover makes the file the original again; an edit that completes
// leaves no journal and the edited bytes.
func TestRecoverAfterDeathMidWrite(t *testing.T) {
	for k := 1; k <= 5; k++ {
		t.Run(fmt.Sprintf("write%d", k), func(t *testing.T) {
			dir, journals := t.TempDir(), t.TempDir()
			p, orig := original(t, dir)
			edited := want(t, p)
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), childEnv+"="+strconv.Itoa(k), "SAFEFILE_TEST_FILE="+p, "SAFEFILE_TEST_JOURNALS="+journals)
			err := cmd.Run()
			got, _ := os.ReadFile(p)
			if k == 5 { // there are four writes: this edit completes
				if err != nil || !bytes.Equal(got, edited) || len(entries(t, journals)) != 0 {
					t.Fatalf("complete edit: %v, edited %v, journals %v", err, bytes.Equal(got, edited), entries(t, journals))
				}
				return
			}
			if bytes.Equal(got, orig) || bytes.Equal(got, edited) {
				t.Fatalf("the child died at write %d, yet the file is whole (%v)", k, err)
			}
			var msgs []string
			Recover(journals, func(s string) { msgs = append(msgs, s) })
			if got, _ := os.ReadFile(p); !bytes.Equal(got, orig) {
				t.Errorf("after Recover the file is not the original (%d bytes; %v)", len(got), msgs)
			}
			if len(msgs) != 1 || !strings.Contains(msgs[0], "restored") {
				t.Errorf("notices %q, want one saying the file was restored", msgs)
			}
			if left := entries(t, journals); len(left) != 0 {
				t.Errorf("journals left after Recover: %v", left)
			}
		})
	}
}

// A journal whose path now names another file is dropped, not applied.
func TestRecoverIgnoresAnotherFile(t *testing.T) {
	dir, journals := t.TempDir(), t.TempDir()
	p, _ := original(t, dir)
	f, _ := os.OpenFile(p, os.O_RDWR, 0)
	j := journal{Path: p, Size: 10, Regions: []region{{Off: 0, Data: []byte("XXXX")}}}
	if _, err := writeJournal(f, &j, journals); err != nil {
		t.Fatal(err)
	}
	f.Close()
	os.Remove(p)
	p2, orig := original(t, dir) // the same path, another inode
	if p2 != p {
		t.Fatal("path")
	}
	var msgs []string
	Recover(journals, func(s string) { msgs = append(msgs, s) })
	if got, _ := os.ReadFile(p); !bytes.Equal(got, orig) {
		t.Errorf("a journal was applied to another file")
	}
	if len(entries(t, journals)) != 0 || len(msgs) != 1 || !strings.Contains(msgs[0], "another file") {
		t.Errorf("journals %v, notices %q", entries(t, journals), msgs)
	}
}

func TestResolve(t *testing.T) {
	dir := t.TempDir()
	reg := filepath.Join(dir, "reg")
	os.WriteFile(reg, []byte("x"), 0o644)
	os.Symlink("reg", filepath.Join(dir, "l1"))
	os.Symlink(filepath.Join(dir, "l1"), filepath.Join(dir, "l2"))
	os.Symlink("nothing", filepath.Join(dir, "dangling"))
	os.Symlink("loop", filepath.Join(dir, "loop"))
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, path, real string
		kind             Kind
		err              string
	}{
		{"regular", reg, reg, Regular, ""},
		{"link to link", filepath.Join(dir, "l2"), reg, Regular, ""},
		{"dangling link names its target", filepath.Join(dir, "dangling"), filepath.Join(dir, "nothing"), Missing, ""},
		{"missing", filepath.Join(dir, "new"), filepath.Join(dir, "new"), Missing, ""},
		{"fifo", fifo, fifo, Stream, ""},
		{"directory", dir, "", 0, "is a directory"},
		{"loop", filepath.Join(dir, "loop"), "", 0, "too many levels"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tg, err := Resolve(c.path)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want %q", err, c.err)
				}
				return
			}
			if err != nil || tg.Real != c.real || tg.Kind != c.kind {
				t.Fatalf("got %+v, %v; want real %s kind %d", tg, err, c.real, c.kind)
			}
		})
	}
}

// A temporary leaves nothing behind but the destination, also for a name
// of NAME_MAX bytes; a discarded one leaves nothing.
func TestTempCommit(t *testing.T) {
	for _, base := range []string{"lib.so", strings.Repeat("n", 255)} {
		dir := t.TempDir()
		dst := filepath.Join(dir, base)
		tmp, err := CreateTemp(dir, base)
		if err != nil {
			t.Fatal(err)
		}
		tmp.Write([]byte("new"))
		if err := tmp.Commit(dst); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(dst); string(b) != "new" {
			t.Errorf("%d-byte name: content %q", len(base), b)
		}
		if es := entries(t, dir); len(es) != 1 {
			t.Errorf("%d-byte name: left %v", len(base), es)
		}
		tmp, _ = CreateTemp(dir, base)
		tmp.Discard()
		if es := entries(t, dir); len(es) != 1 {
			t.Errorf("%d-byte name: a discarded temporary left %v", len(base), es)
		}
	}
}

// Sweep removes the named temporaries no live process holds, and keeps
// the held ones.
func TestSweep(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, ".lib.so.rocmdoctor-123")
	os.WriteFile(stale, nil, 0o600)
	live, err := os.CreateTemp(dir, tempPattern("lib.so"))
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	if err := lockFile(live, true); err != nil {
		t.Fatal(err)
	}
	var msgs []string
	Sweep(dir, "lib.so", func(s string) { msgs = append(msgs, s) })
	if _, err := os.Stat(stale); err == nil {
		t.Errorf("stale temporary kept")
	}
	if _, err := os.Stat(live.Name()); err != nil {
		t.Errorf("a live temporary was removed")
	}
	if len(msgs) != 1 {
		t.Errorf("notices %q", msgs)
	}
}

// LockFile waits for the holder, and locks the file that replaced the
// one it waited for.
func TestLockFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	os.WriteFile(p, []byte("a"), 0o644)
	first, err := LockFile(p, true)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan *Lock)
	go func() {
		l, err := LockFile(p, true)
		if err != nil {
			t.Error(err)
		}
		got <- l
	}()
	select {
	case <-got:
		t.Fatal("a second lock was granted while the first was held")
	case <-time.After(200 * time.Millisecond):
	}
	// The holder replaces the file, then lets go.
	os.WriteFile(p+".new", []byte("b"), 0o644)
	os.Rename(p+".new", p)
	first.Close()
	second := <-got
	defer second.Close()
	now, _ := os.Stat(p)
	if !os.SameFile(second.Info, now) {
		t.Errorf("the lock is on the replaced file, not the one at the path")
	}
}

// CopyMeta reproduces setuid/setgid, extended attributes and (as root)
// the owner; a caller that cannot is told with ErrNotPreserved.
func TestCopyMeta(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	os.WriteFile(src, []byte("x"), 0o644)
	if err := syscall.Setxattr(src, "user.rocmdoctor", []byte("v"), 0); err != nil {
		testenv.Missing(t, "user extended attributes in "+dir, err.Error())
	}
	root := os.Getuid() == 0
	if root {
		os.Chown(src, 1234, 5678)
	}
	os.Chmod(src, 0o6755)
	st, _ := os.Stat(src)
	tmp, err := CreateTemp(dir, "src")
	if err != nil {
		t.Fatal(err)
	}
	if err := tmp.CopyMeta(src, st); err != nil {
		t.Fatal(err)
	}
	if err := tmp.Commit(src); err != nil {
		t.Fatal(err)
	}
	now, _ := os.Stat(src)
	if now.Mode() != st.Mode() {
		t.Errorf("mode %v, want %v", now.Mode(), st.Mode())
	}
	b := make([]byte, 8)
	if n, err := syscall.Getxattr(src, "user.rocmdoctor", b); err != nil || string(b[:n]) != "v" {
		t.Errorf("xattr: %q %v", b[:n], err)
	}
	if root {
		if s := now.Sys().(*syscall.Stat_t); s.Uid != 1234 || s.Gid != 5678 {
			t.Errorf("owner %d:%d", s.Uid, s.Gid)
		}
	}
}

// WriteFile: a new file gets perm, an existing one keeps its mode, a link
// is written through, and nothing else is left.
func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "baseline.json")
	if err := WriteFile(p, []byte("1"), 0o640); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o640 {
		t.Errorf("new file mode %v", st.Mode())
	}
	os.Chmod(p, 0o600)
	os.Symlink("baseline.json", filepath.Join(dir, "link"))
	if err := WriteFile(filepath.Join(dir, "link"), []byte("2"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	st, _ := os.Lstat(filepath.Join(dir, "link"))
	pst, _ := os.Stat(p)
	if string(b) != "2" || st.Mode()&os.ModeSymlink == 0 || pst.Mode().Perm() != 0o600 {
		t.Errorf("content %q, link kept %v, mode %v", b, st.Mode()&os.ModeSymlink != 0, pst.Mode())
	}
	if n := entries(t, dir); len(n) != 2 {
		t.Errorf("left %v", n)
	}
}

// A sweep running while another process (here, goroutine: flock locks
// are per open file) makes its work directory never removes it: the
// fuzzer's parallel relinks found one removed between its creation and
// its lock.
func TestMkdirTempSurvivesSweep(t *testing.T) {
	dir := t.TempDir()
	for i := range 300 {
		done := make(chan struct{})
		go func() {
			defer close(done)
			SweepDirs(dir, "work-", nil)
		}()
		path, release, err := MkdirTemp(dir, "work-")
		<-done
		if err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		if _, err := os.Stat(path); err != nil {
			t.Fatalf("round %d: a sweep removed a live work directory: %v", i, err)
		}
		release()
	}
}

// recording logs the writes and syncs WriteInPlace makes.
type recording struct {
	*os.File
	log []string
}

func (r *recording) WriteAt(b []byte, off int64) (int, error) {
	r.log = append(r.log, fmt.Sprintf("%c@%d", b[0], off))
	return r.File.WriteAt(b, off)
}

func (r *recording) Sync() error {
	r.log = append(r.log, "sync")
	return r.File.Sync()
}

// The new tail is written and synced first, then the writes inside the
// file in file order, then, after another sync, the late ones (what only
// clobbers bytes the others left unreferenced).
func TestWriteInPlaceOrder(t *testing.T) {
	dir := t.TempDir()
	p, _ := original(t, dir)
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ws, size, newSize := edit(f)
	ws = append([]Write{{Off: 1000, Data: []byte("ZZ"), Late: true}}, ws...)
	r := &recording{File: f}
	if err := WriteInPlace(f, size, newSize, ws, InPlace{JournalDir: t.TempDir(), file: r}); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(r.log, " ")
	want := fmt.Sprintf("T@%d sync H@0 D@5000 S@%d sync Z@1000 sync", size, size-100)
	if got != want {
		t.Errorf("writes and syncs:\n got %s\nwant %s", got, want)
	}
}
