package rpath_test

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/rocmdoctor/rocmdoctor/rpath"
)

// Resolve a program's dependencies as ld.so would, like ldd: the fixture
// finds its libraries through its RUNPATH ($ORIGIN/../lib/pc), and loads
// libpcshared.so once although two objects need it.
func ExampleResolver_Resolve() {
	r := rpath.New(rpath.Options{})
	res, err := r.Resolve(context.Background(), "../testdata/checktree/bin/pcapp")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, o := range res.Objects[1:] {
		fmt.Println(o.Soname, "=>", filepath.Base(filepath.Dir(o.Path))+"/"+filepath.Base(o.Path), "needed by", filepath.Base(o.Loader.Path))
	}
	fmt.Println("missing:", len(res.Missing()))
	// Output:
	// libpccore.so => pc/libpccore.so needed by pcapp
	// libpcshared.so => pc/libpcshared.so needed by pcapp
	// missing: 0
}
