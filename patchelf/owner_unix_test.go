//go:build unix

package patchelf_test

import (
	"os"
	"syscall"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
	"github.com/rocmdoctor/rocmdoctor/patchelf"
)

// A replaced file keeps its owner and group (as root; others cannot give
// a file away, and their files are theirs anyway).
func TestReplaceKeepsOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.Missing(t, "root (to give the fixture another owner)", "CI runs the tests as root")
	}
	p := copyFixture(t, "libfoo.so.1")
	if err := os.Chown(p, 1234, 5678); err != nil {
		t.Fatal(err)
	}
	edit(t, p, patchelf.Edit{Kind: patchelf.KindSetRPath, Arg: long})
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if sys := st.Sys().(*syscall.Stat_t); sys.Uid != 1234 || sys.Gid != 5678 {
		t.Fatalf("owner %d:%d after the edit, want 1234:5678", sys.Uid, sys.Gid)
	}
	if s := read(t, p); s.rpath != long {
		t.Fatalf("the edit did not take: %q", s.rpath)
	}
}
