package patchelf_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/patchelf"
)

// WrittenRanges covers every byte an edit changes: outside the ranges the
// result holds the original's bytes, and the ranges cover any growth.
func TestWrittenRangesCoverEveryChange(t *testing.T) {
	for _, name := range []string{"libfoo.so.1", "hello", "libi386.so", "libbe.so", "libsysv.so"} {
		for _, edits := range [][]patchelf.Edit{
			{{Kind: patchelf.KindSetRPath, Arg: "$ORIGIN"}},
			{{Kind: patchelf.KindSetRPath, Arg: long}, {Kind: patchelf.KindAddNeeded, Arg: "libamdhip64.so.6"}},
			{{Kind: patchelf.KindSetSoname, Arg: "libsomething-much-longer-than-before.so.7"}, {Kind: patchelf.KindNoDefaultLib}},
		} {
			p := copyFixture(t, name)
			orig, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			plan, err := patchelf.EditFile(p, edits, patchelf.Options{}, patchelf.WriteOptions{InPlace: true, NoSync: true})
			if err != nil {
				t.Fatalf("%s %v: %v", name, edits, err)
			}
			got, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			covered := make([]bool, len(got))
			for _, r := range plan.WrittenRanges() {
				for i := r[0]; i < r[1] && i < int64(len(got)); i++ {
					covered[i] = true
				}
			}
			for i := range got {
				if covered[i] {
					continue
				}
				if i >= len(orig) {
					// Padding before an appended segment: pwrite past the
					// end leaves zeros, which the ranges need not list.
					if got[i] != 0 {
						t.Fatalf("%s %v: byte %d past the old end is %#x and not in a written range", name, edits, i, got[i])
					}
					continue
				}
				if got[i] != orig[i] {
					t.Fatalf("%s %v: byte %#x changed outside the written ranges %v", name, edits, i, plan.WrittenRanges())
				}
			}
			if bytes.Equal(got, orig) == plan.Changed {
				t.Errorf("%s %v: Changed %v but the file is %s", name, edits, plan.Changed, map[bool]string{true: "the same", false: "different"}[bytes.Equal(got, orig)])
			}
		}
	}
}
