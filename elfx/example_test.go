package elfx_test

import (
	"fmt"

	"github.com/rocmdoctor/rocmdoctor/elfx"
)

// Open a library and read what the loader reads: its dynamic section and
// dynamic symbols.
func ExampleOpen() {
	f, err := elfx.Open("../testdata/libfoo.so.1")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	d, err := f.Dynamic()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("soname:", d.Soname)
	fmt.Println("needed:", d.Needed)
	fmt.Println("runpath:", d.RunPath)
	syms, _ := f.DynamicSymbols()
	for _, s := range syms {
		if s.Defined() && !s.Absolute() && s.Version != "" { // (not the version nodes' own symbols)
			fmt.Printf("defines %s@%s\n", s.Name, s.Version)
		}
	}
	// Output:
	// soname: libfoo.so.1
	// needed: [libm.so.6]
	// runpath: $ORIGIN/../lib
	// defines foo_counter@FOO_1
	// defines foo_api@FOO_2
	// defines foo_api@FOO_1
	// defines foo_sqrt@FOO_1
	// defines foo_call_hook@FOO_2
}

// The GPU targets of the device code a host library carries.
func ExampleFile_GPUCodeObjects() {
	f, err := elfx.Open("../testdata/libgpu.so")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	cos, err := f.GPUCodeObjects()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, co := range cos {
		fmt.Println(co.Kind, co.TargetID)
	}
	// Output:
	// hipv4 gfx90a:xnack-
	// hipv4 gfx1030
	// hipv4 gfx906:sramecc+:xnack-
}
