package patchelf_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/patchelf"
)

// Plan an edit first (nothing is written), then apply it to a copy of a
// library: the plan says what changes; the file is replaced only once the
// result has been verified.
func ExampleEditFile() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	lib := filepath.Join(dir, "libfoo.so.1")
	b, _ := os.ReadFile("../testdata/libfoo.so.1")
	os.WriteFile(lib, b, 0o755)

	edits := []patchelf.Edit{patchelf.SetRunpath("/opt/rocm/lib", "$ORIGIN"), patchelf.ReplaceNeeded("libm.so.6", "libmvec.so.1")}
	plan, err := patchelf.EditFile(lib, edits, patchelf.Options{}, patchelf.WriteOptions{DryRun: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("changes the file:", plan.Changed)
	if _, err := patchelf.EditFile(lib, edits, patchelf.Options{}, patchelf.WriteOptions{}); err != nil {
		fmt.Println(err)
		return
	}
	f, _ := elfx.Open(lib)
	defer f.Close()
	d, _ := f.Dynamic()
	fmt.Println("runpath:", d.RunPath)
	fmt.Println("needed:", d.Needed)
	// Output:
	// changes the file: true
	// runpath: /opt/rocm/lib:$ORIGIN
	// needed: [libmvec.so.1]
}
