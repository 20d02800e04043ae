package check

import (
	"runtime"
	"testing"
	"weak"

	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
	"github.com/rocmdoctor/rocmdoctor/symcheck"
)

// TestTableCacheKeepsNoFile: what the table cache keeps of a file (its
// symbol table and the facts the file-level rules read) does not keep the
// parsed file alive once it is closed. The facts' dynamic section used to
// point at the File, so a scan kept every file's debug/elf headers and
// sections (a third of its live heap, outside the cache's byte budget).
func TestTableCacheKeepsNoFile(t *testing.T) {
	c := symcheck.NewTableCacheWith(symcheck.TableCacheOptions{Keep: func(f *elfx.File) any { return keptFacts(f, false) }})
	var w weak.Pointer[elfx.File]
	var id elfx.FileID
	path := testenv.Testdata("libfoo.so.1")
	func() {
		f, err := elfx.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		c.Add(f)
		id = elfx.IDOf(f.FileInfo())
		f.Close()
		w = weak.Make(f)
	}()
	tab, ok := c.Lookup(id, path)
	if !ok || factsIn(tab) == nil || factsIn(tab).dyn == nil || factsIn(tab).dyn.Soname != "libfoo.so.1" {
		t.Fatalf("the cache holds no table with the file's facts: %v %+v", ok, tab)
	}
	for i := 0; i < 3 && w.Value() != nil; i++ {
		runtime.GC()
	}
	if w.Value() != nil {
		t.Error("the parsed file is still reachable from the table cache")
	}
	runtime.KeepAlive(c)
}
