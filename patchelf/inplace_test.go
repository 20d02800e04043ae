package patchelf

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/internal/safefile"
	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
)

// An in-place edit killed between two of its writes leaves a file the next
// run rolls back. Until then it loads as the original while only the new
// tail is written, and as the edit once any vacated table is clobbered:
// the clobbering comes after every header write. Growing Debian's libz's
// RUNPATH moves .gnu.hash and .dynstr past the end (the larger program
// header table covers the start of .gnu.hash); clobbered before .dynamic
// pointed away from them, the symbols and NEEDED names read "ZZZ…" (a
// SIGKILL in CI found it). Between the program headers and .dynamic no
// order of two writes loads: that window is the journal's.
func TestInPlaceWritePrefixesLoad(t *testing.T) {
	lib := testenv.File(t, "/usr/lib/x86_64-linux-gnu/libz.so.1", "zlib1g")
	py := testenv.Python(t, "ctypes", "python3")
	orig, err := os.ReadFile(lib)
	if err != nil {
		t.Fatal(err)
	}
	f, err := elfx.Open(lib)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := PlanFile(f, []Edit{{Kind: KindSetRPath, Arg: strings.Repeat("/grow", 100)}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	size := int64(len(orig))
	ws := safefile.Order(p.inPlaceWrites(), size)
	fills := map[int64]bool{}
	for _, pt := range p.Patches {
		if pt.Data == nil {
			fills[pt.Offset] = true
		}
	}
	if len(fills) == 0 {
		t.Fatalf("the edit clobbers nothing: the test does not test the order")
	}
	dir := t.TempDir()
	tailOnly, clobbered := true, false
	for k := 0; k <= len(ws); k++ {
		if k > 0 {
			tailOnly = tailOnly && ws[k-1].Off >= size
			clobbered = clobbered || fills[ws[k-1].Off]
		}
		if !tailOnly && !clobbered && k < len(ws) {
			continue
		}
		b := append([]byte(nil), orig...)
		for _, w := range ws[:k] {
			if end := w.Off + int64(len(w.Data)); end > int64(len(b)) {
				b = append(b, make([]byte, end-int64(len(b)))...)
			}
			copy(b[w.Off:], w.Data)
		}
		path := filepath.Join(dir, "libz.so.1")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(py, "-c", "import ctypes, sys; ctypes.CDLL(sys.argv[1]).zlibVersion", path).CombinedOutput(); err != nil {
			t.Errorf("killed after %d of %d writes (only the tail: %v, a table clobbered: %v): %v\n%s", k, len(ws), tailOnly, clobbered, err, out)
		}
	}
}
