package patchelf_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
	"github.com/rocmdoctor/rocmdoctor/patchelf"
)

// The test binary edits a file as a child process (another user's, in
// TestEditAsAnotherUser) when this is set.
const childEdit = "PATCHELF_TEST_CHILD_EDIT"

func TestMain(m *testing.M) {
	if p := os.Getenv(childEdit); p != "" {
		_, err := patchelf.EditFile(p, []patchelf.Edit{{Kind: patchelf.KindSetRPath, Arg: long}}, patchelf.Options{},
			patchelf.WriteOptions{Notice: func(s string) { fmt.Println("notice:", s) }, JournalDir: os.Getenv("PATCHELF_TEST_JOURNALS")})
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

// --output onto a device or FIFO writes into it and leaves it what it was;
// onto a symbolic link writes through to the link's target.
func TestOutputDestinations(t *testing.T) {
	src := copyFixture(t, "libfoo.so.1")
	want := filepath.Join(t.TempDir(), "want.so")
	if _, err := patchelf.EditFile(src, []patchelf.Edit{{Kind: patchelf.KindSetSoname, Arg: "x"}}, patchelf.Options{}, patchelf.WriteOptions{Output: want}); err != nil {
		t.Fatal(err)
	}
	wantBytes, _ := os.ReadFile(want)
	out := func(t *testing.T, dst string) error {
		_, err := patchelf.EditFile(src, []patchelf.Edit{{Kind: patchelf.KindSetSoname, Arg: "x"}}, patchelf.Options{}, patchelf.WriteOptions{Output: dst})
		return err
	}
	t.Run("character device", func(t *testing.T) {
		dev := filepath.Join(t.TempDir(), "null")
		if err := syscall.Mknod(dev, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
			testenv.Missing(t, "mknod of a character device (root)", err.Error())
		}
		if err := out(t, dev); err != nil {
			t.Fatal(err)
		}
		st, err := os.Lstat(dev)
		if err != nil || st.Mode()&os.ModeCharDevice == 0 {
			t.Fatalf("%s is no longer a character device: %v %v", dev, st.Mode(), err)
		}
	})
	t.Run("fifo", func(t *testing.T) {
		fifo := filepath.Join(t.TempDir(), "fifo")
		if err := syscall.Mkfifo(fifo, 0o644); err != nil {
			t.Fatal(err)
		}
		got := make(chan []byte)
		go func() {
			f, err := os.Open(fifo)
			if err != nil {
				got <- nil
				return
			}
			b, _ := io.ReadAll(f)
			f.Close()
			got <- b
		}()
		if err := out(t, fifo); err != nil {
			t.Fatal(err)
		}
		if b := <-got; !bytes.Equal(b, wantBytes) {
			t.Errorf("the FIFO's reader got %d bytes, want the %d of the edited file", len(b), len(wantBytes))
		}
		if st, _ := os.Lstat(fifo); st.Mode()&os.ModeNamedPipe == 0 {
			t.Errorf("the FIFO was replaced: %v", st.Mode())
		}
	})
	t.Run("symbolic link", func(t *testing.T) {
		dir := t.TempDir()
		target, link := filepath.Join(dir, "real.so"), filepath.Join(dir, "link.so")
		os.WriteFile(target, []byte("old"), 0o644)
		os.Symlink("real.so", link)
		if err := out(t, link); err != nil {
			t.Fatal(err)
		}
		if st, _ := os.Lstat(link); st.Mode()&os.ModeSymlink == 0 {
			t.Errorf("the link was replaced by a file")
		}
		if b, _ := os.ReadFile(target); !bytes.Equal(b, wantBytes) {
			t.Errorf("the link's target does not hold the edit")
		}
		if n := names(t, dir); len(n) != 2 {
			t.Errorf("left %v", n)
		}
	})
	t.Run("directory", func(t *testing.T) {
		if err := out(t, t.TempDir()); err == nil || !strings.Contains(err.Error(), "is a directory") {
			t.Errorf("err %v, want a refusal", err)
		}
	})
}

// An edit keeps the file's mode (setuid, setgid), extended attributes,
// ACL, owner and group, and the inode its hard links share, whichever way
// it is written.
func TestEditKeepsMetadata(t *testing.T) {
	setfacl := testenv.Tool(t, "setfacl", "acl")
	getfacl := testenv.Tool(t, "getfacl", "acl")
	root := os.Getuid() == 0
	for _, c := range []struct {
		name      string
		inPlace   bool
		hardLinks bool
	}{{"replace", false, false}, {"in place", true, false}, {"hard link", false, true}} {
		t.Run(c.name, func(t *testing.T) {
			p := copyFixture(t, "libfoo.so.1")
			if root {
				os.Chown(p, 1234, 5678)
			}
			if err := os.Chmod(p, 0o755|os.ModeSetuid|os.ModeSetgid); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Setxattr(p, "user.rocmdoctor", []byte("kept"), 0); err != nil {
				testenv.Missing(t, "user extended attributes in the temporary directory", err.Error())
			}
			if out, err := exec.Command(setfacl, "-m", "u:nobody:r", p).CombinedOutput(); err != nil {
				t.Fatalf("setfacl: %v %s", err, out)
			}
			if c.hardLinks {
				os.Link(p, p+".other")
			}
			before, _ := os.Stat(p)
			if _, err := patchelf.EditFile(p, []patchelf.Edit{{Kind: patchelf.KindSetRPath, Arg: long}}, patchelf.Options{}, patchelf.WriteOptions{InPlace: c.inPlace}); err != nil {
				t.Fatal(err)
			}
			after, _ := os.Stat(p)
			if read(t, p).rpath != long {
				t.Fatal("the edit is not there")
			}
			if after.Mode() != before.Mode() {
				t.Errorf("mode %v, was %v", after.Mode(), before.Mode())
			}
			b := make([]byte, 16)
			if n, err := syscall.Getxattr(p, "user.rocmdoctor", b); err != nil || string(b[:n]) != "kept" {
				t.Errorf("extended attribute lost: %q %v", b[:n], err)
			}
			if out, _ := exec.Command(getfacl, "-p", p).Output(); !bytes.Contains(out, []byte("user:nobody:r--")) {
				t.Errorf("ACL lost:\n%s", out)
			}
			if root {
				if s := after.Sys().(*syscall.Stat_t); s.Uid != 1234 || s.Gid != 5678 {
					t.Errorf("owner %d:%d, was 1234:5678", s.Uid, s.Gid)
				}
			}
			if c.inPlace || c.hardLinks {
				if !os.SameFile(before, after) {
					t.Errorf("the inode changed")
				}
			}
			if c.hardLinks && read(t, p+".other").rpath != long {
				t.Errorf("the other name does not see the edit")
			}
			if n := names(t, filepath.Dir(p)); len(n) != map[bool]int{false: 1, true: 2}[c.hardLinks] {
				t.Errorf("left %v", n)
			}
		})
	}
}

// As a user who is not root: a file of someone else's that the user may
// write is edited in place (a new file could not be given its owner), also
// in a directory the user cannot write to; a file the user may not write
// is refused, as patchelf refuses it.
func TestEditAsAnotherUser(t *testing.T) {
	if os.Getuid() != 0 {
		testenv.Missing(t, "root (to run an edit as another user)", "")
	}
	top := filepath.Dir(t.TempDir())
	os.Chmod(top, 0o755)
	bin := filepath.Join(top, "patchelf.test")
	exe, _ := os.ReadFile(os.Args[0])
	os.WriteFile(bin, exe, 0o755)
	run := func(t *testing.T, p string) (string, error) {
		cmd := exec.Command(bin, "-test.run=^$")
		cmd.Env = append(os.Environ(), childEdit+"="+p, "PATCHELF_TEST_JOURNALS="+filepath.Join(top, "journals"), "HOME=/nonexistent")
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	os.Mkdir(filepath.Join(top, "journals"), 0o700)
	os.Chown(filepath.Join(top, "journals"), 65534, 65534)
	for _, c := range []struct {
		name    string
		dirMode os.FileMode
		mode    os.FileMode
		ok      bool
		notice  string
	}{
		{"other's file, shared directory", 0o777 | os.ModeSticky, 0o666, true, "edited in place"},
		{"other's file, read-only directory", 0o755, 0o666, true, "edited in place"},
		{"not writable", 0o777 | os.ModeSticky, 0o644, false, "open " /* the file itself */},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			os.Chmod(filepath.Dir(dir), 0o755)
			p := copyFile(t, testenv.Testdata("libfoo.so.1"))
			q := filepath.Join(dir, "lib.so")
			b, _ := os.ReadFile(p)
			os.WriteFile(q, b, 0o600)
			os.Chmod(q, c.mode)
			os.Chmod(dir, c.dirMode)
			before, _ := os.Stat(q)
			out, err := run(t, q)
			after, _ := os.Stat(q)
			if (err == nil) != c.ok || !strings.Contains(out, c.notice) || !c.ok && !strings.Contains(out, q+": permission denied") {
				t.Fatalf("exit %v, output %q; want success %v and %q", err, out, c.ok, c.notice)
			}
			if got, _ := os.ReadFile(q); !c.ok && !bytes.Equal(got, b) {
				t.Errorf("a refused edit changed the file")
			}
			if c.ok && read(t, q).rpath != long {
				t.Errorf("the edit is not there")
			}
			if s := after.Sys().(*syscall.Stat_t); s.Uid != 0 || !os.SameFile(before, after) || after.Mode() != before.Mode() {
				t.Errorf("owner %d, same inode %v, mode %v (was %v)", s.Uid, os.SameFile(before, after), after.Mode(), before.Mode())
			}
			if n := names(t, dir); len(n) != 1 {
				t.Errorf("left %v", n)
			}
		})
	}
}

// Concurrent edits of one file, replacing and in place, all take effect:
// each waits for the one before.
func TestConcurrentEditsAllApply(t *testing.T) {
	p := copyFixture(t, "libfoo.so.1")
	const n = 6
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e := patchelf.Edit{Kind: patchelf.KindAddNeeded, Arg: fmt.Sprintf("libc%d.so", i)}
			if _, err := patchelf.EditFile(p, []patchelf.Edit{e}, patchelf.Options{}, patchelf.WriteOptions{InPlace: i%2 == 1}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	got := strings.Join(read(t, p).needed, " ")
	for i := range n {
		if !strings.Contains(got, fmt.Sprintf("libc%d.so", i)) {
			t.Errorf("edit %d lost: NEEDED %s", i, got)
		}
	}
	if names := names(t, filepath.Dir(p)); len(names) != 1 {
		t.Errorf("left %v", names)
	}
}

// A name of NAME_MAX bytes is edited like any other.
func TestEditLongName(t *testing.T) {
	p := copyFixture(t, "libfoo.so.1")
	q := filepath.Join(filepath.Dir(p), strings.Repeat("l", 255))
	if err := os.Rename(p, q); err != nil {
		t.Fatal(err)
	}
	edit(t, q, patchelf.Edit{Kind: patchelf.KindSetRPath, Arg: long})
	if read(t, q).rpath != long {
		t.Errorf("edit not there")
	}
}

// On a full file system an edit fails before changing anything, whether
// it replaces the file or writes in place, and leaves nothing behind.
func TestFullFileSystem(t *testing.T) {
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", dir).CombinedOutput(); err != nil {
		testenv.Missing(t, "a tmpfs mount (root)", strings.TrimSpace(string(out)))
	}
	defer exec.Command("umount", dir).Run()
	src, _ := os.ReadFile(testenv.Testdata("libfoo.so.1"))
	for _, inPlace := range []bool{false, true} {
		t.Run(fmt.Sprintf("inplace=%v", inPlace), func(t *testing.T) {
			p := filepath.Join(dir, "lib.so")
			if err := os.WriteFile(p, src, 0o755); err != nil {
				t.Fatal(err)
			}
			defer os.Remove(p)
			// Fill what is left but a few KiB.
			fill := filepath.Join(dir, "fill")
			f, _ := os.Create(fill)
			f.Write(make([]byte, 256<<10))
			f.Close()
			defer os.Remove(fill)
			_, err := patchelf.EditFile(p, []patchelf.Edit{{Kind: patchelf.KindSetRPath, Arg: strings.Repeat("/grow", 2000)}}, patchelf.Options{}, patchelf.WriteOptions{InPlace: inPlace, JournalDir: t.TempDir()})
			if err == nil || !strings.Contains(err.Error(), "no space left") {
				t.Fatalf("err %v, want no space left on device", err)
			}
			if got, _ := os.ReadFile(p); !bytes.Equal(got, src) {
				t.Errorf("the failed edit changed the file")
			}
			if n := names(t, dir); len(n) != 2 {
				t.Errorf("left %v", n)
			}
		})
	}
}
