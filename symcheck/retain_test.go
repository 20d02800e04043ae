package symcheck

import (
	"runtime"
	"testing"
	"weak"

	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
)

// TestTableCacheKeepsNoFile: what the table cache keeps of a file (its
// symbol table and the facts the file-level rules read) does not keep the
// parsed file alive once it is closed. The facts' dynamic section used to
// point at the File, so a scan kept every file's debug/elf headers and
// sections (a third of its live heap, outside the cache's byte budget).
func TestTableCacheKeepsNoFile(t *testing.T) {
	c := NewTableCache()
	var w weak.Pointer[elfx.File]
	var k tableKey
	func() {
		f, err := elfx.Open(testenv.Testdata("libfoo.so.1"))
		if err != nil {
			t.Fatal(err)
		}
		c.add(f)
		k = fileKey(f)
		f.Close()
		w = weak.Make(f)
	}()
	tab, ok := c.get(k)
	if !ok || tab.facts == nil || tab.facts.dyn == nil || tab.facts.dyn.Soname != "libfoo.so.1" {
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
